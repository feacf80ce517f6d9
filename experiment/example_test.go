package experiment_test

import (
	"context"
	"fmt"
	"os"

	"unlearn/experiment"
	"unlearn/stream"
)

// A small Experiment 2 run: five recent deletions from a drifting quadratic
// stream, every operator of the paper beside the counterfactual.
func Example() {
	cfg := experiment.Experiment2()
	cfg.Stream = experiment.StreamSpec{Kind: stream.KindQuadratic, D: 6, T: 200, Seed: 1}
	cfg.TDel, cfg.Horizon, cfg.Tau, cfg.Probes = 80, 120, 5, 8
	rec, err := experiment.Run(context.Background(), experiment.ExperimentBenchmark, cfg, experiment.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("U =", rec.U)
	for _, name := range []string{"oracle", "noop", "window-5tau"} {
		m := rec.Method(name)
		fmt.Printf("%-12s exact recovery: %v, replayed events: %d\n", name, m.Summary.Exact, m.EventsReplayed)
	}
	// Output:
	// U = [76 77 78 79 80]
	// oracle       exact recovery: true, replayed events: 75
	// noop         exact recovery: false, replayed events: 0
	// window-5tau  exact recovery: true, replayed events: 20
}

// Aggregation conventions of the tables (spec §8).
func ExampleAUCRatio() {
	fmt.Println(experiment.AUCRatio(0, 0), experiment.AUCRatio(2, 0), experiment.AUCRatio(1, 4))
	// Output: 1 +Inf 0.25
}

// Print a table as Markdown.
func ExampleTable_WriteMarkdown() {
	t := &experiment.Table{Title: "Demo", Columns: []string{"Method", "Future state AUC"},
		Rows: [][]experiment.Cell{{{Text: "No-op deletion"}, {Value: 444022.2954, Numeric: true}}}}
	_ = t.WriteMarkdown(os.Stdout)
	// Output:
	// ### Demo
	//
	// | Method | Future state AUC |
	// | --- | ---: |
	// | No-op deletion | 444022.295 |
}
