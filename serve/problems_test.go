package serve

import (
	"encoding/binary"
	"math"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/dataset"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// f64 packs rows as rows_f64 does (little-endian float64s, row after row).
func f64(rows ...[]float64) []byte {
	var b []byte
	for _, r := range rows {
		for _, v := range r {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b
}

// TestProblemsInUsersWords: every refusal of a request's rows, labels or
// events names the member at fault exactly, to the element (rows[1][2],
// not rows[1]), and says what is wrong in the user's vocabulary — values
// and features, an empty batch — never the wire format's (cols, d,
// bytes) alone. The store is made from a CSV file, so that its features
// have names (a, b, c), which the messages quote.
func TestProblemsInUsersWords(t *testing.T) {
	hdr, r, err := dataset.Open(speciesCSV(t, 30), dataset.Options{Label: "species", ID: "name", Kind: stream.KindMultinomial, Classes: []string{"all"}})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	f := newFixture(t, fixtureOptions{hdr: &hdr, learner: func(c *olbfgs.Config) { *c = c.Practitioner(); c.Memory = 3 }})
	three := []int{3}
	two := []int{2}
	for _, tc := range []struct {
		name, path string
		body       map[string]any
		field      string
		detail     string
	}{
		{"cols short", "/v1/predict", map[string]any{"rows_f64": f64([]float64{1, 2}), "cols": two[0]},
			"cols", "the rows have 2 values each; the model expects 3 features: a, b, c"},
		{"cols short ingest", "/v1/events", map[string]any{"rows_f64": f64([]float64{1, 2}), "cols": two[0], "labels": []string{"cat"}},
			"cols", "the rows have 2 values each; the model expects 3 features: a, b, c"},
		{"empty rows_f64", "/v1/predict", map[string]any{"rows_f64": []byte{}, "cols": three[0]},
			"rows_f64", "the batch has no rows: send at least one row"},
		{"empty rows", "/v1/predict", map[string]any{"rows": [][]float64{}},
			"rows", "the batch has no rows: send at least one row"},
		{"empty rows ingest", "/v1/events", map[string]any{"rows": [][]float64{}, "labels": []string{}},
			"rows", "the batch has no rows: send at least one row"},
		{"cut row", "/v1/predict", map[string]any{"rows_f64": f64([]float64{1, 2, 3}, []float64{4}), "cols": three[0]},
			"rows_f64", "rows_f64 does not hold whole rows: 32 bytes are not rows of 3 values of 8 bytes (the last row is cut short)"},
		{"NaN", "/v1/predict", map[string]any{"rows_f64": f64([]float64{1, 2, 3}, []float64{4, 5, math.NaN()}), "cols": three[0]},
			"rows[1][2]", "rows[1][2] is NaN: every value must be a finite number"},
		{"Inf ingest", "/v1/events", map[string]any{"rows_f64": f64([]float64{math.Inf(1), 2, 3}), "cols": three[0], "labels": []string{"cat"}},
			"rows[0][0]", "rows[0][0] is +Inf: every value must be a finite number"},
		{"short row", "/v1/predict", map[string]any{"rows": [][]float64{{1, 2, 3}, {1, 2}}},
			"rows[1]", "rows[1] has 2 values; the model expects 3 features: a, b, c"},
		{"long row ingest", "/v1/events", map[string]any{"rows": [][]float64{{1, 2, 3, 4}}, "labels": []string{"cat"}},
			"rows[0]", "rows[0] has 4 values; the model expects 3 features: a, b, c"},
		{"label", "/v1/events", map[string]any{"rows": [][]float64{{1, 2, 3}, {1, 2, 3}}, "labels": []string{"cat", "cow"}},
			"labels[1]", `labels[1]: "cow" is not a class of the model: want "cat", "dog" or "eel"`},
		{"event vector", "/v1/events", map[string]any{"events": []map[string]any{{"x": []float64{1, 2, 3}, "y": 0}, {"x": []float64{1}, "y": 1}}},
			"events[1].x", "events[1].x has 1 value; the model expects 3 features"},
		{"wrong type", "/v1/predict", map[string]any{"rows": []any{[]any{1, "two", 3}}},
			"rows[0][1]", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := f.tokens["predict"]
			if tc.path == "/v1/events" {
				tok = f.tokens["ingest"]
			}
			res := f.do("POST", tc.path, tok, tc.body)
			require.GreaterOrEqual(t, res.status, 400, "%s", res.body)
			require.Less(t, res.status, 500, "%s", res.body)
			p := res.problem(t)
			require.Equal(t, tc.field, p.Field, "%s", res.body)
			if tc.detail != "" {
				require.Equal(t, tc.detail, p.Detail)
			}
			for _, wire := range []string{"cols =", "d =", "[cols]", "float64"} {
				require.NotContains(t, p.Detail, wire)
			}
		})
	}
}

// TestPixelRefusedToTheElement: an IDX store's row holding a value that is
// not a raw pixel is refused naming rows[i][j], the value and why.
func TestPixelRefusedToTheElement(t *testing.T) {
	raw, err := dataset.NewRawRows(&dataset.Source{Format: dataset.IDX, Scale: 255}, stream.KindLogistic, []string{"0", "6"})
	require.NoError(t, err)
	p := preprocessRows("rows", [][]float64{{0, 255, 3}, {1, 0.5, 2}}, raw)
	require.NotNil(t, p)
	require.Equal(t, "rows[1][1]", p.Field)
	require.Equal(t, http.StatusUnprocessableEntity, p.Status)
	require.Contains(t, p.Detail, "rows[1][1] is 0.5: an IDX pixel is an integer 0…255")
}
