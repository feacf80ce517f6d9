package store

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// linearHistory returns a stream of n inserts (ids 1…n) of one of the
// linear kinds — logistic, regression or multinomial with k classes —
// whose features have unequal scales and nonzero means (what the
// practitioner's standardization is for), some entries exactly zero.
func linearHistory(t tb, kind stream.Kind, d, k, n int, seed uint64) *stream.History {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 21))
	h := stream.Header{Format: stream.FormatV1, Kind: kind, D: d, Lambda: 0.01}
	if kind == stream.KindMultinomial {
		h.K = k
	}
	outputs := max(h.K, 1)
	beta := make([]float64, outputs*d)
	for i := range beta {
		beta[i] = rng.NormFloat64()
	}
	events := make([]stream.Event, n)
	u := make([]float64, outputs)
	for i := range events {
		x := make([]float64, d)
		for j := range x {
			if rng.IntN(4) > 0 {
				x[j] = float64(j+1)*rng.NormFloat64() + 2
			}
		}
		for c := range u {
			u[c] = stream.Dot4(x, beta[c*d:(c+1)*d]) / float64(d)
		}
		var y float64
		switch kind {
		case stream.KindLogistic:
			y = -1
			if rng.Float64() < stream.Sigmoid(u[0]) {
				y = 1
			}
		case stream.KindRegression:
			y = u[0] + rng.NormFloat64()
		default:
			best := 0
			for c := range u {
				if u[c]+rng.NormFloat64() > u[best] {
					best = c
				}
			}
			y = float64(best)
		}
		events[i] = stream.InsertEvent(int64(i+1), x, y)
	}
	hist, err := stream.NewHistory(h, events)
	require.NoError(t, err)
	return hist
}

// drawOptions draws any combination of the practitioner's options.
func drawOptions(rt *rapid.T, c olbfgs.Config) olbfgs.Config {
	c.Intercept = rapid.Bool().Draw(rt, "intercept")
	c.RidgeIntercept = c.Intercept && rapid.Bool().Draw(rt, "ridge intercept")
	c.Standardize = rapid.Bool().Draw(rt, "standardize")
	c.Average = rapid.Bool().Draw(rt, "average")
	if c.Average {
		c.AverageStart = rapid.IntRange(0, 8).Draw(rt, "average start")
		c.AveragePower = rapid.SampledFrom([]float64{0, 10}).Draw(rt, "average power")
	}
	if rapid.Bool().Draw(rt, "damping") {
		c.Damping = 5
	}
	if rapid.Bool().Draw(rt, "schedule") {
		c.StepDecay, c.StepPower = 0.5, rapid.SampledFrom([]float64{0, 0.75}).Draw(rt, "step power")
	}
	c.Progress = rapid.Bool().Draw(rt, "progress")
	return c
}

// TestForgetExactWithOptions is issue 20's exactness property: for random
// streams of every linear kind, random checkpoint intervals, deletion sets
// and every combination of the practitioner's options, the store's state
// after each exact forget is bit-identical — w, Z, the standardization
// statistics, the average, the progressive statistics, the counters — to
// `unlearn train` on the deletion-edited stream with the same options
// (olbfgs.Replay), the stored snapshots check against a replay from θ0,
// and a snapshot of the state written by the store is byte-identical to
// the oracle's. `go test ./store -run WithOptions -rapid.checks=2000` is
// the long run.
func TestForgetExactWithOptions(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		kind := rapid.SampledFrom([]stream.Kind{stream.KindLogistic, stream.KindRegression, stream.KindMultinomial}).Draw(rt, "kind")
		d := rapid.IntRange(1, 4).Draw(rt, "d")
		n := rapid.IntRange(1, 50).Draw(rt, "n")
		h := linearHistory(rt, kind, d, rapid.IntRange(2, 4).Draw(rt, "classes"), n, rapid.Uint64Range(0, 1000).Draw(rt, "seed"))
		cfg := drawOptions(rt, olbfgs.DefaultConfig(d).ForLoss(h.Loss))
		cfg.Memory = rapid.IntRange(0, 4).Draw(rt, "tau")
		dir, err := os.MkdirTemp("", "store-options-")
		require.NoError(rt, err)
		defer os.RemoveAll(dir)
		s, err := Create(dir, Config{Header: h.Header, Learner: cfg, CheckpointEvery: rapid.IntRange(1, 10).Draw(rt, "K")})
		require.NoError(rt, err)
		defer s.Close()
		ingested, forgotten := 0, stream.IDSet{}
		for range rapid.IntRange(1, 6).Draw(rt, "actions") {
			if ingested < n && (ingested == 0 || rapid.Bool().Draw(rt, "ingest?")) {
				m := rapid.IntRange(1, n-ingested).Draw(rt, "m")
				_, err := s.IngestEvents(Events(h.Events[ingested:ingested+m]), IngestOptions{})
				require.NoError(rt, err)
				ingested += m
			} else {
				var ids []int64
				for range rapid.IntRange(1, 3).Draw(rt, "count") {
					ids = append(ids, int64(rapid.IntRange(1, ingested).Draw(rt, "id")))
				}
				rep, err := s.Forget(ids, ForgetOptions{SkipVacuum: true})
				require.NoError(rt, err)
				require.NotEqual(rt, PathApproximate, rep.Path) // exact, or none when every id was forgotten already
				for _, id := range ids {
					forgotten.Add(id)
				}
			}
			want := oracle(rt, cfg, h.Loss, h.Events[:ingested], forgotten)
			requireSameState(rt, s, want, "after action")
		}
		rep, err := s.Check()
		require.NoError(rt, err)
		require.True(rt, rep.StateFromScratch)
	})
}

// TestStoreKeepsOptions checks that a store created with options reopens
// with them (meta "learner"), and that a store of the paper's learner
// stores its configuration as before the options existed.
func TestStoreKeepsOptions(t *testing.T) {
	h := linearHistory(t, stream.KindMultinomial, 3, 3, 20, 1)
	cfg := olbfgs.DefaultConfig(3).ForLoss(h.Loss).Practitioner()
	dir := t.TempDir()
	s, err := Create(dir, Config{Header: h.Header, Learner: cfg, CheckpointEvery: 7})
	require.NoError(t, err)
	_, err = s.IngestEvents(Events(h.Events), IngestOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	s, err = Open(dir)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, cfg, s.LearnerConfig())
	st, err := s.Status()
	require.NoError(t, err)
	require.True(t, st.HasProgress)
	require.Equal(t, 20, st.Progress.N)
	require.False(t, math.IsNaN(st.Progress.MeanLoss()))

	var lj string
	paper := genHistory(t, stream.KindLogistic, 2, 5, 1)
	p, err := Create(t.TempDir(), Config{Header: paper.Header, Learner: plainConfig(paper.Header.D, 3), CheckpointEvery: 10})
	require.NoError(t, err)
	defer p.Close()
	require.NoError(t, p.db.QueryRow(`SELECT value FROM meta WHERE key = 'learner'`).Scan(&lj))
	require.Equal(t, `{"d":2,"tau":3,"eta":0.1,"gamma0":1,"curvature_tol":1e-10}`, lj)
}

// TestIngestRefusesAnotherClassCount: a multinomial stream with another k
// than the store's is refused, naming the field.
func TestIngestRefusesAnotherClassCount(t *testing.T) {
	h := linearHistory(t, stream.KindMultinomial, 2, 3, 5, 1)
	s, err := Create(t.TempDir(), Config{Header: h.Header, Learner: olbfgs.DefaultConfig(2).ForLoss(h.Loss), CheckpointEvery: 4})
	require.NoError(t, err)
	defer s.Close()
	other := h.Header
	other.K = 4
	var b strings.Builder
	require.NoError(t, stream.Write(&b, &stream.History{Header: other}))
	_, err = s.Ingest(strings.NewReader(b.String()), IngestOptions{})
	require.ErrorIs(t, err, ErrHeader)
	require.ErrorContains(t, err, `"k" is 4, the store's is 3`)
}
