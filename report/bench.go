package report

import (
	"fmt"
	"math"
	"strings"

	"unlearn/experiment"
)

// benchFigures returns the figures of Experiment 2 (the state-aware
// benchmark) from its records — a grid, merged shards or a single run —
// and the figures it could not draw.
func benchFigures(recs []*experiment.Record, o Options) ([]*Figure, []Omission) {
	var (
		figs    []*Figure
		omitted []Omission
	)
	if f := benchTrajectories(recs, o); len(f.Panels) > 0 {
		figs = append(figs, f)
	} else {
		omitted = append(omitted, Omission{ID: f.ID, Reason: f.Caption})
	}
	kinds := distinct(recs, func(r *experiment.Record) string { return r.Source.Kind }, compareKinds)
	for _, kind := range kinds {
		figs = append(figs, benchEfficiency(kind, filter(recs, func(r *experiment.Record) bool { return r.Source.Kind == kind })))
	}
	figs = append(figs, benchModes(recs))
	return figs, omitted
}

// methodsOf returns the method names and labels of the records (all have
// the same methods in the same order: experiment.BuildTables checks it).
func methodsOf(recs []*experiment.Record) (names, labels []string) {
	for _, m := range recs[0].Methods {
		names, labels = append(names, m.Name), append(labels, m.Label)
	}
	return names, labels
}

// benchTrajectories is the figure of parameter and memory error over the
// post-deletion horizon for every intervention, for one configuration
// (paper: the second fig:experiment-1-quadratic-state-error-decomposition,
// "We chart the parameter and memory error for 4500 steps following the
// deletion").
func benchTrajectories(recs []*experiment.Record, o Options) *Figure {
	f := &Figure{
		ID:    "bench-trajectories",
		Paper: "fig:experiment-1-quadratic-state-error-decomposition",
		Cols:  2,
	}
	var r *experiment.Record
	for _, q := range recs {
		if hasSeries([]*experiment.Record{q}) && (r == nil || compareKeys(recordKey(q), recordKey(r), o.Reference) < 0) {
			r = q
		}
	}
	if r == nil {
		f.Caption = noSeries
		return f
	}
	f.Title = "Parameter and memory error after each intervention, " + r.ID
	// Horizons of a hundred steps and more span decades of k: a log x axis
	// (of k + 1, for k = 0) shows the early steps, where the methods
	// differ, beside the late ones.
	logX := r.Config.Horizon+1 >= 100
	xAxis := Axis{Label: labelSteps}
	if logX {
		xAxis = Axis{Label: "steps after deletion k + 1 (events, log scale)", Log: true}
	}
	pw := Panel{Title: "parameter error", X: xAxis, Y: Axis{Label: labelParam, Log: true}}
	pz := Panel{Title: "memory-operator error", X: xAxis, Y: Axis{Label: labelMemory, Log: true}}
	var zero []string
	dropped := 0
	for i, m := range r.Methods {
		if allNonPositive(m.Series.Ew) && allNonPositive(m.Series.EZ) {
			zero = append(zero, m.Label)
			continue
		}
		for _, pp := range []struct {
			p   *Panel
			get metric
		}{{&pw, ew}, {&pz, ez}} {
			y := pp.get(m.Series)
			if allNonPositive(y) {
				continue
			}
			xs, ys, d := stepSeries(y, o.MaxPoints, true)
			if logX {
				xs, ys, d = logStepSeries(y, o.MaxPoints)
			}
			dropped += d
			pp.p.Series = append(pp.p.Series, Series{Name: m.Label, Style: i, Kind: Line, X: xs, Y: ys})
		}
	}
	f.Panels = []Panel{pw, pz}
	roundOff := ""
	if lvl := plateau(r); lvl > 0 && lvl < roundOffLevel {
		roundOff = fmt.Sprintf(" The plateau the lines end on, about %s, is floating-point round-off, not a residual error: "+
			"double precision resolves relative differences down to machine ε ≈ 2.2·10⁻¹⁶, so errors there are "+
			"indistinguishable from 0.", g(lvl))
	}
	zeroNote := ""
	if len(zero) > 0 {
		zeroNote = fmt.Sprintf(" Not drawn, being exactly 0 at every step (exact recovery): %s.", strings.Join(zero, ", "))
	}
	thin := ""
	switch n := r.Config.Horizon + 1; {
	case logX && n > o.MaxPoints:
		thin = fmt.Sprintf(" The x axis is k + 1 on a log scale; lines are drawn through at most %d steps, evenly spaced in log(k + 1).", o.MaxPoints)
	case logX:
		thin = " The x axis is k + 1 on a log scale."
	case n > o.MaxPoints:
		thin = fmt.Sprintf(" Lines are drawn through every %d-th step.", (n+o.MaxPoints-1)/o.MaxPoints)
	}
	f.Caption = fmt.Sprintf("Parameter error E_w(k) (left) and memory-operator error E_Z(k) (right) of each intervention "+
		"against the counterfactual over the post-deletion horizon (Experiment 2), all propagated on the same future events. "+
		"Configuration %s: %s stream, τ = %d, %s deletions U = %v at t_del = %d, H = %d.%s%s%s%s",
		r.ID, r.Source.Kind, r.Config.Tau, r.Config.Mode, r.U, r.Config.TDel, r.Config.Horizon, zeroNote,
		droppedNote(dropped), thin, roundOff)
	return f
}

// roundOffLevel is the error below which the trajectory figure calls a
// final plateau round-off: 10⁻¹², about 5000 machine epsilons (2.2·10⁻¹⁶)
// on errors of states whose entries are of order 1, as in the paper's
// streams; a genuine residual error of a finite memory decays
// geometrically through this level instead of levelling off at it.
const roundOffLevel = 1e-12

// plateau returns the level the record's error series end on: the largest,
// over methods and over E_w and E_Z, of the median of the positive values
// in the last tenth of the horizon (0 when there are none).
func plateau(r *experiment.Record) float64 {
	lvl := 0.0
	for _, m := range r.Methods {
		if m.Series == nil {
			continue
		}
		for _, y := range [][]float64{ew(m.Series), ez(m.Series)} {
			if len(y) == 0 {
				continue
			}
			tail := y[len(y)-max(1, len(y)/10):]
			var pos []float64
			for _, v := range tail {
				if v > 0 {
					pos = append(pos, v)
				}
			}
			if len(pos) > 0 {
				lvl = math.Max(lvl, experiment.Median(pos))
			}
		}
	}
	return lvl
}

// costAxes are the intervention costs of the efficiency figure.
var costAxes = []struct {
	title, label string
	// count: a count shifted by +1, where a zero cost sits at exactly 1.
	count bool
	get   func(r *experiment.Record, i int) (float64, bool)
}{
	{"events replayed", "events replayed + 1 (log scale)", true, func(r *experiment.Record, i int) (float64, bool) {
		return float64(r.Methods[i].EventsReplayed) + 1, true
	}},
	{"gradient evaluations", "extra gradient evaluations + 1 (log scale)", true, func(r *experiment.Record, i int) (float64, bool) {
		return float64(r.Methods[i].GradEvals) + 1, true
	}},
	{"wall time", "wall time of the intervention (µs, log scale)", false, func(r *experiment.Record, i int) (float64, bool) {
		if r.Timing == nil || i >= len(r.Timing.Methods) {
			return 0, false
		}
		return float64(r.Timing.Methods[i].Nanoseconds()) / 1e3, true
	}},
}

// benchEfficiency is the efficiency figure of one stream kind: each
// intervention's cost (events replayed, gradient evaluations, wall time)
// against its future state AUC (paper: fig:experiment-2-quadratic-
// efficiency-plot and fig:experiment-2-logistic-efficiency-plot).
func benchEfficiency(kind string, recs []*experiment.Record) *Figure {
	f := &Figure{
		ID:    "bench-efficiency-" + kind,
		Paper: "fig:experiment-2-" + kind + "-efficiency-plot",
		Title: fmt.Sprintf("%s stream: intervention cost against future state AUC", kindTitle(kind)),
	}
	_, labels := methodsOf(recs)
	noWall := false
	for _, ax := range costAxes {
		p := Panel{Title: ax.title, X: Axis{Label: ax.label, Log: true}, Y: Axis{Label: labelAUC, Log: true}}
		ok := true
		for i := range labels {
			cloud := Series{Style: i, Kind: Cloud}
			var cs, as []float64
			for _, r := range recs {
				c, has := ax.get(r, i)
				if !has {
					ok = false
					break
				}
				a := r.Methods[i].Summary.AUC
				cloud.X, cloud.Y = append(cloud.X, c), append(cloud.Y, a)
				cs, as = append(cs, c), append(as, a)
			}
			if !ok {
				break
			}
			p.Series = append(p.Series, cloud, Series{Name: labels[i], Style: i, Kind: Points,
				X: experiment.Floats{experiment.Median(cs)}, Y: experiment.Floats{experiment.Median(as)}})
		}
		if !ok {
			noWall = true
			continue
		}
		if ax.count {
			spreadZeroCost(&p)
		}
		floorPanel(&p)
		f.Panels = append(f.Panels, p)
	}
	f.Cols = len(f.Panels)
	wall := ""
	if noWall {
		wall = " The records hold no wall-clock times (--zero-timing), so the wall-time panel is left out."
	}
	f.Caption = fmt.Sprintf("Cost of each intervention — events replayed, extra gradient evaluations (spec §8: 2 per replayed "+
		"insert plus the operator's own) and wall time — against its future state AUC Σₖ E_Θ(k) (Experiment 2). "+
		"Small translucent markers are the %s of the %s stream (seeds %s), large markers the medians of each method. "+
		"Event and gradient counts are shifted by +1 so that zero counts sit at 1 on the log axis, where the methods that cost "+
		"nothing are spread sideways (each by a fixed factor) so that none hides another; AUC = 0 (exact recovery) is drawn on the "+
		"dotted line labelled 0, one decade below the smallest positive AUC.%s",
		plural(len(recs), "configuration"), kind, seedList(recs), wall)
	return f
}

// zeroCostSpread is the step, in decades, between the columns of
// zero-cost methods in the efficiency figure: about 20 points apart at the
// figure's scale, wider than a marker.
const zeroCostSpread = 0.08

// spreadZeroCost spreads the methods whose every cost is 0 (x = 1 on the
// +1-shifted log axis) sideways around x = 1, each method's cloud and median
// by the same factor 10^(±j·zeroCostSpread), in method order; without it
// no-op, parameter-only, contaminated pair drop, full reset and drop and
// refill sit in one column and hide each other. The series come in pairs
// (cloud, median) per method, as benchEfficiency builds them.
func spreadZeroCost(p *Panel) {
	var zero []int // indices of the cloud series of zero-cost methods
	for i := 0; i+1 < len(p.Series); i += 2 {
		all := len(p.Series[i].X) > 0
		for _, x := range p.Series[i].X {
			all = all && x == 1
		}
		if all {
			zero = append(zero, i)
		}
	}
	if len(zero) < 2 {
		return
	}
	for j, i := range zero {
		f := math.Pow(10, (float64(j)-float64(len(zero)-1)/2)*zeroCostSpread)
		for _, s := range []*Series{&p.Series[i], &p.Series[i+1]} {
			xs := make(experiment.Floats, len(s.X))
			for k, x := range s.X {
				xs[k] = x * f
			}
			s.X = xs
		}
	}
}

// benchModes is the figure of each intervention's future state error by
// deletion mode (paper: fig:state-aware-grid-errors, "Window replay
// interventions and contaminated pair drops work well when the deleted
// data is still in direct memory").
func benchModes(recs []*experiment.Record) *Figure {
	f := &Figure{
		ID:    "bench-modes",
		Paper: "fig:state-aware-grid-errors",
		Title: "Future state error of each intervention, by deletion mode",
		Cols:  2,
	}
	names, labels := methodsOf(recs)
	modes := distinct(recs, func(r *experiment.Record) string { return r.Config.Mode }, compareModes)
	base := -1
	for i, n := range names {
		if n == experiment.BaselineName {
			base = i
		}
	}
	pa := Panel{Title: "future state AUC", X: Axis{Label: labelMode, Ticks: categorical(modes)}, Y: Axis{Label: labelAUC, Log: true}}
	pr := Panel{Title: "AUC ratio vs. no-op", X: Axis{Label: labelMode, Ticks: categorical(modes)},
		Y:     Axis{Label: "AUC ÷ no-op's AUC (log scale)", Log: true},
		Marks: []Mark{{Value: 1, Label: "as no-op", Style: -1, Dash: 1}}}
	infinite := 0
	for i := range names {
		off := (float64(i) - float64(len(names)-1)/2) * 0.07 // spread the methods around each mode
		sa := Series{Name: labels[i], Style: i, Kind: LinePoints}
		sr := Series{Name: labels[i], Style: i, Kind: LinePoints}
		for j, m := range modes {
			var aucs, ratios []float64
			for _, r := range recs {
				if r.Config.Mode != m {
					continue
				}
				aucs = append(aucs, r.Methods[i].Summary.AUC)
				if base >= 0 {
					ratios = append(ratios, experiment.AUCRatio(r.Methods[i].Summary.AUC, r.Methods[base].Summary.AUC))
				}
			}
			ratio := experiment.Median(ratios)
			if math.IsInf(ratio, 0) {
				infinite++
				ratio = math.NaN()
			}
			sa.X, sa.Y = append(sa.X, float64(j)+off), append(sa.Y, experiment.Median(aucs))
			sr.X, sr.Y = append(sr.X, float64(j)+off), append(sr.Y, ratio)
		}
		pa.Series, pr.Series = append(pa.Series, sa), append(pr.Series, sr)
	}
	floorPanel(&pa)
	floorPanel(&pr)
	f.Panels = []Panel{pa}
	if base >= 0 {
		f.Panels = append(f.Panels, pr)
	} else {
		f.Cols = 1
	}
	inf := ""
	if infinite > 0 {
		inf = fmt.Sprintf(" %s of ∞ (no-op's AUC 0, the method's positive) are left out.", plural(infinite, "median ratio"))
	}
	f.Caption = fmt.Sprintf("Median future state AUC Σₖ E_Θ(k) of each intervention (left) and its median ratio to no-op's AUC "+
		"in the same configuration (right; spec §8: x/0 = ∞, 0/0 = 1), by deletion mode (Experiment 2, %s; "+
		"methods are spread sideways around each mode so that equal values stay visible). Zeros — exact recovery — are "+
		"drawn on the dotted line labelled 0, one decade below the smallest positive value.%s",
		plural(len(recs), "configuration"), inf)
	return f
}
