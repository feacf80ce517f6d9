package report_test

import (
	"context"
	"fmt"
	"io"

	"unlearn/experiment"
	"unlearn/report"
	"unlearn/stream"
)

// Experiment 1 on a small quadratic stream, over two memory sizes: the
// figures its records support, each with the paper figure it reproduces,
// drawn as PNG.
func Example() {
	base := experiment.Experiment1()
	base.Stream.D, base.Stream.T, base.TDel, base.Horizon, base.Probes = 5, 150, 60, 40, 4
	grid := experiment.GridAxes{
		Kinds: []stream.Kind{stream.KindQuadratic}, Taus: []int{2, 4},
		Modes: []string{experiment.ModeRecent}, Kappas: []float64{10}, Seeds: []uint64{1},
	}.Grid("example", experiment.ExperimentDecay, base)
	res, err := experiment.RunGrid(context.Background(), grid, experiment.Options{KeepSeries: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	set, err := report.Figures(res.Records, report.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range set.Figures {
		paper := f.Paper
		if paper == "" {
			paper = "(no figure in the paper: M_direct and its clearance time)"
		}
		fmt.Printf("%-30s %s\n", f.ID, paper)
	}
	fmt.Println(set.Figures[0].WritePNG(io.Discard))
	// Output:
	// decay-rates-quadratic          fig:experiment-1-quadratic-exponential-decay-rate
	// decay-memory-quadratic         fig:experiment-1-quadratic-memory-size-variant
	// decay-decomposition-quadratic  fig:experiment-1-quadratic-state-error-decomposition
	// decay-heatmap-quadratic        fig:experiment-1-quadratic-residual-error-heatmap
	// decay-modes-quadratic          fig:experiment-1-quadratic-sampling-intervention
	// decay-mode-summary             fig:experiment-1-deletion-mode-comparison
	// decay-mass-quadratic           (no figure in the paper: M_direct and its clearance time)
	// <nil>
}
