package certify

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/bound"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Regression tests for the adversarial review of the release mechanism
// (ADV-n: its findings). Each failed on the code before its fix.

// ADV-1: a certifiable learner refuses a payload its loss does not accept
// (a logistic label outside {−1, +1}), so G = B' + λW' holds by
// construction.
func TestAdvLabelEnforced(t *testing.T) {
	loss, err := stream.NewLogistic(2, 0.1)
	require.NoError(t, err)
	cfg := logisticCfg(2, 3)
	l, err := olbfgs.New(cfg, loss)
	require.NoError(t, err)
	err = l.Step(stream.InsertEvent(1, []float64{0.1, 0.2}, -1e6))
	require.ErrorIs(t, err, olbfgs.ErrEvent)
	require.Zero(t, l.T(), "the refused event was applied")
}

// ADV-2: a deletion description passed to Certify is the caller's word:
// α is then "assumed", whatever intervention it names. CertifyTrained
// establishes it by replay, and refuses a stream the state was not trained
// on.
func TestAdvCallerDescriptionIsAssumed(t *testing.T) {
	const d, tau = 3, 4
	loss := scalarLoss(t, d, 1, 1)
	cfg := guarded(d, tau, 0.5, 1, 1, 1, 2)
	events := randomInserts(rand.New(rand.NewPCG(5, 5)), d, 80, 1)
	state, err := olbfgs.Replay(cfg, loss, events)
	require.NoError(t, err)
	_, cert, err := Certify(state, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(1),
		Deletion: &Deletion{Ages: []int{3}, Intervention: unlearn.Builtin{Kind: unlearn.KindDropRefill}, Established: "trust me"}})
	require.NoError(t, err)
	require.Equal(t, bound.Assumed, cert.Provenance, "a caller's description must not be proved")
	require.Empty(t, cert.Sensitivity.Deletion.Established, "the caller's own Established field is ignored")
	require.Contains(t, cert.Statement, "ASSUMED")

	withDel := append(append([]stream.Event{}, events...), stream.DeleteEvent(40))
	trained, err := olbfgs.Replay(cfg, loss, withDel)
	require.NoError(t, err)
	_, cert, err = CertifyTrained(trained, withDel, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(1)})
	require.NoError(t, err)
	require.Equal(t, bound.Proved, cert.Provenance)
	require.Equal(t, []int{40}, cert.Sensitivity.Deletion.Ages)
	other := randomInserts(rand.New(rand.NewPCG(6, 6)), d, 81, 1)
	_, _, err = CertifyTrained(trained, other, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(1)})
	require.ErrorIs(t, err, ErrNotCertifiable)
}

// ADV-3: the deletion count must be the described deletions.
func TestAdvDeletionCount(t *testing.T) {
	const d = 2
	loss := scalarLoss(t, d, 1, 1)
	cfg := guarded(d, 3, 0.5, 1, 1, 2, 2)
	state, err := olbfgs.Replay(cfg, loss, randomInserts(rand.New(rand.NewPCG(1, 3)), d, 20, 1))
	require.NoError(t, err)
	_, _, err = Certify(state, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(1), Deletions: 50,
		Deletion: &Deletion{Ages: []int{3}, Intervention: unlearn.Builtin{Kind: unlearn.KindNoop}}})
	wantSpecError(t, err, "Deletions", ErrSpec)
	is := issue(t)
	c := is.reissue(t, func(c *Certificate) { c.Deletions = 50 })
	_, err = Verify(c, is.rel, is.key.Public())
	wantVerifyError(t, err, "deletions", ErrInconsistent)
}

// ADV-4: drop and refill followed by shared steps: α is no longer W' (which
// assumes w̃ = 0 at the release) but the recursion from W' over the steps.
func TestAdvDropRefillHorizon(t *testing.T) {
	const d, tau = 2, 3
	loss := scalarLoss(t, d, 1, 1)
	cfg := guarded(d, tau, 0.5, 1, 1, 1, 3)
	r := rand.New(rand.NewPCG(9, 9))
	prefix := randomInserts(r, d, 30, 1)
	future := randomInserts(r, d, 5, 100)
	u := stream.NewIDSet(10)
	actual, err := olbfgs.Replay(cfg, loss, prefix)
	require.NoError(t, err)
	out, _, err := unlearn.Run(unlearn.DropRefill(), unlearn.Request{Actual: actual, Prefix: prefix, U: u})
	require.NoError(t, err)
	cf, err := olbfgs.Replay(cfg, loss, stream.Counterfactual(prefix, u))
	require.NoError(t, err)
	require.NoError(t, out.Run(future))
	require.NoError(t, cf.Run(future))
	h := mustHeader(t, loss)
	sens, err := DerivedAlpha(cfg, h, &Deletion{Ages: AgesOf(prefix, u), Horizon: len(future), Intervention: unlearn.Builtin{Kind: unlearn.KindDropRefill}})
	require.NoError(t, err)
	require.LessOrEqual(t, exactDistance(out.W(), cf.W()), sens.Alpha)
	require.NotEqual(t, "radius", sens.Binding, "W' holds only at the refill")
}

// ADV-5: a small release file cannot make the parser allocate for a huge d.
func TestAdvReleaseHugeDimension(t *testing.T) {
	doc := `{"format":"unlearn-release/v1","config":{"d":150000000,"tau":0,"eta":0.1,"gamma0":1,"curvature_tol":0,"radius":0,"sample_bound":0,"pair_angle":0,"pair_min":0,"pair_max":0},` +
		`"loss":{"format":"olbfgs-stream/v1","kind":"logistic","d":150000000,"lambda":0.1},"w":[1],"memory":[]}`
	_, err := ParseRelease([]byte(doc))
	require.ErrorIs(t, err, ErrRelease)
}

// ADV-6: an exact release needs the toolkit's own establishment: a caller
// cannot obtain one for a state of its own.
func TestAdvExactNeedsEstablishment(t *testing.T) {
	const d = 2
	loss := scalarLoss(t, d, 1, 1)
	state, err := olbfgs.Replay(guarded(d, 3, 0.5, 1, 1, 2, 2), loss, randomInserts(rand.New(rand.NewPCG(2, 2)), d, 10, 1))
	require.NoError(t, err)
	_, _, err = CertifyExact(state, Spec{Epsilon: 1, Delta: 1e-5})
	require.ErrorIs(t, err, ErrNotCertifiable)
}

// ADV-9: without a radius, an assumed α so small that the noise would
// vanish in the rounding of the released coordinates is refused.
func TestAdvNoiseBelowResolutionRefused(t *testing.T) {
	const d = 3
	loss := scalarLoss(t, d, 1, 1)
	cfg := olbfgs.DefaultConfig(d)
	state, err := olbfgs.Replay(cfg, loss, randomInserts(rand.New(rand.NewPCG(3, 3)), d, 30, 1))
	require.NoError(t, err)
	_, _, err = Certify(state, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(1), Alpha: &Given{Alpha: 1e-250}})
	require.ErrorIs(t, err, ErrResolution)
}

// ADV-11: a header whose loss constants are not the state's is refused.
func TestAdvHeaderMustBeTheStates(t *testing.T) {
	const d = 2
	loss := scalarLoss(t, d, 0.01, 0.01)
	state, err := olbfgs.Replay(guarded(d, 3, 0.5, 0.01, 0.01, 2, 2), loss, randomInserts(rand.New(rand.NewPCG(4, 4)), d, 10, 1))
	require.NoError(t, err)
	fake := mustHeader(t, scalarLoss(t, d, 1, 1))
	_, _, err = Certify(state, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(1), Header: &fake})
	wantSpecError(t, err, "Header", ErrSpec)
}

// ADV-16: a user's loss type that embeds a built-in one (and changes its
// gradient) does not get the built-in constants.
type scaledLogistic struct{ *stream.Logistic }

func (s scaledLogistic) Grad(dst, w []float64, z stream.Sample) {
	s.Logistic.Grad(dst, w, z)
	for i := range dst {
		dst[i] *= 1000
	}
}

func TestAdvEmbeddedLossGetsNoConstants(t *testing.T) {
	base, err := stream.NewLogistic(2, 0.1)
	require.NoError(t, err)
	state, err := olbfgs.New(logisticCfg(2, 3), scaledLogistic{base})
	require.NoError(t, err)
	_, _, err = Certify(state, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(1),
		Deletion: &Deletion{Ages: []int{0}, Intervention: unlearn.Builtin{Kind: unlearn.KindNoop}}})
	require.ErrorIs(t, err, ErrNotCertifiable)
}

// ADV-13: a quadratic header that is not exactly symmetric gets no
// recursion (the gradient uses the full matrix).
func TestAdvAsymmetricHeaderNoRecursion(t *testing.T) {
	h := stream.Header{Format: stream.FormatV1, Kind: stream.KindQuadratic, D: 2,
		H0: [][]float64{{1, 1e-13}, {0, 1}}, H1: [][]float64{{1, 0}, {0, 1}}}
	p, err := DeriveProfile(guarded(2, 3, 0.5, 1, 1, 2, 2), h)
	require.NoError(t, err)
	require.False(t, p.Recursion)
	require.Contains(t, p.Why, "symmetric")
}

// ADV-14: a signed certificate with a duplicate or differently cased key
// (which another JSON reader may read differently) is refused.
func TestAdvMalleableCertificateRefused(t *testing.T) {
	is := issue(t)
	b, err := is.cert.MarshalIndent()
	require.NoError(t, err)
	_, err = ParseCertificate(b)
	require.NoError(t, err, "the canonical form parses")
	for _, edit := range []string{`"EXACT": true,`, `"epsilon": 0.001,`} {
		forged := strings.Replace(string(b), `"format":`, edit+` "format":`, 1)
		_, err = ParseCertificate([]byte(forged))
		require.ErrorIs(t, err, ErrFormat, edit)
	}
	// A re-encoding with another key order is the same certificate.
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	sorted, err := json.Marshal(m)
	require.NoError(t, err)
	_, err = ParseCertificate(sorted)
	require.NoError(t, err)
}
