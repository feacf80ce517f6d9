package certify

import (
	"math"
	"slices"
	"strings"
	"testing"

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
			if err != nil {
				t.Fatal(err)
			}
			if !f.state.Equal(before) {
				t.Fatal("Certify modified its input state")
			}
			if c.Covers != tc.covers || c.Memory != tc.policy {
				t.Errorf("covers %q with memory %s, want %q", c.Covers, c.Memory, tc.covers)
			}
			if c.Sigma <= 0 || c.SigmaApplied != c.Sigma {
				t.Errorf("σ = %v, applied %v: want a positive σ applied exactly by the seeded sampler", c.Sigma, c.SigmaApplied)
			}
			if slices.Equal(out.W(), f.state.W()) {
				t.Error("w was released without noise")
			}
			switch tc.policy {
			case Reset:
				if out.Memory().Len() != 0 {
					t.Errorf("reset left %d pairs", out.Memory().Len())
				}
			case Rebuild:
				if out.Memory().Len() > len(tc.retained) {
					t.Errorf("rebuild from %d events left %d pairs", len(tc.retained), out.Memory().Len())
				}
				if len(tc.retained) > 0 && out.Memory().Len() == 0 {
					t.Error("rebuild from retained data built no memory")
				}
				if !slices.Equal(c.Retained.IDs, stream.InsertIDs(tc.retained)) {
					t.Errorf("retained ids %v", c.Retained.IDs)
				}
			case Keep:
				if !out.Memory().Equal(f.state.Memory()) {
					t.Error("keep changed the memory")
				}
				if !strings.Contains(c.Statement, "NOT covered") {
					t.Errorf("a parameters-only certificate must say the memory is not covered: %q", c.Statement)
				}
			}
			if out.T() != f.state.T() || !slices.Equal(out.Deleted(), f.state.Deleted()) {
				t.Error("the released state lost its counters or deleted ids")
			}
			if _, err := VerifyStates(c, f.state, out, nil); err != nil {
				t.Fatalf("a genuine certificate does not verify: %v", err)
			}
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
			if err != nil {
				t.Fatal(err)
			}
			res, err := fixtureScenario(t).Bound()
			if err != nil {
				t.Fatal(err)
			}
			if c.Sensitivity.Alpha != res.Alpha[0] || c.Sensitivity.Provenance != bound.Proved || c.Provenance != bound.Proved {
				t.Errorf("α = %v (%v), want %v (proved)", c.Sensitivity.Alpha, c.Sensitivity.Provenance, res.Alpha[0])
			}
			want, err := noise.Sigma(tc.cal, res.Alpha[0], tc.eps, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			if c.Sigma != want || c.Calibration != tc.cal {
				t.Errorf("σ = %v (%s), want %v", c.Sigma, c.Calibration, want)
			}
			z, err := noise.ZCDP(c.Sensitivity.Alpha, c.SigmaApplied)
			if err != nil {
				t.Fatal(err)
			}
			if c.ZCDP != z {
				t.Errorf("zCDP = %v, want %v", c.ZCDP, z)
			}
			if c.Deletions != 1 || c.Dim != 4 || c.Intervention != "unspecified" || c.Guarantee != (Guarantee{tc.eps, 1e-5}) {
				t.Errorf("deletions %d, d %d, intervention %q, guarantee %v", c.Deletions, c.Dim, c.Intervention, c.Guarantee)
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
	if err != nil {
		t.Fatal(err)
	}
	if c.Guarantee.Epsilon != 1 || c.Guarantee.Delta < 1e-5+1e-6 || !approx(c.Guarantee.Delta, 1.1e-5, 0, 1e-15) {
		t.Errorf("guarantee %v, want (1, 1.1e-5)", c.Guarantee)
	}
	if !strings.Contains(c.Statement, "β = 1e-06") {
		t.Errorf("the statement does not mention β: %q", c.Statement)
	}
}

func TestCertifyExactAddsNoNoise(t *testing.T) {
	// α = 0 (exact unlearning) gives σ = 0: w is released bit for bit, the
	// certificate says "exact" and costs no zCDP.
	f := newFixture(t)
	out, c, err := Certify(f.state, Spec{Epsilon: 1, Delta: 1e-5, Alpha: &Given{Alpha: 0, Provenance: bound.Proved, Method: "oracle replay"},
		Sampler: noise.NewSeededSampler(1, noise.SamplerOptions{}), Memory: Keep})
	if err != nil {
		t.Fatal(err)
	}
	if c.Sigma != 0 || c.SigmaApplied != 0 || c.ZCDP != 0 || !c.Exact {
		t.Errorf("σ = %v, applied %v, zCDP %v, exact %v; want 0, 0, 0, true", c.Sigma, c.SigmaApplied, c.ZCDP, c.Exact)
	}
	if !out.Equal(f.state) {
		t.Error("an exact release changed the state")
	}
	if !strings.Contains(c.Statement, "exact unlearning") {
		t.Errorf("statement %q does not say exact", c.Statement)
	}
	if _, err := VerifyStates(c, f.state, out, nil); err != nil {
		t.Fatal(err)
	}
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
			if err != nil {
				t.Fatal(err)
			}
			if c.Sampler != tc.want || c.Deployable != tc.deployable {
				t.Errorf("sampler %q deployable %v, want %q %v", c.Sampler, c.Deployable, tc.want, tc.deployable)
			}
			warned := slices.Contains(c.Warnings, "seeded sampler: NOT for deployment") && strings.Contains(c.Statement, "NOT for deployment")
			if warned != !tc.deployable {
				t.Errorf("warnings %q, statement %q", c.Warnings, c.Statement)
			}
			if _, err := VerifyStates(c, f.state, out, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCertifyStatesWeakestProvenance(t *testing.T) {
	// A certificate built on an estimated contraction, or on assumed
	// constants, says so, naming the quantities.
	f := newFixture(t)
	est, err := bound.EstimateFromDecay([]float64{1, 0.5, 0.25, 0.125}, bound.DecayOptions{Margin: 0.1})
	if err != nil {
		t.Fatal(err)
	}
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
			if err != nil {
				t.Fatal(err)
			}
			if c.Provenance != tc.want {
				t.Fatalf("provenance %v, want %v", c.Provenance, tc.want)
			}
			upper := strings.ToUpper(tc.want.String())
			if !strings.Contains(c.Statement, upper) || !strings.Contains(c.Statement, tc.term) {
				t.Errorf("statement %q does not say %s for %q", c.Statement, upper, tc.term)
			}
			if len(c.Warnings) == 0 || !strings.Contains(c.Warnings[0], tc.want.String()) {
				t.Errorf("warnings %q", c.Warnings)
			}
		})
	}
}

func TestCertifyRefusesBadSpec(t *testing.T) {
	f := newFixture(t)
	other := isotropic(t, 3, 1, 2)
	otherHeader, err := HeaderOf(other)
	if err != nil {
		t.Fatal(err)
	}
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
	if _, _, err := Certify(f.state, spec); err != nil {
		t.Fatal(err)
	}
	if spec.Intervention != "" || spec.Toolkit != "" || spec.Deletions != 0 || !slices.Equal(ages, []int{9}) {
		t.Errorf("Certify wrote defaults into the caller's spec: %+v", spec)
	}
}

func TestShiftOf(t *testing.T) {
	// ‖(3, 4) − (0, 0)‖ = 5 exactly; the result is an upper bound within a
	// few ulps. Equal states give exactly 0.
	cfg := olbfgs.DefaultConfig(2)
	loss := isotropic(t, 2, 1, 1)
	a, err := olbfgs.New(cfg, loss)
	if err != nil {
		t.Fatal(err)
	}
	b := a.Clone()
	b.SetW([]float64{3, 4})
	if s := ShiftOf(a, b); s < 5 || !approx(s, 5, 0, 1e-15) {
		t.Errorf("ShiftOf = %.17g, want ≥ 5 within 1e-15", s)
	}
	if s := ShiftOf(a, a.Clone()); s != 0 {
		t.Errorf("ShiftOf of equal states = %v", s)
	}
	c, err := olbfgs.New(olbfgs.DefaultConfig(3), isotropic(t, 3, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	wantPanic(t, func() { ShiftOf(a, c) })
}

func TestAgesOf(t *testing.T) {
	// Inserts 1..5 with a realized delete of 2 after insert 3: the ages
	// count inserts after each deleted insert (the delete is not a step):
	// id 2 has inserts 3, 4, 5 after it → 3; id 5 is the last → 0.
	ins := func(id int64) stream.Event { return stream.InsertEvent(id, []float64{0}, 0) }
	prefix := []stream.Event{ins(1), ins(2), ins(3), stream.DeleteEvent(2), ins(4), ins(5)}
	if got := AgesOf(prefix, stream.NewIDSet(2, 5)); !slices.Equal(got, []int{3, 0}) {
		t.Errorf("AgesOf = %v, want [3 0]", got)
	}
	if got := AgesOf(prefix, stream.NewIDSet()); len(got) != 0 {
		t.Errorf("AgesOf with no deletion = %v", got)
	}
}

func TestHeaderOf(t *testing.T) {
	lg, err := stream.NewLogistic(3, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	h, err := HeaderOf(lg)
	if err != nil || h.Kind != stream.KindLogistic || h.D != 3 || h.Lambda != 0.05 {
		t.Fatalf("HeaderOf(logistic) = %+v, %v", h, err)
	}
	if _, err := h.Loss(); err != nil {
		t.Fatalf("the derived header does not describe a loss: %v", err)
	}
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
