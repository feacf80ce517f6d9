// Command sigma-table answers the deployment question "how much noise do I
// need?" before any deletion happens: the σ that certifies a release at
// (ε, δ) = (1, 10⁻⁵) for a certifiable learner — radius W = 5, sample bound
// B = 3, the pair guard — on isotropic quadratic losses (H0 = I,
// H1 = 1.2·I, so every Hessian commutes with every H_Z and the contraction
// is the commuting one), over memory sizes and planned deletion requests:
// one recent deletion, one old one, a batch, and a schedule of deletions at
// scattered ages. Every α is derived from public quantities
// (certify.RequiredSigma, docs/theory.md §15); the last line is the worst
// case.
//
// The proved bound does not decay to zero with a deletion's age: the two
// memories need never agree again, and each later step is charged
// η·(hMax − hMin)·G, so α tends to the floor η·(hMax − hMin)·G/(1 − ρ). With
// a narrow curvature spectrum (here 1 to 1.2) the floor lies below the
// deleted step's own term η·hMax·G and old deletions need less noise; with a
// wide one it can exceed the diameter 2W', which then caps α. With -csv it
// writes CSV instead. Run it with
//
//	go run ./examples/sigma-table [-csv]
package main

import (
	"flag"
	"io"
	"log"
	"os"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

func main() {
	csv := flag.Bool("csv", false, "write CSV instead of Markdown")
	flag.Parse()
	if err := run(os.Stdout, *csv); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer, csv bool) error {
	const d = 10
	h0, h1 := make([][]float64, d), make([][]float64, d)
	for i := range d {
		h0[i], h1[i] = make([]float64, d), make([]float64, d)
		h0[i][i], h1[i][i] = 1, 1.2
	}
	header := stream.Header{Format: stream.FormatV1, Kind: stream.KindQuadratic, D: d, H0: h0, H1: h1}
	cfg := olbfgs.DefaultConfig(d)
	cfg.StepSize, cfg.InitialScale = 0.3, 1/1.2
	cfg.Radius, cfg.SampleBound = 5, 3
	cfg.PairAngle, cfg.PairMin, cfg.PairMax = 1e-6, 1-1e-9, 1.2+1e-9
	noop := unlearn.Builtin{Kind: unlearn.KindNoop}
	tab, err := certify.RequiredSigma(certify.PlanSpec{
		Epsilon: 1, Delta: 1e-5, Config: cfg, Header: header, Taus: []int{5, 20},
		Schedules: []certify.Deletion{
			{Ages: []int{0}, Intervention: noop},
			{Ages: []int{200}, Intervention: noop},
			{Ages: []int{0, 1, 2, 3, 4}, Intervention: noop},
			{Ages: []int{3, 70, 400, 1500}, Intervention: noop},
			{Ages: []int{0}, Intervention: unlearn.Builtin{Kind: unlearn.KindParamOnly}},
		},
	})
	if err != nil {
		return err
	}
	if csv {
		return tab.WriteCSV(w)
	}
	return tab.WriteMarkdown(w)
}
