package experiment

import (
	"bytes"
	"context"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// tightnessGrid is a subset of the paper's streams at their sizes: seed 1
// of DefaultGrid (36 configurations, both kinds, every τ, mode and κ)
// and of IsotropicGrid (9), so that the test covers every binding
// (exact, recursion, diameter, radius) in about a second.
func tightnessGrid(t *testing.T) []Grid {
	t.Helper()
	var out []Grid
	for _, g := range []Grid{DefaultGrid(), IsotropicGrid()} {
		sub := Grid{Name: g.Name, Experiment: g.Experiment}
		for _, c := range g.Configs {
			if c.Stream.Seed == 1 {
				sub.Configs = append(sub.Configs, c)
			}
		}
		require.NotEmpty(t, sub.Configs)
		out = append(out, sub)
	}
	return out
}

// The certified α bounds the actual deviation of every intervention in
// every configuration, with no tolerance: the deviation is exact (math/big)
// and rounded up. Exact releases are the counterfactual bit for bit.
func TestTightnessAlphaBoundsDeviation(t *testing.T) {
	bindings := map[string]int{}
	for _, g := range tightnessGrid(t) {
		tt, err := RunTightness(context.Background(), g, TightnessOptions{})
		require.NoError(t, err)
		require.Len(t, tt.Records, len(g.Configs))
		for _, r := range tt.Records {
			require.Len(t, r.Methods, len(unlearn.Paper(r.Config.Tau)))
			for _, m := range r.Methods {
				require.GreaterOrEqual(t, m.Alpha, m.Deviation, "%s %s: α = %v < deviation %v", r.ID, m.Name, m.Alpha, m.Deviation)
				require.True(t, m.Holds())
				if m.Source == "exact" {
					require.Zero(t, m.Alpha, "%s %s", r.ID, m.Name)
					require.Zero(t, m.Deviation, "%s %s: an exact release must equal the counterfactual", r.ID, m.Name)
					bindings["exact"]++
				} else {
					require.Equal(t, "derived", m.Source)
					require.Positive(t, m.Alpha)
					bindings[m.Binding]++
				}
			}
			// The oracle is always exact; no-op never is (it keeps U's influence).
			assert.Equal(t, "exact", r.Methods[0].Source, r.ID)
			assert.Equal(t, unlearn.Oracle().Name(), r.Methods[0].Name)
		}
	}
	// The grid exercises every bound: the recursion binds on the isotropic
	// streams, the diameter on the paper's, the radius for drop and refill.
	for _, b := range []string{"exact", "recursion", "diameter", "radius"} {
		assert.Positive(t, bindings[b], "no configuration had α from %q", b)
	}
}

// The table has a row per intervention, labelled as the operators are,
// per stream kind; every row says α ≥ deviation in every configuration.
func TestTightnessTables(t *testing.T) {
	g := tightnessGrid(t)[0]
	tt, err := RunTightness(context.Background(), g, TightnessOptions{})
	require.NoError(t, err)
	tabs := TightnessTables(tt)
	require.Len(t, tabs, 2)
	ops := unlearn.Paper(DefaultTau)
	for i, kind := range []stream.Kind{stream.KindQuadratic, stream.KindLogistic} {
		tab := tabs[i]
		assert.Equal(t, "tightness-default-"+string(kind), tab.Name)
		require.Len(t, tab.Rows, len(ops))
		for j, row := range tab.Rows {
			require.Len(t, row, len(tab.Columns))
			assert.Equal(t, ops[j].Label(), row[0].Text)
			assert.Equal(t, 18.0, row[1].Value, "configurations of one kind at seed 1")
			assert.Equal(t, 1.0, row[8].Value, "share with α ≥ deviation")
			assert.GreaterOrEqual(t, row[7].Value, 1.0, "smallest α ÷ deviation")
			assert.LessOrEqual(t, row[4].Value, row[5].Value, "median deviation ≤ max")
		}
		assert.Equal(t, "exact 18", tab.Rows[0][2].Text, "oracle replay")
		var b bytes.Buffer
		require.NoError(t, tab.WriteMarkdown(&b))
		assert.Contains(t, b.String(), "Window replay 5τ")
	}
}

// Records are a pure function of each configuration: the same with one
// worker or two, and across runs.
func TestTightnessDeterministic(t *testing.T) {
	g := tightnessGrid(t)[1]
	g.Configs = g.Configs[:4]
	var outs [][]byte
	for _, w := range []int{1, 2, 2} {
		tt, err := RunTightness(context.Background(), g, TightnessOptions{Workers: w})
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, tt.WriteJSON(&b))
		outs = append(outs, b.Bytes())
	}
	assert.Equal(t, outs[0], outs[1])
	assert.Equal(t, outs[0], outs[2])
}

// The sample bound of CertifiableConfig holds for every payload of the
// paper's generators (the learner would refuse one that does not, so the
// runs above would fail): checked here on whole streams with margin.
func TestCertifiableConfigSampleBound(t *testing.T) {
	for _, c := range []Config{
		{Stream: StreamSpec{Kind: stream.KindQuadratic, Seed: 7, Kappa: 100}},
		{Stream: StreamSpec{Kind: stream.KindLogistic, Seed: 7, Kappa: 100}},
		{Stream: StreamSpec{Kind: stream.KindLogistic, Seed: 8, FeatureScale: 10, Kappa: 10}},
	} {
		lcfg, err := CertifiableConfig(c)
		require.NoError(t, err)
		require.True(t, lcfg.Guarded())
		h, err := c.Stream.Generate()
		require.NoError(t, err)
		var top float64
		for _, e := range h.Events {
			var s float64
			for _, x := range e.Sample.V {
				s += x * x
			}
			top = max(top, math.Sqrt(s))
		}
		// Source of 0.7: the bound's tail t = 10 puts B about 10·σ above
		// the typical norm, far above the largest of 5000 draws.
		assert.Less(t, top, 0.7*lcfg.SampleBound, "%s: largest payload norm %v vs B = %v", c.Stream.Kind, top, lcfg.SampleBound)
		_, err = olbfgs.Replay(lcfg, h.Loss, h.Events)
		require.NoError(t, err)
	}
	_, err := CertifiableConfig(Config{Stream: StreamSpec{Kind: "cubic"}})
	wantConfigError(t, err, "Stream.Kind")
}

// ExactDistance is the exact norm rounded up: its square is at least the
// exact sum of squared differences and its predecessor's is below it, and
// it agrees with the float computation to round-off.
func TestExactDistanceRoundsUp(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 30).Draw(t, "n")
		a := rapid.SliceOfN(rapid.Float64Range(-1e6, 1e6), n, n).Draw(t, "a")
		b := make([]float64, n)
		for i := range b {
			// Nearby values too: the cancellation a rounded computation gets wrong.
			b[i] = a[i] + rapid.Float64Range(-1e-9, 1e-9).Draw(t, "db")*float64(rapid.IntRange(0, 1).Draw(t, "near"))
			if rapid.Bool().Draw(t, "far") {
				b[i] = rapid.Float64Range(-1e6, 1e6).Draw(t, "b")
			}
		}
		d := ExactDistance(a, b)
		sum := new(big.Float).SetPrec(4400)
		for i := range a {
			x := new(big.Float).SetPrec(4400).SetFloat64(a[i])
			x.Sub(x, new(big.Float).SetPrec(4400).SetFloat64(b[i]))
			sum.Add(sum, x.Mul(x, x))
		}
		sq := func(v float64) *big.Float {
			f := new(big.Float).SetPrec(4400).SetFloat64(v)
			return f.Mul(f, f)
		}
		if sq(d).Cmp(sum) < 0 {
			t.Fatalf("ExactDistance = %v below the exact norm", d)
		}
		if d > 0 && sq(math.Nextafter(d, 0)).Cmp(sum) >= 0 {
			t.Fatalf("ExactDistance = %v is not the smallest float ≥ the exact norm", d)
		}
		var s float64
		for i := range a {
			s += (a[i] - b[i]) * (a[i] - b[i])
		}
		// Source of 1e-12: a float sum of ≤ 30 squares is within 30u of
		// the exact one relative to the sum (all terms are positive), plus
		// the rounding of each difference.
		if f := math.Sqrt(s); math.Abs(f-d) > 1e-12*d+1e-300 && !(s == 0 && d < 1e-150) {
			t.Fatalf("ExactDistance = %v, float computation %v", d, f)
		}
	})
	assert.Panics(t, func() { ExactDistance([]float64{1}, nil) })
}

// A tightness file reads back to the same values; malformed files are
// refused with ErrRecord.
func TestTightnessFiles(t *testing.T) {
	g := tightnessGrid(t)[1]
	g.Configs = g.Configs[:2]
	tt, err := RunTightness(context.Background(), g, TightnessOptions{})
	require.NoError(t, err)
	dir := t.TempDir()
	got, err := ReadTightnessFiles(dir)
	require.NoError(t, err)
	require.Nil(t, got, "no file: nothing, no error")
	require.NoError(t, WriteTightnessFiles(dir, []*Tightness{tt}))
	got, err = ReadTightnessFiles(dir)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, tt.Records[1].Methods, got[0].Records[1].Methods)
	_, err = os.Stat(filepath.Join(dir, "tables", "tightness-isotropic-quadratic.csv"))
	require.NoError(t, err)

	var b bytes.Buffer
	require.NoError(t, tt.WriteJSON(&b))
	good := b.String()
	for name, bad := range map[string]string{
		"format":   strings.Replace(good, TightnessFormat, "unlearn-tightness/v0", 1),
		"unknown":  strings.Replace(good, `"grid"`, `"grid2": 1, "grid"`, 1),
		"negative": strings.Replace(good, `"deviation": 0`, `"deviation": -1`, 1),
		"empty":    `{"format":"` + TightnessFormat + `","grid":"x","learner":"","records":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadTightness(strings.NewReader(bad))
			require.ErrorIs(t, err, ErrRecord)
		})
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, TightnessFile), []byte("{"), 0o644))
	_, err = ReadTightnessFiles(dir)
	require.ErrorIs(t, err, ErrRecord)
}

func TestRunTightnessErrors(t *testing.T) {
	_, err := RunTightness(context.Background(), Grid{Name: "empty"}, TightnessOptions{})
	require.ErrorIs(t, err, ErrConfig)
	g := Grid{Name: "bad", Configs: []Config{{Tau: -1}}}
	_, err = RunTightness(context.Background(), g, TightnessOptions{})
	wantConfigError(t, err, "Tau")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = RunTightness(ctx, tightnessGrid(t)[1], TightnessOptions{})
	require.ErrorIs(t, err, context.Canceled)
}

// wantConfigError fails unless err is a *ConfigError naming field.
func wantConfigError(t *testing.T, err error, field string) {
	t.Helper()
	require.ErrorIs(t, err, ErrConfig)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, field, ce.Field)
}
