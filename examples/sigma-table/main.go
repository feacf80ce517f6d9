// Command sigma-table answers the deployment question "how much noise do I
// need?": the σ that certifies a release at (ε, δ) = (1, 10⁻⁵), over the
// number of deletions, the memory size τ and the time since the deletion,
// for a model whose constants are known — isotropic quadratic losses with
// curvature in [μ, L] = [1, 4] and step size η = 0.2, where hMin = 1/L,
// hMax = 1/μ and the contraction ρ = 0.95 are proved (docs/theory.md §5,
// §13) and the gradients are bounded by G = 1 on the region the model
// visits.
//
// It prints two tables: the proved worst-case memory model (α tends to a
// floor that does not depend on τ) and the direct-window model, which
// assumes no indirect memory and lets α decay once the deleted samples'
// curvature pairs have left the memory (so τ matters). With -csv it writes
// CSV instead. Run it with
//
//	go run ./examples/sigma-table [-csv]
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"unlearn/bound"
	"unlearn/certify"
)

func main() {
	csv := flag.Bool("csv", false, "write CSV instead of Markdown")
	flag.Parse()
	if err := run(os.Stdout, *csv); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer, csv bool) error {
	const mu, L, eta = 1.0, 4.0, 0.2
	rho, err := bound.AnalyticContraction(bound.AnalyticParams{Mu: mu, L: L, Eta: eta, HMin: 1 / L, HMax: 1 / mu, Case: bound.Commuting})
	if err != nil {
		return err
	}
	for _, model := range []bound.MemoryModel{bound.MemoryWorstCase, bound.MemoryDirect} {
		tab, err := certify.RequiredSigma(certify.PlanSpec{
			Epsilon: 1, Delta: 1e-5,
			Constants:   bound.Constants{G: 1, HMin: 1 / L, HMax: 1 / mu, Eta: eta, Tau: 10, Source: bound.Proved},
			Contraction: rho,
			Memory:      model,
			Deletions:   []int{1, 5, 20},
			Taus:        []int{5, 20},
			Since:       []int{0, 10, 100, 1000},
		})
		if err != nil {
			return err
		}
		if csv {
			err = tab.WriteCSV(w)
		} else {
			err = tab.WriteMarkdown(w)
			fmt.Fprintf(w, "\nA deployment that releases at any of these times needs σ = %.4g.\n\n", tab.MaxSigma())
		}
		if err != nil {
			return err
		}
	}
	return nil
}
