package certify

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"unlearn/bound"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// PlanSpec asks "what σ do I need" for a certifiable learner over a set of
// deletion requests (schedules) and memory sizes, before any data exists:
// every α is the one [Certify] would derive for such a request
// ([DerivedAlpha]), from public quantities only.
type PlanSpec struct {
	// Epsilon and Delta are the target ε > 0 and δ ∈ (0, 1). Required.
	Epsilon, Delta float64
	// Calibration selects how σ is computed. Defaults to noise.Analytic.
	Calibration noise.Calibration
	// Config is the learner's configuration (its radius, sample bound and
	// pair guard decide what can be proved). Required.
	Config olbfgs.Config
	// Header is the loss's header. Required.
	Header stream.Header
	// Schedules are the requests to plan for: each an arbitrary set of
	// deletion ages at the release time (not necessarily consecutive),
	// the intervention and, for retain fine-tuning, the replayed inserts.
	// Required (non-empty).
	Schedules []Deletion
	// Taus are the memory sizes τ to tabulate. Defaults to {Config.Memory}.
	Taus []int
}

// SigmaRow is one (τ, schedule) of a [SigmaTable].
type SigmaRow struct {
	// Tau is the memory size; Schedule the index of the request in
	// PlanSpec.Schedules; Intervention its kind; Ages its deletion ages.
	Tau          int    `json:"tau"`
	Schedule     int    `json:"schedule"`
	Intervention string `json:"intervention"`
	Ages         []int  `json:"ages"`
	// Alpha is the derived α, Source its source ("derived" or, when no
	// recursion is available or it is larger, the diameter), and Sigma the
	// σ it requires.
	Alpha  float64 `json:"alpha"`
	Source string  `json:"source"`
	Sigma  float64 `json:"sigma"`
	// Why says why the recursion does not give α (empty when it does).
	Why string `json:"why,omitempty"`
}

// SigmaTable is the answer to a [PlanSpec].
type SigmaTable struct {
	Epsilon     float64           `json:"epsilon"`
	Delta       float64           `json:"delta"`
	Calibration noise.Calibration `json:"calibration"`
	// Rows holds one row per (τ, schedule), τ outermost.
	Rows []SigmaRow `json:"rows"`
	// MaxSigma is the largest σ of the rows: the σ that covers every
	// request of the plan (the worst case over the schedules).
	MaxSigma float64 `json:"max_sigma"`
	// Provenance is "proved": every α is derived.
	Provenance bound.Provenance `json:"provenance"`
}

// RequiredSigma computes, for every memory size τ and every schedule, the
// α that [Certify] derives for it and the σ Theorem "o-LBFGS Unlearning
// Certificate" requires at (ε, δ) with the calibration, and the worst case
// over all of them. Errors (*SpecError): a bad ε or δ, no schedule, τ < 1,
// or the errors of [DerivedAlpha] and noise.Sigma, naming the field.
func RequiredSigma(p PlanSpec) (*SigmaTable, error) {
	if err := checkPrivacy(p.Epsilon, p.Delta, 0); err != nil {
		return nil, err
	}
	if len(p.Schedules) == 0 {
		return nil, specErr("Schedules", nil, fmt.Errorf("%w: give at least one deletion request", ErrSpec))
	}
	taus := p.Taus
	if len(taus) == 0 {
		taus = []int{p.Config.Memory}
	}
	t := &SigmaTable{Epsilon: p.Epsilon, Delta: p.Delta, Calibration: p.Calibration, Provenance: bound.Proved}
	for ti, tau := range taus {
		if tau < 1 {
			return nil, specErr(fmt.Sprintf("Taus[%d]", ti), tau, ErrSpec)
		}
		cfg := p.Config
		cfg.Memory = tau
		for si, s := range p.Schedules {
			del := s
			if del.Intervention.Kind == "" {
				del.Intervention = unlearn.Builtin{Kind: unlearn.KindNoop}
			}
			sens, err := DerivedAlpha(cfg, p.Header, &del)
			if err != nil {
				var se *SpecError
				if ok := asSpecError(err, &se); ok {
					se.Field = fmt.Sprintf("Schedules[%d].%s", si, se.Field)
				}
				return nil, err
			}
			sigma, err := noise.Sigma(p.Calibration, sens.Alpha, p.Epsilon, p.Delta)
			if err != nil {
				return nil, specErr(noiseField(err, "Schedules"), nil, err)
			}
			src := sens.Source
			if sens.Recursion == 0 || sens.Recursion+sens.Allowance >= sens.Diameter {
				src = "diameter"
			}
			t.Rows = append(t.Rows, SigmaRow{Tau: tau, Schedule: si, Intervention: del.Intervention.Kind, Ages: append([]int{}, del.Ages...),
				Alpha: sens.Alpha, Source: src, Sigma: sigma, Why: sens.Why})
			t.MaxSigma = max(t.MaxSigma, sigma)
		}
	}
	return t, nil
}

func asSpecError(err error, se **SpecError) bool {
	e, ok := err.(*SpecError)
	if ok {
		*se = e
	}
	return ok
}

func agesText(a []int) string {
	s := make([]string, len(a))
	for i, v := range a {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, " ")
}

// WriteMarkdown writes the table as Markdown with a caption line.
func (t *SigmaTable) WriteMarkdown(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "Required σ at (ε, δ) = (%.4g, %.4g), %s calibration; every α is derived (proved) from public quantities.\n\n"+
		"| τ | request | intervention | ages | α | source | σ |\n| ---: | ---: | --- | --- | ---: | --- | ---: |\n",
		t.Epsilon, t.Delta, t.Calibration); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if _, err := fmt.Fprintf(w, "| %d | %d | %s | %s | %.4g | %s | %.4g |\n", r.Tau, r.Schedule, r.Intervention, agesText(r.Ages), r.Alpha, r.Source, r.Sigma); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, r := range t.Rows {
		if r.Why != "" && !seen[r.Why] {
			seen[r.Why] = true
			if _, err := fmt.Fprintf(w, "\nWhy the diameter: %s.\n", r.Why); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintf(w, "\nA deployment that may serve any of these requests needs σ = %.4g (the worst case).\n", t.MaxSigma)
	return err
}

// WriteCSV writes the table as CSV with a header row; floats use the
// shortest representation that round-trips.
func (t *SigmaTable) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"tau", "schedule", "intervention", "ages", "alpha", "source", "sigma", "epsilon", "delta", "calibration"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, r := range t.Rows {
		_ = cw.Write([]string{strconv.Itoa(r.Tau), strconv.Itoa(r.Schedule), r.Intervention, agesText(r.Ages), f(r.Alpha), r.Source, f(r.Sigma),
			f(t.Epsilon), f(t.Delta), t.Calibration.String()})
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the table as indented JSON.
func (t *SigmaTable) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
