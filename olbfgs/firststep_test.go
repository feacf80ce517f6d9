package olbfgs

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

// TestCheckFirstSteps: the configurations of issue 19 on which every insert
// failed are refused, naming the field; the defaults and sensible settings
// pass.
func TestCheckFirstSteps(t *testing.T) {
	logistic := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 5, Lambda: 0.05}
	quad := stream.Header{Format: stream.FormatV1, Kind: stream.KindQuadratic, D: 2,
		H0: [][]float64{{4, 1}, {1, 3}}, H1: [][]float64{{2, 0}, {0, 2}}} // Gershgorin floor 2
	with := func(edit func(*Config)) Config {
		c := DefaultConfig(5)
		edit(&c)
		return c
	}
	for _, tc := range []struct {
		name  string
		cfg   Config
		h     stream.Header
		field string // "" accepted
	}{
		{"defaults", DefaultConfig(5), logistic, ""},
		{"defaults, quadratic", with(func(c *Config) { c.Dim = 2 }), quad, ""},
		{"eta 1e308", with(func(c *Config) { c.StepSize = 1e308 }), logistic, "StepSize"},
		{"gamma0 1e308", with(func(c *Config) { c.InitialScale = 1e308 }), logistic, "StepSize"},
		{"eta·gamma0 overflows", with(func(c *Config) { c.StepSize, c.InitialScale = 1e200, 1e200 }), logistic, "StepSize"},
		{"lambda 1e308", DefaultConfig(5), stream.Header{Kind: stream.KindLogistic, D: 5, Lambda: 1e308}, "Loss.Lambda"},
		{"lambda 1e10", DefaultConfig(5), stream.Header{Kind: stream.KindRegression, D: 5, Lambda: 1e10}, "StepSize"},
		{"lambda 1e10 with gamma0 1/lambda", with(func(c *Config) { c.InitialScale = 1e-10 }), stream.Header{Kind: stream.KindRegression, D: 5, Lambda: 1e10}, ""},
		{"quadratic floor 2, eta·gamma0 = 1.01", with(func(c *Config) { c.Dim, c.StepSize = 2, 1.01 }), quad, "StepSize"},
		{"quadratic floor 2, eta·gamma0 = 0.99", with(func(c *Config) { c.Dim, c.StepSize = 2, 0.99 }), quad, ""},
		{"radius exempts the first step", with(func(c *Config) { c.StepSize, c.Radius = 1e308, 1 }), logistic, ""},
		{"sample bound subnormal", with(func(c *Config) { c.SampleBound = 1e-320 }), logistic, "SampleBound"},
		{"sample bound smallest normal", with(func(c *Config) { c.SampleBound = minNormal }), logistic, ""},
		{"sample bound overflows", with(func(c *Config) { c.SampleBound = math.MaxFloat64 }), logistic, "SampleBound"},
		{"radius subnormal", with(func(c *Config) { c.Radius = 5e-324 }), logistic, "Radius"},
		{"radius diameter overflows", with(func(c *Config) { c.Radius = 1e308 }), logistic, "Radius"},
		{"pair window overflows", with(func(c *Config) { c.PairAngle, c.PairMin, c.PairMax = 0.5, 1e-320, 1 }), logistic, "PairMin"},
		{"multinomial eta 1e308", with(func(c *Config) { c.Outputs, c.StepSize = 3, 1e308 }), stream.Header{Kind: stream.KindMultinomial, D: 5, K: 3, Lambda: 0.05}, "StepSize"},
		{"multinomial defaults", with(func(c *Config) { c.Outputs = 3 }), stream.Header{Kind: stream.KindMultinomial, D: 5, K: 3, Lambda: 0.05}, ""},
		{"regularized intercept, eta 1e308", with(func(c *Config) { c.Intercept, c.RidgeIntercept, c.StepSize = true, true, 1e308 }), logistic, "StepSize"},
		{"unregularized intercept exempts the first step", with(func(c *Config) { c.Intercept, c.StepSize = true, 1e308 }), logistic, ""},
		{"decaying step, eta 1e308", with(func(c *Config) { c.StepDecay, c.StepSize = 0.003, 1e308 }), logistic, "StepSize"},
		// 2W' over K·(d+1) = 3·6 parameters: (1+2·26u)·2 > 2(1+2·13u).
		{"radius diameter at the bound over the parameters", with(func(c *Config) {
			c.Outputs, c.Intercept, c.Radius = 3, true, math.MaxFloat64/(2*(1+slack(5)))
		}), stream.Header{Kind: stream.KindMultinomial, D: 5, K: 3, Lambda: 0.05}, "Radius"},
		{"no floor known (lambda 0)", with(func(c *Config) { c.StepSize = 1e308 }), stream.Header{Kind: stream.KindRegression, D: 5}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, tc.cfg.Validate())
			err := tc.cfg.CheckFirstSteps(tc.h)
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			var ce *ConfigError
			require.True(t, errors.As(err, &ce), "%v", err)
			require.Equal(t, tc.field, ce.Field)
			require.ErrorIs(t, err, ErrConfig)
		})
	}
}

// TestFirstStepNoProgress checks the criterion's claim on real steps: on
// ridge-logistic samples from w = 0 with an empty memory, a first step with
// η·γ₀·λ ≥ 2 lands at least as far from the sample's minimizer as w = 0 is
// (the minimizer found by many small steps), and the criterion refuses
// them (a product just above 2; the criterion's rounding margin lets
// products within 4u of 2 pass).
func TestFirstStepNoProgress(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 3))
	const d, lambda = 3, 0.5
	loss, err := stream.NewLogistic(d, lambda)
	require.NoError(t, err)
	h := loss.Header()
	for range 50 {
		x := []float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		z := stream.Sample{V: x, S: 1}
		// The sample's minimizer, by gradient descent with step 1/L.
		L := lambda + (x[0]*x[0]+x[1]*x[1]+x[2]*x[2])/4
		wStar, g := make([]float64, d), make([]float64, d)
		for range 20000 {
			loss.Grad(g, wStar, z)
			for i := range wStar {
				wStar[i] -= g[i] / L
			}
		}
		dist0 := math.Sqrt(wStar[0]*wStar[0] + wStar[1]*wStar[1] + wStar[2]*wStar[2])
		for _, eg := range []float64{4.0 / lambda, 2.000001 / lambda} { // η·γ₀·λ = 4 and just above 2
			cfg := DefaultConfig(d)
			cfg.StepSize, cfg.InitialScale = 1, eg
			require.Error(t, cfg.CheckFirstSteps(h))
			l, err := New(cfg, loss)
			require.NoError(t, err)
			require.NoError(t, l.Step(stream.Event{Op: stream.Insert, ID: 1, Sample: z}))
			var d1 float64
			for i, w := range l.W() {
				d1 += (w - wStar[i]) * (w - wStar[i])
			}
			require.GreaterOrEqual(t, math.Sqrt(d1), dist0*(1-1e-9), "η·γ₀·λ = %v: the first step made progress", eg*lambda)
		}
	}
}
