package store

import (
	"bytes"
	"github.com/stretchr/testify/require"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// tb is what the helpers need of *testing.T and *rapid.T.
type tb interface {
	require.TestingT
	Helper()
	Fatalf(format string, args ...any)
}

// genHistory returns a paper stream of the given kind (package stream's
// generators) with d dimensions and n inserts, ids 1..n.
func genHistory(t tb, kind stream.Kind, d, n int, seed uint64) *stream.History {
	t.Helper()
	var h *stream.History
	var err error
	if kind == stream.KindLogistic {
		o := stream.DefaultLogisticOptions()
		o.D, o.T, o.Seed = d, n, seed
		h, err = stream.GenerateLogistic(o)
	} else {
		o := stream.DefaultQuadraticOptions()
		o.D, o.T, o.Seed = d, n, seed
		h, err = stream.GenerateQuadratic(o)
	}
	require.NoError(t, err)
	return h
}

// learnerConfig is a small learner: τ = tau, spec §2 defaults otherwise.
func learnerConfig(d, tau int) olbfgs.Config {
	c := olbfgs.DefaultConfig(d)
	c.Memory = tau
	return c
}

func createStore(t tb, dir string, h stream.Header, tau, k int) *Store {
	t.Helper()
	s, err := Create(dir, Config{Header: h, Learner: learnerConfig(h.D, tau), CheckpointEvery: k})
	require.NoError(t, err, "Create")
	return s
}

// oracle is `unlearn train` on the deletion-edited stream: olbfgs.Replay of
// stream.Counterfactual(events, forgotten).
func oracle(t tb, cfg olbfgs.Config, loss stream.Loss, events []stream.Event, forgotten stream.IDSet) *olbfgs.Learner {
	t.Helper()
	l, err := olbfgs.Replay(cfg, loss, stream.Counterfactual(events, forgotten))
	require.NoError(t, err, "oracle replay")
	return l
}

// requireSameState fails unless the store's state is bit-identical to want.
func requireSameState(t tb, s *Store, want *olbfgs.Learner, msg string) {
	t.Helper()
	got, err := s.State()
	require.NoError(t, err)
	if !got.Equal(want) {
		a, _ := olbfgs.MarshalSnapshot(got, s.Header())
		b, _ := olbfgs.MarshalSnapshot(want, s.Header())
		t.Fatalf("%s: state differs from the oracle (t %d vs %d; snapshots equal: %v)", msg, got.T(), want.T(), bytes.Equal(a, b))
	}
}
