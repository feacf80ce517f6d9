package certify

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// The attacker's tests of Wrap (issue 19): a caller hands ApplyCertified a
// request whose parts do not belong together. Each was certified before
// Wrap checked the request (as CertifyTrained does): the first with an α
// below the true distance, the second as exact with σ = 0 for a state
// that is not the counterfactual, the third as one deletion when the state
// carries two. Each must now be refused with ErrNotCertifiable.

// wrapAttackSetup trains a guarded learner on 100 random inserts (ids
// 1..100), keeping checkpoints for window replays.
func wrapAttackSetup(t *testing.T) (olbfgs.Config, stream.Loss, []stream.Event, *olbfgs.Learner) {
	t.Helper()
	const d, tau = 3, 5
	loss := scalarLoss(t, d, 0.5, 2)
	cfg := guarded(d, tau, 0.2, 0.5, 2, 5, 2)
	events := randomInserts(rand.New(rand.NewPCG(11, 4)), d, 100, 1)
	actual, err := olbfgs.New(cfg, loss)
	require.NoError(t, err)
	require.NoError(t, actual.KeepCheckpoints(30))
	require.NoError(t, actual.Run(events))
	return cfg, loss, events, actual
}

// moveToEnd returns events with the insert of id moved to the end.
func moveToEnd(events []stream.Event, id int64) []stream.Event {
	out := slices.Clone(events)
	i := slices.IndexFunc(out, func(e stream.Event) bool { return e.ID == id })
	e := out[i]
	return append(append(out[:i:i], out[i+1:]...), e)
}

// moveToFront returns events with the insert of id moved to the front.
func moveToFront(events []stream.Event, id int64) []stream.Event {
	out := slices.Clone(events)
	i := slices.IndexFunc(out, func(e stream.Event) bool { return e.ID == id })
	e := out[i]
	return append([]stream.Event{e}, append(out[:i:i], out[i+1:]...)...)
}

func applyWrapped(t *testing.T, op unlearn.Operator, req unlearn.Request) (*Release, *Certificate, error) {
	t.Helper()
	c, err := Wrap(op, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(1)})
	require.NoError(t, err)
	rel, cert, _, err := c.ApplyCertified(req)
	return rel, cert, err
}

// The deleted sample listed at another position: the ages (and so α) are
// read from the prefix the caller gives, not from the history the learner
// was trained on. Listed first, the sample looks 99 steps old instead of
// 1, and the α of that description is below the state's true distance
// from the counterfactual.
func TestWrapRefusesAReorderedPrefix(t *testing.T) {
	// An isotropic quadratic (H0 = H1 = I): the recursion contracts, and
	// α decays with a deletion's age far below the diameter.
	const d, tau = 3, 5
	loss := scalarLoss(t, d, 1, 1)
	cfg := guarded(d, tau, 0.5, 1, 1, 10, 3)
	events := randomInserts(rand.New(rand.NewPCG(3, 190)), d, 100, 1)
	actual, err := olbfgs.Replay(cfg, loss, events)
	require.NoError(t, err)
	u := stream.NewIDSet(99)
	lying := moveToFront(events, 99)
	// What the lie would have bought: α for age 99 is below the truth.
	claimed, err := DerivedAlpha(cfg, mustHeader(t, loss), &Deletion{Ages: AgesOf(lying, u), Intervention: unlearn.Builtin{Kind: unlearn.KindNoop}})
	require.NoError(t, err)
	cf, err := olbfgs.Replay(cfg, loss, stream.Counterfactual(events, u))
	require.NoError(t, err)
	require.Less(t, claimed.Alpha, exactDistance(actual.W(), cf.W()), "the attack must matter: the lying description's α is below the true distance")

	_, _, err = applyWrapped(t, unlearn.NoOp(), unlearn.Request{Actual: actual, Prefix: lying, U: u})
	wantSpecError(t, err, "Request.Actual", ErrNotCertifiable)
	// The honest request is certified, proved, with α above the distance.
	_, cert, err := applyWrapped(t, unlearn.NoOp(), unlearn.Request{Actual: actual, Prefix: events, U: u})
	require.NoError(t, err)
	require.Equal(t, []int{1}, cert.Sensitivity.Deletion.Ages)
	require.GreaterOrEqual(t, cert.Sensitivity.Alpha, exactDistance(actual.W(), cf.W()))
}

// A window replay called exact: the caller's prefix lists the deleted
// sample inside the window, so Wrap took the replay for the counterfactual
// (σ = 0), while the learner's checkpoint — from its real history — still
// held the sample's influence.
func TestWrapRefusesAWindowThatDidNotHoldTheDeletion(t *testing.T) {
	cfg, loss, events, actual := wrapAttackSetup(t)
	u := stream.NewIDSet(40)
	lying := moveToEnd(events, 40)
	op := unlearn.WindowReplay(20, "window-20", "w")
	_, _, err := applyWrapped(t, op, unlearn.Request{Actual: actual, Prefix: lying, U: u})
	wantSpecError(t, err, "Request.Actual", ErrNotCertifiable)
	// Honestly described, the replay is not exact and is noised.
	_, cert, err := applyWrapped(t, op, unlearn.Request{Actual: actual, Prefix: events, U: u})
	require.NoError(t, err)
	require.False(t, cert.Exact)
	require.Greater(t, cert.Sigma, 0.0)
	// And a deletion that is inside the window is exact, bit for bit.
	u = stream.NewIDSet(95)
	rel, cert, err := applyWrapped(t, op, unlearn.Request{Actual: actual, Prefix: events, U: u})
	require.NoError(t, err)
	require.True(t, cert.Exact)
	cf, err := olbfgs.Replay(cfg, loss, stream.Counterfactual(events, u))
	require.NoError(t, err)
	require.Equal(t, cf.W(), rel.W)
}

// Two deletions in a row: the state after an approximate deletion of one
// sample, handed in as the learner of a request for another, was
// certified as one deletion; its α covered neither the first deletion's
// residue nor the count.
func TestWrapRefusesALearnerAlreadyUnlearned(t *testing.T) {
	_, _, events, actual := wrapAttackSetup(t)
	first, _, err := unlearn.Run(unlearn.ParamOnly(), unlearn.Request{Actual: actual, Prefix: events, U: stream.NewIDSet(30)})
	require.NoError(t, err)
	require.Equal(t, len(events), first.T(), "the request passes unlearn's own validation")
	_, _, err = applyWrapped(t, unlearn.ParamOnly(), unlearn.Request{Actual: first, Prefix: events, U: stream.NewIDSet(60)})
	wantSpecError(t, err, "Request.Actual", ErrNotCertifiable)
	// Both deletions are one request on the original history.
	_, cert, err := applyWrapped(t, unlearn.ParamOnly(), unlearn.Request{Actual: actual, Prefix: events, U: stream.NewIDSet(30, 60)})
	require.NoError(t, err)
	require.Equal(t, 2, cert.Deletions)
}

// Other hand-ins: a learner whose w or deleted ids were edited, or that was
// trained with another configuration than its prefix's replay would use,
// is not the prefix's learner.
func TestWrapRefusesAnEditedLearner(t *testing.T) {
	_, _, events, actual := wrapAttackSetup(t)
	u := stream.NewIDSet(50)
	edits := map[string]func(l *olbfgs.Learner){
		"w edited":        func(l *olbfgs.Learner) { w := slices.Clone(l.W()); w[0] += 1e-12; l.SetW(w) },
		"an id marked":    func(l *olbfgs.Learner) { l.MarkDeleted(7) },
		"memory reset":    func(l *olbfgs.Learner) { l.Memory().Reset() },
		"a prefix short":  nil,
		"a prefix longer": nil,
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			l, prefix := actual.Clone(), events
			switch name {
			case "a prefix short":
				prefix = events[:99]
			case "a prefix longer":
				prefix = append(slices.Clone(events), stream.InsertEvent(1000, []float64{0.1, 0.2, 0.3}, 0.5))
			default:
				edit(l)
			}
			_, _, err := applyWrapped(t, unlearn.NoOp(), unlearn.Request{Actual: l, Prefix: prefix, U: u})
			require.ErrorIs(t, err, ErrNotCertifiable)
		})
	}
}
