package report

import (
	"fmt"
	"slices"

	"unlearn/experiment"
)

// Set is the figures of a set of records, and those that could not be
// drawn with the reason.
type Set struct {
	Figures []*Figure  `json:"figures"`
	Omitted []Omission `json:"omitted,omitempty"`
}

// Figures computes the data of every figure of the paper's results section
// that the records support: Experiment 1's from records of
// experiment.ExperimentDecay (unlearn decay), Experiment 2's from the
// others (unlearn bench, merge, run). Figures drawn from per-step series
// need records that kept them (decay keeps them by default, bench for the
// configurations of [SeriesConfigs]); the others use summaries only.
// Nothing is computed but aggregates of the records: medians over seeds or
// configurations, as each figure's caption says.
//
// It returns an error wrapping ErrRecords for no records, a record without
// methods, or records of one experiment with different methods.
func Figures(recs []*experiment.Record, opt Options) (*Set, error) {
	o := opt.resolve()
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: no records", ErrRecords)
	}
	var decay, bench []*experiment.Record
	for _, r := range recs {
		if len(r.Methods) == 0 {
			return nil, fmt.Errorf("%w: record %d (%s) has no methods", ErrRecords, r.Index, r.ID)
		}
		if r.Experiment == experiment.ExperimentDecay {
			decay = append(decay, r)
		} else {
			bench = append(bench, r)
		}
	}
	set := &Set{}
	if len(decay) > 0 {
		figs, om := decayFigures(decay, o)
		set.Figures, set.Omitted = append(set.Figures, figs...), append(set.Omitted, om...)
	}
	if len(bench) > 0 {
		names := bench[0].MethodNames()
		for _, r := range bench[1:] {
			if !slices.Equal(r.MethodNames(), names) {
				return nil, fmt.Errorf("%w: record %d (%s) has methods %v, record %d (%s) has %v",
					ErrRecords, r.Index, r.ID, r.MethodNames(), bench[0].Index, bench[0].ID, names)
			}
		}
		figs, om := benchFigures(bench, o)
		set.Figures, set.Omitted = append(set.Figures, figs...), append(set.Omitted, om...)
	}
	return set, nil
}
