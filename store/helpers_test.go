package store

import (
	"bytes"
	"database/sql"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/noise"
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

// learnerConfig is a small learner: τ = tau, spec §2 defaults otherwise,
// made certifiable (the approximate path keeps only a noised state, which
// needs a radius) by a radius and a sample bound that the generated
// streams never reach (100 and 10⁴: their ‖w‖ and ‖x‖ stay below 10), so
// that the trajectory is the one of the paper's learner.
func learnerConfig(d, tau int) olbfgs.Config {
	c := olbfgs.DefaultConfig(d)
	c.Memory = tau
	c.Radius, c.SampleBound = 100, 1e4
	return c
}

// plainConfig is learnerConfig without a radius: not certifiable.
func plainConfig(d, tau int) olbfgs.Config {
	c := olbfgs.DefaultConfig(d)
	c.Memory = tau
	return c
}

// testNoise is the approximate path's release in tests: ε = 1, δ = 10⁻⁵,
// the SEEDED sampler (reproducible; never for deployment).
func testNoise() certify.Spec {
	return certify.Spec{Epsilon: 1, Delta: 1e-5, Sampler: noise.NewSeededSampler(17, noise.SamplerOptions{})}
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

// dropTo5 takes a store of the current schema back to version 5 (the
// column version 8 added, the tables version 7 added, the columns and rows
// version 6 added), for the tests that open older schemas: they then
// remove what earlier versions added.
func dropTo5(t tb, db *sql.DB) {
	t.Helper()
	qs := []string{`DROP TABLE forget_queue`, `DROP TABLE tokens`}
	for _, tc := range [][2]string{{"forget_requests", "sha256"}, {"events", "sha256"}, {"checkpoints", "sha256"}, {"state", "sha256"}, {"releases", "sha256"}, {"keys", "sha256"},
		{"forget_requests", "noised"}, {"forget_requests", "release"}, {"forget_requests", "alpha_source"}, {"forget_requests", "alpha"},
		{"forget_requests", "sigma"}, {"forget_requests", "epsilon"}, {"forget_requests", "delta"}, {"forget_requests", "disclosed_ages"},
		{"forget_requests", "head"}} {
		qs = append(qs, "ALTER TABLE "+tc[0]+" DROP COLUMN "+tc[1])
	}
	qs = append(qs, `DELETE FROM meta WHERE key = 'config_sha256'`, `DELETE FROM schema_migrations WHERE version >= 6`)
	for _, q := range qs {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
}
