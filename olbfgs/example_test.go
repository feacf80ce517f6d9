package olbfgs_test

import (
	"fmt"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// A learner trained on a tiny quadratic stream, then unlearning by oracle
// replay of the deletion-edited counterfactual. (The oracle's w was checked
// against an independent plain-Python implementation of spec §2.)
func Example() {
	h := [][]float64{{2, 0}, {0, 1}}
	loss, err := stream.NewQuadratic(h, h)
	if err != nil {
		panic(err)
	}
	events := []stream.Event{
		stream.InsertEvent(1, []float64{1, 1}, 0),
		stream.InsertEvent(2, []float64{3, -1}, 0),
		stream.InsertEvent(3, []float64{1, 2}, 0),
		stream.DeleteEvent(2),
	}
	cfg := olbfgs.DefaultConfig(2)
	actual, err := olbfgs.Replay(cfg, loss, events)
	if err != nil {
		panic(err)
	}
	u := stream.NewIDSet(2)
	fmt.Printf("pairs touched by U: %d of %d\n", actual.Memory().DirectMass(u), actual.Memory().Len())

	oracle, err := olbfgs.Replay(cfg, loss, stream.Counterfactual(events, u))
	if err != nil {
		panic(err)
	}
	fmt.Printf("oracle: w = [%.4f %.4f], pairs touched by U: %d\n", oracle.W()[0], oracle.W()[1], oracle.Memory().DirectMass(u))
	// Output:
	// pairs touched by U: 1 of 3
	// oracle: w = [0.2937 0.2351], pairs touched by U: 0
}

// Memory.Apply computes the inverse-Hessian action H_Z q on any vector.
func ExampleMemory_Apply() {
	m := olbfgs.NewMemory(2, 5, 1)
	// One pair from the curvature diag(2, 4): y = (2·s₁, 4·s₂).
	if err := m.Push([]float64{1, 1}, []float64{2, 4}, 7); err != nil {
		panic(err)
	}
	hq := make([]float64, 2)
	m.Apply(hq, []float64{2, 4}) // the secant condition: H y = s
	fmt.Printf("H_Z y = [%.3f %.3f], γ = %.3f\n", hq[0], hq[1], m.Gamma())
	// Output:
	// H_Z y = [1.000 1.000], γ = 0.300
}
