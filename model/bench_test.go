package model

import (
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// genRows yields n dense rows of dimension d: a pool of 256 random rows
// (fixed seed) cycled with increasing ids, so that the benchmark times the
// prediction and the output, not a parser. With fresh, each row is a newly
// allocated copy, as a data reader returns it.
type genRows struct {
	pool  [][]float64
	n, i  int
	fresh bool
}

func newGenRows(d, n int, fresh bool) *genRows {
	r := rand.New(rand.NewPCG(1, 2))
	g := &genRows{n: n, fresh: fresh, pool: make([][]float64, 256)}
	for k := range g.pool {
		g.pool[k] = make([]float64, d)
		for j := range g.pool[k] {
			g.pool[k][j] = r.NormFloat64()
		}
	}
	return g
}

func (g *genRows) Next() (stream.Event, error) {
	if g.i == g.n {
		return stream.Event{}, io.EOF
	}
	x := g.pool[g.i%len(g.pool)]
	if g.fresh {
		x = append([]float64(nil), x...)
	}
	g.i++
	return stream.Event{Op: stream.Insert, ID: int64(g.i), Sample: stream.Sample{V: x, S: 1}}, nil
}

// binaryModel is a binary logistic model at random parameters in d
// dimensions, classes named as a user's would be.
func binaryModel(b testing.TB, d int) *Model {
	loss, err := stream.NewLogistic(d, 0.05)
	if err != nil {
		b.Fatal(err)
	}
	l, err := olbfgs.New(olbfgs.DefaultConfig(d), loss)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	w := make([]float64, d)
	for j := range w {
		w[j] = r.NormFloat64() / 10
	}
	l.SetW(w)
	m, err := New(l, &Contract{Format: "libsvm", Classes: []string{"no", "yes"}})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkWritePredictions times WritePredictions per row (b.N rows in
// one call) for a binary model: the margin, the two probabilities and the
// output line, CSV or JSON Lines, written to io.Discard. It reports rows/s
// of wall time and rows/cpu-s of the process's CPU time; allocs/op is the
// per-row allocation (0: the header and buffers are allocated once per
// call).
func BenchmarkWritePredictions(b *testing.B) {
	for _, d := range []int{10, 100, 1000} {
		for _, json := range []bool{false, true} {
			name := fmt.Sprintf("d=%d/csv", d)
			if json {
				name = fmt.Sprintf("d=%d/json", d)
			}
			b.Run(name, func(b *testing.B) {
				m := binaryModel(b, d)
				rows := newGenRows(d, b.N, false)
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuSeconds(b)
				n, err := WritePredictions(io.Discard, m, rows, Output{JSON: json})
				if err != nil || n != b.N {
					b.Fatal(n, err)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
				// Per core: rows per second of the process's CPU time, which
				// other processes of a busy machine do not inflate.
				b.ReportMetric(float64(b.N)/(cpuSeconds(b)-cpu0), "rows/cpu-s")
			})
		}
	}
}

// BenchmarkPredictMillionRows predicts 10⁶ rows at d = 100, each a newly
// allocated row as a data reader returns it, and reports the largest live
// heap seen (sampled every 10⁵ rows, after a collection): it stays that of
// a few rows, not of 10⁶ (800 MB of features).
func BenchmarkPredictMillionRows(b *testing.B) {
	const d, n = 100, 1_000_000
	m := binaryModel(b, d)
	cpu0 := cpuSeconds(b)
	for range b.N {
		rows := &sampledRows{genRows: newGenRows(d, n, true)}
		n, err := WritePredictions(io.Discard, m, rows, Output{})
		if err != nil || n != 1_000_000 {
			b.Fatal(n, err)
		}
		b.ReportMetric(float64(rows.peak)/(1<<20), "peak-live-MB")
	}
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "rows/s")
	// Per core: rows per second of the process's CPU time (collections
	// included, those of the sampling too).
	b.ReportMetric(float64(b.N)*n/(cpuSeconds(b)-cpu0), "rows/cpu-s")
}

// sampledRows records the live heap every 10⁵ rows.
type sampledRows struct {
	*genRows
	peak uint64
}

func (s *sampledRows) Next() (stream.Event, error) {
	if s.i%100_000 == 0 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.peak = max(s.peak, ms.HeapAlloc)
	}
	return s.genRows.Next()
}

// BenchmarkEvaluate times Evaluate per row for a binary model at d = 100
// (the AUC keeps each row's score: 16 bytes a row).
func BenchmarkEvaluate(b *testing.B) {
	const d = 100
	m := binaryModel(b, d)
	rows := newGenRows(d, b.N, false)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuSeconds(b)
	if _, err := Evaluate(m, rows); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.N)/(cpuSeconds(b)-cpu0), "rows/cpu-s")
}
