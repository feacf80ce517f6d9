package serve

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/dataset"
	"unlearn/model"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// speciesCSV writes a CSV of n rows — a string id, three features on
// unequal scales, a species that is a rule of them — and returns its
// name.
func speciesCSV(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("name,a,b,c,species\n")
	for i := range n {
		a, bb, c := float64(i%7)-3, 10+5*float64((i*3)%5-2), 0.01*float64((i*11)%9)
		sp := "eel"
		switch {
		case a+0.2*(bb-10) > 1:
			sp = "cat"
		case a < -1:
			sp = "dog"
		}
		fmt.Fprintf(&b, "p%d,%v,%v,%v,%s\n", i, a, bb, c, sp)
	}
	name := filepath.Join(t.TempDir(), "species.csv")
	require.NoError(t, os.WriteFile(name, []byte(b.String()), 0o644))
	return name
}

// TestPredictIsTheModels: a multinomial store made from a CSV file with
// the practitioner's profile predicts over HTTP what package model (and
// so unlearn predict) predicts for its state, bit for bit: the labels in
// the data's class names and a probability per class. Rows that name
// their columns must name the model's features in its order — on ingest
// and on predict — and a mismatch is refused naming the field; rows
// without names are checked on their length only.
func TestPredictIsTheModels(t *testing.T) {
	name := speciesCSV(t, 60)
	hdr, r, err := dataset.Open(name, dataset.Options{Label: "species", ID: "name", Kind: stream.KindMultinomial, Classes: []string{"all"}})
	require.NoError(t, err)
	var rowsX [][]float64
	var labels []float64
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		rowsX, labels = append(rowsX, e.Sample.V), append(labels, e.Sample.S)
	}
	require.NoError(t, r.Close())
	f := newFixture(t, fixtureOptions{hdr: &hdr, learner: func(c *olbfgs.Config) {
		*c = c.Practitioner()
		c.Memory = 3
	}})
	cols := []string{"a", "b", "c"}
	names := make([]string, len(labels)) // labels in the data's class names
	for i, y := range labels {
		names[i] = []string{"cat", "dog", "eel"}[int(y)]
	}
	res := f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": rowsX, "labels": names, "columns": cols})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)

	res = f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows": rowsX, "columns": cols})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var pr classified
	res.json(t, &pr)
	require.Equal(t, []string{"cat", "dog", "eel"}, pr.Classes)
	state, err := f.st.State()
	require.NoError(t, err)
	c, err := model.ContractOf(hdr)
	require.NoError(t, err)
	m, err := model.New(state, c)
	require.NoError(t, err)
	correct := 0
	for i, x := range rowsX {
		p, err := m.Predict(x)
		require.NoError(t, err)
		require.Equal(t, p.Label, pr.Predictions[i], "row %d", i)
		require.Equal(t, p.Probabilities, pr.Probabilities[i], "row %d: the model's bits", i)
		if p.Class == int(labels[i]) {
			correct++
		}
	}
	require.Greater(t, correct, 36, "the profile learned the species")
	res = f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows": rowsX})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var unnamed classified
	res.json(t, &unnamed)
	require.Equal(t, pr.Probabilities, unnamed.Probabilities, "rows without names: by position")

	for _, tc := range []struct {
		name    string
		columns []string
		rows    [][]float64
		detail  string
	}{
		{"swapped", []string{"a", "c", "b"}, rowsX[:1], `feature 2 is "c", the model's is "b": columns in another order`},
		{"renamed", []string{"a", "B", "c"}, rowsX[:1], `column 2 is "B" where the model has "b": renamed?`},
		{"missing", []string{"a", "c"}, [][]float64{{1, 2}}, `the model's feature "b" is missing`},
		{"extra", []string{"a", "b", "c", "zip"}, [][]float64{{1, 2, 3, 4}}, `column "zip" is not a feature of the model`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, route := range []string{"/v1/predict", "/v1/events"} {
				body := map[string]any{"rows": tc.rows, "columns": tc.columns}
				tok := f.tokens["predict"]
				if route == "/v1/events" {
					body["labels"], tok = []string{"cat"}, f.tokens["ingest"]
				}
				res := f.do("POST", route, tok, body)
				require.Equal(t, http.StatusUnprocessableEntity, res.status, route)
				p := res.problem(t)
				require.Equal(t, ProblemTypePrefix+"contract-mismatch", p.Type, route)
				require.Equal(t, "columns", p.Field, route)
				require.Contains(t, p.Detail, "features: the model expects 3 feature columns", route)
				require.Contains(t, p.Detail, tc.detail, route)
			}
		})
	}
	// Without names, a row of another length is refused on its length.
	res = f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows": [][]float64{{1, 2}}})
	require.Equal(t, http.StatusUnprocessableEntity, res.status)
	p := res.problem(t)
	require.Equal(t, "rows[0]", p.Field)
	require.Equal(t, "rows[0] has 2 values; the model expects 3 features: a, b, c", p.Detail)
}

// TestColumnsNeedNamedFeatures: a store whose features have no names (made
// from flags) refuses rows that name their columns, saying why.
func TestColumnsNeedNamedFeatures(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	res := f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows": [][]float64{{1, 2, 3}}, "columns": []string{"a", "b", "c"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.status)
	p := res.problem(t)
	require.Equal(t, ProblemTypePrefix+"contract-mismatch", p.Type)
	require.Equal(t, "columns", p.Field)
	require.Contains(t, p.Detail, "the model's features have no names")
}

// TestLabelsAreClassNames: a store whose contract names no classes takes
// the labels its predictions answer, "-1" and "1" (as strings or numbers),
// and refuses another (0 included: the internal values, not a 0/1 file's
// cells), naming the row and the classes; a label that is neither a
// string nor a number is a 400 naming the member. GET /v1/contract says
// so, with a null source.
func TestLabelsAreClassNames(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	res := f.do("GET", "/v1/contract", f.tokens["read"], nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.JSONEq(t, `{"kind":"logistic","d":3,"classes":["-1","1"],"source":null}`, string(res.body))

	x, _ := rows(5, 3, 3)
	res = f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x, "labels": []any{-1, "1", "+1"}})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	for _, tc := range []struct {
		label  any
		status int
		detail string
	}{
		{0, http.StatusUnprocessableEntity, `labels[1]: "0" is not a class of the model: want "-1" or "1"`},
		{"yes", http.StatusUnprocessableEntity, `labels[1]: "yes" is not a class of the model: want "-1" or "1"`},
		{"", http.StatusUnprocessableEntity, `labels[1]: empty label`},
		{true, http.StatusBadRequest, `labels[1]: true is not a class name (a string) or a number`},
		{nil, http.StatusBadRequest, `labels[1]: null is not a class name (a string) or a number`},
	} {
		res := f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x[:2], "labels": []any{1, tc.label}})
		require.Equal(t, tc.status, res.status, "%v: %s", tc.label, res.body)
		p := res.problem(t)
		require.Equal(t, "labels[1]", p.Field, "%v", tc.label)
		require.Equal(t, tc.detail, p.Detail, "%v", tc.label)
	}
}
