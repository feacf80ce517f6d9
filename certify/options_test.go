package certify

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/internal/established"
	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// optionsStream is a small logistic stream (ids 1…n) with payload norms
// below 2.
func optionsStream(t *testing.T, d, n int) (*stream.Logistic, stream.Header, []stream.Event) {
	t.Helper()
	loss, err := stream.NewLogistic(d, 0.1)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(3, 4))
	events := make([]stream.Event, n)
	for i := range events {
		x := make([]float64, d)
		for j := range x {
			x[j] = (2*r.Float64() - 1) / float64(d)
		}
		y := 1.0
		if x[0]+0.3*r.NormFloat64() < 0 {
			y = -1
		}
		events[i] = stream.InsertEvent(int64(i+1), x, y)
	}
	return loss, loss.Header(), events
}

// TestDeriveProfileOptions checks what each of the practitioner's options
// does to the derived profile (docs/theory.md §15.9): the constants kept,
// the diameter with its reason, or a refusal.
func TestDeriveProfileOptions(t *testing.T) {
	// d = 1: the logistic Hessians commute with every H_Z and the
	// recursion is proved (the base case).
	_, h, _ := optionsStream(t, 1, 1)
	base := guarded(1, 4, 0.05, 0.1, 2, 5, 2)
	full, err := DeriveProfile(base, h)
	require.NoError(t, err)
	require.True(t, full.Recursion, "the base configuration has the recursion: %s", full.Why)
	for _, tt := range []struct {
		name      string
		edit      func(*olbfgs.Config)
		recursion bool
		why       string
	}{
		{"damping", func(c *olbfgs.Config) { c.Damping = 0.5 }, true, ""},
		{"progress", func(c *olbfgs.Config) { c.Progress = true }, true, ""},
		{"intercept without ridge", func(c *olbfgs.Config) { c.Intercept = true }, false, "intercept without ridge"},
		{"average", func(c *olbfgs.Config) { c.Average = true }, false, "averaging"},
		{"schedule", func(c *olbfgs.Config) { c.StepDecay = 0.1 }, false, "decaying step"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			tt.edit(&cfg)
			p, err := DeriveProfile(cfg, h)
			require.NoError(t, err)
			assert.Equal(t, tt.recursion, p.Recursion, p.Why)
			assert.Contains(t, p.Why, tt.why)
			assert.Equal(t, cfg.RadiusBound(), p.Radius)
		})
	}
	// A regularized intercept: the constants of the payload (x, 1), and
	// Hessians that do not commute even at d = 1.
	cfg := base
	cfg.Intercept, cfg.RidgeIntercept = true, true
	p, err := DeriveProfile(cfg, h)
	require.NoError(t, err)
	assert.Equal(t, full.Mu, p.Mu)
	assert.Greater(t, p.L, full.L, "L = λ + (B'² + 1)/4 > λ + B'²/4")
	assert.False(t, p.Commuting)
	assert.NotContains(t, p.Why, "intercept")

	std := base
	std.Standardize = true
	_, err = DeriveProfile(std, h)
	wantSpecError(t, err, "Config.Standardize", ErrNotCertifiable)

	m, err := stream.NewMultinomial(3, 4, 0.1)
	require.NoError(t, err)
	mc := base.ForLoss(m)
	p, err = DeriveProfile(mc, m.Header())
	require.NoError(t, err)
	assert.False(t, p.Recursion)
	assert.Contains(t, p.Why, "multinomial")
	assert.Equal(t, mc.RadiusBound(), p.Radius, "the diameter at the parameter dimension K·d")
	assert.Greater(t, mc.RadiusBound(), base.RadiusBound())
}

// TestNoNoisedReleaseOfAStandardizedLearner: a noised release of a learner
// that standardizes is refused, whatever α — an assumed one included —
// while an exact release is made and carries the statistics.
func TestNoNoisedReleaseOfAStandardizedLearner(t *testing.T) {
	loss, h, events := optionsStream(t, 3, 40)
	cfg := guarded(3, 4, 0.05, 0.1, 2, 5, 2)
	cfg.Standardize, cfg.Intercept = true, true
	l, err := olbfgs.Replay(cfg, loss, events)
	require.NoError(t, err)
	spec := Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(1)}
	_, _, err = Certify(l, spec)
	wantSpecError(t, err, "Config.Standardize", ErrNotCertifiable)
	spec.Alpha = &Given{Alpha: 0.1}
	_, _, err = Certify(l, spec)
	wantSpecError(t, err, "Config.Standardize", ErrNotCertifiable)

	rel, cert, err := CertifyExact(l, Spec{Epsilon: 1, Delta: 1e-5, Header: &h, Established: established.New("test: the state is the counterfactual")})
	require.NoError(t, err)
	require.True(t, cert.Exact)
	require.NotNil(t, rel.Standardization)
	assert.Equal(t, 40, rel.Standardization.N)
	assertSameScores(t, l, rel, events)
}

// TestExactReleaseOfPractitionerLearner releases a learner with every
// option exactly: the release carries the statistics and the average,
// round-trips through its JSON, verifies, and its learner scores raw
// samples bit for bit as the state does; a release of the paper's learner
// has neither block.
func TestExactReleaseOfPractitionerLearner(t *testing.T) {
	m, err := stream.NewMultinomial(3, 3, 0.01)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(5, 6))
	var events []stream.Event
	for i := range 60 {
		x := []float64{100 + 10*r.NormFloat64(), r.NormFloat64(), 0.01 * r.NormFloat64()}
		events = append(events, stream.InsertEvent(int64(i+1), x, float64(r.IntN(3))))
	}
	cfg := olbfgs.DefaultConfig(3).ForLoss(m).Practitioner()
	l, err := olbfgs.Replay(cfg, m, events)
	require.NoError(t, err)
	h := m.Header()
	rel, cert, err := CertifyExact(l, Spec{Epsilon: 1, Delta: 1e-5, Header: &h, Established: established.New("test")})
	require.NoError(t, err)
	require.NotNil(t, rel.Standardization)
	require.NotNil(t, rel.Average)
	assert.Equal(t, 60, rel.Average.N)
	assert.Len(t, rel.W, 3*4, "K·(d+1)")
	b, err := rel.Marshal()
	require.NoError(t, err)
	_, err = Verify(cert, b, nil)
	require.NoError(t, err)
	back, err := ParseRelease(b)
	require.NoError(t, err)
	assertSameScores(t, l, back, events)
	assert.True(t, strings.Contains(string(b), `"standardize": true`))

	for _, edit := range []struct{ name, old, new string }{
		{"statistics without the option", `"standardize": true,`, ``},
		{"average without the option", `"average": true,`, ``},
	} {
		require.Contains(t, string(b), edit.old, edit.name)
		_, err := ParseRelease([]byte(strings.Replace(string(b), edit.old, edit.new, 1)))
		require.ErrorIs(t, err, ErrRelease, edit.name)
	}

	lg, lh, le := optionsStream(t, 3, 20)
	pl, err := olbfgs.Replay(olbfgs.DefaultConfig(3), lg, le)
	require.NoError(t, err)
	prel, _, err := CertifyExact(pl, Spec{Epsilon: 1, Delta: 1e-5, Header: &lh, Established: established.New("test")})
	require.NoError(t, err)
	pb, err := prel.Marshal()
	require.NoError(t, err)
	assert.NotContains(t, string(pb), "standardization")
	assert.NotContains(t, string(pb), "average")
	assert.NotContains(t, string(pb), "outputs")
}

// TestNoisedReleaseOfAveragingLearner: the noise is on the average (the
// deployed parameters), α is the diameter with its reason, no average
// block is published, and the released learner predicts with the noised
// w.
func TestNoisedReleaseOfAveragingLearner(t *testing.T) {
	loss, _, events := optionsStream(t, 3, 50)
	cfg := guarded(3, 4, 0.05, 0.1, 2, 5, 2)
	cfg.Average, cfg.Intercept = true, true
	l, err := olbfgs.Replay(cfg, loss, events)
	require.NoError(t, err)
	rel, cert, err := Certify(l, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(7)})
	require.NoError(t, err)
	assert.Equal(t, "diameter", cert.Sensitivity.Source)
	assert.Nil(t, rel.Average)
	assert.Len(t, rel.W, 4)
	rl, err := rel.Learner()
	require.NoError(t, err)
	assert.True(t, floatbits.Equal(rl.Deployed(), rel.W), "the released learner predicts with the released w")
	assert.False(t, floatbits.Equal(rel.W, l.W()) || floatbits.Equal(rel.W, l.Deployed()), "noised")
}

// assertSameScores checks that a release's learner scores the samples as
// the state does, bit for bit.
func assertSameScores(t *testing.T, l *olbfgs.Learner, rel *Release, events []stream.Event) {
	t.Helper()
	rl, err := rel.Learner()
	require.NoError(t, err)
	a, b := make([]float64, l.Outputs()), make([]float64, rl.Outputs())
	for _, e := range events[:10] {
		l.Scores(a, e.Sample)
		rl.Scores(b, e.Sample)
		require.True(t, floatbits.Equal(a, b), "scores %v vs %v", a, b)
	}
}
