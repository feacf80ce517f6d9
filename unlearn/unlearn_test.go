package unlearn_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

const (
	testD   = 6  // small dimension: fast, and every code path is the same as at d = 25
	testTau = 4  // memory size τ of the tests
	testT   = 60 // prefix length t_del
)

// fixture is one deletion request on a stream.
type fixture struct {
	name   string
	loss   stream.Loss
	prefix []stream.Event
	u      stream.IDSet
}

// fixtures returns requests on both losses for recent, old, random and
// realized deletions.
func fixtures(t *testing.T) []fixture {
	t.Helper()
	ql, qe := quadStream(t, 1, testD, testT)
	ll, le := logisticStream(t, 2, testD, testT)
	withDelete := append(slices.Clone(qe[:testT-1]), stream.DeleteEvent(58))
	return []fixture{
		{"quadratic/recent", ql, qe, stream.NewIDSet(57, 58, 59, 60)},
		{"quadratic/old", ql, qe, stream.NewIDSet(2, 3, 5)},
		{"quadratic/random", ql, qe, stream.NewIDSet(7, 31, 44, 59)},
		{"quadratic/realized delete in prefix", ql, withDelete, stream.NewIDSet(58, 55)},
		{"logistic/recent", ll, le, stream.NewIDSet(58, 60)},
		{"logistic/random", ll, le, stream.NewIDSet(9, 33, 52)},
	}
}

func (f fixture) request(t *testing.T) unlearn.Request {
	t.Helper()
	return unlearn.Request{Actual: actualAt(t, f.loss, testTau, 5*testTau, f.prefix), Prefix: f.prefix, U: f.u}
}

func mustRun(t *testing.T, op unlearn.Operator, req unlearn.Request) (*olbfgs.Learner, unlearn.Cost) {
	t.Helper()
	l, c, err := unlearn.Run(op, req)
	require.NoError(t, err, "%s", op.Name())
	return l, c
}

func TestPaperOrderKeysLabels(t *testing.T) {
	want := []struct{ name, label string }{
		{"oracle", "Oracle replay"},
		{"noop", "No-op deletion"},
		{"param-only", "Parameter-only"},
		{"pair-drop", "Contaminated pair drop"},
		{"memory-reset", "Full memory reset"},
		{"retain-ft", "Retain fine-tuning"},
		{"drop-refill", "Drop and refill"},
		{"window-tau", "Window replay τ"},
		{"window-5tau", "Window replay 5τ"},
	}
	ops := unlearn.Paper(10)
	require.Len(t, ops, len(want), "operators returned by Paper")
	for i, op := range ops {
		assert.Equal(t, want[i].name, op.Name(), "operator %d: name", i)
		assert.Equal(t, want[i].label, op.Label(), "operator %d: label", i)
	}
}

func TestOracleEqualsCounterfactualReplay(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			req := f.request(t)
			got, cost := mustRun(t, unlearn.Oracle(), req)
			cf := stream.Counterfactual(f.prefix, f.u)
			want, err := olbfgs.Replay(req.Actual.Config(), f.loss, cf)
			require.NoError(t, err)
			want.MarkDeleted(f.u.Sorted()...)
			if !got.Equal(want) {
				t.Fatal("oracle differs from the replay of the counterfactual prefix")
			}
			if sameState(got, req.Actual) {
				t.Fatal("oracle equals the actual state: the deletion had no effect (bad fixture)")
			}
			require.Equal(t, len(cf), cost.EventsReplayed, "cost: events replayed")
			require.Equal(t, 2*len(cf), cost.GradEvals, "cost: gradient evaluations")
		})
	}
}

func TestWindowReplay(t *testing.T) {
	tests := []struct {
		name  string
		u     stream.IDSet
		exact map[string]bool // per operator: equals the oracle bit for bit
	}{
		// U inside both windows (τ = 4 events, 5τ = 20 events), no older deletion.
		{"recent deletions inside both windows", stream.NewIDSet(58, 60), map[string]bool{"window-tau": true, "window-5tau": true}},
		// U inside the 5τ window only.
		{"inside 5tau only", stream.NewIDSet(50, 59), map[string]bool{"window-tau": false, "window-5tau": true}},
		// An old deletion the checkpoints still carry.
		{"old deletion before both windows", stream.NewIDSet(3, 59), map[string]bool{"window-tau": false, "window-5tau": false}},
	}
	loss, events := quadStream(t, 3, testD, testT)
	for _, tt := range tests {
		for _, op := range unlearn.Paper(testTau)[7:] {
			t.Run(tt.name+"/"+op.Name(), func(t *testing.T) {
				req := unlearn.Request{Actual: actualAt(t, loss, testTau, 5*testTau, events), Prefix: events, U: tt.u}
				got, cost := mustRun(t, op, req)
				oracle, _ := mustRun(t, unlearn.Oracle(), req)
				require.Equal(t, tt.exact[op.Name()], sameState(got, oracle), "equal to the oracle bit for bit")
				w := testTau
				if op.Name() == "window-5tau" {
					w = 5 * testTau
				}
				replayed := len(stream.Counterfactual(events[testT-w:], tt.u))
				require.Equal(t, replayed, cost.EventsReplayed, "cost: events replayed")
				require.Equal(t, 2*replayed, cost.GradEvals, "cost: gradient evaluations")
			})
		}
	}
}

func TestWindowReplayWholePrefix(t *testing.T) {
	// A window longer than the prefix restores θ0 and replays everything:
	// oracle replay, even for old deletions.
	loss, events := quadStream(t, 4, testD, 15)
	req := unlearn.Request{Actual: actualAt(t, loss, testTau, 20, events), Prefix: events, U: stream.NewIDSet(1, 2, 9)}
	got, _ := mustRun(t, unlearn.WindowReplay(20, "w20", "Window 20"), req)
	oracle, _ := mustRun(t, unlearn.Oracle(), req)
	if !sameState(got, oracle) {
		t.Fatal("window longer than the prefix differs from oracle replay")
	}
}

func TestWindowReplayErrors(t *testing.T) {
	loss, events := quadStream(t, 5, testD, testT)
	late := actualAt(t, loss, testTau, 0, events[:30])
	require.NoError(t, late.KeepCheckpoints(5*testTau))
	require.NoError(t, late.Run(events[30:40]))
	tests := []struct {
		name   string
		actual *olbfgs.Learner
		prefix []stream.Event
		w      int
	}{
		{"no checkpoints", actualAt(t, loss, testTau, 0, events), events, testTau},
		{"window larger than the kept one", actualAt(t, loss, testTau, testTau, events), events, 5 * testTau},
		{"checkpoints begin after the window start", late, events[:40], 5 * testTau},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := unlearn.Request{Actual: tt.actual, Prefix: tt.prefix, U: stream.NewIDSet(tt.prefix[len(tt.prefix)-1].ID)}
			_, _, err := unlearn.Run(unlearn.WindowReplay(tt.w, "w", "w"), req)
			require.ErrorIs(t, err, olbfgs.ErrNoCheckpoint)
		})
	}
}

func TestPairDropClearsDirectMass(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			req := f.request(t)
			got, _ := mustRun(t, unlearn.PairDrop(), req)
			require.Zero(t, got.Memory().DirectMass(f.u), "DirectMass after pair drop")
			// The untouched pairs are kept, in order, bit for bit.
			var want []olbfgs.Pair
			mem := req.Actual.Memory()
			for i := 0; i < mem.Len(); i++ {
				if p := mem.Pair(i); !f.u.Meets(p.Source) {
					want = append(want, p)
				}
			}
			require.Equal(t, len(want), got.Memory().Len(), "pairs kept")
			for i, p := range want {
				q := got.Memory().Pair(i)
				if !slices.Equal(p.S, q.S) || !slices.Equal(p.Y, q.Y) || !slices.Equal(p.Source, q.Source) {
					t.Fatalf("pair %d differs from the actual's untouched pair", i)
				}
			}
			if !slices.Equal(got.W(), req.Actual.W()) {
				t.Fatal("pair drop changed w")
			}
		})
	}
	// The recent fixture must actually have touched pairs, or the test is empty.
	f := fixtures(t)[0]
	req := f.request(t)
	require.NotZero(t, req.Actual.Memory().DirectMass(f.u), "bad fixture: no pair touches the recent deletions")
}

func TestMemoryResetAndDropRefill(t *testing.T) {
	f := fixtures(t)[0]
	req := f.request(t)
	reset, _ := mustRun(t, unlearn.MemoryReset(), req)
	require.Zero(t, reset.Memory().Len(), "memory reset: pairs left")
	if !slices.Equal(reset.W(), req.Actual.W()) {
		t.Fatal("memory reset changed w")
	}
	refill, _ := mustRun(t, unlearn.DropRefill(), req)
	require.Zero(t, refill.Memory().Len(), "drop and refill: pairs left, want θ0 = (0, ∅)")
	if slices.ContainsFunc(refill.W(), func(v float64) bool { return v != 0 }) {
		t.Fatal("drop and refill: w ≠ 0, want θ0 = (0, ∅)")
	}
	require.Equal(t, req.Actual.T(), refill.T(), "drop and refill: T, want the actual's")
}

func TestNoOpIsEqualButNotAliased(t *testing.T) {
	f := fixtures(t)[0]
	req := f.request(t)
	got, cost := mustRun(t, unlearn.NoOp(), req)
	require.NotSame(t, req.Actual, got, "no-op returned the actual learner")
	require.NotSame(t, req.Actual.Memory(), got.Memory(), "no-op result shares the actual memory")
	require.NotSame(t, &req.Actual.W()[0], &got.W()[0], "no-op result shares the actual w")
	if !sameState(got, req.Actual) {
		t.Fatal("no-op changed the state")
	}
	require.Equal(t, unlearn.Cost{Wall: cost.Wall}, cost, "no-op cost, want zero apart from the wall time")
	before := slices.Clone(req.Actual.W())
	got.SetW(make([]float64, testD))
	got.Memory().Reset()
	if !slices.Equal(req.Actual.W(), before) {
		t.Fatal("modifying the no-op result modified the actual w")
	}
	require.NotZero(t, req.Actual.Memory().Len(), "resetting the no-op result's memory reset the actual one")
}

// explicitH builds H_Z densely from the memory's pairs by the BFGS inverse
// update H ← (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ from γI (Nocedal & Wright,
// eq. 6.17, 7.19), independently of the two-loop recursion.
func explicitH(mem *olbfgs.Memory) *mat.Dense {
	d := mem.Dim()
	h := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		h.Set(i, i, mem.Gamma())
	}
	for i := 0; i < mem.Len(); i++ {
		p := mem.Pair(i)
		s, y := mat.NewVecDense(d, p.S), mat.NewVecDense(d, p.Y)
		rho := 1 / mat.Dot(s, y)
		var left mat.Dense
		left.Outer(-rho, s, y)
		for k := 0; k < d; k++ {
			left.Set(k, k, left.At(k, k)+1)
		}
		var tmp, next, ss mat.Dense
		tmp.Mul(&left, h)
		next.Mul(&tmp, left.T())
		ss.Outer(rho, s, s)
		next.Add(&next, &ss)
		h = &next
	}
	return h
}

func TestParamOnlyByHand(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			req := f.request(t)
			got, cost := mustRun(t, unlearn.ParamOnly(), req)
			// w̃ = w + η·H_Z Σ_u ∇ℓ_u(w) with a dense H_Z.
			w := req.Actual.W()
			sum := make([]float64, testD)
			g := make([]float64, testD)
			for _, e := range f.prefix {
				if e.Op == stream.Insert && f.u.Has(e.ID) {
					f.loss.Grad(g, w, e.Sample)
					for i := range g {
						sum[i] += g[i]
					}
				}
			}
			var hg mat.VecDense
			hg.MulVec(explicitH(req.Actual.Memory()), mat.NewVecDense(testD, sum))
			for i := range w {
				want := w[i] + olbfgs.DefaultStepSize*hg.AtVec(i)
				// 1e-12: the dense BFGS product and the two-loop differ by
				// round-off only (condition numbers here are below 100).
				if !close(got.W()[i], want, 1e-12) {
					t.Fatalf("w̃[%d] = %v, hand computation %v", i, got.W()[i], want)
				}
			}
			if !got.Memory().Equal(req.Actual.Memory()) {
				t.Fatal("parameter-only changed Z")
			}
			require.Equal(t, len(f.u), cost.GradEvals, "cost: gradient evaluations, one per deleted sample")
			require.Zero(t, cost.EventsReplayed, "cost: events replayed")
		})
	}
}

func TestRetainFineTune(t *testing.T) {
	loss, events := quadStream(t, 6, testD, 30)
	withDelete := append(slices.Clone(events), stream.DeleteEvent(28))
	tests := []struct {
		name     string
		prefix   []stream.Event
		u        stream.IDSet
		replayed []int64 // ids expected to be replayed, in order
	}{
		// The last τ = 4 inserts are 27..30; 27 and 29 are deleted.
		{"deleted among the last inserts", events, stream.NewIDSet(27, 29, 3), []int64{28, 30}},
		{"none deleted among them", events, stream.NewIDSet(2), []int64{27, 28, 29, 30}},
		// A delete event does not count as an insert: still 27..30, minus 28.
		{"realized delete at the end", withDelete, stream.NewIDSet(28), []int64{27, 29, 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := unlearn.Request{Actual: actualAt(t, loss, testTau, 0, tt.prefix), Prefix: tt.prefix, U: tt.u}
			got, cost := mustRun(t, unlearn.RetainFineTune(), req)
			want := req.Actual.Clone()
			want.MarkDeleted(tt.u.Sorted()...)
			for _, id := range tt.replayed {
				require.NoError(t, want.Step(events[id-1]))
			}
			if !got.Equal(want) {
				t.Fatalf("retain fine-tuning differs from replaying ids %v from the actual state", tt.replayed)
			}
			n := len(tt.replayed)
			require.Equal(t, n, cost.EventsReplayed, "cost: events replayed")
			require.Equal(t, 2*n, cost.GradEvals, "cost: gradient evaluations")
		})
	}
}

func TestEveryOperatorMarksUAndLeavesRequestAlone(t *testing.T) {
	for _, f := range fixtures(t) {
		for _, op := range unlearn.Paper(testTau) {
			t.Run(f.name+"/"+op.Name(), func(t *testing.T) {
				req := f.request(t)
				before := req.Actual.Clone()
				prefix := slices.Clone(f.prefix)
				var payloads [][]float64
				for _, e := range f.prefix {
					payloads = append(payloads, slices.Clone(e.Sample.V))
				}
				got, _, err := op.Apply(req) // directly, without Run's marking
				require.NoError(t, err)
				for _, id := range f.u.Sorted() {
					require.True(t, got.IsDeleted(id), "id %d of U not marked deleted", id)
				}
				if !req.Actual.Equal(before) {
					t.Fatal("the operator modified the actual state")
				}
				for i, e := range f.prefix {
					if e.ID != prefix[i].ID || e.Op != prefix[i].Op || !slices.Equal(e.Sample.V, payloads[i]) {
						t.Fatalf("the operator modified prefix event %d", i)
					}
				}
				again, _, err := op.Apply(req)
				require.NoError(t, err, "second Apply")
				if !again.Equal(got) {
					t.Fatal("second Apply differs: operators must be deterministic")
				}
			})
		}
	}
}

func TestOperatorsAreSafeConcurrently(t *testing.T) {
	// Run with -race: all operators on one request at once.
	f := fixtures(t)[0]
	req := f.request(t)
	var wg sync.WaitGroup
	for _, op := range unlearn.Paper(testTau) {
		for range 2 {
			wg.Go(func() {
				_, _, err := unlearn.Run(op, req)
				assert.NoError(t, err, "%s", op.Name()) // assert, not require: this is not the test goroutine
			})
		}
	}
	wg.Wait()
}

func TestInvalidRequests(t *testing.T) {
	loss, events := quadStream(t, 7, testD, 20)
	actual := actualAt(t, loss, testTau, 5*testTau, events)
	withDelete := append(slices.Clone(events), stream.DeleteEvent(4))
	tests := []struct {
		name string
		req  unlearn.Request
	}{
		{"no learner", unlearn.Request{Prefix: events, U: stream.NewIDSet(1)}},
		{"learner behind the prefix", unlearn.Request{Actual: actualAt(t, loss, testTau, 5*testTau, events[:10]), Prefix: events, U: stream.NewIDSet(1)}},
		{"id never inserted", unlearn.Request{Actual: actual, Prefix: events, U: stream.NewIDSet(3, 99)}},
		{"realized delete missing from U", unlearn.Request{Actual: actualAt(t, loss, testTau, 5*testTau, withDelete), Prefix: withDelete, U: stream.NewIDSet(5)}},
	}
	for _, tt := range tests {
		for _, op := range unlearn.Paper(testTau) {
			t.Run(tt.name+"/"+op.Name(), func(t *testing.T) {
				l, _, err := unlearn.Run(op, tt.req)
				require.ErrorIs(t, err, unlearn.ErrRequest)
				require.Nil(t, l, "learner returned with an error")
			})
		}
	}
}

// badOp breaks the Operator contract in the way its mode says.
type badOp struct{ mode string }

func (b badOp) Name() string  { return "bad-" + b.mode }
func (b badOp) Label() string { return "Bad " + b.mode }
func (b badOp) Apply(req unlearn.Request) (*olbfgs.Learner, unlearn.Cost, error) {
	switch b.mode {
	case "alias":
		return req.Actual, unlearn.Cost{}, nil
	case "nil":
		return nil, unlearn.Cost{}, nil
	}
	return nil, unlearn.Cost{}, fmt.Errorf("failing on purpose")
}

func TestRunChecksTheContract(t *testing.T) {
	f := fixtures(t)[0]
	req := f.request(t)
	for _, mode := range []string{"alias", "nil"} {
		t.Run(mode, func(t *testing.T) {
			_, _, err := unlearn.Run(badOp{mode}, req)
			require.ErrorIs(t, err, unlearn.ErrOperator)
		})
	}
	t.Run("error is wrapped with the name", func(t *testing.T) {
		_, _, err := unlearn.Run(badOp{"fail"}, req)
		require.EqualError(t, err, "bad-fail: failing on purpose")
	})
	t.Run("wall time is measured", func(t *testing.T) {
		_, c, err := unlearn.Run(unlearn.Oracle(), req)
		require.NoError(t, err)
		require.Positive(t, c.Wall, "wall time")
	})
}
