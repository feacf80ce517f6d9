package unlearn_test

import (
	"fmt"

	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// exampleRequest trains a learner (τ = 2, checkpoints for 10 events) on six
// inserts of a 2-d quadratic stream and asks to delete an old sample (2) and the latest (6).
func exampleRequest() unlearn.Request {
	h := [][]float64{{2, 0}, {0, 1}}
	loss, err := stream.NewQuadratic(h, h)
	if err != nil {
		panic(err)
	}
	var prefix []stream.Event
	for i := 1; i <= 6; i++ {
		prefix = append(prefix, stream.InsertEvent(int64(i), []float64{float64(i % 3), 1 - float64(i%2)}, 0))
	}
	cfg := olbfgs.DefaultConfig(2)
	cfg.Memory = 2
	actual, err := olbfgs.New(cfg, loss)
	if err != nil {
		panic(err)
	}
	if err := actual.KeepCheckpoints(10); err != nil {
		panic(err)
	}
	if err := actual.Run(prefix); err != nil {
		panic(err)
	}
	return unlearn.Request{Actual: actual, Prefix: prefix, U: stream.NewIDSet(2, 6)}
}

// The nine interventions of the paper applied to one deletion request.
func Example() {
	req := exampleRequest()
	for _, op := range unlearn.Paper(2) {
		l, cost, err := unlearn.Run(op, req)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-12s w = [%7.4f %7.4f]  pairs %d (touching U: %d)  replayed %d\n",
			op.Name(), l.W()[0], l.W()[1], l.Memory().Len(), l.Memory().DirectMass(req.U), cost.EventsReplayed)
	}
	// Output:
	// oracle       w = [ 0.4248  0.0811]  pairs 2 (touching U: 0)  replayed 4
	// noop         w = [ 0.5027  0.1844]  pairs 2 (touching U: 1)  replayed 0
	// param-only   w = [ 0.4205  0.0530]  pairs 2 (touching U: 1)  replayed 0
	// pair-drop    w = [ 0.5027  0.1844]  pairs 1 (touching U: 0)  replayed 0
	// memory-reset w = [ 0.5027  0.1844]  pairs 0 (touching U: 0)  replayed 0
	// retain-ft    w = [ 0.6433  0.1491]  pairs 2 (touching U: 1)  replayed 1
	// drop-refill  w = [ 0.0000  0.0000]  pairs 0 (touching U: 0)  replayed 0
	// window-tau   w = [ 0.5553  0.1273]  pairs 2 (touching U: 0)  replayed 1
	// window-5tau  w = [ 0.4248  0.0811]  pairs 2 (touching U: 0)  replayed 4
}

// shrink is a user-defined operator: it drops the contaminated curvature
// pairs and shrinks w towards 0 by a factor.
type shrink struct{ factor float64 }

func (s shrink) Name() string  { return "shrink" }
func (s shrink) Label() string { return "Pair drop and shrinkage" }

func (s shrink) Apply(req unlearn.Request) (*olbfgs.Learner, unlearn.Cost, error) {
	if err := req.Validate(); err != nil {
		return nil, unlearn.Cost{}, err
	}
	l := req.Actual.Clone() // never modify the actual state
	l.Memory().DropTouching(req.U)
	w := make([]float64, len(l.W()))
	for i, v := range l.W() {
		w[i] = s.factor * v
	}
	l.SetW(w)
	l.MarkDeleted(req.U.Sorted()...)
	return l, unlearn.Cost{}, nil
}

// A custom operator runs beside the paper's: anything that implements
// Operator can be given to Run and to the benchmark.
func Example_customOperator() {
	req := exampleRequest()
	ops := append(unlearn.Paper(2)[:2], shrink{factor: 0.5})
	for _, op := range ops {
		l, _, err := unlearn.Run(op, req)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-7s %-24q w = [%.4f %.4f], deleted %v\n", op.Name(), op.Label(), l.W()[0], l.W()[1], l.Deleted())
	}
	// Output:
	// oracle  "Oracle replay"          w = [0.4248 0.0811], deleted [2 6]
	// noop    "No-op deletion"         w = [0.5027 0.1844], deleted [2 6]
	// shrink  "Pair drop and shrinkage" w = [0.2513 0.0922], deleted [2 6]
}
