package report

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"unlearn/experiment"
)

// Axis labels shared by the figures ("_{…}" and "^{…}" are drawn as
// sub- and superscripts, see Axis.Label).
const (
	labelSteps   = "steps after deletion k (events)"
	labelState   = "state error E_{Θ}(k) (log scale)"
	labelParam   = "parameter error E_{w}(k) (log scale)"
	labelMemory  = "memory-operator error E_{Z}(k) (log scale)"
	labelTau     = "memory size τ (curvature pairs)"
	labelRho     = "fitted decay rate ρ (per step)"
	labelMode    = "deletion mode"
	labelMass    = "direct memory mass M_{direct}(k) (pairs)"
	labelAUC     = "future state AUC Σ_{k} E_{Θ}(k) (log scale)"
	labelInitial = "initial state error E_{Θ}(0) (log scale)"
)

// phaseNames are the decay-fit phases of spec §3 / §8.
var phaseNames = [3]string{"P1 = [0, τ)", "P2 = [τ, 2τ)", "P3 = [2τ, H]"}

// Omission says why a figure was not drawn.
type Omission struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// decaySet groups Experiment 1's records of one stream kind with the
// reference values resolved against them.
type decaySet struct {
	kind    string
	recs    []*experiment.Record
	taus    []int
	modes   []string
	kappas  []float64
	tau     int     // reference τ
	mode    string  // reference mode
	kappa   float64 // reference κ
	horizon int     // largest H
}

func newDecaySet(kind string, recs []*experiment.Record, ref Reference) decaySet {
	s := decaySet{kind: kind, recs: recs}
	s.taus = distinct(recs, func(r *experiment.Record) int { return r.Config.Tau }, cmp.Compare[int])
	s.modes = distinct(recs, func(r *experiment.Record) string { return r.Config.Mode }, compareModes)
	s.kappas = kappas(recs)
	s.tau = nearestTau(s.taus, ref.Tau)
	s.mode = referenceMode(s.modes, ref.Mode)
	s.kappa = nearestKappa(s.kappas, ref.Kappa)
	for _, r := range recs {
		s.horizon = max(s.horizon, r.Config.Horizon)
	}
	return s
}

// at returns the records with the given τ (0: any), mode ("": any) and κ
// (NaN with any false: NaN only).
func (s decaySet) at(tau int, mode string, kappa float64, anyKappa bool) []*experiment.Record {
	return filter(s.recs, func(r *experiment.Record) bool {
		k := recordKey(r)
		return (tau == 0 || k.tau == tau) && (mode == "" || k.mode == mode) && (anyKappa || sameKappa(k.kappa, kappa))
	})
}

func (s decaySet) title() string { return kindTitle(s.kind) }

// kindTitle capitalizes a stream kind for titles and captions.
func kindTitle(kind string) string { return strings.ToUpper(kind[:1]) + kind[1:] }

// tauLabels returns the memory sizes of s as category labels.
func (s decaySet) tauLabels() []string {
	labels := make([]string, len(s.taus))
	for i, t := range s.taus {
		labels[i] = fmt.Sprint(t)
	}
	return labels
}

// decayFigures returns the figures of Experiment 1 (finite-memory decay)
// from its records, and the figures it could not draw, in a fixed order:
// by figure, then by stream kind (quadratic, logistic).
func decayFigures(recs []*experiment.Record, o Options) ([]*Figure, []Omission) {
	kinds := distinct(recs, func(r *experiment.Record) string { return r.Source.Kind }, compareKinds)
	sets := make([]decaySet, len(kinds))
	for i, kind := range kinds {
		sets[i] = newDecaySet(kind, filter(recs, func(r *experiment.Record) bool { return r.Source.Kind == kind }), o.Reference)
	}
	var (
		figs    []*Figure
		omitted []Omission
	)
	add := func(f *Figure) {
		if len(f.Panels) == 0 {
			omitted = append(omitted, Omission{ID: f.ID, Reason: f.Caption})
			return
		}
		// Figures the paper shows for the quadratic stream only, drawn
		// here for another kind, say so.
		if strings.Contains(f.Paper, "-quadratic-") && !strings.HasSuffix(f.ID, "-quadratic") {
			f.Caption += " (The paper shows this figure for the quadratic stream.)"
		}
		figs = append(figs, f)
	}
	for _, s := range sets {
		add(decayRates(s))
	}
	for _, b := range []func(decaySet, Options) *Figure{decayMemory, decayDecomposition} {
		for _, s := range sets {
			add(b(s, o))
		}
	}
	for _, s := range sets {
		add(decayHeatmap(s))
	}
	for _, s := range sets {
		add(decayModes(s, o))
	}
	add(decayModeSummary(recs, kinds))
	for _, s := range sets {
		add(decayMass(s, o))
	}
	return figs, omitted
}

// decayRates is the figure of phase-wise decay rates ρ̂ by memory size,
// per condition number (paper: fig:experiment-1-quadratic-exponential-
// decay-rate and fig:experiment-1-logistic-exponential-decay-rate).
func decayRates(s decaySet) *Figure {
	f := &Figure{
		ID:    "decay-rates-" + s.kind,
		Paper: "fig:experiment-1-" + s.kind + "-exponential-decay-rate",
		Title: fmt.Sprintf("%s stream: fitted decay rate per phase, by memory size τ", s.title()),
		Cols:  len(s.kappas),
	}
	labels := s.tauLabels()
	n := len(filter(s.recs, func(r *experiment.Record) bool { return r.Config.Mode == s.mode }))
	for _, kappa := range s.kappas {
		p := Panel{
			Title: "κ = " + fmtKappa(kappa),
			X:     Axis{Label: labelTau, Ticks: categorical(labels)},
			Y:     Axis{Label: labelRho},
			Marks: []Mark{{Value: 1, Label: "ρ = 1: no decay", Style: -1, Dash: 1}},
		}
		for ph := range 3 {
			ser := Series{Name: phaseNames[ph], Style: ph, Kind: LinePoints}
			for i, tau := range s.taus {
				sub := s.at(tau, s.mode, kappa, false)
				vals := make([]float64, 0, len(sub))
				for _, r := range sub {
					if rho := baseline(r).Summary.Rho[ph]; rho != nil { // no fit: too few points
						vals = append(vals, *rho)
					}
				}
				ser.X = append(ser.X, float64(i))
				ser.Y = append(ser.Y, experiment.Median(vals))
			}
			p.Series = append(p.Series, ser)
		}
		f.Panels = append(f.Panels, p)
	}
	f.Caption = fmt.Sprintf("Least-squares decay rates ρ̂ = exp(slope of log E_Θ(k)) of the state error after deletion, "+
		"fitted per phase P1 = [0, τ), P2 = [τ, 2τ), P3 = [2τ, H] (spec §3), against the memory size τ; "+
		"one panel per condition number κ. %s stream, %s deletions, no intervention (Experiment 1); "+
		"each point is the median over seeds %s (%s). ρ̂ > 1 means the deviation grows in that phase. "+
		"A phase with fewer than two non-zero errors has no fit and no point.",
		s.title(), s.mode, seedList(s.recs), plural(n, "record"))
	return f
}

// seriesPanel builds a log-y panel of the baseline metric of each group of
// records (pointwise median over the group) against the steps k.
func seriesPanel(title, ylabel string, groups [][]*experiment.Record, names []string, get metric, o Options) (Panel, int) {
	p := Panel{Title: title, X: Axis{Label: labelSteps}, Y: Axis{Label: ylabel, Log: true}}
	dropped := 0
	for i, grp := range groups {
		y := medianSeries(grp, get)
		if y == nil {
			continue
		}
		xs, ys, d := stepSeries(y, o.MaxPoints, true)
		dropped += d
		p.Series = append(p.Series, Series{Name: names[i], Style: i, Kind: Line, X: xs, Y: ys})
	}
	return p, dropped
}

// droppedNote is the caption sentence for values left off a log axis.
func droppedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" %s of exactly 0 cannot be shown on the log axis and are left out (gaps in the lines).", plural(n, "value"))
}

// byTau groups the reference-mode, reference-κ records of s by τ (the
// memory sizes with records, ascending), with each group's τ and legend
// name.
func (s decaySet) byTau() (groups [][]*experiment.Record, taus []int, names []string) {
	for _, tau := range s.taus {
		if sub := s.at(tau, s.mode, s.kappa, false); len(sub) > 0 {
			groups = append(groups, sub)
			taus = append(taus, tau)
			names = append(names, fmt.Sprintf("τ = %d", tau))
		}
	}
	return groups, taus, names
}

const noSeries = "the records kept no per-step series (decay --no-series, or bench without --series)"

// tauMarks returns, for each τ of byTau, dashed k = τ and dotted k = 2τ
// lines in the colour of its group.
func tauMarks(taus []int) []Mark {
	var m []Mark
	for i, tau := range taus {
		m = append(m, Mark{Vertical: true, Value: float64(tau), Style: i, Dash: 1},
			Mark{Vertical: true, Value: float64(2 * tau), Style: i, Dash: 2})
	}
	return m
}

var tauLegend = []LegendItem{{Name: "k = τ", Style: -1, Dash: 1}, {Name: "k = 2τ", Style: -1, Dash: 2}}

// decayMemory is the figure of the state error after deletion by memory
// size, with τ and 2τ reference lines (paper: fig:experiment-1-quadratic-
// memory-size-variant).
func decayMemory(s decaySet, o Options) *Figure {
	f := &Figure{
		ID:    "decay-memory-" + s.kind,
		Paper: "fig:experiment-1-quadratic-memory-size-variant",
		Title: fmt.Sprintf("%s stream: state error after deletion, by memory size τ", s.title()),
		Cols:  1,
	}
	groups, taus, names := s.byTau()
	recs := flatten(groups)
	if !hasSeries(recs) {
		f.Caption = noSeries
		return f
	}
	p, dropped := seriesPanel("", labelState, groups, names, etheta, o)
	p.Marks = tauMarks(taus)
	f.Panels = []Panel{p}
	f.Legend = tauLegend
	f.Caption = fmt.Sprintf("State-alignment error E_Θ(k) between the actual learner and the deletion-edited counterfactual "+
		"after deletion, with no intervention (Experiment 1), one line per memory size τ; dashed and dotted lines of the same "+
		"colour mark k = τ (the contaminated pairs have left the memory) and k = 2τ. %s stream, %s deletions, κ = %s; "+
		"pointwise median over seeds %s.%s",
		s.title(), s.mode, fmtKappa(s.kappa), seedList(recs), droppedNote(dropped))
	return f
}

// decayDecomposition splits the state error into its parameter and memory
// parts by memory size (paper: the first fig:experiment-1-quadratic-state-
// error-decomposition, "The size of the memory impacts both learning and
// unlearning efficiency").
func decayDecomposition(s decaySet, o Options) *Figure {
	f := &Figure{
		ID:    "decay-decomposition-" + s.kind,
		Paper: "fig:experiment-1-quadratic-state-error-decomposition",
		Title: fmt.Sprintf("%s stream: parameter and memory error after deletion, by memory size τ", s.title()),
		Cols:  2,
	}
	groups, taus, names := s.byTau()
	recs := flatten(groups)
	if !hasSeries(recs) {
		f.Caption = noSeries
		return f
	}
	pw, d1 := seriesPanel("parameter error", labelParam, groups, names, ew, o)
	pz, d2 := seriesPanel("memory-operator error", labelMemory, groups, names, ez, o)
	pw.Marks, pz.Marks = tauMarks(taus), tauMarks(taus)
	f.Panels = []Panel{pw, pz}
	f.Legend = tauLegend
	f.Caption = fmt.Sprintf("The two parts of the state error after deletion with no intervention (Experiment 1): "+
		"parameter error E_w(k) (left) and memory-operator error E_Z(k), the RMS difference of the inverse-Hessian "+
		"actions on the probe vectors (right), one line per memory size τ, with k = τ (dashed) and k = 2τ (dotted). "+
		"%s stream, %s deletions, κ = %s; pointwise median over seeds %s.%s",
		s.title(), s.mode, fmtKappa(s.kappa), seedList(recs), droppedNote(d1+d2))
	return f
}

// decayHeatmap is the residual-error heat map over condition number and
// memory size (paper: fig:experiment-1-quadratic-residual-error-heatmap).
func decayHeatmap(s decaySet) *Figure {
	f := &Figure{
		ID:    "decay-heatmap-" + s.kind,
		Paper: "fig:experiment-1-quadratic-residual-error-heatmap",
		Title: fmt.Sprintf("%s stream: residual state error E_{Θ}(H) by condition number κ and memory size τ", s.title()),
		Cols:  1,
	}
	yl := make([]string, len(s.kappas))
	for i, k := range s.kappas {
		yl[i] = fmtKappa(k)
	}
	h := newHeat(len(s.kappas), len(s.taus), "residual state error E_{Θ}(H) (log scale)")
	h.Log = true
	zeros, n := 0, 0
	for i, k := range s.kappas {
		for j, t := range s.taus {
			sub := s.at(t, s.mode, k, false)
			if len(sub) == 0 {
				h.Text[i][j] = "no run"
				continue
			}
			n += len(sub)
			vals := make([]float64, len(sub))
			for q, r := range sub {
				vals[q] = baseline(r).Summary.FinalState
			}
			v := experiment.Median(vals)
			h.Text[i][j] = sci(v)
			if v > 0 {
				h.Z[i][j] = math.Log10(v)
			} else if v == 0 {
				zeros++
			}
		}
	}
	f.Panels = []Panel{{
		X:    Axis{Label: labelTau, Ticks: categorical(s.tauLabels())},
		Y:    Axis{Label: "condition number κ", Ticks: categorical(yl)},
		Heat: h,
	}}
	zeroNote := ""
	if zeros > 0 {
		zeroNote = fmt.Sprintf(" %s with E_Θ(H) = 0 (no log) are grey.", plural(zeros, "cell"))
	}
	f.Caption = fmt.Sprintf("Residual state error E_Θ(H) at the end of the horizon (H = %d), with no intervention (Experiment 1), "+
		"for each condition number κ and memory size τ; colour on a log scale, the number in each cell the value. "+
		"%s stream, %s deletions; median over seeds %s (%s).%s",
		s.horizon, s.title(), s.mode, seedList(s.recs), plural(n, "record"), zeroNote)
	return f
}

// decayModes is the figure of the state error after deletion by deletion
// mode (paper: fig:experiment-1-quadratic-sampling-intervention).
func decayModes(s decaySet, o Options) *Figure {
	f := &Figure{
		ID:    "decay-modes-" + s.kind,
		Paper: "fig:experiment-1-quadratic-sampling-intervention",
		Title: fmt.Sprintf("%s stream: state error after deletion, by deletion mode", s.title()),
		Cols:  1,
	}
	var (
		groups [][]*experiment.Record
		names  []string
	)
	for _, m := range s.modes {
		if sub := s.at(s.tau, m, s.kappa, false); len(sub) > 0 {
			groups, names = append(groups, sub), append(names, m)
		}
	}
	recs := flatten(groups)
	if !hasSeries(recs) {
		f.Caption = noSeries
		return f
	}
	p, dropped := seriesPanel("", labelState, groups, names, etheta, o)
	p.Marks = []Mark{{Vertical: true, Value: float64(s.tau), Label: "τ", Style: -1, Dash: 1},
		{Vertical: true, Value: float64(2 * s.tau), Label: "2τ", Style: -1, Dash: 2}}
	f.Panels = []Panel{p}
	f.Caption = fmt.Sprintf("State-alignment error E_Θ(k) after deleting |U| samples chosen by each deletion mode (spec §4: "+
		"the most recent inserts, the oldest, uniformly at random, the largest gradients at t_del), with no intervention "+
		"(Experiment 1). %s stream, τ = %d (grey lines at k = τ and 2τ), κ = %s; pointwise median over seeds %s.%s",
		s.title(), s.tau, fmtKappa(s.kappa), seedList(recs), droppedNote(dropped))
	return f
}

// decayModeSummary compares deletion modes over every variant (paper:
// fig:experiment-1-deletion-mode-comparison, "Older data is harder to
// forget").
func decayModeSummary(recs []*experiment.Record, kinds []string) *Figure {
	f := &Figure{
		ID:    "decay-mode-summary",
		Paper: "fig:experiment-1-deletion-mode-comparison",
		Title: "Deletion modes: initial error and future state AUC after deletion",
		Cols:  2,
	}
	modes := distinct(recs, func(r *experiment.Record) string { return r.Config.Mode }, compareModes)
	p0 := Panel{Title: "initial state error", X: Axis{Label: labelMode, Ticks: categorical(modes)}, Y: Axis{Label: labelInitial, Log: true}}
	p1 := Panel{Title: "future state AUC", X: Axis{Label: labelMode, Ticks: categorical(modes)}, Y: Axis{Label: labelAUC, Log: true}}
	for ki, kind := range kinds {
		off := (float64(ki) - float64(len(kinds)-1)/2) * 0.08 // side by side, not on top of each other
		s0 := Series{Name: kind, Style: ki, Kind: LinePoints}
		s1 := Series{Name: kind, Style: ki, Kind: LinePoints}
		for i, m := range modes {
			sub := filter(recs, func(r *experiment.Record) bool { return r.Source.Kind == kind && r.Config.Mode == m })
			init, auc := make([]float64, len(sub)), make([]float64, len(sub))
			for j, r := range sub {
				init[j], auc[j] = baseline(r).Summary.InitialState, baseline(r).Summary.AUC
			}
			s0.X, s0.Y = append(s0.X, float64(i)+off), append(s0.Y, experiment.Median(init))
			s1.X, s1.Y = append(s1.X, float64(i)+off), append(s1.Y, experiment.Median(auc))
		}
		p0.Series, p1.Series = append(p0.Series, s0), append(p1.Series, s1)
	}
	_, n0 := floorPanel(&p0)
	_, n1 := floorPanel(&p1)
	f.Panels = []Panel{p0, p1}
	note := ""
	if n0+n1 > 0 {
		note = fmt.Sprintf(" %s of exactly 0 are drawn on the dotted line labelled 0, one decade below the smallest positive value.", plural(n0+n1, "median"))
	}
	f.Caption = fmt.Sprintf("Initial state error E_Θ(0) (left) and future state AUC Σₖ E_Θ(k) (right) after deletion with no "+
		"intervention (Experiment 1), by deletion mode, one line per stream kind; each point is the median over every "+
		"variant of that mode (all τ, κ and seeds: %s in all).%s", plural(len(recs), "record"), note)
	return f
}

// decayMass is the direct-memory-mass curve with the clearance time marked
// (paper: Experiment 1, M_direct(k) and ĥ_direct; Proposition "Direct
// memory is bounded for finite curvature pairs").
func decayMass(s decaySet, o Options) *Figure {
	f := &Figure{
		ID:    "decay-mass-" + s.kind,
		Title: fmt.Sprintf("%s stream: direct memory mass after deletion and its clearance time", s.title()),
		Cols:  1,
	}
	p := Panel{X: Axis{Label: labelSteps}, Y: Axis{Label: labelMass, Integer: true}}
	xmax, maxTau := 0, 0
	var parts []string
	var used []*experiment.Record
	groups, taus, names := s.byTau()
	for i, sub := range groups {
		tau := taus[i]
		r := sub[0] // the smallest seed: M_direct is a count, not averaged
		for _, q := range sub[1:] {
			if recordKey(q).seed < recordKey(r).seed {
				r = q
			}
		}
		m := baseline(r)
		if m.Series == nil {
			f.Caption = noSeries
			return f
		}
		used = append(used, r)
		maxTau = max(maxTau, tau)
		c := m.Summary.Clearance
		name := names[i]
		if c >= 0 {
			// ĥ goes into the legend, not beside the dashed line: labels
			// at the top of the lines collided with each other (ĥ = τ for
			// recent deletions, so they are close) and with the
			// staircases, which start at the top.
			xmax = max(xmax, c)
			p.Marks = append(p.Marks, Mark{Vertical: true, Value: float64(c), Style: i, Dash: 1})
			parts = append(parts, fmt.Sprintf("τ = %d: ĥ_direct = %d", tau, c))
			name = fmt.Sprintf("%s, ĥ = %d", name, c)
		} else {
			parts = append(parts, fmt.Sprintf("τ = %d: never cleared within H = %d", tau, r.Config.Horizon))
			name += ", not cleared"
		}
		ys := make(experiment.Floats, len(m.Series.Mdirect))
		xs := make(experiment.Floats, len(ys))
		for k, v := range m.Series.Mdirect {
			xs[k], ys[k] = float64(k), float64(v)
		}
		p.Series = append(p.Series, Series{Name: name, Style: i, Kind: Steps, X: xs, Y: ys})
	}
	// Show the first 3·τ_max steps (or to the last clearance and τ_max
	// beyond): the mass is 0 from the clearance on, and the whole horizon
	// would squeeze the staircase into the left edge.
	xmax = max(3*maxTau, xmax+maxTau)
	for j := range p.Series {
		if n := len(p.Series[j].X); n > xmax+1 {
			p.Series[j].X, p.Series[j].Y = p.Series[j].X[:xmax+1], p.Series[j].Y[:xmax+1]
		}
	}
	f.Panels = []Panel{p}
	f.Caption = fmt.Sprintf("Direct memory mass M_direct(k), the number of curvature pairs in memory whose source meets the "+
		"deletion set U, after deletion with no intervention (Experiment 1), one staircase per memory size τ; dashed lines "+
		"in its colour (and the legend) give the direct-clearance time ĥ_direct = min{k : M_direct(k) = 0} (%s). %s stream, %s deletions, κ = %s, seed %s; "+
		"the first %d steps are shown.",
		strings.Join(parts, "; "), s.title(), s.mode, fmtKappa(s.kappa), seedList(used), xmax+1)
	return f
}

func flatten(groups [][]*experiment.Record) []*experiment.Record {
	var out []*experiment.Record
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}
