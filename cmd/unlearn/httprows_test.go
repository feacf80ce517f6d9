package main

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/serve"
	"unlearn/sign"
	"unlearn/store"
)

// rawData is a data file's rows as the file holds them: the features in
// the data's own units (an IDX image's pixels 0…255, a CSV's cells) and
// the label cells, with a function that writes the file without some
// rows (0-based).
type rawData struct {
	rows    [][]float64
	labels  []string
	without func(t *testing.T, drop map[int]bool) string
}

// rawIDX reads an IDX image file and its label file byte by byte.
func rawIDX(t *testing.T, images string) rawData {
	labels := strings.Replace(images, "images-idx3", "labels-idx1", 1)
	img, lab := readFile(t, images), readFile(t, labels)
	n := int(binary.BigEndian.Uint32(img[4:]))
	d := int(binary.BigEndian.Uint32(img[8:]) * binary.BigEndian.Uint32(img[12:]))
	var r rawData
	for i := range n {
		row := make([]float64, d)
		for j, p := range img[16+i*d : 16+(i+1)*d] {
			row[j] = float64(p)
		}
		r.rows = append(r.rows, row)
		r.labels = append(r.labels, strconv.Itoa(int(lab[8+i])))
	}
	r.without = func(t *testing.T, drop map[int]bool) string {
		dir := t.TempDir()
		im, lb := slices.Clone(img[:16]), slices.Clone(lab[:8])
		for i := range n {
			if !drop[i] {
				im, lb = append(im, img[16+i*d:16+(i+1)*d]...), append(lb, lab[8+i])
			}
		}
		binary.BigEndian.PutUint32(im[4:], uint32(n-len(drop)))
		binary.BigEndian.PutUint32(lb[4:], uint32(n-len(drop)))
		out := filepath.Join(dir, filepath.Base(images))
		require.NoError(t, os.WriteFile(out, im, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(labels)), lb, 0o644))
		return out
	}
	return r
}

// rawCSV reads a CSV whose first column is an id, the last the label and
// the others features.
func rawCSV(t *testing.T, name string) rawData {
	recs, err := csv.NewReader(bytes.NewReader(readFile(t, name))).ReadAll()
	require.NoError(t, err)
	var r rawData
	for _, rec := range recs[1:] {
		row := make([]float64, len(rec)-2)
		for j, cell := range rec[1 : len(rec)-1] {
			row[j], err = strconv.ParseFloat(cell, 64)
			require.NoError(t, err)
		}
		r.rows, r.labels = append(r.rows, row), append(r.labels, rec[len(rec)-1])
	}
	r.without = func(t *testing.T, drop map[int]bool) string {
		lines := strings.SplitAfter(string(readFile(t, name)), "\n")
		var b strings.Builder
		b.WriteString(lines[0])
		for i, l := range lines[1:] {
			if !drop[i] {
				b.WriteString(l)
			}
		}
		out := filepath.Join(t.TempDir(), filepath.Base(name))
		require.NoError(t, os.WriteFile(out, []byte(b.String()), 0o644))
		return out
	}
	return r
}

// httpCall sends a JSON request to a test service and decodes its answer.
func httpCall(t *testing.T, url, method, path, token string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	if out != nil {
		require.NoError(t, json.Unmarshal(data, out), "%s", data)
	}
	return res.StatusCode
}

// TestHTTPRowsAreTheFiles: rows sent to the service are in the data's own
// units and labels in its class names, and the service preprocesses them
// as the commands preprocess the file: for an IDX store with a scale, a
// CSV store and a multinomial CSV store, the raw rows ingested over HTTP
// (raw pixels, raw cells, class names as numbers and as strings), then a
// forget, leave the state `train` trains on the same raw file without
// the forgotten rows, bit for bit; and /v1/predict on the file's raw rows
// answers the labels and probabilities `unlearn predict --data` writes for
// the file, bit for bit — for a CSV store with a declared feature scale
// (--feature-scale) too, whose out-of-range values are refused. A label outside the classes, and a pixel that is
// not a byte (a row sent pre-scaled), are refused naming the row.
func TestHTTPRowsAreTheFiles(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	_, err := runCLI(t, "keygen", "--out", filepath.Join(dir, "certifier"))
	require.NoError(t, err)
	key, err := sign.LoadSecret(filepath.Join(dir, "certifier.key"))
	require.NoError(t, err)
	scaleFile := filepath.Join(dir, "scale.json")
	require.NoError(t, os.WriteFile(scaleFile, []byte(`{"a": 3, "c": [-4, 4]}`), 0o644))
	for _, c := range []struct {
		name    string
		flags   []string // the data flags after the file
		raw     func(t *testing.T, file string) rawData
		file    string
		classes []string
		bad     string // a label outside the classes
	}{
		{"idx-scale", []string{"--classes", "2,0", "--scale", "7140", "--lambda", "0.1"}, rawIDX, files["idx"][0], []string{"2", "0"}, "1"},
		{"csv", []string{"--label", "label", "--id", "name", "--classes", "0,1"}, rawCSV, files["csv"][0], []string{"0", "1"}, "2"},
		{"csv-feature-scale", []string{"--label", "label", "--id", "name", "--classes", "0,1", "--feature-scale", scaleFile}, rawCSV, files["csv"][0], []string{"0", "1"}, "2"},
		{"multinomial", []string{"--label", "species", "--id", "name", "--kind", "multinomial", "--classes", "all"}, rawCSV, species(t, dir, 45), []string{"cat", "dog", "eel"}, "fox"},
	} {
		t.Run(c.name, func(t *testing.T) {
			storeDir := filepath.Join(dir, "model-"+c.name)
			data := append([]string{c.file}, c.flags...)
			o, err := runCLI(t, append([]string{"init", "--store", storeDir, "--tau", "3", "--data"}, data...)...)
			require.NoError(t, err, o)
			token, _, err := runCLISplit(t, "token", "create", "--store", storeDir, "--scopes", "ingest,predict,forget,read")
			require.NoError(t, err)
			token = strings.TrimSpace(token)
			st, err := store.Open(storeDir)
			require.NoError(t, err)
			srv, err := serve.New(st, serve.Options{Key: key, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
			require.NoError(t, err)
			ts := httptest.NewServer(srv.Handler())
			closed := false
			stop := func() {
				if !closed {
					closed = true
					ts.Close()
					require.NoError(t, srv.Close(t.Context()))
					require.NoError(t, st.Close())
				}
			}
			defer stop()

			var contract struct {
				Kind    string          `json:"kind"`
				D       int             `json:"d"`
				Classes []string        `json:"classes"`
				Source  json.RawMessage `json:"source"`
			}
			require.Equal(t, http.StatusOK, httpCall(t, ts.URL, "GET", "/v1/contract", token, nil, &contract))
			require.Equal(t, c.classes, contract.Classes)
			require.Contains(t, string(contract.Source), `"classes"`)
			if c.name == "idx-scale" {
				require.Contains(t, string(contract.Source), `"scale":7140`)
			}
			if c.name == "csv-feature-scale" {
				require.Contains(t, string(contract.Source), `"feature_scale":[{"feature":"a","index":1,"divisor":3},{"feature":"c","index":3,"range":[-4,4]}]`)
			}

			raw := c.raw(t, c.file)
			// The rows of the selected classes, with their 1-based
			// positions as ids (the readers' ids of an IDX file's images;
			// the CSV's names become keys).
			var rows [][]float64
			var labels []any
			var ids []int64
			for i, l := range raw.labels {
				if !slices.Contains(c.classes, l) {
					continue
				}
				rows, ids = append(rows, raw.rows[i]), append(ids, int64(i+1))
				if v, err := strconv.Atoi(l); err == nil && i%2 == 0 {
					labels = append(labels, v) // a number: class "6" is 6
				} else {
					labels = append(labels, l)
				}
			}
			var p struct {
				Detail, Field string
			}
			bad := slices.Clone(labels)
			bad[3] = c.bad
			require.Equal(t, http.StatusUnprocessableEntity, httpCall(t, ts.URL, "POST", "/v1/events", token, map[string]any{"rows": rows, "labels": bad}, &p))
			require.Equal(t, "labels[3]", p.Field)
			require.Contains(t, p.Detail, strconv.Quote(c.bad)+" is not a class of the model: want")
			for _, cl := range c.classes {
				require.Contains(t, p.Detail, strconv.Quote(cl))
			}
			if c.name == "idx-scale" {
				scaled := [][]float64{make([]float64, len(rows[0]))}
				for j, v := range rows[0] {
					scaled[0][j] = v / 7140
				}
				for _, route := range []string{"/v1/events", "/v1/predict"} {
					body := map[string]any{"rows": scaled}
					if route == "/v1/events" {
						body["labels"] = labels[:1]
					}
					require.Equal(t, http.StatusUnprocessableEntity, httpCall(t, ts.URL, "POST", route, token, body, &p), route)
					first := slices.IndexFunc(scaled[0], func(v float64) bool { return v != math.Trunc(v) })
					require.Equal(t, fmt.Sprintf("rows[0][%d]", first), p.Field, route, "the first value that is not a pixel")
					require.Contains(t, p.Detail, "an IDX pixel is an integer 0…255", route)
				}
			}
			if c.name == "csv-feature-scale" {
				// A value outside its declared range is refused, not clipped.
				out := [][]float64{slices.Clone(rows[0])}
				out[0][2] = 4.5
				for _, route := range []string{"/v1/events", "/v1/predict"} {
					body := map[string]any{"rows": out}
					if route == "/v1/events" {
						body["labels"] = labels[:1]
					}
					require.Equal(t, http.StatusUnprocessableEntity, httpCall(t, ts.URL, "POST", route, token, body, &p), route)
					require.Equal(t, "rows[0]", p.Field, route)
					require.Contains(t, p.Detail, `feature "c" is 4.5, outside its declared range [-4, 4]`, route)
				}
			}
			require.Equal(t, http.StatusOK, httpCall(t, ts.URL, "POST", "/v1/events", token, map[string]any{"rows": rows, "labels": labels, "ids": ids}, nil))

			// Predict on every raw row of the file, whatever its class.
			var pred struct {
				Classes       []string    `json:"classes"`
				Predictions   []string    `json:"predictions"`
				Probabilities [][]float64 `json:"probabilities"`
			}
			require.Equal(t, http.StatusOK, httpCall(t, ts.URL, "POST", "/v1/predict", token, map[string]any{"rows": raw.rows}, &pred))
			require.Equal(t, c.classes, pred.Classes)
			cli := predictOut(t, "--store", storeDir, "--json", "--data", c.file) // the contract gives the flags
			lines := strings.Split(strings.TrimSpace(cli), "\n")
			require.Len(t, lines, len(raw.rows))
			for i, l := range lines {
				var v map[string]any
				dec := json.NewDecoder(strings.NewReader(l))
				dec.UseNumber()
				require.NoError(t, dec.Decode(&v))
				require.Equal(t, v["label"], pred.Predictions[i], "row %d", i)
				for k, cl := range c.classes {
					want, err := strconv.ParseFloat(string(v["p_"+cl].(json.Number)), 64)
					require.NoError(t, err)
					require.Equal(t, math.Float64bits(want), math.Float64bits(pred.Probabilities[i][k]), "row %d, class %s: bit for bit", i, cl)
				}
			}

			// Forget two rows; the state is train's on the file without them.
			drop := map[int]bool{int(ids[1] - 1): true, int(ids[4] - 1): true}
			var fs struct{ Request, Secret, State string }
			require.Equal(t, http.StatusAccepted, httpCall(t, ts.URL, "POST", "/v1/forget", token, map[string]any{"ids": []int64{ids[1], ids[4]}, "wait": true}, &fs))
			deadline := time.Now().Add(30 * time.Second)
			for fs.State != "served" {
				require.True(t, time.Now().Before(deadline), "the request is served: %s", fs.State)
				time.Sleep(20 * time.Millisecond)
				req, err := http.NewRequest("GET", ts.URL+"/v1/forget/"+fs.Request, nil)
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Unlearn-Request-Secret", fs.Secret)
				res, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				require.NoError(t, json.NewDecoder(res.Body).Decode(&fs))
				res.Body.Close()
			}
			stop()
			edited := raw.without(t, drop)
			state := filepath.Join(t.TempDir(), "state.json")
			o, err = runCLI(t, append([]string{"train", "--tau", "3", "--out", state, "--data", edited}, c.flags...)...)
			require.NoError(t, err, o)
			want, _, err := olbfgs.UnmarshalSnapshot(readFile(t, state))
			require.NoError(t, err)
			st, err = store.Open(storeDir)
			require.NoError(t, err)
			defer st.Close()
			got, err := st.State()
			require.NoError(t, err)
			require.Equal(t, len(rows)-2, got.T())
			require.Equal(t, want.T(), got.T())
			require.True(t, floatbits.Equal(want.W(), got.W()), "the state after the forget is train's on the file without the rows, bit for bit")
		})
	}
}
