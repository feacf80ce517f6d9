package report

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats/scalar"

	"unlearn/experiment"
	"unlearn/stream"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Tolerances of the golden comparison. the spec fixes trajectories to ~1e-9
// relative between implementations (docs/spec.md, preamble); absolute 1e-12 covers
// values at round-off level, where relative error means nothing (the
// errors of this small run start near 1e-1, so 1e-12 is 11 decades below).
const (
	goldenAbs = 1e-12
	goldenRel = 1e-9
)

// fixedRuns are the small, fixed runs the golden tests draw: Experiment 1
// over kind × τ {2, 4} × mode {recent, old} × κ {10, 100} (16 variants,
// d = 5, T = 150, t_del = 60, H = 40, m_q = 4) and Experiment 2 over kind ×
// τ {2, 4} × mode {recent, random} × κ 10 × seed {1, 2} (16
// configurations, d = 5, T = 170, t_del = 60, H = 110 — at least 100, so
// the trajectory figure takes its log x axis — with the series of the
// reference configuration). Timing is zeroed: records are then a
// deterministic function of the configuration. Tests must not modify them.
var fixedRuns = sync.OnceValues(func() (runs, error) {
	kinds := []stream.Kind{stream.KindQuadratic, stream.KindLogistic}
	d := experiment.Experiment1()
	d.Stream.D, d.Stream.T, d.TDel, d.Horizon, d.Probes = 5, 150, 60, 40, 4
	decay := experiment.GridAxes{Kinds: kinds, Taus: []int{2, 4}, Modes: []string{experiment.ModeRecent, experiment.ModeOld},
		Kappas: []float64{10, 100}, Seeds: []uint64{1}}.Grid("decay-test", experiment.ExperimentDecay, d)
	dec, err := experiment.RunGrid(context.Background(), decay, experiment.Options{KeepSeries: true, ZeroTiming: true})
	if err != nil {
		return runs{}, err
	}
	b := experiment.Experiment2()
	b.Stream.D, b.Stream.T, b.TDel, b.Horizon, b.Probes = 5, 170, 60, 110, 4
	bench := experiment.GridAxes{Kinds: kinds, Taus: []int{2, 4}, Modes: []string{experiment.ModeRecent, experiment.ModeRandom},
		Kappas: []float64{10}, Seeds: []uint64{1, 2}}.Grid("bench-test", experiment.ExperimentBenchmark, b)
	ben, err := experiment.RunGrid(context.Background(), bench, experiment.Options{
		KeepSeriesOf: SeriesConfigs(bench, Reference{}), ZeroTiming: true})
	if err != nil {
		return runs{}, err
	}
	return runs{decay: dec, bench: ben}, nil
})

type runs struct{ decay, bench *experiment.Results }

// fixed returns the fixed runs.
func fixed(t *testing.T) runs {
	t.Helper()
	r, err := fixedRuns()
	require.NoError(t, err)
	return r
}

// compareJSON compares two JSON documents: same structure, equal strings,
// booleans and nulls, numbers within goldenAbs or goldenRel. It returns
// the first difference's path.
func compareJSON(path string, got, want any) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: got %T, want an object", path, got)
		}
		if len(g) != len(w) {
			return fmt.Errorf("%s: got %d keys, want %d", path, len(g), len(w))
		}
		for k, wv := range w {
			if err := compareJSON(path+"."+k, g[k], wv); err != nil {
				return err
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: got %v, want an array of %d", path, got, len(w))
		}
		for i := range w {
			if err := compareJSON(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); err != nil {
				return err
			}
		}
	case float64:
		g, ok := got.(float64)
		if !ok || !scalar.EqualWithinAbsOrRel(g, w, goldenAbs, goldenRel) {
			return fmt.Errorf("%s: got %v, want %v", path, got, w)
		}
	default: // string, bool, nil
		if got != want {
			return fmt.Errorf("%s: got %#v, want %#v", path, got, want)
		}
	}
	return nil
}

// checkGolden compares v, as JSON, with testdata/name, or rewrites it with
// -update.
func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	require.NoError(t, err)
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	wantB, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./report -run %s -update to create it", t.Name())
	var got, want any
	require.NoError(t, json.Unmarshal(b, &got))
	require.NoError(t, json.Unmarshal(wantB, &want), "%s", path)
	require.NoError(t, compareJSON("$", got, want), "%s differs (run with -update if the change is intended)", path)
}
