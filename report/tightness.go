package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"unlearn/experiment"
	"unlearn/stream"
)

// TightnessFigureID is the ID of the tightness figure.
const TightnessFigureID = "bench-tightness"

// tightGroup is the records of one grid and stream kind: one panel and
// one table (experiment.TightnessTables groups the same way).
type tightGroup struct {
	grid string
	kind stream.Kind
	recs []experiment.TightnessRecord
}

func tightGroups(ts []*experiment.Tightness) []tightGroup {
	var out []tightGroup
	for _, t := range ts {
		var kinds []stream.Kind
		for _, r := range t.Records {
			if !slices.Contains(kinds, r.Config.Stream.Kind) {
				kinds = append(kinds, r.Config.Stream.Kind)
			}
		}
		for _, k := range kinds {
			gr := tightGroup{grid: t.Grid, kind: k}
			for _, r := range t.Records {
				if r.Config.Stream.Kind == k {
					gr.recs = append(gr.recs, r)
				}
			}
			out = append(out, gr)
		}
	}
	return out
}

// TightnessFigure returns the figure of the certified α against the
// actual deviation ‖w̃ − w⁻‖₂ of every intervention (issue 13; no figure
// in the paper): one panel per grid and stream kind of ts, deviation on the
// x axis and α on the y axis (both logarithmic), small translucent markers
// for the configurations and large ones for each intervention's medians,
// and the diagonal α = deviation, where the bound would be tight. Every
// point lies on or above the diagonal when the bound holds; its height
// above it is the bound's slack. Releases that are exact (α = deviation =
// 0) cannot be drawn on log axes and are counted in the caption.
//
// Errors wrap ErrRecords: no tightness, an empty grid, or records whose
// methods differ.
func TightnessFigure(ts []*experiment.Tightness) (*Figure, error) {
	groups := tightGroups(ts)
	if len(groups) == 0 {
		return nil, fmt.Errorf("%w: no tightness records", ErrRecords)
	}
	names := groups[0].recs[0].Methods
	for _, g := range groups {
		for _, r := range g.recs {
			if len(r.Methods) != len(names) {
				return nil, fmt.Errorf("%w: tightness record %d (%s) has %d methods, want %d", ErrRecords, r.Index, r.ID, len(r.Methods), len(names))
			}
			for i, m := range r.Methods {
				if m.Name != names[i].Name {
					return nil, fmt.Errorf("%w: tightness record %d (%s): method %d is %q, want %q", ErrRecords, r.Index, r.ID, i, m.Name, names[i].Name)
				}
			}
		}
	}
	f := &Figure{
		ID:    TightnessFigureID,
		Title: "Certified α against the actual parameter error E_{w} of each intervention at its release",
		Cols:  min(len(groups), 3),
	}
	exact, zero := 0, 0
	var parts []string
	for _, gr := range groups {
		g, l := gr, gr.recs[0].Learner
		p := Panel{
			Title: fmt.Sprintf("%s grid, %s (κ %s)", g.grid, g.kind, kappaList(g.recs)),
			X:     Axis{Label: "actual deviation E_{w}(0) from the counterfactual (log scale)", Log: true},
			Y:     Axis{Label: "certified α (log scale)", Log: true},
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, m0 := range names {
			cloud := Series{Style: i, Kind: Cloud}
			var as, ds []float64
			for _, r := range g.recs {
				m := r.Methods[i]
				if m.Alpha == 0 && m.Deviation == 0 {
					exact++
					continue
				}
				if !(m.Alpha > 0) || !(m.Deviation > 0) {
					zero++
					continue
				}
				cloud.X, cloud.Y = append(cloud.X, m.Deviation), append(cloud.Y, m.Alpha)
				as, ds = append(as, m.Alpha), append(ds, m.Deviation)
				lo, hi = min(lo, m.Deviation, m.Alpha), max(hi, m.Deviation, m.Alpha)
			}
			if len(as) == 0 {
				continue
			}
			p.Series = append(p.Series, cloud, Series{Name: m0.Label, Style: i, Kind: Points,
				X: experiment.Floats{experiment.Median(ds)}, Y: experiment.Floats{experiment.Median(as)}})
		}
		if !math.IsInf(lo, 0) {
			p.Series = append(p.Series, Series{Name: "α = deviation (tight)", Style: -1, Kind: Line,
				X: experiment.Floats{lo, hi}, Y: experiment.Floats{lo, hi}})
		}
		f.Panels = append(f.Panels, p)
		parts = append(parts, fmt.Sprintf("%s grid, %s: %s, W = %s, B = %s, r̄ = %s", g.grid, g.kind,
			plural(len(g.recs), "configuration"), num3(l.Radius), num3(l.SampleBound), num3(l.PairAngle)))
	}
	left := ""
	if exact > 0 {
		left = fmt.Sprintf(" %s (α = deviation = 0: oracle replay, and window replays whose window holds every deleted insert) cannot be drawn on log axes and are left out.",
			plural(exact, "exact release"))
	}
	if zero > 0 {
		left += fmt.Sprintf(" %s with α or deviation 0 but not both are left out.", plural(zero, "point"))
	}
	f.Caption = fmt.Sprintf("Tightness of the toolkit's derived sensitivity: for every intervention, the α a certified release of its "+
		"state is calibrated to (certify.Describe and certify.DerivedAlpha: public quantities only) against the actual distance "+
		"E_w(0) = ‖P(w̃) − w⁻‖₂ of its parameters (projected onto the learner's ball, as a release projects them) from the counterfactual's, "+
		"computed exactly, at the release right after the intervention. The states come from the certifiable variant of the "+
		"benchmark's learner (experiment.CertifiableConfig: radius W, sample bound B and pair guard of angle r̄ from the "+
		"generators' public parameters; %s); the benchmark's own tables and figures use the paper's learner, unchanged. "+
		"Small translucent markers are configurations, large markers each intervention's medians; every point on or above "+
		"the dashed diagonal is a bound that holds, its height above it the slack. Where α is the diameter 2W' (or the radius W' "+
		"for drop and refill) it does not depend on the data and the points form a horizontal row.%s",
		strings.Join(parts, "; "), left)
	return f, nil
}

func kappaList(recs []experiment.TightnessRecord) string {
	var ks []string
	for _, r := range recs {
		if k := fmtKappa(r.Config.Stream.Kappa); !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return strings.Join(ks, ", ")
}

// AddTightness adds the tightness tables (experiment.TightnessTables) and
// figure ([TightnessFigure]) of ts to the report: the certified α of
// every intervention beside its actual deviation. ts empty adds nothing.
// Errors: as TightnessFigure's.
func (r *Report) AddTightness(ts []*experiment.Tightness) error {
	if len(ts) == 0 {
		return nil
	}
	f, err := TightnessFigure(ts)
	if err != nil {
		return err
	}
	if err := f.Validate(); err != nil {
		return err
	}
	for _, t := range ts {
		r.Tables = append(r.Tables, experiment.TightnessTables(t)...)
	}
	if r.Figures == nil {
		r.Figures = &Set{}
	}
	r.Figures.Figures = append(r.Figures.Figures, f)
	r.Notes = append(r.Notes, "The tightness tables and figure use the certifiable variant of the learner "+
		"(experiment.CertifiableConfig) on the same streams; the summary tables above it use the paper's learner, unchanged.")
	return nil
}

// num3 is g, the caption format, under a name the loop variable does not shadow.
func num3(v float64) string { return g(v) }
