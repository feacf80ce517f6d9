package olbfgs

import (
	"fmt"
	"math"
	"strconv"

	"unlearn/stream"
)

// options writes the option blocks of a v2 snapshot (after "deleted"): the
// standardization statistics, the average and the progressive statistics,
// each only when its option is on.
func (e *snapshotWriter) options(l *Learner) {
	o := &l.opt
	if l.cfg.Standardize {
		e.str(",\n \"standardization\": {\n  \"n\": ")
		e.buf = strconv.AppendInt(e.buf, int64(o.n), 10)
		e.str(",\n  \"mean\": ")
		e.floats(o.mean, 2, "standardization.mean")
		e.str(",\n  \"m2\": ")
		e.floats(o.m2, 2, "standardization.m2")
		e.str("\n }")
	}
	if l.cfg.Average {
		e.str(",\n \"average\": {\n  \"n\": ")
		e.buf = strconv.AppendInt(e.buf, int64(o.avgN), 10)
		e.str(",\n  \"w\": ")
		e.floats(o.avg, 2, "average.w")
		e.str("\n }")
	}
	if l.cfg.Progress {
		p := &o.prog
		e.str(",\n \"progress\": {\n  \"n\": ")
		e.buf = strconv.AppendInt(e.buf, int64(p.N), 10)
		for _, f := range []struct {
			name string
			v    float64
		}{{"loss_sum", p.LossSum}} {
			e.str(",\n  \"" + f.name + "\": ")
			e.float(f.v, "progress."+f.name)
		}
		e.str(",\n  \"correct\": ")
		e.buf = strconv.AppendInt(e.buf, int64(p.Correct), 10)
		for _, f := range []struct {
			name string
			v    float64
		}{{"recent_loss", p.RecentLoss}, {"recent_zero_loss", p.RecentZeroLoss}, {"recent_accuracy", p.RecentAccuracy}} {
			e.str(",\n  \"" + f.name + "\": ")
			e.float(f.v, "progress."+f.name)
		}
		e.str(",\n  \"recent_predicted\": ")
		e.floatsOrEmpty(p.RecentPredicted, 2, "progress.recent_predicted")
		e.str(",\n  \"recent_labels\": ")
		e.floatsOrEmpty(p.RecentLabels, 2, "progress.recent_labels")
		e.str("\n }")
	}
}

// float writes one finite number.
func (e *snapshotWriter) float(x float64, field string) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		if e.err == nil {
			e.err = fmt.Errorf("%w: field %q is %v (JSON has no non-finite numbers)", ErrSnapshot, field, x)
		}
		return
	}
	e.buf = appendFloatJSON(e.buf, x)
}

// floatsOrEmpty writes v, or [] for a nil v.
func (e *snapshotWriter) floatsOrEmpty(v []float64, depth int, field string) {
	if len(v) == 0 {
		e.str("[]")
		return
	}
	e.floats(v, depth, field)
}

// loadOptions checks the option blocks of a decoded snapshot against the
// configuration and copies them into l (a new learner of that
// configuration), through SetOptionState. The format tag has been checked
// to match cfg.HasOptions().
func loadOptions(l *Learner, s *snapshot) error {
	cfg := l.cfg
	v2 := cfg.HasOptions()
	for _, f := range []struct {
		name          string
		present, want bool
	}{
		{"inserts", s.Inserts != nil, v2},
		{"standardization", s.Standardization != nil, cfg.Standardize},
		{"average", s.Average != nil, cfg.Average},
		{"progress", s.Progress != nil, cfg.Progress},
	} {
		switch {
		case f.present && !f.want:
			return fmt.Errorf("%w: field %q: present, but the configuration has no such option", ErrSnapshot, f.name)
		case !f.present && f.want:
			return fmt.Errorf("%w: field %q: missing", ErrSnapshot, f.name)
		}
	}
	if !v2 {
		return nil
	}
	if *s.Inserts > s.T {
		return fmt.Errorf("%w: field %q: %d: want inserts ≤ t = %d", ErrSnapshot, "inserts", *s.Inserts, s.T)
	}
	st := OptionState{Inserts: *s.Inserts}
	if b := s.Standardization; b != nil {
		st.StandardizeN, st.Mean, st.M2 = b.N, b.Mean, b.M2
	}
	if b := s.Average; b != nil {
		st.AverageN, st.Average = b.N, b.W
	}
	if b := s.Progress; b != nil {
		st.Progress = Progress{N: b.N, LossSum: b.LossSum, Correct: b.Correct, RecentLoss: b.RecentLoss,
			RecentZeroLoss: b.RecentZeroLoss, RecentAccuracy: b.RecentAccuracy,
			RecentPredicted: b.RecentPredicted, RecentLabels: b.RecentLabels}
	}
	if err := l.SetOptionState(st); err != nil {
		return fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	return nil
}

// headerMatches reports whether the stream header h describes the loss
// of a learner with configuration c: kind, feature dimension and number
// of outputs.
func headerMatches(h stream.Header, kind stream.Kind, c Config) bool {
	return h.Kind == kind && h.D == c.Dim && (h.K == c.Outputs || (h.K == 0 && c.Outputs == 0))
}
