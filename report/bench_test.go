package report

import (
	"io"
	"testing"
)

// BenchmarkFigures computes the data of every figure of the fixed runs
// (16 decay variants and 16 benchmark configurations).
func BenchmarkFigures(b *testing.B) {
	r, err := fixedRuns()
	if err != nil {
		b.Fatal(err)
	}
	recs := append(r.decay.Records[:len(r.decay.Records):len(r.decay.Records)], r.bench.Records...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Figures(recs, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender draws one figure of each kind as PNG and as SVG: a line
// figure with marks (decay-memory), a heat map, a three-panel scatter
// (bench-efficiency) and a two-panel log-log line figure (bench-
// trajectories).
func BenchmarkRender(b *testing.B) {
	r, err := fixedRuns()
	if err != nil {
		b.Fatal(err)
	}
	decay, err := Figures(r.decay.Records, Options{})
	if err != nil {
		b.Fatal(err)
	}
	bench, err := Figures(r.bench.Records, Options{})
	if err != nil {
		b.Fatal(err)
	}
	byID := map[string]*Figure{}
	for _, f := range append(decay.Figures, bench.Figures...) {
		byID[f.ID] = f
	}
	for _, id := range []string{"decay-memory-quadratic", "decay-heatmap-quadratic", "bench-efficiency-quadratic", "bench-trajectories"} {
		f := byID[id]
		b.Run(id+"/png", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := f.WritePNG(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(id+"/svg", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := f.WriteSVG(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
