package audit

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/internal/testutil"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/unlearn"
)

// keepMemory is a deliberately broken release built by hand from the
// learner: w + N(0, σ²I) through noise.NewGaussian, calibrated to the true
// α, with the un-noised memory published beside it.
type keepMemory struct {
	w, memory         []float64
	alpha, eps, delta float64
}

func (k keepMemory) Dim() int { return len(k.w) + len(k.memory) }

func (k keepMemory) Release(dst []float64, s noise.Sampler) error {
	g, err := noise.NewGaussian(noise.GaussianOptions{Alpha: k.alpha, Epsilon: k.eps, Delta: k.delta, Sampler: s})
	if err != nil {
		return err
	}
	if _, err := g.Release(dst[:len(k.w)], k.w); err != nil {
		return err
	}
	copy(dst[len(k.w):], k.memory)
	return nil
}

// The power tests audit broken pipelines with the DEFAULT configuration
// (n = 10000, γ = 10⁻⁵) and a claim of ε = 1, δ = 10⁻⁵, and require
// ε_lb ≥ 3: well above the claim. A perfect test reaches the ceiling ≈ 5.96.
const (
	claimEps   = 1.0
	claimDelta = 1e-5
	wellAbove  = 3.0
)

func TestPowerNoNoise(t *testing.T) {
	p := newPipeline(t, 1, 500, 5)
	a, b, dist := p.worlds(t, unlearn.MemoryReset())
	require.Greater(t, dist, 0.0, "memory reset leaves w_A ≠ w_B")
	rep, err := Run(context.Background(), Config{
		A: Gaussian(a.W(), nil, 0), B: Gaussian(b.W(), nil, 0),
		Epsilon: claimEps, Delta: claimDelta, Seeded: true, Seed: 1,
	})
	require.NoError(t, err)
	require.Equal(t, Violation, rep.Verdict)
	require.Greater(t, rep.EpsilonLB, wellAbove)
	// Without noise both tests separate perfectly: ε_lb is the ceiling.
	require.Equal(t, rep.Ceiling, rep.EpsilonLB)
	t.Logf("no noise: ε_lb = %.4g (ceiling %.4g)", rep.EpsilonLB, rep.Ceiling)
}

func TestPowerMemoryReleased(t *testing.T) {
	p := newPipeline(t, 2, 500, 5)
	for _, op := range []unlearn.Operator{unlearn.NoOp(), unlearn.PairDrop(), unlearn.ParamOnly()} {
		t.Run(op.Name(), func(t *testing.T) {
			a, b, dist := p.worlds(t, op)
			mA, mB := Flatten(a.Memory()), Flatten(b.Memory())
			rep, err := Run(context.Background(), Config{
				A:       keepMemory{w: a.W(), memory: mA, alpha: dist, eps: claimEps, delta: claimDelta},
				B:       keepMemory{w: b.W(), memory: mB, alpha: dist, eps: claimEps, delta: claimDelta},
				Epsilon: claimEps, Delta: claimDelta, WDim: len(a.W()), Seeded: true, Seed: 2,
			})
			require.NoError(t, err)
			require.Equal(t, Violation, rep.Verdict)
			require.Greater(t, rep.EpsilonLB, wellAbove)
			bb := rep.Tests[1]
			require.Equal(t, TestBlackBox, bb.Name)
			require.Equal(t, rep.Ceiling, bb.EpsilonLB, "an un-noised memory separates perfectly")
			require.Contains(t, bb.Statistic, "memory", "the black-box test must find the memory")
			t.Logf("%s: ε_lb = %.4g via %s; LR test %.4g", op.Name(), rep.EpsilonLB, bb.Statistic, rep.Tests[0].EpsilonLB)
		})
	}
}

func TestPowerTenthSigma(t *testing.T) {
	p := newPipeline(t, 3, 500, 5)
	a, b, dist := p.worlds(t, unlearn.MemoryReset())
	sigma, err := noise.SigmaAnalytic(dist, claimEps, claimDelta)
	require.NoError(t, err)
	rep, err := Run(context.Background(), Config{
		A: Gaussian(a.W(), nil, sigma/10), B: Gaussian(b.W(), nil, sigma/10),
		Epsilon: claimEps, Delta: claimDelta, Seeded: true, Seed: 3,
	})
	require.NoError(t, err)
	require.Equal(t, Violation, rep.Verdict)
	require.Greater(t, rep.EpsilonLB, wellAbove)
	t.Logf("σ/10: ε_lb = %.4g (LR %.4g, black-box %.4g via %s)", rep.EpsilonLB,
		rep.Tests[0].EpsilonLB, rep.Tests[1].EpsilonLB, rep.Tests[1].Statistic)
}

// TestValidity audits sound pipelines — the Gaussian mechanism calibrated
// with noise.SigmaAnalytic to the TRUE distance ‖w_A − w_B‖ between the
// worlds' un-noised parameters, memory reset — across interventions,
// privacy levels and streams, and requires ε_lb ≤ ε in every run.
//
// Why this is a reliable test and not a flaky one: on a sound pipeline each
// audit reports ε_lb > ε with probability at most γ = 10⁻⁵ (Run's
// documentation); over the 9 runs here the chance that any false alarm
// occurs is at most 9·10⁻⁵. The seeds are fixed, so the outcome is the
// same on every machine and every run: a failure means the audit (or the
// noise) is wrong, not bad luck — up to that 9·10⁻⁵ for the seeds chosen
// once.
func TestValidity(t *testing.T) {
	configs := []struct {
		name        string
		seed        uint64
		op          unlearn.Operator
		eps, delta  float64
		trials      int
		selFraction float64
	}{
		{"memory-reset ε=1", 11, unlearn.MemoryReset(), 1, 1e-5, 0, 0},
		{"param-only ε=1", 12, unlearn.ParamOnly(), 1, 1e-5, 0, 0},
		{"noop ε=0.5", 13, unlearn.NoOp(), 0.5, 1e-5, 0, 0},
		{"pair-drop ε=2", 14, unlearn.PairDrop(), 2, 1e-5, 0, 0},
		{"retain-ft ε=1 δ=1e-3", 15, unlearn.RetainFineTune(), 1, 1e-3, 0, 0},
		// Window replay covers U here and is exact: α = 0, σ = 0, and the
		// un-noised releases are identical, which is sound.
		{"window-tau (exact) ε=4", 16, unlearn.WindowReplay(10, "window-tau", "Window replay τ"), 4, 1e-6, 0, 0},
		{"memory-reset ε=0.1", 17, unlearn.MemoryReset(), 0.1, 1e-5, 0, 0},
		{"drop-refill ε=1, n=40000, 30% selection", 18, unlearn.DropRefill(), 1, 1e-5, 40000, 0.3},
		{"noop ε=1, n=400", 19, unlearn.NoOp(), 1, 1e-5, 400, 0},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			p := newPipeline(t, c.seed, 300+int(c.seed), 5)
			a, b, dist := p.worlds(t, c.op)
			sigma, err := noise.SigmaAnalytic(dist, c.eps, c.delta)
			require.NoError(t, err)
			rep, err := Run(context.Background(), Config{
				A: Gaussian(a.W(), nil, sigma), B: Gaussian(b.W(), nil, sigma),
				Epsilon: c.eps, Delta: c.delta, Trials: c.trials, SelectionFraction: c.selFraction,
				Seeded: true, Seed: c.seed,
			})
			require.NoError(t, err)
			require.LessOrEqual(t, rep.EpsilonLB, c.eps, "a sound release must not be refuted")
			require.Equal(t, Consistent, rep.Verdict)
			t.Logf("ε = %v: ε_lb = %.4g (LR %.4g, black-box %.4g via %s)", c.eps, rep.EpsilonLB,
				rep.Tests[0].EpsilonLB, rep.Tests[1].EpsilonLB, rep.Tests[1].Statistic)
		})
	}
}

// TestValidityIsNotVacuous checks the audit has teeth on sound pipelines:
// a correctly calibrated ε = 1 release gives a positive ε_lb with the
// default trials (0.119 for this seed; 0.05–0.45 across the validity
// configurations): the likelihood-ratio test finds real, bounded leakage.
func TestValidityIsNotVacuous(t *testing.T) {
	p := newPipeline(t, 21, 500, 5)
	a, b, dist := p.worlds(t, unlearn.MemoryReset())
	sigma, err := noise.SigmaAnalytic(dist, 1, 1e-5)
	require.NoError(t, err)
	rep, err := Run(context.Background(), Config{
		A: Gaussian(a.W(), nil, sigma), B: Gaussian(b.W(), nil, sigma),
		Epsilon: 1, Delta: 1e-5, Seeded: true, Seed: 21,
	})
	require.NoError(t, err)
	require.Greater(t, rep.Tests[0].EpsilonLB, 0.05)
	require.LessOrEqual(t, rep.EpsilonLB, 1.0)
}

func TestDeterministic(t *testing.T) {
	p := newPipeline(t, 4, 200, 3)
	a, b, dist := p.worlds(t, unlearn.ParamOnly())
	cfg := Config{
		A: Gaussian(a.W(), Flatten(a.Memory()), dist), B: Gaussian(b.W(), Flatten(b.Memory()), dist),
		Epsilon: 1, Delta: 1e-5, WDim: len(a.W()), Trials: 2000, Seeded: true, Seed: 99,
	}
	r1, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	r2, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Equal(t, r1, r2, "same seed, same report (bit for bit)")
	cfg.Seed = 100
	r3, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	require.NotEqual(t, r1.Tests[0].Threshold, r3.Tests[0].Threshold, "another seed, other noise")
}

func TestReport(t *testing.T) {
	w := []float64{1, 2}
	var calls []int
	rep, err := Run(context.Background(), Config{
		A: Gaussian(w, nil, 1), B: Gaussian(w, nil, 1), Epsilon: 1, Delta: 1e-5,
		Trials: 101, SelectionFraction: 0.3, Seeded: true, Seed: 5,
		Progress: func(done, total int) { calls = append(calls, done, total) },
	})
	require.NoError(t, err)
	require.Equal(t, 101, rep.Trials)
	require.Equal(t, 30, rep.Selection, "round(0.3·101)")
	require.Equal(t, 71, rep.Evaluation)
	require.Equal(t, DefaultGamma, rep.Gamma)
	require.Equal(t, 4, rep.RateBounds)
	require.Equal(t, DefaultGamma, rep.FalseAlarm)
	require.Equal(t, noise.NameSeeded, rep.Sampler)
	require.Equal(t, uint64(5), *rep.Seed)
	require.Contains(t, rep.SamplerNote, "seeded: for speed, not deployment")
	require.Equal(t, 2, rep.Dim)
	require.Equal(t, 2, rep.WDim)
	require.Len(t, rep.Tests, 2)
	require.Equal(t, TestLikelihoodRatio, rep.Tests[0].Name)
	require.Equal(t, TestBlackBox, rep.Tests[1].Name)
	require.Equal(t, 0.0, rep.EpsilonLB, "identical worlds: nothing to find")
	require.Len(t, calls, 2*202)
	require.Equal(t, []int{202, 202}, calls[len(calls)-2:])
	for _, tr := range rep.Tests {
		require.Equal(t, 71, tr.NegativesB)
		require.Equal(t, ClopperPearsonUpper(tr.FalsePositives, 71, DefaultGamma/4), tr.FPRUpper)
		require.Equal(t, ClopperPearsonUpper(tr.FalseNegatives, 71, DefaultGamma/4), tr.FNRUpper)
	}
}

func TestSecureSampler(t *testing.T) {
	rep, err := Run(context.Background(), Config{
		A: Gaussian([]float64{0, 0}, nil, 1), B: Gaussian([]float64{0, 0}, nil, 1),
		Epsilon: 1, Delta: 1e-5, Trials: 200,
	})
	require.NoError(t, err)
	require.Equal(t, noise.NameSecure, rep.Sampler)
	require.Nil(t, rep.Seed)
	require.LessOrEqual(t, rep.EpsilonLB, 1.0)
}

// failing releases an error, or a NaN, from trial bad on.
type failing struct {
	n, bad int
	nan    bool
}

func (f *failing) Dim() int { return 3 }

func (f *failing) Release(dst []float64, _ noise.Sampler) error {
	f.n++
	if f.n > f.bad {
		if f.nan {
			dst[1] = math.NaN()
			return nil
		}
		return errors.New("boom")
	}
	clear(dst)
	return nil
}

func TestErrors(t *testing.T) {
	g := Gaussian([]float64{0, 0, 0}, nil, 1)
	base := func() Config { return Config{A: g, B: g, Epsilon: 1, Delta: 1e-5, Trials: 10, Seeded: true} }
	fields := []struct {
		field string
		edit  func(*Config)
	}{
		{"A", func(c *Config) { c.A = nil }},
		{"B", func(c *Config) { c.B = nil }},
		{"Epsilon", func(c *Config) { c.Epsilon = 0 }},
		{"Epsilon", func(c *Config) { c.Epsilon = math.Inf(1) }},
		{"Epsilon", func(c *Config) { c.Epsilon = math.NaN() }},
		{"Delta", func(c *Config) { c.Delta = 1 }},
		{"Delta", func(c *Config) { c.Delta = -1e-9 }},
		{"Gamma", func(c *Config) { c.Gamma = 1 }},
		{"Gamma", func(c *Config) { c.Gamma = -0.1 }},
		{"SelectionFraction", func(c *Config) { c.SelectionFraction = 1 }},
		{"Trials", func(c *Config) { c.Trials = 1 }},
		{"Trials", func(c *Config) { c.Trials = 2; c.SelectionFraction = 0.1 }},
		{"WDim", func(c *Config) { c.WDim = 4 }},
	}
	for _, f := range fields {
		t.Run(f.field, func(t *testing.T) {
			c := base()
			f.edit(&c)
			_, err := Run(context.Background(), c)
			require.ErrorIs(t, err, ErrConfig)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, f.field, ce.Field, "%v", err)
		})
	}
	t.Run("dimensions differ", func(t *testing.T) {
		c := base()
		c.B = Gaussian([]float64{0, 0}, nil, 1)
		_, err := Run(context.Background(), c)
		require.ErrorIs(t, err, ErrDim)
	})
	t.Run("a mechanism fails", func(t *testing.T) {
		c := base()
		c.B = &failing{bad: 7}
		_, err := Run(context.Background(), c)
		require.ErrorIs(t, err, ErrRelease)
		require.ErrorContains(t, err, "world B, trial 7: boom")
	})
	t.Run("a mechanism releases NaN", func(t *testing.T) {
		c := base()
		c.A = &failing{bad: 2, nan: true}
		_, err := Run(context.Background(), c)
		require.ErrorIs(t, err, ErrRelease)
		require.ErrorContains(t, err, "world A, trial 2: coordinate 1 is NaN")
	})
	t.Run("a bad σ", func(t *testing.T) {
		c := base()
		c.A = Gaussian([]float64{0, 0, 0}, nil, -1)
		_, err := Run(context.Background(), c)
		require.ErrorIs(t, err, ErrRelease)
		require.ErrorIs(t, err, noise.ErrSigma)
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Run(ctx, base())
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestFlatten(t *testing.T) {
	m := olbfgs.NewMemory(2, 3, 1)
	require.NoError(t, m.Push([]float64{1, 0}, []float64{2, 0.5}))
	require.NoError(t, m.Push([]float64{0, 1}, []float64{0.5, 3}))
	// τ = 3 slots of (s, y), oldest first; the third slot is empty.
	require.Equal(t, []float64{1, 0, 2, 0.5, 0, 1, 0.5, 3, 0, 0, 0, 0}, Flatten(m))
}

// TestCostD25 runs the default audit of a d = 25 configuration (the
// paper's Experiment 2 stream, memory reset) through the path `unlearn
// audit` takes — Certified, the toolkit's certified release prepared once,
// noise per trial — with both samplers, and requires the sound release to
// stay within its claimed ε = 1. The race detector slows the secure
// sampler ~10×, so under -race it is skipped and .ci/run runs it without
// (testutil.SkipUnderRace). Its cost is BenchmarkCostD25's (docs/audit.md
// records the CLI's numbers).
func TestCostD25(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the default audit (10⁴ trials per world) twice")
	}
	testutil.SkipUnderRace(t)
	p := newPipeline(t, 1, 500, 5)
	a, b, dist := p.worlds(t, unlearn.MemoryReset())
	spec := certify.Spec{Epsilon: 1, Delta: 1e-5, Memory: certify.Reset, Alpha: &certify.Given{Alpha: dist, Method: "the true distance"}}
	for _, seeded := range []bool{true, false} {
		start := time.Now()
		rep, err := Run(context.Background(), Config{
			A: Certified(a, spec), B: Certified(b, spec),
			Epsilon: 1, Delta: 1e-5, Seeded: seeded, Seed: 1, WDim: a.Config().Dim,
		})
		require.NoError(t, err)
		t.Logf("%s sampler: %v for 2×%d releases of d = %d; ε_lb = %.4g", rep.Sampler, time.Since(start), rep.Trials, rep.Dim, rep.EpsilonLB)
		require.LessOrEqual(t, rep.EpsilonLB, 1.0, "a sound release")
	}
}
