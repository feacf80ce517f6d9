package serve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/sign"
	"unlearn/store"
	"unlearn/stream"
)

var (
	loadD       = flag.Int("serve.load.d", 100, "BenchmarkServiceLoad: dimension d")
	loadBatches = flag.Int("serve.load.batches", 100, "BenchmarkServiceLoad: HTTP ingest batches of 500 rows")
	loadClients = flag.Int("serve.load.clients", 4, "BenchmarkServiceLoad: ingest clients sending batches at once")
	loadRounds  = flag.Int("serve.load.rounds", 3, "BenchmarkServiceLoad: rounds of (command line, HTTP), alternated")
)

// loadStore makes a logistic store of dimension d with the command line's
// defaults (τ = 10, K = 10000).
func loadStore(b testing.TB, d int) *store.Store {
	b.Helper()
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory = 10
	st, err := store.Create(b.TempDir(), store.Config{Header: stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: d, Lambda: 0.05}, Learner: cfg})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// packRows is the rows_f64 encoding of rows (base64 by encoding/json).
func packRows(rows [][]float64) []byte {
	var out []byte
	for _, r := range rows {
		for _, v := range r {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
		}
	}
	return out
}

// loadRun is one HTTP run's figures.
type loadRun struct {
	rate      float64         // events/s
	latencies []time.Duration // of the predictions made while ingesting
	margin    time.Duration   // how long before its deadline the deletion was served
	batch     time.Duration   // the deletion batch's time
}

// BenchmarkServiceLoad measures the service on loopback under a bounded
// load, against the command line's ingest of the same events. Each round
// runs, one after the other on a fresh store:
//
//   - the command line's path: store.Ingest of a stream file (JSON Lines,
//     parsed as `unlearn ingest FILE` parses it) in transactions of 10000
//     events, its default;
//   - the service: -serve.load.batches HTTP ingest batches of 500 rows at
//     d = -serve.load.d, sent by -serve.load.clients clients at once (the
//     service commits batches that arrive together in one transaction),
//     while another client predicts 100 rows at a time and, halfway, a
//     deletion request with a 10 s deadline is filed.
//
// It reports the median over -serve.load.rounds rounds of the HTTP rate,
// the command line's rate and their ratio (taken round by round, so that a
// machine whose speed drifts compares like with like), the 50th and 99th
// percentile of the prediction latencies of all rounds, and the smallest
// margin by which a deletion was served before its deadline (negative:
// late), with the rows sent as JSON numbers (json) and as rows_f64 (f64).
// The request bodies are encoded before the clock starts, so the clients
// cost little.
//
//	go test ./serve -run '^$' -bench BenchmarkServiceLoad -benchtime 1x
func BenchmarkServiceLoad(b *testing.B) {
	for _, enc := range []string{"json", "f64"} {
		b.Run(enc, func(b *testing.B) { benchmarkServiceLoad(b, enc == "f64") })
	}
}

func benchmarkServiceLoad(b *testing.B, f64 bool) {
	d, n := *loadD, *loadBatches*500
	x, y := rows(1, n, d)
	events := make([]stream.Event, n)
	for i := range events {
		events[i] = stream.InsertEvent(int64(i+1), x[i], y[i])
	}
	file := filepath.Join(b.TempDir(), "events.jsonl")
	h := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: d, Lambda: 0.05}
	hist, err := stream.NewHistory(h, events)
	if err != nil {
		b.Fatal(err)
	}
	if err := stream.WriteFile(file, hist); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		var cli, web, ratio []float64
		var lat []time.Duration
		margin, batch := time.Duration(math.MaxInt64), time.Duration(0)
		for range *loadRounds {
			c := cliIngest(b, d, file, n)
			r := httpLoad(b, x, y, f64)
			cli, web, ratio = append(cli, c), append(web, r.rate), append(ratio, r.rate/c)
			lat = append(lat, r.latencies...)
			margin, batch = min(margin, r.margin), max(batch, r.batch)
		}
		slices.Sort(lat)
		q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
		b.ReportMetric(median(web), "http-events/s")
		b.ReportMetric(median(cli), "cli-events/s")
		b.ReportMetric(median(ratio), "ratio")
		b.ReportMetric(q(0.5), "predict-p50-ms")
		b.ReportMetric(q(0.99), "predict-p99-ms")
		b.ReportMetric(float64(len(lat)), "predictions")
		b.ReportMetric(margin.Seconds(), "forget-s-before-deadline")
		b.ReportMetric(batch.Seconds(), "forget-batch-s")
	}
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// cliIngest is `unlearn ingest --store DIR FILE` on a fresh store: the
// events/s of store.Ingest of the stream file.
func cliIngest(b *testing.B, d int, file string, n int) float64 {
	st := loadStore(b, d)
	defer st.Close()
	f, err := os.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	if _, err := st.Ingest(f, store.IngestOptions{BatchSize: 10000}); err != nil {
		b.Fatal(err)
	}
	return float64(n) / time.Since(start).Seconds()
}

// httpLoad is one run of the service under load on a fresh store.
func httpLoad(b *testing.B, x [][]float64, y []float64, f64 bool) loadRun {
	const batch, predictRows = 500, 100
	d, n := len(x[0]), len(x)
	st := loadStore(b, d)
	defer st.Close()
	key, err := sign.Generate()
	if err != nil {
		b.Fatal(err)
	}
	token, _, err := st.CreateToken("load", []string{"ingest", "predict", "forget"})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(st, Options{Key: key, ForgetWithin: 10 * time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close(b.Context())
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	bodies := make([][]byte, n/batch)
	for i := range bodies {
		lo, hi := i*batch, (i+1)*batch
		ids := make([]int64, batch)
		for j := range ids {
			ids[j] = int64(lo + j + 1)
		}
		req := map[string]any{"rows": x[lo:hi], "labels": y[lo:hi], "ids": ids}
		if f64 {
			delete(req, "rows")
			req["rows_f64"], req["cols"] = packRows(x[lo:hi]), d
		}
		bodies[i], _ = json.Marshal(req)
	}
	probe, _ := json.Marshal(map[string]any{"rows": x[:predictRows]})
	post := func(path string, body []byte) (int, []byte) {
		req, _ := http.NewRequest("POST", ts.URL+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := ts.Client().Do(req)
		if err != nil {
			b.Error(err)
			return 0, nil
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, out
	}

	var run loadRun
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // predictions while ingesting
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			if code, out := post("/v1/predict", probe); code != http.StatusOK {
				b.Errorf("predict: %d %s", code, out)
				return
			}
			run.latencies = append(run.latencies, time.Since(t0))
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var request string
	next := make(chan int, len(bodies))
	for i := range bodies {
		next <- i
	}
	close(next)
	start := time.Now()
	var ingest sync.WaitGroup
	var mu sync.Mutex
	for range *loadClients {
		ingest.Add(1)
		go func() {
			defer ingest.Done()
			for i := range next {
				if code, out := post("/v1/events", bodies[i]); code != http.StatusOK {
					b.Errorf("ingest: %d %s", code, out)
					return
				}
				if i == len(bodies)/2 {
					code, out := post("/v1/forget", []byte(`{"ids":[7, 1000]}`))
					if code != http.StatusAccepted {
						b.Errorf("forget: %d %s", code, out)
						return
					}
					var st forgetState
					json.Unmarshal(out, &st)
					mu.Lock()
					request = st.Request
					mu.Unlock()
				}
			}
		}()
	}
	ingest.Wait()
	run.rate = float64(n) / time.Since(start).Seconds()
	close(stop)
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		q, ok, _ := srv.queue.lookup(request)
		if ok && q.State == store.Served {
			rc, err := certify.VerifyReceipt(q.Receipt, key.Public())
			if err != nil {
				b.Fatal(err)
			}
			dl, _ := time.Parse(certify.ReceiptTimeLayout, rc.Deadline)
			sv, _ := time.Parse(certify.ReceiptTimeLayout, rc.Served)
			run.margin = dl.Sub(sv)
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the deletion was not served within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.queue.mu.Lock()
	run.batch = srv.queue.lastBatch
	srv.queue.mu.Unlock()
	return run
}

// BenchmarkDecodeRows decodes an ingest body of 500 rows at d = 100 (≈ 1 MB
// of JSON numbers) with encoding/json and with encoding/json/v2, as the
// service does, and its rows_f64 form (≈ 0.5 MB of base64).
//
//	go test ./serve -run '^$' -bench BenchmarkDecodeRows
func BenchmarkDecodeRows(b *testing.B) {
	x, y := rows(1, 500, 100)
	text, _ := json.Marshal(map[string]any{"rows": x, "labels": y})
	packed, _ := json.Marshal(map[string]any{"rows_f64": packRows(x), "cols": 100, "labels": y})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for range b.N {
			var req eventsRequest
			if err := json.Unmarshal(text, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json-v2", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for range b.N {
			var req eventsRequest
			if p := unmarshal(text, &req); p != nil {
				b.Fatal(p)
			}
		}
	})
	b.Run("json-v2-rows_f64", func(b *testing.B) {
		b.SetBytes(int64(len(packed)))
		for range b.N {
			var req eventsRequest
			if p := unmarshal(packed, &req); p != nil {
				b.Fatal(p)
			}
			if _, p := unpackRows(req.RowsF64, req.Cols, 100, nil); p != nil {
				b.Fatal(p)
			}
		}
	})
}
