package certify

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/bound"
	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// logisticStream returns n logistic inserts at dimension d with ‖x‖ ≤ 1.
func logisticStream(r *rand.Rand, d, n int) []stream.Event {
	out := make([]stream.Event, n)
	for i := range out {
		x := make([]float64, d)
		var s float64
		for j := range x {
			x[j] = r.NormFloat64()
			s += x[j] * x[j]
		}
		for j := range x {
			x[j] *= r.Float64() / math.Sqrt(s)
		}
		y := 1.0
		if r.IntN(2) == 0 {
			y = -1
		}
		out[i] = stream.InsertEvent(int64(i+1), x, y)
	}
	return out
}

func logisticCfg(d, tau int) olbfgs.Config {
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory = tau
	cfg.Radius, cfg.SampleBound = 10, 1
	return cfg
}

// Finding 1 (issue 9): with --memory keep the released curvature pairs and
// known retained samples gave back the un-noised w, and the deleted
// sample's own pair was released tagged with its id. Keep is refused, and
// no released pair is a pair of the un-noised memory; the release carries
// no ids.
func TestRegressionKeptMemoryNotReleased(t *testing.T) {
	_, err := ParseMemoryPolicy("keep")
	require.ErrorIs(t, err, ErrSpec)
	r := rand.New(rand.NewPCG(4, 10))
	const d, tau = 4, 10
	events := logisticStream(r, d, 60)
	loss, err := stream.NewLogistic(d, 0.05)
	require.NoError(t, err)
	state, err := olbfgs.Replay(logisticCfg(d, tau), loss, events)
	require.NoError(t, err)
	u := stream.NewIDSet(58)
	retained := lastRetained(events, u, tau)
	for _, policy := range []MemoryPolicy{Reset, Rebuild} {
		spec := Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(1), Memory: policy,
			Deletion: &Deletion{Ages: AgesOf(events, u), Intervention: unlearn.Builtin{Kind: unlearn.KindNoop}}}
		if policy == Rebuild {
			spec.Retained = retained
		}
		rel, cert, err := Certify(state, spec)
		require.NoError(t, err)
		b, err := rel.Marshal()
		require.NoError(t, err)
		for _, word := range []string{"source", "deleted", "\"t\"", "skipped", "sha256"} {
			assert.NotContains(t, string(b), word, "the release must not carry %s", word)
		}
		for _, p := range rel.Memory {
			for i := range state.Memory().Len() {
				assert.False(t, floatbits.Equal(p.S, state.Memory().Pair(i).S), "an un-noised pair was released (%s)", policy)
			}
		}
		if policy == Rebuild {
			// The released memory is what replaying the retained data from
			// the released w gives: post-processing of public data.
			l, err := olbfgs.New(state.Config(), loss)
			require.NoError(t, err)
			l.SetW(rel.W)
			require.NoError(t, l.Run(retained))
			got, err := rel.Learner()
			require.NoError(t, err)
			assert.True(t, l.Memory().Equal(withoutSources(got.Memory(), l.Memory())), "rebuilt memory differs from the replay of retained data from the noised w")
		}
		require.Equal(t, policy, cert.Memory)
	}
}

// withoutSources returns m's pairs tagged with ref's sources (the release
// drops sources; the comparison is of the vectors).
func withoutSources(m, ref *olbfgs.Memory) *olbfgs.Memory {
	c := olbfgs.NewMemory(m.Dim(), m.Cap(), m.InitialScale())
	for i := range m.Len() {
		var src []int64
		if i < ref.Len() {
			src = ref.Pair(i).Source
		}
		_ = c.Push(m.Pair(i).S, m.Pair(i).Y, src...)
	}
	return c
}

// Finding 2 (issue 9): σ and the certificate depended on the deleted
// payloads. Two data sets that differ only in a deleted sample's payload
// (same ids, same retained data) must give byte-identical certificates
// apart from the hash of the (noised) release and the digest.
func TestRegressionCertificateIndependentOfDeletedPayload(t *testing.T) {
	const d, tau = 3, 5
	loss := scalarLoss(t, d, 1, 1)
	cfg := guarded(d, tau, 0.5, 1, 1, 5, 2)
	r := rand.New(rand.NewPCG(7, 7))
	base := randomInserts(r, d, 80, 1)
	alt := slices.Clone(base)
	alt[39] = stream.InsertEvent(40, []float64{1.5, -0.5, 0.2}, 0) // the deleted sample, another payload
	u := stream.NewIDSet(40)
	for _, op := range []unlearn.Operator{unlearn.NoOp(), unlearn.ParamOnly(), unlearn.RetainFineTune(), unlearn.WindowReplay(10, "w", "w")} {
		var certs [][]byte
		for _, events := range [][]stream.Event{base, alt} {
			actual, err := olbfgs.New(cfg, loss)
			require.NoError(t, err)
			require.NoError(t, actual.KeepCheckpoints(50))
			require.NoError(t, actual.Run(events))
			c, err := Wrap(op, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(3)})
			require.NoError(t, err)
			_, cert, _, err := c.ApplyCertified(unlearn.Request{Actual: actual, Prefix: events, U: u})
			require.NoError(t, err)
			cert.ReleaseSHA256, cert.Digest = "", ""
			b, err := cert.MarshalIndent()
			require.NoError(t, err)
			certs = append(certs, b)
		}
		require.True(t, bytes.Equal(certs[0], certs[1]), "%s: the certificate depends on the deleted payload:\n%s\n%s", op.Name(), certs[0], certs[1])
	}
}

// Finding 3 (issue 9): on an isotropic quadratic stream (d = 3, H0 = H1 =
// I, τ = 10, η = 0.5, one deletion 190 steps old) α was 3e-57 and the
// released w was bitwise the un-noised one, while two float trajectories
// differ by about 2e-16. α now includes the round-off of two float
// trajectories and dominates their measured divergence, and the release
// differs from the un-noised state.
func TestRegressionRoundOffFloor(t *testing.T) {
	const d, tau = 3, 10
	loss := scalarLoss(t, d, 1, 1)
	cfg := guarded(d, tau, 0.5, 1, 1, 10, 3)
	r := rand.New(rand.NewPCG(3, 190))
	events := randomInserts(r, d, 200, 1)
	u := stream.NewIDSet(10) // 190 steps old at t_del = 200
	actual, err := olbfgs.Replay(cfg, loss, events)
	require.NoError(t, err)
	cf, err := olbfgs.Replay(cfg, loss, stream.Counterfactual(events, u))
	require.NoError(t, err)
	dev := exactDistance(actual.W(), cf.W())
	spec := Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(5), Deletion: &Deletion{Ages: AgesOf(events, u), Intervention: unlearn.Builtin{Kind: unlearn.KindNoop}}}
	rel, cert, err := Certify(actual, spec)
	require.NoError(t, err)
	assert.Equal(t, []int{190}, cert.Sensitivity.Deletion.Ages)
	p, err := DeriveProfile(cfg, mustHeader(t, loss))
	require.NoError(t, err)
	require.True(t, p.Recursion, p.Why)
	assert.GreaterOrEqual(t, cert.Sensitivity.Alpha, p.RoundOff, "α below the round-off of one step")
	assert.LessOrEqual(t, dev, cert.Sensitivity.Alpha, "measured float divergence above α")
	assert.Greater(t, cert.Sigma, 0x1p-30*cfg.Radius)
	assert.False(t, floatbits.Equal(rel.W, actual.W()), "the release equals the un-noised w")
	assert.Less(t, cert.Sensitivity.Alpha, p.Diameter, "the recursion should beat the diameter here")
}

// Finding 4 (issue 9): a caller's Δ₀ = 0 "proved" made a window replay of
// a deletion outside its window certified exact with σ = 0 while the state
// was 1e-4 from the counterfactual; proofs and exactness were taken on the
// user's word.
func TestRegressionExactnessEstablished(t *testing.T) {
	const d, tau = 3, 5
	loss := scalarLoss(t, d, 0.5, 2)
	cfg := guarded(d, tau, 0.2, 0.5, 2, 5, 2)
	r := rand.New(rand.NewPCG(11, 4))
	events := randomInserts(r, d, 100, 1)
	actual, err := olbfgs.New(cfg, loss)
	require.NoError(t, err)
	require.NoError(t, actual.KeepCheckpoints(30))
	require.NoError(t, actual.Run(events))
	cases := []struct {
		name  string
		op    unlearn.Operator
		u     stream.IDSet
		exact bool
	}{
		{"window-outside", unlearn.WindowReplay(20, "window-20", "w"), stream.NewIDSet(50), false},
		{"window-inside", unlearn.WindowReplay(20, "window-20", "w"), stream.NewIDSet(95), true},
		{"oracle", unlearn.Oracle(), stream.NewIDSet(50), true},
		{"impostor-named-oracle", impostor{unlearn.Oracle()}, stream.NewIDSet(50), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Wrap(tc.op, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(1)})
			require.NoError(t, err)
			rel, cert, _, err := c.ApplyCertified(unlearn.Request{Actual: actual, Prefix: events, U: tc.u})
			require.NoError(t, err)
			require.Equal(t, tc.exact, cert.Exact, cert.Statement)
			cf, err := olbfgs.Replay(cfg, loss, stream.Counterfactual(events, tc.u))
			require.NoError(t, err)
			if tc.exact {
				require.True(t, floatbits.Equal(rel.W, cf.W()), "an exact release must be the counterfactual bit for bit")
				require.Zero(t, cert.Sigma)
			} else {
				require.Greater(t, cert.Sigma, 0.0)
			}
		})
	}
	// A caller cannot claim exactness or proof.
	_, _, err = Certify(actual, Spec{Epsilon: 1, Delta: 1e-5, Deletion: &Deletion{Intervention: unlearn.Builtin{Kind: unlearn.KindOracle}}})
	require.ErrorIs(t, err, ErrNotCertifiable)
	_, _, err = Certify(actual, Spec{Epsilon: 1, Delta: 1e-5, Alpha: &Given{Alpha: 0}})
	require.ErrorIs(t, err, ErrValue)
	_, cert, err := Certify(actual, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(2), Alpha: &Given{Alpha: 0.3, Method: "my proof"}})
	require.NoError(t, err)
	require.Equal(t, bound.Assumed, cert.Provenance)
	require.Contains(t, cert.Statement, "ASSUMED")
	require.NotEmpty(t, cert.Warnings)
	// A quadratic loss has no global gradient bound: without a radius the
	// toolkit proves nothing.
	plain, err := olbfgs.Replay(olbfgs.DefaultConfig(d), loss, events)
	require.NoError(t, err)
	_, _, err = Certify(plain, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(2)})
	require.ErrorIs(t, err, ErrNotCertifiable)
}

// impostor is a user operator that wraps the oracle and takes its name: it
// must not be granted the oracle's exactness.
type impostor struct{ unlearn.Operator }

func mustHeader(t *testing.T, loss stream.Loss) stream.Header {
	t.Helper()
	h, err := HeaderOf(loss)
	require.NoError(t, err)
	return h
}

func TestReleaseJSONHasNoPrivateFields(t *testing.T) {
	var m map[string]any
	r := &Release{Format: ReleaseFormat, Loss: stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 1, Lambda: 0.1}, W: []float64{1}, Memory: []ReleasePair{}}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &m))
	keys := []string{}
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	require.Equal(t, "config format loss memory w", strings.Join(keys, " "))
}

// exactDistance is floatbits.ExactDistance: a distance computed exactly
// and rounded up, compared with α without any tolerance.
func exactDistance(a, b []float64) float64 { return floatbits.ExactDistance(a, b) }

// Programmer errors panic with the package prefix.
func TestNilArgumentsPanic(t *testing.T) {
	wantPanic(t, func() { _, _, _ = Certify(nil, Spec{}) })
	wantPanic(t, func() { _, _ = Wrap(nil, Spec{}) })
}
