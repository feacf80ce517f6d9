package olbfgs_test

import (
	"bytes"
	"fmt"
	"strings"

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

// WriteSnapshot streams a learner's state to a writer (here a buffer; in
// practice a file opened through internal/atomicfile), as the same bytes
// MarshalSnapshot returns.
func ExampleWriteSnapshot() {
	loss, err := stream.NewLogistic(2, 0.05)
	if err != nil {
		panic(err)
	}
	h := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 2, Lambda: 0.05}
	l, err := olbfgs.Replay(olbfgs.DefaultConfig(2), loss, []stream.Event{
		stream.InsertEvent(1, []float64{1, 0.5}, 1),
		stream.InsertEvent(2, []float64{-0.5, 1}, -1),
	})
	if err != nil {
		panic(err)
	}
	var b bytes.Buffer
	if err := olbfgs.WriteSnapshot(&b, l, h); err != nil {
		panic(err)
	}
	lines := strings.Split(b.String(), "\n")
	fmt.Println(strings.Join(lines[:3], "\n"))
	back, _, err := olbfgs.UnmarshalSnapshot(b.Bytes())
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d lines, %d pairs; loads back as the same state: %v\n", len(lines)-1, back.Memory().Len(), back.Equal(l))
	// Output:
	// {
	//  "format": "olbfgs-state/v1",
	//  "config": {
	// 51 lines, 2 pairs; loads back as the same state: true
}

// The practitioner's profile on a three-class problem with raw features of
// very different scales: predictions of raw rows through Scores, and the
// progressive statistics kept in the state.
func ExampleLearner_Scores() {
	loss, err := stream.NewMultinomial(2, 3, 0.003)
	if err != nil {
		panic(err)
	}
	cfg := olbfgs.DefaultConfig(2).ForLoss(loss).Practitioner()
	l, err := olbfgs.New(cfg, loss)
	if err != nil {
		panic(err)
	}
	// Class k sits at (1000 + 100k, 0.01k): the first feature in the
	// thousands, the second in hundredths.
	for i := range 3000 {
		k := i % 3
		jitter := float64(i%7-3) / 10
		x := []float64{1000 + 100*float64(k) + 30*jitter, 0.01*float64(k) + 0.003*jitter}
		if err := l.Step(stream.InsertEvent(int64(i+1), x, float64(k))); err != nil {
			panic(err)
		}
	}
	u, p := make([]float64, l.Outputs()), make([]float64, l.Outputs())
	for _, x := range [][]float64{{1000, 0}, {1100, 0.01}, {1200, 0.02}} {
		l.Scores(u, stream.Sample{V: x})
		stream.Softmax(p, u)
		class, _ := loss.Predict(u)
		fmt.Printf("%v: class %v (p = %.2f)\n", x, class, p[int(class)])
	}
	prog, _ := l.Progress()
	acc, _ := prog.Accuracy()
	fmt.Printf("parameters: %d, progressive accuracy over %d inserts: %.2f\n", l.ParamDim(), prog.N, acc)
	// Output:
	// [1000 0]: class 0 (p = 0.90)
	// [1100 0.01]: class 1 (p = 0.70)
	// [1200 0.02]: class 2 (p = 0.90)
	// parameters: 9, progressive accuracy over 3000 inserts: 0.97
}
