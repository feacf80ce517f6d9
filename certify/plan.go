package certify

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"unlearn/bound"
	"unlearn/noise"
)

// PlanSpec asks "what σ do I need" over a grid of deployments: deletion
// counts, memory sizes τ and times since deletion.
type PlanSpec struct {
	// Epsilon and Delta are the target ε > 0 and δ ∈ (0, 1). Required.
	Epsilon, Delta float64
	// Calibration selects how σ is computed. Defaults to noise.Analytic.
	Calibration noise.Calibration
	// Constants are G, hMin, hMax, η (and a τ, replaced by each of Taus)
	// with their provenance. Required.
	Constants bound.Constants
	// Contraction is ρ with its provenance. Required.
	Contraction bound.Contraction
	// Memory is the perturbation model. Defaults to bound.MemoryWorstCase,
	// which does not depend on τ (its memory term is charged at every
	// step); bound.MemoryDirect does.
	Memory bound.MemoryModel
	// LambdaZ is λ_Z for bound.MemoryCoupled (nil: 1).
	LambdaZ *float64
	// Deletions are the deletion counts m ≥ 1. Required (non-empty).
	Deletions []int
	// Taus are the memory sizes τ ≥ 1. Defaults to {Constants.Tau}.
	Taus []int
	// Since are the times since deletion k ≥ 0, in update steps. Defaults
	// to {0}.
	Since []int
}

// SigmaRow is one deployment of a [SigmaTable].
type SigmaRow struct {
	// Deletions is the number m of deleted inserts, Tau the memory size and
	// Since the steps since the most recent deletion.
	Deletions int `json:"deletions"`
	Tau       int `json:"tau"`
	Since     int `json:"since"`
	// Alpha is the bound α and Sigma the σ it requires.
	Alpha float64 `json:"alpha"`
	Sigma float64 `json:"sigma"`
	// Provenance is α's weakest provenance.
	Provenance bound.Provenance `json:"provenance"`
}

// SigmaTable is the answer to a [PlanSpec].
type SigmaTable struct {
	Epsilon     float64           `json:"epsilon"`
	Delta       float64           `json:"delta"`
	Calibration noise.Calibration `json:"calibration"`
	Memory      bound.MemoryModel `json:"memory_model"`
	// Rows holds one row per (deletions, τ, since), in that nesting order.
	Rows []SigmaRow `json:"rows"`
	// Provenance is the weakest provenance of all rows.
	Provenance bound.Provenance `json:"provenance"`
}

// RequiredSigma computes, for every combination of p's deletion counts m,
// memory sizes τ and times since deletion k, the bound α of Theorem
// "Bounded counterfactual state deviation" for m deleted inserts at
// consecutive steps, the most recent k steps before the release (ages
// k, k+1, …, k+m−1: one batch request), and the σ that Theorem "o-LBFGS
// Unlearning Certificate" requires for it at (ε, δ) with the calibration.
// σ grows with α, so a deployment that releases at any k of the table needs
// the largest σ of its rows.
//
// Errors (*SpecError): a bad ε or δ, an empty or non-positive Deletions,
// τ < 1, k < 0 (ErrSpec), and the errors of bound.Scenario.Bound and
// noise.Sigma, naming the field.
func RequiredSigma(p PlanSpec) (*SigmaTable, error) {
	if err := checkPrivacy(p.Epsilon, p.Delta, 0); err != nil {
		return nil, err
	}
	if len(p.Deletions) == 0 {
		return nil, specErr("Deletions", nil, fmt.Errorf("%w: give at least one deletion count", ErrSpec))
	}
	taus := p.Taus
	if len(taus) == 0 {
		taus = []int{p.Constants.Tau}
	}
	since := p.Since
	if len(since) == 0 {
		since = []int{0}
	}
	for i, m := range p.Deletions {
		if m < 1 {
			return nil, specErr(fmt.Sprintf("Deletions[%d]", i), m, ErrSpec)
		}
	}
	for i, k := range since {
		if k < 0 {
			return nil, specErr(fmt.Sprintf("Since[%d]", i), k, ErrSpec)
		}
	}
	t := &SigmaTable{Epsilon: p.Epsilon, Delta: p.Delta, Calibration: p.Calibration, Memory: p.Memory, Provenance: bound.Proved}
	for _, m := range p.Deletions {
		for ti, tau := range taus {
			if tau < 1 {
				return nil, specErr(fmt.Sprintf("Taus[%d]", ti), tau, ErrSpec)
			}
			for _, k := range since {
				c := p.Constants
				c.Tau = tau
				ages := make([]int, m)
				for j := range ages {
					ages[j] = k + j
				}
				sc := bound.Scenario{Constants: c, Contraction: p.Contraction, Memory: p.Memory, LambdaZ: p.LambdaZ, Ages: ages}
				res, err := sc.Bound()
				if err != nil {
					return nil, specErr(strings.TrimPrefix(boundField(err), "Scenario."), nil, err)
				}
				s, err := noise.Sigma(p.Calibration, res.Alpha[0], p.Epsilon, p.Delta)
				if err != nil {
					return nil, specErr(noiseField(err, "Constants"), nil, err)
				}
				t.Rows = append(t.Rows, SigmaRow{Deletions: m, Tau: tau, Since: k, Alpha: res.Alpha[0], Sigma: s, Provenance: res.Provenance})
				t.Provenance = bound.Combine(t.Provenance, res.Provenance)
			}
		}
	}
	return t, nil
}

// MaxSigma returns the largest σ of the table: the σ that covers every
// deployment in it.
func (t *SigmaTable) MaxSigma() float64 {
	m := 0.0
	for _, r := range t.Rows {
		m = max(m, r.Sigma)
	}
	return m
}

// WriteMarkdown writes the table as a Markdown table with a caption line.
func (t *SigmaTable) WriteMarkdown(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "Required σ at (ε, δ) = (%v, %v), %s calibration, %s memory model; α is %s.\n\n"+
		"| deletions | τ | steps since deletion | α | σ | provenance |\n| ---: | ---: | ---: | ---: | ---: | --- |\n",
		t.Epsilon, t.Delta, t.Calibration, t.Memory, t.Provenance); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if _, err := fmt.Fprintf(w, "| %d | %d | %d | %.6g | %.6g | %s |\n", r.Deletions, r.Tau, r.Since, r.Alpha, r.Sigma, r.Provenance); err != nil {
			return err
		}
	}
	return nil
}

// WriteCSV writes the table as CSV with a header row; floats use the
// shortest representation that round-trips.
func (t *SigmaTable) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"deletions", "tau", "since", "alpha", "sigma", "provenance", "epsilon", "delta", "calibration", "memory_model"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, r := range t.Rows {
		_ = cw.Write([]string{strconv.Itoa(r.Deletions), strconv.Itoa(r.Tau), strconv.Itoa(r.Since), f(r.Alpha), f(r.Sigma),
			r.Provenance.String(), f(t.Epsilon), f(t.Delta), t.Calibration.String(), t.Memory.String()})
	}
	cw.Flush()
	return cw.Error()
}
