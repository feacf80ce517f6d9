package model_test

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/dataset"
	"unlearn/model"
	"unlearn/olbfgs"
	"unlearn/store"
	"unlearn/stream"
)

// patients writes a CSV of n rows with string ids, two features and a
// label column of "sick"/"well", and returns its name (rows of a fixed
// rule, so a model trained on it predicts both classes).
func patients(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	cw := csv.NewWriter(&b)
	require.NoError(t, cw.Write([]string{"name", "age", "dose", "outcome"}))
	for i := range n {
		age := float64(i%17)/8 - 1
		dose := float64((i*7)%13)/6 - 1
		y := "well"
		if age+0.5*dose+0.1*float64(i%3-1) > 0 {
			y = "sick"
		}
		name := fmt.Sprintf("p%d", i)
		if i == 3 {
			name = `Lee, "Ann"` // a key that needs quoting
		}
		require.NoError(t, cw.Write([]string{name, fmt.Sprint(age), fmt.Sprint(dose), y}))
	}
	cw.Flush()
	name := filepath.Join(t.TempDir(), "patients.csv")
	require.NoError(t, os.WriteFile(name, []byte(b.String()), 0o644))
	return name
}

// fit trains a model on the CSV file name, as unlearn train --data does.
func fit(t *testing.T, name string, opts dataset.Options) *model.Model {
	t.Helper()
	hdr, r, err := dataset.Open(name, opts)
	require.NoError(t, err)
	defer r.Close()
	loss, err := hdr.Loss()
	require.NoError(t, err)
	cfg := olbfgs.DefaultConfig(hdr.D)
	cfg.Memory = 3
	l, err := olbfgs.New(cfg, loss)
	require.NoError(t, err)
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		require.NoError(t, l.Step(e))
	}
	c, err := model.ContractOf(hdr)
	require.NoError(t, err)
	m, err := model.New(l, c)
	require.NoError(t, err)
	return m
}

// TestWritePredictionsCSVAndJSON predicts a CSV whose ids are strings and
// checks both outputs against the per-row predictions, and the accuracy
// computed from the output against Evaluate's and the model store's.
func TestWritePredictionsCSVAndJSON(t *testing.T) {
	name := patients(t, 120)
	opts := dataset.Options{Label: "outcome", ID: "name", Classes: []string{"well", "sick"}}
	m := fit(t, name, opts)
	require.Equal(t, []string{"id", "label", "p_well", "p_sick"}, m.Columns())

	predict := func(o model.Output) []byte {
		u := opts
		u.Unlabeled = true
		_, r, err := dataset.Open(name, u)
		require.NoError(t, err)
		defer r.Close()
		var out bytes.Buffer
		n, err := model.WritePredictions(&out, m, r, o)
		require.NoError(t, err)
		require.Equal(t, 120, n)
		return out.Bytes()
	}
	recs, err := csv.NewReader(bytes.NewReader(predict(model.Output{}))).ReadAll()
	require.NoError(t, err)
	require.Equal(t, m.Columns(), recs[0])
	require.Len(t, recs, 121)
	require.Equal(t, `Lee, "Ann"`, recs[4][0], "a key with a comma and quotes reads back")

	var lines []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(predict(model.Output{JSON: true})))
	for sc.Scan() {
		var v map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v), "line %s", sc.Text())
		lines = append(lines, v)
	}
	require.Len(t, lines, 120)

	// The labelled rows, read as evaluate reads them.
	_, r, err := dataset.Open(name, opts)
	require.NoError(t, err)
	defer r.Close()
	correct, i := 0, 0
	truth := map[float64]string{-1: "well", 1: "sick"}
	for ; ; i++ {
		e, err := r.Next()
		if err != nil {
			break
		}
		p, err := m.Predict(e.Sample.V)
		require.NoError(t, err)
		rec, js := recs[i+1], lines[i]
		require.Equal(t, r.Key(), rec[0])
		require.Equal(t, r.Key(), js["id"])
		require.Equal(t, p.Label, rec[1])
		require.Equal(t, p.Label, js["label"])
		for k, c := range []string{"well", "sick"} {
			v, err := strconv.ParseFloat(rec[2+k], 64)
			require.NoError(t, err)
			require.Equal(t, p.Probabilities[k], v, "CSV numbers read back to the same bits")
			require.Equal(t, p.Probabilities[k], js["p_"+c])
		}
		if rec[1] == truth[e.Sample.S] {
			correct++
		}
	}
	require.Equal(t, 120, i)

	// Accuracy from predict's output = Evaluate's = the store's evaluation.
	ev := evaluateFile(t, m, name, opts)
	require.Equal(t, float64(correct)/120, *ev.Accuracy)
	_, r2, err := dataset.Open(name, opts)
	require.NoError(t, err)
	defer r2.Close()
	sev, err := store.Evaluate(m.State(), r2)
	require.NoError(t, err)
	require.Equal(t, sev.Accuracy, *ev.Accuracy)
	require.Equal(t, sev.Loss, ev.Loss, "the held-out loss is the store's, bit for bit")
}

func evaluateFile(t *testing.T, m *model.Model, name string, opts dataset.Options) *model.Evaluation {
	t.Helper()
	_, r, err := dataset.Open(name, opts)
	require.NoError(t, err)
	defer r.Close()
	ev, err := model.Evaluate(m, r)
	require.NoError(t, err)
	return ev
}

// TestEvaluateMatchesStoreSparse: the loss and accuracy of sparse rows
// are the store's too.
func TestEvaluateMatchesStoreSparse(t *testing.T) {
	name := filepath.Join("..", "dataset", "testdata", "heart_scale_30.svm")
	m := fit(t, name, dataset.Options{})
	for _, sparse := range []bool{false, true} {
		opts := dataset.Options{Sparse: sparse, D: 13}
		ev := evaluateFile(t, m, name, opts)
		_, r, err := dataset.Open(name, opts)
		require.NoError(t, err)
		sev, err := store.Evaluate(m.State(), r)
		r.Close()
		require.NoError(t, err)
		require.Equal(t, sev.Loss, ev.Loss)
		require.Equal(t, sev.Accuracy, *ev.Accuracy)
	}
}

// TestWritePredictionsRegressionAndStream predicts the events of a stream
// file (deletes skipped) with a regression model.
func TestWritePredictionsRegressionAndStream(t *testing.T) {
	loss, err := stream.NewRegression(2, 0)
	require.NoError(t, err)
	l, err := olbfgs.New(olbfgs.DefaultConfig(2), loss)
	require.NoError(t, err)
	l.SetW([]float64{0.5, 2})
	m, err := model.New(l, nil)
	require.NoError(t, err)
	h, err := stream.NewHistory(stream.Header{Format: stream.FormatV1, Kind: stream.KindRegression, D: 2, Lambda: 0}, []stream.Event{
		stream.InsertEvent(5, []float64{1, 1}, 0), stream.InsertEvent(9, []float64{0.1, -3}, 1), stream.DeleteEvent(5),
	})
	require.NoError(t, err)
	var file bytes.Buffer
	require.NoError(t, stream.Write(&file, h))
	rd, err := stream.NewReader(&file)
	require.NoError(t, err)
	var out bytes.Buffer
	n, err := model.WritePredictions(&out, m, rd, model.Output{})
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, "id,prediction\n5,2.5\n9,-5.95\n", out.String())
	rd, err = stream.NewReader(bytes.NewReader(mustWrite(t, h)))
	require.NoError(t, err)
	out.Reset()
	_, err = model.WritePredictions(&out, m, rd, model.Output{JSON: true})
	require.NoError(t, err)
	require.Equal(t, "{\"id\":5,\"prediction\":2.5}\n{\"id\":9,\"prediction\":-5.95}\n", out.String())
}

func mustWrite(t *testing.T, h *stream.History) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, stream.Write(&b, h))
	return b.Bytes()
}

// TestWritePredictionsNamesTheRow: a data error names the file and line;
// a row the model cannot score names its id.
func TestWritePredictionsNamesTheRow(t *testing.T) {
	name := patients(t, 30)
	opts := dataset.Options{Label: "outcome", ID: "name", Classes: []string{"well", "sick"}}
	m := fit(t, name, opts)
	bad := filepath.Join(t.TempDir(), "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("name,age,dose\na,1,2\nb,x,2\n"), 0o644))
	_, r, err := dataset.Open(bad, dataset.Options{Label: "outcome", ID: "name", Unlabeled: true})
	require.NoError(t, err)
	defer r.Close()
	var out bytes.Buffer
	n, err := model.WritePredictions(&out, m, r, model.Output{})
	require.Equal(t, 1, n)
	require.ErrorContains(t, err, `bad.csv: line 3, field 2 ("age")`)
}

// TestEvaluateIsTheStoresForEveryOption: for the paper's learner, each
// practitioner option and the multinomial loss, Evaluate's held-out loss
// and accuracy are store.Evaluate's bit for bit, the accuracy is that of
// the predicted labels, and the confusion matrix and per-class recall
// count the predictions (K classes for a multinomial model, in the
// contract's class names).
func TestEvaluateIsTheStoresForEveryOption(t *testing.T) {
	for _, tc := range model.OptionCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			l := tc.Learner
			k := max(l.Config().Outputs, 2)
			names := make([]string, k)
			for i := range names {
				names[i] = fmt.Sprintf("class %c", 'A'+i)
			}
			m, err := model.New(l, &model.Contract{Format: dataset.LIBSVM, Classes: names})
			require.NoError(t, err)
			ev, err := model.Evaluate(m, &events{list: tc.Events})
			require.NoError(t, err)
			sev, err := store.Evaluate(l, &events{list: tc.Events})
			require.NoError(t, err)
			require.Equal(t, sev.Loss, ev.Loss, "the held-out loss is the store's, bit for bit")
			require.Equal(t, sev.Accuracy, *ev.Accuracy)

			confusion := make([][]int, k)
			for i := range confusion {
				confusion[i] = make([]int, k)
			}
			correct := 0
			var p model.Prediction
			for _, e := range tc.Events {
				require.NoError(t, m.PredictTo(&p, e.Sample))
				truth := int(e.Sample.S)
				if k == 2 && l.Config().Outputs == 0 {
					truth = 0
					if e.Sample.S > 0 {
						truth = 1
					}
				}
				require.Len(t, p.Probabilities, k)
				require.Equal(t, names[p.Class], p.Label)
				confusion[truth][p.Class]++
				if truth == p.Class {
					correct++
				}
			}
			require.Equal(t, float64(correct)/float64(len(tc.Events)), *ev.Accuracy)
			require.Equal(t, confusion, ev.Confusion)
			require.Len(t, ev.Classes, k)
			for i, c := range ev.Classes {
				require.Equal(t, names[i], c.Label)
				if c.Support > 0 {
					require.Equal(t, float64(confusion[i][i])/float64(c.Support), *c.Recall)
				}
			}
			require.Equal(t, k == 2, ev.AUC != nil, "an AUC for a binary model only")
			require.Greater(t, *ev.Accuracy, 1/float64(k), "the model learned something")
		})
	}
}

// events is a model.Rows and store.EventSource over a slice of events.
type events struct {
	list []stream.Event
	i    int
}

func (r *events) Next() (stream.Event, error) {
	if r.i == len(r.list) {
		return stream.Event{}, io.EOF
	}
	r.i++
	return r.list[r.i-1], nil
}
