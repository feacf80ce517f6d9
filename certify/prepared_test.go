package certify

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// TestPrepared: a prepared release given a seeded sampler publishes the
// same bytes as Certify given the same seeded sampler, trial after trial
// (the sampler's state advances the same way), for both memory policies
// and for a derived and an assumed α; σ and α are the certificate's.
func TestPrepared(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 10)) // the stream of TestRegressionKeptMemoryNotReleased
	const d, tau = 4, 10
	events := logisticStream(r, d, 60)
	loss, err := stream.NewLogistic(d, 0.05)
	require.NoError(t, err)
	state, err := olbfgs.Replay(logisticCfg(d, tau), loss, events)
	require.NoError(t, err)
	u := stream.NewIDSet(58)
	for _, policy := range []MemoryPolicy{Reset, Rebuild} {
		for _, assumed := range []bool{false, true} {
			t.Run(policy.String()+map[bool]string{false: "/derived", true: "/assumed"}[assumed], func(t *testing.T) {
				spec := Spec{Epsilon: 1, Delta: 1e-5, Memory: policy}
				if assumed {
					spec.Alpha = &Given{Alpha: 0.3, Method: "test"}
				} else {
					spec.Deletion = &Deletion{Ages: AgesOf(events, u), Intervention: unlearn.Builtin{Kind: unlearn.KindNoop}}
				}
				if policy == Rebuild {
					spec.Retained = lastRetained(events, u, tau)
				}
				p, err := Prepare(state, spec)
				require.NoError(t, err)
				h, err := HeaderOf(loss)
				require.NoError(t, err)
				before, err := olbfgs.MarshalSnapshot(state, h)
				require.NoError(t, err)
				const seed = 99 // any seed: both paths get the same one
				sa, sb := seeded(seed), seeded(seed)
				for trial := range 3 {
					spec.Sampler = sa
					want, cert, err := Certify(state, spec)
					require.NoError(t, err)
					got, err := p.Release(sb)
					require.NoError(t, err)
					wb, err := want.Marshal()
					require.NoError(t, err)
					gb, err := got.Marshal()
					require.NoError(t, err)
					require.Equal(t, string(wb), string(gb), "trial %d: the prepared release differs from Certify's", trial)
					require.Equal(t, cert.Sigma, p.Sigma())
					require.Equal(t, cert.Sensitivity.Alpha, p.Sensitivity().Alpha)
					require.Equal(t, policy, p.Memory())
				}
				after, err := olbfgs.MarshalSnapshot(state, h)
				require.NoError(t, err)
				require.Equal(t, before, after, "Prepare/Release modified the state")
			})
		}
	}
}

// TestPrepareErrors: Prepare refuses what Certify refuses, naming the
// field, and Release refuses a sampler of another type.
func TestPrepareErrors(t *testing.T) {
	state, err := olbfgs.Replay(logisticCfg(4, 3), mustLogistic(t, 4), nil)
	require.NoError(t, err)
	_, err = Prepare(state, Spec{Epsilon: -1, Delta: 1e-5, Alpha: &Given{Alpha: 1, Method: "test"}})
	wantSpecError(t, err, "Epsilon", ErrEpsilon)
	_, err = Prepare(state, Spec{Epsilon: 1, Delta: 1e-5, Memory: Rebuild, Alpha: &Given{Alpha: 1, Method: "test"}})
	wantSpecError(t, err, "Retained", ErrSpec)
}

func mustLogistic(t *testing.T, d int) stream.Loss {
	t.Helper()
	l, err := stream.NewLogistic(d, 0.05)
	require.NoError(t, err)
	return l
}

// Property: for any assumed α, ε, δ, memory policy and seed, a prepared
// release is bit for bit Certify's with the same seeded sampler.
func TestPreparedMatchesCertifyProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 10)) // the stream of TestPrepared
	const d, tau = 4, 10
	events := logisticStream(r, d, 60)
	loss, err := stream.NewLogistic(d, 0.05)
	require.NoError(t, err)
	state, err := olbfgs.Replay(logisticCfg(d, tau), loss, events)
	require.NoError(t, err)
	retained := lastRetained(events, stream.NewIDSet(58), tau)
	rapid.Check(t, func(rt *rapid.T) {
		spec := Spec{
			Epsilon: rapid.Float64Range(0.05, 8).Draw(rt, "eps"),
			Delta:   rapid.Float64Range(1e-9, 0.1).Draw(rt, "delta"),
			Alpha:   &Given{Alpha: rapid.Float64Range(1e-3, 10).Draw(rt, "alpha"), Method: "property"},
		}
		if rapid.Bool().Draw(rt, "rebuild") {
			spec.Memory, spec.Retained = Rebuild, retained
		}
		seed := rapid.Uint64().Draw(rt, "seed")
		p, err := Prepare(state, spec)
		require.NoError(rt, err)
		spec.Sampler = seeded(seed)
		want, _, err := Certify(state, spec)
		require.NoError(rt, err)
		got, err := p.Release(seeded(seed))
		require.NoError(rt, err)
		wb, err := want.Marshal()
		require.NoError(rt, err)
		gb, err := got.Marshal()
		require.NoError(rt, err)
		require.Equal(rt, string(wb), string(gb))
	})
}
