package experiment

import (
	"context"
	"testing"
)

// BenchmarkExperiment2Config runs configuration 18 of the default grid
// (quadratic, τ = 10, recent, κ = 10, seed 1) at the paper's sizes: stream
// generation, training, 9 operators and 4500 steps of 10 states with every
// metric (32 probes). Multiply by 108 and divide by the cores for the grid.
func BenchmarkExperiment2Config(b *testing.B) {
	cfg := DefaultGrid().Configs[18]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), ExperimentBenchmark, cfg, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExperiment2ConfigLogistic is BenchmarkExperiment2Config on the
// logistic stream (configuration 72: logistic, τ = 10, recent, κ = 10,
// seed 1).
func BenchmarkExperiment2ConfigLogistic(b *testing.B) {
	cfg := DefaultGrid().Configs[72]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), ExperimentBenchmark, cfg, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGridTwins runs a quarter of the default grid (shard 0/4: 27
// configurations, every kind, τ, mode and κ) on one worker, measuring and
// stepping every state (twins=off) or with twin detection (twins=on,
// twins.go): the same records, bit for bit (TestTwinsSameRecords). Run
// with -benchtime=1x -count=N; the two alternate.
func BenchmarkGridTwins(b *testing.B) {
	defer func(v bool) { detectTwins = v }(detectTwins)
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "twins=off", true: "twins=on"}[on]
		b.Run(name, func(b *testing.B) {
			detectTwins = on
			for b.Loop() {
				_, err := RunGrid(context.Background(), DefaultGrid(), Options{Workers: 1, ZeroTiming: true, Shard: Shard{K: 0, N: 4}})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
