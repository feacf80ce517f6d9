package certify

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/bound"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

func TestCertifyMemoryPolicies(t *testing.T) {
	f := newFixture(t)
	retained := f.prefix[len(f.prefix)-3:] // ids 10, 11, 12: none deleted
	for _, tc := range []struct {
		name     string
		policy   MemoryPolicy
		retained []stream.Event
		covers   Coverage
	}{
		{"reset", Reset, nil, CoversState},
		{"rebuild", Rebuild, retained, CoversState},
		{"rebuild-from-nothing", Rebuild, []stream.Event{}, CoversState},
		{"keep", Keep, nil, CoversParameters},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := f.state.Clone()
			spec := seededSpec(t, 7)
			spec.Memory, spec.Retained = tc.policy, tc.retained
			out, c, err := Certify(f.state, spec)
			require.NoError(t, err)
			if !f.state.Equal(before) {
				t.Fatal("Certify modified its input state")
			}
			assert.Equal(t, tc.covers, c.Covers, "covers")
			assert.Equal(t, tc.policy, c.Memory, "memory policy")
			if c.Sigma <= 0 || c.SigmaApplied != c.Sigma {
				t.Errorf("σ = %v, applied %v: want a positive σ applied exactly by the seeded sampler", c.Sigma, c.SigmaApplied)
			}
			if slices.Equal(out.W(), f.state.W()) {
				t.Error("w was released without noise")
			}
			switch tc.policy {
			case Reset:
				assert.Zero(t, out.Memory().Len(), "pairs left by reset")
			case Rebuild:
				assert.LessOrEqual(t, out.Memory().Len(), len(tc.retained), "pairs built by rebuild, want at most one per retained event")
				if len(tc.retained) > 0 {
					assert.NotZero(t, out.Memory().Len(), "rebuild from retained data built no memory")
				}
				if want := stream.InsertIDs(tc.retained); !slices.Equal(c.Retained.IDs, want) { // slices.Equal: nil and empty agree
					t.Errorf("retained ids %v, want %v", c.Retained.IDs, want)
				}
			case Keep:
				if !out.Memory().Equal(f.state.Memory()) {
					t.Error("keep changed the memory")
				}
				assert.Contains(t, c.Statement, "NOT covered", "a parameters-only certificate must say the memory is not covered")
			}
			assert.Equal(t, f.state.T(), out.T(), "the released state lost its event counter")
			assert.Equal(t, f.state.Deleted(), out.Deleted(), "the released state lost its deleted ids")
			_, err = VerifyStates(c, f.state, out, nil)
			require.NoError(t, err, "a genuine certificate does not verify")
		})
	}
}

func TestCertifyAlphaAndSigma(t *testing.T) {
	// The certificate's α is the scenario's bound at t0 and σ the analytic
	// σ for it; with the classic calibration at ε = 0.5, the classic σ.
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		eps  float64
		cal  noise.Calibration
	}{
		{"analytic", 1, noise.Analytic},
		{"classic", 0.5, noise.Classic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := seededSpec(t, 1)
			spec.Epsilon, spec.Calibration = tc.eps, tc.cal
			_, c, err := Certify(f.state, spec)
			require.NoError(t, err)
			res, err := fixtureScenario(t).Bound()
			require.NoError(t, err)
			if c.Sensitivity.Alpha != res.Alpha[0] {
				t.Errorf("α = %v, want %v", c.Sensitivity.Alpha, res.Alpha[0])
			}
			assert.Equal(t, bound.Proved, c.Sensitivity.Provenance, "provenance of α")
			assert.Equal(t, bound.Proved, c.Provenance, "provenance of the certificate")
			want, err := noise.Sigma(tc.cal, res.Alpha[0], tc.eps, 1e-5)
			require.NoError(t, err)
			if c.Sigma != want {
				t.Errorf("σ = %v, want %v", c.Sigma, want)
			}
			assert.Equal(t, tc.cal, c.Calibration, "calibration")
			z, err := noise.ZCDP(c.Sensitivity.Alpha, c.SigmaApplied)
			require.NoError(t, err)
			if c.ZCDP != z {
				t.Errorf("zCDP = %v, want %v", c.ZCDP, z)
			}
			assert.Equal(t, 1, c.Deletions, "deletions")
			assert.Equal(t, 4, c.Dim, "d")
			assert.Equal(t, "unspecified", c.Intervention, "intervention")
			if c.Guarantee != (Guarantee{tc.eps, 1e-5}) {
				t.Errorf("guarantee %v, want (%v, 1e-5)", c.Guarantee, tc.eps)
			}
		})
	}
}

func TestCertifyBetaAddsToDelta(t *testing.T) {
	// A bound that fails with probability β = 1e-6 gives (ε, δ + β); δ + β
	// is rounded up, so it is ≥ the exact 1.1e-5.
	f := newFixture(t)
	spec := seededSpec(t, 1)
	spec.Beta = 1e-6
	_, c, err := Certify(f.state, spec)
	require.NoError(t, err)
	if c.Guarantee.Epsilon != 1 || c.Guarantee.Delta < 1e-5+1e-6 || !approx(c.Guarantee.Delta, 1.1e-5, 0, 1e-15) {
		t.Errorf("guarantee %v, want (1, 1.1e-5)", c.Guarantee)
	}
	assert.Contains(t, c.Statement, "β = 1e-06", "the statement must mention β")
}

func TestCertifyExactAddsNoNoise(t *testing.T) {
	// α = 0 (exact unlearning) gives σ = 0: w is released bit for bit, the
	// certificate says "exact" and costs no zCDP.
	f := newFixture(t)
	out, c, err := Certify(f.state, Spec{Epsilon: 1, Delta: 1e-5, Alpha: &Given{Alpha: 0, Provenance: bound.Proved, Method: "oracle replay"},
		Sampler: noise.NewSeededSampler(1, noise.SamplerOptions{}), Memory: Keep})
	require.NoError(t, err)
	if c.Sigma != 0 || c.SigmaApplied != 0 || c.ZCDP != 0 {
		t.Errorf("σ = %v, applied %v, zCDP %v; want 0, 0, 0", c.Sigma, c.SigmaApplied, c.ZCDP)
	}
	assert.True(t, c.Exact, "exact")
	if !out.Equal(f.state) {
		t.Error("an exact release changed the state")
	}
	assert.Contains(t, c.Statement, "exact unlearning", "the statement must say exact")
	_, err = VerifyStates(c, f.state, out, nil)
	require.NoError(t, err)
}

func TestCertifySamplerIsNamed(t *testing.T) {
	// The default sampler is the secure one (deployable); the seeded one
	// must be asked for and every certificate that used it says so.
	f := newFixture(t)
	for _, tc := range []struct {
		name       string
		sampler    noise.Sampler
		want       string
		deployable bool
	}{
		{"default-is-secure", nil, noise.NameSecure, true},
		{"seeded", noise.NewSeededSampler(3, noise.SamplerOptions{}), noise.NameSeeded, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := seededSpec(t, 0)
			spec.Sampler = tc.sampler
			out, c, err := Certify(f.state, spec)
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.Sampler, "sampler")
			assert.Equal(t, tc.deployable, c.Deployable, "deployable")
			warned := slices.Contains(c.Warnings, "seeded sampler: NOT for deployment") && strings.Contains(c.Statement, "NOT for deployment")
			assert.Equal(t, !tc.deployable, warned, "warned of a seeded sampler; warnings %q, statement %q", c.Warnings, c.Statement)
			_, err = VerifyStates(c, f.state, out, nil)
			require.NoError(t, err)
		})
	}
}

func TestCertifyStatesWeakestProvenance(t *testing.T) {
	// A certificate built on an estimated contraction, or on assumed
	// constants, says so, naming the quantities.
	f := newFixture(t)
	est, err := bound.EstimateFromDecay([]float64{1, 0.5, 0.25, 0.125}, bound.DecayOptions{Margin: 0.1})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		edit func(*bound.Scenario)
		want bound.Provenance
		term string
	}{
		{"estimated-rho", func(s *bound.Scenario) { s.Contraction = est }, bound.Estimated, "rho (estimated"},
		{"assumed-constants", func(s *bound.Scenario) { s.Constants.Source = bound.Assumed }, bound.Assumed, "G"},
		{"assumed-memory-model", func(s *bound.Scenario) { s.Memory = bound.MemoryDirect }, bound.Assumed, "no indirect memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := seededSpec(t, 1)
			tc.edit(spec.Scenario)
			_, c, err := Certify(f.state, spec)
			require.NoError(t, err)
			require.Equal(t, tc.want, c.Provenance, "provenance")
			upper := strings.ToUpper(tc.want.String())
			assert.Contains(t, c.Statement, upper, "the statement must say the provenance")
			assert.Contains(t, c.Statement, tc.term, "the statement must name the term")
			if assert.NotEmpty(t, c.Warnings, "warnings") {
				assert.Contains(t, c.Warnings[0], tc.want.String(), "first warning")
			}
		})
	}
}

func TestCertifyRefusesBadSpec(t *testing.T) {
	f := newFixture(t)
	other := isotropic(t, 3, 1, 2)
	otherHeader, err := HeaderOf(other)
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		edit     func(*Spec)
		field    string
		sentinel error
	}{
		{"epsilon=0", func(s *Spec) { s.Epsilon = 0 }, "Epsilon", ErrEpsilon},
		{"epsilon<0", func(s *Spec) { s.Epsilon = -1 }, "Epsilon", ErrEpsilon},
		{"epsilon=NaN", func(s *Spec) { s.Epsilon = math.NaN() }, "Epsilon", ErrEpsilon},
		{"epsilon=Inf", func(s *Spec) { s.Epsilon = math.Inf(1) }, "Epsilon", ErrEpsilon},
		{"delta=0", func(s *Spec) { s.Delta = 0 }, "Delta", ErrDelta},
		{"delta=1", func(s *Spec) { s.Delta = 1 }, "Delta", ErrDelta},
		{"delta=NaN", func(s *Spec) { s.Delta = math.NaN() }, "Delta", ErrDelta},
		{"beta<0", func(s *Spec) { s.Beta = -0.1 }, "Beta", ErrBeta},
		{"beta=1", func(s *Spec) { s.Beta = 1 }, "Beta", ErrBeta},
		{"delta+beta>=1", func(s *Spec) { s.Delta, s.Beta = 0.5, 0.5 }, "Beta", ErrBeta},
		{"rho=1", func(s *Spec) { s.Scenario.Contraction.Rho = 1 }, "Scenario.Contraction.Rho", ErrRho},
		{"rho<0", func(s *Spec) { s.Scenario.Contraction.Rho = -0.1 }, "Scenario.Contraction.Rho", ErrRho},
		{"G<0", func(s *Spec) { s.Scenario.Constants.G = -1 }, "Scenario.Constants.G", ErrValue},
		{"G=NaN", func(s *Spec) { s.Scenario.Constants.G = math.NaN() }, "Scenario.Constants.G", ErrValue},
		{"hMax=Inf", func(s *Spec) { s.Scenario.Constants.HMax = math.Inf(1) }, "Scenario.Constants.HMax", ErrValue},
		{"eta<0", func(s *Spec) { s.Scenario.Constants.Eta = -0.1 }, "Scenario.Constants.Eta", ErrValue},
		{"lambdaZ<0", func(s *Spec) { s.Scenario.LambdaZ = new(-1.0) }, "Scenario.LambdaZ", ErrValue},
		{"age<0", func(s *Spec) { s.Scenario.Ages = []int{-1} }, "Scenario.Ages[0]", bound.ErrInvalid},
		{"classic-at-epsilon-1", func(s *Spec) { s.Calibration = noise.Classic }, "Epsilon", ErrClassicEpsilon},
		{"unknown-calibration", func(s *Spec) { s.Calibration = 7 }, "Calibration", ErrCalibration},
		{"no-sensitivity", func(s *Spec) { s.Scenario = nil }, "Alpha", ErrSpec},
		{"two-sensitivities", func(s *Spec) { s.Alpha = &Given{Alpha: 1, Provenance: bound.Proved} }, "Alpha", ErrSpec},
		{"given-alpha<0", func(s *Spec) { s.Scenario, s.Alpha = nil, &Given{Alpha: -1, Provenance: bound.Proved} }, "Alpha.Alpha", ErrValue},
		{"given-alpha=NaN", func(s *Spec) { s.Scenario, s.Alpha = nil, &Given{Alpha: math.NaN(), Provenance: bound.Proved} }, "Alpha.Alpha", ErrValue},
		{"given-alpha-no-provenance", func(s *Spec) { s.Scenario, s.Alpha = nil, &Given{Alpha: 1} }, "Alpha.Provenance", ErrSpec},
		{"shift<0", func(s *Spec) { s.Shift = -1 }, "Shift", ErrValue},
		{"shift-with-given", func(s *Spec) { s.Scenario, s.Alpha, s.Shift = nil, &Given{Alpha: 1, Provenance: bound.Proved}, 1 }, "Shift", ErrSpec},
		{"unsupported-sampler", func(s *Spec) { s.Sampler = fakeSampler{} }, "Sampler", ErrSampler},
		{"unknown-memory-policy", func(s *Spec) { s.Memory = 9 }, "Memory", ErrSpec},
		{"rebuild-without-data", func(s *Spec) { s.Memory = Rebuild }, "Retained", ErrSpec},
		{"data-without-rebuild", func(s *Spec) { s.Retained = f.prefix[:1] }, "Retained", ErrSpec},
		{"retained-deleted-id", func(s *Spec) { s.Memory, s.Retained = Rebuild, f.prefix[2:3] }, "Retained[0]", ErrRetained},
		{"retained-delete-event", func(s *Spec) { s.Memory, s.Retained = Rebuild, []stream.Event{stream.DeleteEvent(4)} }, "Retained[0]", ErrRetained},
		{"retained-repeated", func(s *Spec) { s.Memory, s.Retained = Rebuild, []stream.Event{f.prefix[5], f.prefix[5]} }, "Retained[1]", ErrRetained},
		{"deletions-contradict-ages", func(s *Spec) { s.Deletions = 2 }, "Deletions", ErrSpec},
		{"header-of-another-loss", func(s *Spec) { s.Header = &otherHeader }, "Header", ErrSpec},
		{"eta-not-the-learners", func(s *Spec) { s.Scenario.Constants.Eta = 0.2 }, "Scenario.Constants.Eta", ErrSpec},
		{"tau-not-the-learners", func(s *Spec) { s.Scenario.Constants.Tau = 4 }, "Scenario.Constants.Tau", ErrSpec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := seededSpec(t, 1)
			tc.edit(&spec)
			_, _, err := Certify(f.state, spec)
			wantSpecError(t, err, tc.field, tc.sentinel)
		})
	}
	t.Run("nil-state", func(t *testing.T) {
		wantPanic(t, func() { _, _, _ = Certify(nil, seededSpec(t, 1)) })
	})
}

// fakeSampler is a sampler of neither supported type.
type fakeSampler struct{}

func (fakeSampler) Name() string { return noise.NameSecure }
func (fakeSampler) AddNoise(dst, x []float64, sigma float64) (float64, error) {
	copy(dst, x)
	return sigma, nil
}

func TestCertifyDoesNotModifySpec(t *testing.T) {
	f := newFixture(t)
	spec := seededSpec(t, 1)
	ages := spec.Scenario.Ages
	spec.Memory, spec.Retained = Rebuild, f.prefix[9:]
	_, _, err := Certify(f.state, spec)
	require.NoError(t, err)
	assert.Empty(t, spec.Intervention, "Certify wrote defaults into the caller's spec")
	assert.Empty(t, spec.Toolkit, "Certify wrote defaults into the caller's spec")
	assert.Zero(t, spec.Deletions, "Certify wrote defaults into the caller's spec")
	assert.Equal(t, []int{9}, ages, "Certify wrote into the caller's scenario ages")
}

func TestShiftOf(t *testing.T) {
	// ‖(3, 4) − (0, 0)‖ = 5 exactly; the result is an upper bound within a
	// few ulps. Equal states give exactly 0.
	cfg := olbfgs.DefaultConfig(2)
	loss := isotropic(t, 2, 1, 1)
	a, err := olbfgs.New(cfg, loss)
	require.NoError(t, err)
	b := a.Clone()
	b.SetW([]float64{3, 4})
	if s := ShiftOf(a, b); s < 5 || !approx(s, 5, 0, 1e-15) {
		t.Errorf("ShiftOf = %.17g, want ≥ 5 within 1e-15", s)
	}
	if s := ShiftOf(a, a.Clone()); s != 0 {
		t.Errorf("ShiftOf of equal states = %v", s)
	}
	c, err := olbfgs.New(olbfgs.DefaultConfig(3), isotropic(t, 3, 1, 1))
	require.NoError(t, err)
	wantPanic(t, func() { ShiftOf(a, c) })
}

func TestAgesOf(t *testing.T) {
	// Inserts 1..5 with a realized delete of 2 after insert 3: the ages
	// count inserts after each deleted insert (the delete is not a step):
	// id 2 has inserts 3, 4, 5 after it → 3; id 5 is the last → 0.
	ins := func(id int64) stream.Event { return stream.InsertEvent(id, []float64{0}, 0) }
	prefix := []stream.Event{ins(1), ins(2), ins(3), stream.DeleteEvent(2), ins(4), ins(5)}
	assert.Equal(t, []int{3, 0}, AgesOf(prefix, stream.NewIDSet(2, 5)), "AgesOf")
	assert.Empty(t, AgesOf(prefix, stream.NewIDSet()), "AgesOf with no deletion")
}

func TestHeaderOf(t *testing.T) {
	lg, err := stream.NewLogistic(3, 0.05)
	require.NoError(t, err)
	h, err := HeaderOf(lg)
	require.NoError(t, err, "HeaderOf(logistic)")
	require.Equal(t, stream.KindLogistic, h.Kind, "kind")
	require.Equal(t, 3, h.D, "d")
	if h.Lambda != 0.05 {
		t.Fatalf("λ = %v, want 0.05", h.Lambda)
	}
	_, err = h.Loss()
	require.NoError(t, err, "the derived header does not describe a loss")
	_, err = HeaderOf(customLoss{})
	wantSpecError(t, err, "Header", ErrSpec)
}

// customLoss is a loss of a kind the snapshot format does not know.
type customLoss struct{}

func (customLoss) Kind() stream.Kind                           { return "custom" }
func (customLoss) Dim() int                                    { return 1 }
func (customLoss) Grad(dst, w []float64, z stream.Sample)      { dst[0] = w[0] }
func (customLoss) Value(w []float64, z stream.Sample) float64  { return w[0] * w[0] / 2 }
func (customLoss) CheckSample(z stream.Sample) (string, error) { return "", nil }
