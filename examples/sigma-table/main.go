// Command sigma-table answers the deployment question "how much noise do I
// need?": the σ that certifies a release at (ε, δ) = (1, 10⁻⁵), over the
// number of deletions, the memory size τ and the time since the deletion.
//
// The constants are not typed in: they are DERIVED by certify.DeriveProfile
// from a certifiable learner's configuration and the loss header — an
// isotropic quadratic loss in d = 10 whose Hessians lie in [1, 1.2]·I, a
// learner with radius W = 1, sample bound B = 1 (‖a‖ ≤ 1 for every
// insert) and the pair guard, η = 0.8 — so the label "proved" is the
// toolkit's, not the user's (issue 9). certify.RequiredSigma turns them into
// α and σ for each row.
//
// It prints the table of the proved worst-case memory model, the one
// certify derives α with: α tends to a floor η·(hMax − hMin)·G/(1 − ρ) that
// depends neither on τ nor on the age. Below it, it compares each row with
// what certify.Certify calibrates to for the same ages
// (certify.DerivedAlpha): the same recursion plus the round-off of two
// float trajectories and of the projection, capped by the diameter 2W'.
// (The direct-window model of package bound, which lets α decay once the
// deleted pairs have left the memory, is an ASSUMPTION that certify never
// uses: its α falls below the round-off of float trajectories within a
// few hundred steps, where no σ derived from it would be sound.) With -csv
// it writes the table as CSV instead. Run it with
//
//	go run ./examples/sigma-table [-csv]
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"slices"

	"unlearn/bound"
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

// setting returns the certifiable learner's configuration and the loss
// header the constants are derived from.
func setting() (olbfgs.Config, stream.Header) {
	const d, mu, L = 10, 1.0, 1.2
	h0, h1 := make([][]float64, d), make([][]float64, d)
	for i := range d {
		h0[i], h1[i] = make([]float64, d), make([]float64, d)
		h0[i][i], h1[i][i] = mu, L
	}
	cfg := olbfgs.DefaultConfig(d)
	cfg.StepSize, cfg.InitialScale = 0.8, 1/L
	cfg.Radius, cfg.SampleBound = 1, 1
	cfg.PairAngle, cfg.PairMin, cfg.PairMax = 1e-6, mu, L
	return cfg, stream.Header{Format: stream.FormatV1, Kind: stream.KindQuadratic, D: d, H0: h0, H1: h1}
}

// plan is the grid of deployments.
var (
	deletions = []int{1, 5, 20}
	taus      = []int{5, 20}
	since     = []int{0, 10, 100, 1000}
)

// table returns the profile (at the first τ) and the worst-case table.
// The pair guard's spectral bounds hMin, hMax grow with τ
// (olbfgs.Config.SpectralBounds), so the constants are derived again for
// each τ and each τ is planned with its own: planning every τ with the
// constants of one would understate α for the larger ones.
func table() (*certify.Profile, *certify.SigmaTable, error) {
	var first *certify.Profile
	var out *certify.SigmaTable
	for _, tau := range taus {
		cfg, hdr := setting()
		cfg.Memory = tau
		p, err := certify.DeriveProfile(cfg, hdr)
		if err != nil {
			return nil, nil, err
		}
		if !p.Recursion {
			return nil, nil, fmt.Errorf("no recursion for this setting: %s", p.Why)
		}
		tab, err := certify.RequiredSigma(certify.PlanSpec{
			Epsilon: 1, Delta: 1e-5,
			Constants:   p.Constants,
			Contraction: p.Contraction,
			Memory:      bound.MemoryWorstCase,
			Deletions:   deletions,
			Taus:        []int{tau},
			Since:       since,
		})
		if err != nil {
			return nil, nil, err
		}
		if out == nil {
			first, out = p, tab
			continue
		}
		out.Rows = append(out.Rows, tab.Rows...)
		out.Provenance = bound.Combine(out.Provenance, tab.Provenance)
	}
	slices.SortStableFunc(out.Rows, func(a, b certify.SigmaRow) int { return cmp.Compare(a.Deletions, b.Deletions) })
	return first, out, nil
}

// derived returns certify.DerivedAlpha for a row's ages (k, …, k+m−1) at τ.
func derived(r certify.SigmaRow) (certify.Sensitivity, error) {
	cfg, hdr := setting()
	cfg.Memory = r.Tau
	ages := make([]int, r.Deletions)
	for j := range ages {
		ages[j] = r.Since + j
	}
	return certify.DerivedAlpha(cfg, hdr, &certify.Deletion{Ages: ages, Intervention: unlearn.Builtin{Kind: unlearn.KindNoop}})
}

func run(w io.Writer, csv bool) error {
	p, tab, err := table()
	if err != nil {
		return err
	}
	if csv {
		return tab.WriteCSV(w)
	}
	fmt.Fprintf(w, "Derived constants (proved, certify.DeriveProfile) at τ = %d: G = %.4g, hMin = %.4g, hMax = %.4g, η = %g, ρ = %.4f (%s); diameter 2W' = %.4g.\n"+
		"Each τ is planned with the constants derived at that τ (the pair guard's spectral bounds grow with τ).\n\n",
		p.Constants.Tau, p.Constants.G, p.Constants.HMin, p.Constants.HMax, p.Constants.Eta, p.Contraction.Rho, p.Contraction.Method, p.Diameter)
	if err := tab.WriteMarkdown(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nA deployment that releases at any of these times needs σ = %.4g.\n\n", tab.MaxSigma())
	c, err := compare(tab)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "certify.Certify calibrates to certify.DerivedAlpha for the same ages: where the table's α is below 2W',\n"+
		"α·(1 + %.3g) at most (the round-off of two float trajectories and of the projection);\n"+
		"in %d of %d rows the table's α exceeds 2W' = %.4g and Certify uses the diameter instead.\n", c.worstRatio-1, c.capped, len(tab.Rows), p.Diameter)
	return nil
}

// comparison is the table against certify.DerivedAlpha.
type comparison struct {
	worstRatio float64 // largest derived α / table α over the rows below the cap
	capped     int     // rows whose table α exceeds the diameter
}

func compare(tab *certify.SigmaTable) (comparison, error) {
	var c comparison
	for _, r := range tab.Rows {
		s, err := derived(r)
		if err != nil {
			return c, err
		}
		if r.Alpha >= s.Diameter {
			c.capped++
			continue
		}
		c.worstRatio = max(c.worstRatio, s.Alpha/r.Alpha)
	}
	return c, nil
}
