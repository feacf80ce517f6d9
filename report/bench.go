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
		"Configuration %s: %s stream, τ = %d, %s deletions U = %v at t_del = %d, H = %d.%s%s%s",
		r.ID, r.Source.Kind, r.Config.Tau, r.Config.Mode, r.U, r.Config.TDel, r.Config.Horizon, zeroNote,
		droppedNote(dropped), thin)
	return f
}

// costAxes are the intervention costs of the efficiency figure.
var costAxes = []struct {
	title, label string
	get          func(r *experiment.Record, i int) (float64, bool)
}{
	{"events replayed", "events replayed + 1 (log scale)", func(r *experiment.Record, i int) (float64, bool) {
		return float64(r.Methods[i].EventsReplayed) + 1, true
	}},
	{"gradient evaluations", "extra gradient evaluations + 1 (log scale)", func(r *experiment.Record, i int) (float64, bool) {
		return float64(r.Methods[i].GradEvals) + 1, true
	}},
	{"wall time", "wall time of the intervention (µs, log scale)", func(r *experiment.Record, i int) (float64, bool) {
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
		floorPanel(&p, "AUC = 0: exact recovery")
		f.Panels = append(f.Panels, p)
	}
	f.Cols = len(f.Panels)
	wall := ""
	if noWall {
		wall = " The records hold no wall-clock times (--zero-timing), so the wall-time panel is left out."
	}
	f.Caption = fmt.Sprintf("Cost of each intervention — events replayed, extra gradient evaluations (SPEC §8: 2 per replayed "+
		"insert plus the operator's own) and wall time — against its future state AUC Σₖ E_Θ(k) (Experiment 2). "+
		"Small translucent markers are the %s of the %s stream (seeds %s), large markers the medians of each method. "+
		"Event and gradient counts are shifted by +1 so that zero counts sit at 1 on the log axis; AUC = 0 (exact recovery) is drawn on the "+
		"dotted floor line one decade below the smallest positive AUC.%s",
		plural(len(recs), "configuration"), kind, seedList(recs), wall)
	return f
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
	floorPanel(&pa, "AUC = 0: exact recovery")
	floorPanel(&pr, "ratio 0: exact recovery")
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
		"in the same configuration (right; SPEC §8: x/0 = ∞, 0/0 = 1), by deletion mode (Experiment 2, %s; "+
		"methods are spread sideways around each mode so that equal values stay visible). Zeros — exact recovery — are "+
		"drawn on the dotted floor line one decade below the smallest positive value.%s",
		plural(len(recs), "configuration"), inf)
	return f
}
