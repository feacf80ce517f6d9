package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"pgregory.net/rapid"

	"unlearn/certify"
	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

func TestPragmas(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 10, 1)
	s := createStore(t, t.TempDir(), h.Header, 3, 4)
	defer s.Close()
	// Values as SQLite reports them (https://sqlite.org/pragma.html):
	// synchronous FULL = 2, temp_store FILE = 1.
	for _, c := range []struct{ pragma, want string }{
		{"page_size", "16384"},
		{"journal_mode", "delete"},
		{"synchronous", "2"},
		{"secure_delete", "1"},
		{"foreign_keys", "1"},
		{"temp_store", "1"},
		{"busy_timeout", "10000"},
		{"cache_spill", "4096"},
	} {
		t.Run(c.pragma, func(t *testing.T) {
			var got string
			require.NoError(t, s.db.QueryRow("PRAGMA "+c.pragma).Scan(&got))
			require.Equal(t, c.want, strings.ToLower(got), "PRAGMA %s", c.pragma)
		})
	}
	var v int
	require.NoError(t, s.db.QueryRow(`SELECT max(version) FROM schema_migrations`).Scan(&v))
	require.Equal(t, SchemaVersion, v, "schema version")
}

func TestCreateOpen(t *testing.T) {
	dir := t.TempDir()
	h := genHistory(t, stream.KindQuadratic, 3, 30, 2)
	s := createStore(t, dir, h.Header, 4, 7)
	_, err := s.IngestEvents(Events(h.Events), IngestOptions{BatchSize: 8})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	_, err = Create(dir, Config{Header: h.Header, Learner: learnerConfig(3, 4)})
	require.ErrorIs(t, err, ErrExists, "Create over a store")
	_, err = Open(t.TempDir())
	require.ErrorIs(t, err, ErrNotStore, "Open of an empty directory")

	s, err = Open(dir)
	require.NoError(t, err)
	defer s.Close()
	requireSameState(t, s, oracle(t, learnerConfig(3, 4), h.Loss, h.Events, nil), "reopened")
	require.Equal(t, 7, s.CheckpointEvery())
	st, err := s.Status()
	require.NoError(t, err)
	// Checkpoints at θ0 and at seq 7, 14, 21, 28.
	require.Equal(t, 5, st.Checkpoints, "checkpoints")
	require.Equal(t, 30, st.Events)
	rep, err := s.Check()
	require.NoError(t, err)
	require.Equal(t, 4, rep.CheckpointsVerified)
	require.True(t, rep.StateFromScratch)
}

func TestOptionErrors(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 2, 5, 3)
	_, err := Create(t.TempDir(), Config{Header: h.Header, Learner: learnerConfig(2, 2), CheckpointEvery: -1})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "CheckpointEvery", oe.Option)
	_, err = Create(t.TempDir(), Config{Header: h.Header, Learner: learnerConfig(3, 2)})
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "Learner.Dim", oe.Option)
	bad := learnerConfig(2, 2)
	bad.StepSize = 0
	_, err = Create(t.TempDir(), Config{Header: h.Header, Learner: bad})
	require.ErrorIs(t, err, olbfgs.ErrConfig)

	s := createStore(t, t.TempDir(), h.Header, 2, 2)
	defer s.Close()
	_, err = s.IngestEvents(Events(h.Events), IngestOptions{})
	require.NoError(t, err)
	for _, c := range []struct {
		name   string
		o      ForgetOptions
		option string
	}{
		{"negative cap", ForgetOptions{MaxReplay: -1}, "MaxReplay"},
		{"cap without intervention", ForgetOptions{Noise: testNoise(), MaxReplay: 1}, "Intervention"},
		{"unknown intervention", ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "oracle"}, "Intervention"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Forget([]int64{1}, c.o)
			require.ErrorAs(t, err, &oe)
			require.Equal(t, c.option, oe.Option)
		})
	}
	_, err = s.Forget(nil, ForgetOptions{})
	require.ErrorAs(t, err, &oe)
}

func TestIngestRefusals(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 2, 10, 4)
	s := createStore(t, t.TempDir(), h.Header, 2, 3)
	defer s.Close()
	_, err := s.IngestEvents(Events(h.Events[:6]), IngestOptions{BatchSize: 2})
	require.NoError(t, err)

	t.Run("duplicate id", func(t *testing.T) {
		_, err := s.IngestEvents(Events(h.Events[5:7]), IngestOptions{})
		require.ErrorIs(t, err, ErrEvent)
		var ee *EventError
		require.ErrorAs(t, err, &ee)
		require.Equal(t, int64(6), ee.ID)
	})
	t.Run("delete event", func(t *testing.T) {
		_, err := s.IngestEvents(Events([]stream.Event{stream.DeleteEvent(1)}), IngestOptions{})
		require.ErrorIs(t, err, ErrEvent)
		require.Contains(t, err.Error(), "forget")
	})
	t.Run("forgotten id", func(t *testing.T) {
		_, err := s.Forget([]int64{3}, ForgetOptions{})
		require.NoError(t, err)
		_, err = s.IngestEvents(Events([]stream.Event{h.Events[2]}), IngestOptions{})
		require.ErrorIs(t, err, ErrEvent)
		require.Contains(t, err.Error(), "forgotten")
	})
	t.Run("unknown id", func(t *testing.T) {
		_, err := s.Forget([]int64{4, 99}, ForgetOptions{})
		require.ErrorIs(t, err, ErrUnknownID)
		require.Contains(t, err.Error(), "99")
	})
	t.Run("retry", func(t *testing.T) {
		rep, err := s.Forget([]int64{3}, ForgetOptions{})
		require.NoError(t, err)
		require.Equal(t, PathNone, rep.Path)
		require.Equal(t, []int64{3}, rep.AlreadyForgotten)
	})
	t.Run("header", func(t *testing.T) {
		other := genHistory(t, stream.KindLogistic, 3, 2, 4)
		var buf bytes.Buffer
		require.NoError(t, stream.Write(&buf, other))
		_, err := s.Ingest(&buf, IngestOptions{})
		require.ErrorIs(t, err, ErrHeader)
		require.Contains(t, err.Error(), `"d"`)
	})
	t.Run("failed batch is rolled back", func(t *testing.T) {
		// Events 7, 8 then a duplicate: the batch of three is rolled back,
		// the state is that of the six events minus the forgotten 3.
		evs := []stream.Event{h.Events[6], h.Events[7], h.Events[0]}
		res, err := s.IngestEvents(Events(evs), IngestOptions{})
		require.ErrorIs(t, err, ErrEvent)
		require.Zero(t, res.Events)
		requireSameState(t, s, oracle(t, s.LearnerConfig(), h.Loss, h.Events[:6], stream.NewIDSet(3)), "after rollback")
		_, err = s.Check()
		require.NoError(t, err)
	})
}

// TestForgetExactProperty is the exactness property of the issue: for
// random streams, checkpoint intervals and deletion sets (before the first
// checkpoint, inside and outside the window, repeated requests interleaved
// with ingestion), the store's state after every request is bit-identical
// to olbfgs.Replay on the deletion-edited stream (`unlearn train` on it).
//
// With approximate forgets mixed in (some requests capped, served by a
// random intervention), the state is the oracle whenever no approximate
// request is pending, Counterfactual is the oracle always, and Check passes.
//
// Each case draws its mode: mixed, exact forgets only, or mixed with every
// checkpoint written by the stepping goroutine (no writer goroutine). A
// forget at an odd step skips its VACUUM, which rewrites the file but no row
// (TestErasure checks what it erases): the rows and the state, which this
// property checks, are the same either way. A longer run:
// `go test ./store -run TestForgetExactProperty -rapid.checks=1000`.
//
// The failing cases kept in testdata/rapid/TestForgetExactProperty were
// found when the modes were subtests (TestForgetExactProperty/mixed and
// …/mixed, checkpoints written directly); they hold the old draws behind
// the two values that draw the mode, so they replay the same cases.
func TestForgetExactProperty(t *testing.T) {
	saved := ckptAsyncMaxFloats
	defer func() { ckptAsyncMaxFloats = saved }()
	rapid.Check(t, func(rt *rapid.T) {
		mode := rapid.SampledFrom([]string{"mixed", "exact", "mixed, checkpoints written directly"}).Draw(rt, "mode")
		approximate := mode != "exact"
		ckptAsyncMaxFloats = saved
		if mode == "mixed, checkpoints written directly" {
			ckptAsyncMaxFloats = 0 // every state is "large": no writer goroutine
		}
		kind := rapid.SampledFrom([]stream.Kind{stream.KindQuadratic, stream.KindLogistic}).Draw(rt, "kind")
		d := rapid.IntRange(2, 4).Draw(rt, "d")
		n := rapid.IntRange(1, 60).Draw(rt, "n")
		tau := rapid.IntRange(0, 5).Draw(rt, "tau")
		k := rapid.IntRange(1, 12).Draw(rt, "K")
		h := genHistory(rt, kind, d, n, rapid.Uint64Range(0, 1000).Draw(rt, "seed"))
		dir, err := os.MkdirTemp("", "store-rapid-")
		require.NoError(rt, err)
		defer os.RemoveAll(dir)
		s := createStore(rt, dir, h.Header, tau, k)
		defer s.Close()
		// Under -race the cheap check before each forget is skipped here
		// (it doubled this test's time there: the race detector slows the
		// pure-Go SQLite ~10×); it runs in every other run, and
		// TestStoreMachine and the corruption tests exercise it under -race.
		s.skipCheck = raceEnabled
		cfg := s.LearnerConfig()
		ingested, forgotten, pending := 0, stream.IDSet{}, false
		steps := rapid.IntRange(1, 8).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			if ingested < n && (ingested == 0 || rapid.Bool().Draw(rt, "ingest?")) {
				m := rapid.IntRange(1, n-ingested).Draw(rt, "m")
				_, err := s.IngestEvents(Events(h.Events[ingested:ingested+m]), IngestOptions{BatchSize: rapid.IntRange(0, 5).Draw(rt, "batch")})
				require.NoError(rt, err)
				ingested += m
			} else if approximate && rapid.IntRange(0, 4).Draw(rt, "resolve?") == 0 {
				// Resolve: pending approximate requests served exactly.
				rep, err := s.Resolve(ForgetOptions{SkipVacuum: rapid.Bool().Draw(rt, "skipVacuum")})
				require.NoError(rt, err)
				if pending {
					require.Equal(rt, PathExact, rep.Path)
					require.NotEmpty(rt, rep.Resolved)
					require.Empty(rt, rep.IDs)
				} else {
					require.Equal(rt, PathNone, rep.Path)
				}
				require.False(rt, rep.NeedsNoise)
				pending = false
			} else {
				cnt := rapid.IntRange(1, 3).Draw(rt, "count")
				var ids []int64
				for j := 0; j < cnt; j++ {
					ids = append(ids, int64(rapid.IntRange(1, ingested).Draw(rt, "id")))
				}
				var o ForgetOptions
				if approximate && rapid.Bool().Draw(rt, "capped?") {
					o = ForgetOptions{Noise: testNoise(), MaxReplay: rapid.IntRange(1, 20).Draw(rt, "cap"),
						Intervention: rapid.SampledFrom(Interventions()).Draw(rt, "intervention")}
				}
				o.SkipVacuum = i%2 == 1
				rep, err := s.Forget(ids, o)
				require.NoError(rt, err)
				for _, id := range ids {
					forgotten.Add(id)
				}
				switch rep.Path {
				case PathExact:
					require.Equal(rt, rep.ExactReplay, rep.EventsReplayed, "events replayed")
					require.True(rt, o.MaxReplay == 0 || rep.ExactReplay <= o.MaxReplay)
					pending = false
				case PathApproximate:
					require.Greater(rt, rep.ExactReplay, o.MaxReplay)
					pending = true
				}
				require.Equal(rt, pending, rep.NeedsNoise, "NeedsNoise")
			}
			want := oracle(rt, cfg, h.Loss, h.Events[:ingested], forgotten)
			if !pending {
				requireSameState(rt, s, want, "after action")
			}
			cf, err := s.Counterfactual()
			require.NoError(rt, err)
			require.True(rt, cf.Equal(want), "Counterfactual differs from the oracle")
		}
		rep, err := s.Check()
		require.NoError(rt, err)
		require.Equal(rt, !pending, rep.StateFromScratch)
	})
}

// TestForgetApproximate: beyond the replay cap the intervention is applied
// to the current state (unlearn.Run on the same request) and kept only
// noised: the kept release is that output projected and noised with the
// certified σ (bit for bit what certify publishes with the same seeded
// sampler), the state is the release's w projected onto the ball with an
// empty memory, and no checkpoint from the oldest deleted insert on stays;
// the request records what the release covers; a later exact forget
// removes the influence and the state is the oracle again.
func TestForgetApproximate(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 60, 5)
	cfg := learnerConfig(h.Header.D, 4)
	cfg.Radius = 2 // binding: the noised w is projected back (w of these streams reaches ‖w‖ ≈ 1)
	for _, name := range Interventions() {
		t.Run(name, func(t *testing.T) {
			// A fresh store per intervention, same 40 events.
			s, err := Create(t.TempDir(), Config{Header: h.Header, Learner: cfg, CheckpointEvery: 10})
			require.NoError(t, err)
			defer s.Close()
			_, err = s.IngestEvents(Events(h.Events[:40]), IngestOptions{})
			require.NoError(t, err)
			u := stream.NewIDSet(5, 33)
			// Exact replay from θ0 (checkpoint before id 5 at seq 5) would
			// apply the 38 other events: over the cap of 10.
			rep, err := s.Forget(u.Sorted(), ForgetOptions{Noise: testNoise(), MaxReplay: 10, Intervention: name})
			require.NoError(t, err)
			require.Equal(t, PathApproximate, rep.Path)
			require.Equal(t, 38, rep.ExactReplay)
			require.True(t, rep.NeedsNoise)
			require.Equal(t, []int{35, 7}, rep.Ages, "ages: inserts after ids 5 and 33 among 40")
			require.Contains(t, rep.Reason, "more than the cap of 10")
			require.Equal(t, 4, rep.CheckpointsDropped, "the checkpoints at seq 10, 20, 30, 40")

			actual := oracle(t, cfg, h.Loss, h.Events[:40], nil)
			var op unlearn.Operator
			for _, o := range unlearn.Paper(cfg.Memory) {
				if o.Name() == name {
					op = o
				}
			}
			unnoised, _, err := unlearn.Run(op, unlearn.Request{Actual: actual, Prefix: h.Events[:40], U: u})
			require.NoError(t, err)
			// The kept release: the same σ and seeded noise on the
			// intervention's output give the same bits.
			c := rep.Released.Certificate
			p, err := certify.Prepare(unnoised, certify.Spec{Epsilon: 1, Delta: 1e-5, Alpha: &certify.Given{Alpha: c.Sensitivity.Alpha}})
			require.NoError(t, err)
			want, err := p.Release(testNoise().Sampler)
			require.NoError(t, err)
			require.True(t, floatbits.Equal(want.W, rep.Released.Release.W), "the kept release is the noised intervention output")
			require.Equal(t, c.Sigma, p.Sigma())
			kept, err := s.GetRelease(rep.ReleaseID)
			require.NoError(t, err)
			b, err := rep.Released.Release.Marshal()
			require.NoError(t, err)
			require.Equal(t, b, kept.File)
			// The state: the release's w projected onto the ball, no memory.
			got, err := s.State()
			require.NoError(t, err)
			require.Zero(t, got.Memory().Len())
			require.Zero(t, got.Skipped())
			require.Equal(t, 40, got.T())
			require.LessOrEqual(t, floats.Norm(got.W(), 2), cfg.Radius*(1+1e-12))
			wp := slices.Clone(want.W)
			if n := floats.Norm(wp, 2); n > cfg.Radius {
				floats.Scale(cfg.Radius/n, wp)
			}
			require.True(t, floatbits.Equal(wp, got.W()), "the state is the projected release")

			// Ingest more: the state continues from the noised one.
			_, err = s.IngestEvents(Events(h.Events[40:50]), IngestOptions{})
			require.NoError(t, err)
			require.NoError(t, got.Run(h.Events[40:50]))
			requireSameState(t, s, got, "after more ingest")
			st, err := s.Status()
			require.NoError(t, err)
			require.True(t, st.NeedsNoise)
			require.Len(t, st.Pending, 1)
			require.Equal(t, name, st.Pending[0].Intervention)
			require.Equal(t, 2, st.Pending[0].USize)
			require.True(t, st.Pending[0].Noised)
			require.Equal(t, rep.ReleaseID, st.Pending[0].Release)
			require.Equal(t, 2, st.Erased)
			cr, err := s.Check()
			require.NoError(t, err)
			require.False(t, cr.StateFromScratch)

			cf, err := s.Counterfactual()
			require.NoError(t, err)
			require.True(t, cf.Equal(oracle(t, cfg, h.Loss, h.Events[:50], u)), "Counterfactual")

			// An exact forget (no cap) replays from before the taint and
			// clears it.
			rep, err = s.Forget([]int64{45}, ForgetOptions{})
			require.NoError(t, err)
			require.Equal(t, PathExact, rep.Path)
			require.False(t, rep.NeedsNoise)
			u.Add(45)
			requireSameState(t, s, oracle(t, cfg, h.Loss, h.Events[:50], u), "exact after approximate")
			st, err = s.Status()
			require.NoError(t, err)
			require.False(t, st.NeedsNoise)
			require.Empty(t, st.Pending)
			require.Zero(t, st.Erased)
			cr, err = s.Check()
			require.NoError(t, err)
			require.True(t, cr.StateFromScratch)
			reqs, err := s.Requests()
			require.NoError(t, err)
			require.Len(t, reqs, 2)
			require.Equal(t, reqs[1].Request, reqs[0].ResolvedBy, "the exact request resolves the approximate one")
			require.Equal(t, []int64{reqs[0].Request}, rep.Resolved, "the report names the request it resolved")
		})
	}
}

// TestResolve: Resolve serves the pending approximate requests exactly
// without a new deletion — the state is the oracle again, the requests are
// resolved, Check verifies everything from θ0 — and with nothing pending it
// does nothing; it takes no cap.
func TestResolve(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 60, 5)
	s := createStore(t, t.TempDir(), h.Header, 4, 10)
	defer s.Close()
	cfg := s.LearnerConfig()
	_, err := s.IngestEvents(Events(h.Events[:50]), IngestOptions{})
	require.NoError(t, err)

	rep, err := s.Resolve(ForgetOptions{})
	require.NoError(t, err)
	require.Equal(t, PathNone, rep.Path)
	require.Contains(t, rep.Reason, "no approximate request is pending")

	var approx []int64
	for _, ids := range [][]int64{{33}, {5, 21}} {
		rep, err := s.Forget(ids, ForgetOptions{Noise: testNoise(), MaxReplay: 3, Intervention: "pair-drop"})
		require.NoError(t, err)
		require.Equal(t, PathApproximate, rep.Path)
		approx = append(approx, rep.Request)
	}
	_, err = s.IngestEvents(Events(h.Events[50:55]), IngestOptions{})
	require.NoError(t, err)
	_, err = s.Resolve(ForgetOptions{Noise: testNoise(), MaxReplay: 5, Intervention: "noop"})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)

	rep, err = s.Resolve(ForgetOptions{})
	require.NoError(t, err)
	require.Equal(t, PathExact, rep.Path)
	require.Equal(t, approx, rep.Resolved)
	require.Empty(t, rep.IDs)
	require.Zero(t, rep.FromSeq, "the checkpoint before seq 5 is θ0")
	require.Equal(t, 52, rep.ExactReplay, "55 events minus the 3 erased")
	require.Contains(t, rep.Reason, "resolution of pending approximate requests")
	require.False(t, rep.NeedsNoise)
	requireSameState(t, s, oracle(t, cfg, h.Loss, h.Events[:55], stream.NewIDSet(5, 21, 33)), "after Resolve")
	st, err := s.Status()
	require.NoError(t, err)
	require.False(t, st.NeedsNoise)
	require.Zero(t, st.Erased)
	cr, err := s.Check()
	require.NoError(t, err)
	require.True(t, cr.StateFromScratch)
	reqs, err := s.Requests()
	require.NoError(t, err)
	require.Len(t, reqs, 3)
	require.Equal(t, rep.Request, reqs[0].ResolvedBy)
	require.Equal(t, rep.Request, reqs[1].ResolvedBy)
	require.Empty(t, reqs[2].IDs)
	require.Equal(t, PathExact, reqs[2].Path)

	rep, err = s.Resolve(ForgetOptions{})
	require.NoError(t, err)
	require.Equal(t, PathNone, rep.Path)
}

func TestForgetWithinCapIsExact(t *testing.T) {
	h := genHistory(t, stream.KindQuadratic, 2, 50, 6)
	s := createStore(t, t.TempDir(), h.Header, 3, 10)
	defer s.Close()
	_, err := s.IngestEvents(Events(h.Events), IngestOptions{})
	require.NoError(t, err)
	// Id 45: newest checkpoint before it is seq 40; 9 events to replay.
	rep, err := s.Forget([]int64{45}, ForgetOptions{Noise: testNoise(), MaxReplay: 9, Intervention: "pair-drop"})
	require.NoError(t, err)
	require.Equal(t, PathExact, rep.Path)
	require.Equal(t, int64(40), rep.FromSeq)
	require.Equal(t, 9, rep.EventsReplayed)
	require.Equal(t, 1, rep.CheckpointsRewritten, "the checkpoint at seq 50")
	requireSameState(t, s, oracle(t, s.LearnerConfig(), h.Loss, h.Events, stream.NewIDSet(45)), "exact")
}

func TestExportEvaluate(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 80, 7)
	s := createStore(t, t.TempDir(), h.Header, 3, 16)
	defer s.Close()
	_, err := s.IngestEvents(Events(h.Events[:60]), IngestOptions{})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, s.Export(&buf))
	l, hdr, err := olbfgs.UnmarshalSnapshot(buf.Bytes())
	require.NoError(t, err)
	require.Equal(t, stream.KindLogistic, hdr.Kind)
	requireSameState(t, s, l, "exported")

	ev, err := Evaluate(l, Events(h.Events[60:]))
	require.NoError(t, err)
	require.Equal(t, 20, ev.N)
	require.True(t, ev.HasAccuracy)
	// Recompute by hand.
	var sum float64
	correct := 0
	for _, e := range h.Events[60:] {
		sum += h.Loss.Value(l.W(), e.Sample)
		var m float64
		for i, x := range e.Sample.V {
			m += l.W()[i] * x
		}
		if (m >= 0) == (e.Sample.S > 0) {
			correct++
		}
	}
	require.Equal(t, sum/20, ev.Loss)
	require.Equal(t, float64(correct)/20, ev.Accuracy)
	_, err = Evaluate(l, Events(nil))
	require.ErrorIs(t, err, ErrEvent)
}

func TestIngestFromFile(t *testing.T) {
	h := genHistory(t, stream.KindQuadratic, 3, 25, 8)
	path := filepath.Join(t.TempDir(), "q.jsonl")
	require.NoError(t, stream.WriteFile(path, h))
	s := createStore(t, t.TempDir(), h.Header, 2, 5)
	defer s.Close()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var acks []IngestResult
	res, err := s.Ingest(f, IngestOptions{BatchSize: 10, OnCommit: func(r IngestResult) { acks = append(acks, r) }})
	require.NoError(t, err)
	require.Equal(t, 25, res.Events)
	require.Len(t, acks, 3, "batches of 10, 10, 5")
	require.Equal(t, int64(25), acks[2].LastID)
	requireSameState(t, s, oracle(t, s.LearnerConfig(), h.Loss, h.Events, nil), "file")

	// A bad line is an error naming it.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	content := `{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":0.05}` + "\n" + `{"op":"insert","id":1,"x":[1,2],"y":3}` + "\n"
	require.NoError(t, os.WriteFile(bad, []byte(content), 0o600))
	s2 := createStore(t, t.TempDir(), stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 2, Lambda: 0.05}, 2, 5)
	defer s2.Close()
	f2, err := os.Open(bad)
	require.NoError(t, err)
	defer f2.Close()
	_, err = s2.Ingest(f2, IngestOptions{})
	var le *stream.LineError
	require.ErrorAs(t, err, &le)
	require.Equal(t, 2, le.Line)
	require.Equal(t, "y", le.Field)
}

func TestClosed(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 2, 3, 9)
	s := createStore(t, t.TempDir(), h.Header, 2, 2)
	require.NoError(t, s.Close())
	_, err := s.IngestEvents(Events(h.Events), IngestOptions{})
	require.True(t, errors.Is(err, ErrClosed))
	_, err = s.Forget([]int64{1}, ForgetOptions{})
	require.ErrorIs(t, err, ErrClosed)
}

// TestTwoHandles: two handles on one store (as two processes would hold)
// see each other's commits: each reloads its cached state when the other
// has committed.
func TestTwoHandles(t *testing.T) {
	dir := t.TempDir()
	h := genHistory(t, stream.KindQuadratic, 3, 40, 12)
	a := createStore(t, dir, h.Header, 3, 8)
	defer a.Close()
	b, err := Open(dir)
	require.NoError(t, err)
	defer b.Close()
	_, err = a.IngestEvents(Events(h.Events[:20]), IngestOptions{})
	require.NoError(t, err)
	_, err = b.IngestEvents(Events(h.Events[20:40]), IngestOptions{})
	require.NoError(t, err)
	_, err = a.Forget([]int64{3, 25}, ForgetOptions{})
	require.NoError(t, err)
	want := oracle(t, a.LearnerConfig(), h.Loss, h.Events, stream.NewIDSet(3, 25))
	requireSameState(t, a, want, "handle a")
	requireSameState(t, b, want, "handle b")
	_, err = b.Check()
	require.NoError(t, err)
}

func TestOpenNotAStore(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), []byte("not a database, just some text that is long enough to fill a header page......................................................"), 0o600))
	_, err := Open(dir)
	require.Error(t, err)
	require.ErrorIs(t, err, ErrNotStore)
}
