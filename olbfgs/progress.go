package olbfgs

import (
	"fmt"
	"math"
	"slices"

	"unlearn/internal/floatbits"
)

// ProgressWindow is the time constant, in inserts, of the recent
// progressive statistics: each is the mean over the inserts so far while
// there are at most ProgressWindow of them, then an exponentially
// weighted mean with weight 1/ProgressWindow on the newest insert.
const ProgressWindow = 1000

// progressMinInserts is the number of inserts a Progress needs before
// Diagnose judges it.
const progressMinInserts = 100

// Progress holds a learner's progressive validation statistics
// (Config.Progress): every insert is scored by the deployed parameters
// before its step — predict, then train — so each statistic is an honest
// estimate of the loss on unseen data (Blum, Kalai & Langford 1999,
// "Beating the hold-out: bounds for k-fold and progressive
// cross-validation"). The loss is the data term φ(u; y) of the model's
// loss (stream.Linear.Link), without the ridge, clamped to
// [0, MaxFloat64]; with Config.Standardize the features are standardized
// with statistics that already count the insert's features (not its
// label). Progress is part of the state: forgetting a sample exactly
// removes its contribution.
type Progress struct {
	// N is the number of inserts scored.
	N int
	// LossSum is Σ φ over them, in insert order.
	LossSum float64
	// Correct is the number of them whose predicted label was their label
	// (0 for a regression).
	Correct int
	// RecentLoss, RecentZeroLoss and RecentAccuracy are the recent means
	// (see ProgressWindow) of φ, of the zero model's φ(0; y) (the loss at
	// θ0, the baseline a learning model must beat: log 2 for logistic, log K
	// for multinomial, y²/2 for a regression), and of the indicator of a
	// correct prediction.
	RecentLoss, RecentZeroLoss, RecentAccuracy float64
	// RecentPredicted[k] and RecentLabels[k] are the recent shares of
	// inserts predicted as, and labelled, class k (stream.Linear.Class: for
	// logistic, class 0 is −1 and class 1 is +1). Empty for a regression.
	RecentPredicted, RecentLabels []float64
}

// add accounts for one insert.
func (p *Progress) add(pp pendingProgress) {
	p.N++
	a := 1 / float64(min(p.N, ProgressWindow))
	p.LossSum = math.Min(p.LossSum+pp.loss, math.MaxFloat64)
	hit := 0.0
	if pp.correct {
		p.Correct++
		hit = 1
	}
	p.RecentLoss += float64((pp.loss - p.RecentLoss) * a)
	p.RecentZeroLoss += float64((pp.zeroLoss - p.RecentZeroLoss) * a)
	if len(p.RecentPredicted) == 0 {
		return
	}
	p.RecentAccuracy += float64((hit - p.RecentAccuracy) * a)
	for k := range p.RecentPredicted {
		p.RecentPredicted[k] += float64((indicator(k == pp.predicted) - p.RecentPredicted[k]) * a)
		p.RecentLabels[k] += float64((indicator(k == pp.labelClass) - p.RecentLabels[k]) * a)
	}
}

func indicator(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (p *Progress) reset() {
	p.N, p.LossSum, p.Correct = 0, 0, 0
	p.RecentLoss, p.RecentZeroLoss, p.RecentAccuracy = 0, 0, 0
	clear(p.RecentPredicted)
	clear(p.RecentLabels)
}

func (p *Progress) copyFrom(src *Progress) {
	p.N, p.LossSum, p.Correct = src.N, src.LossSum, src.Correct
	p.RecentLoss, p.RecentZeroLoss, p.RecentAccuracy = src.RecentLoss, src.RecentZeroLoss, src.RecentAccuracy
	copy(p.RecentPredicted, src.RecentPredicted)
	copy(p.RecentLabels, src.RecentLabels)
}

func (p *Progress) equal(o *Progress) bool {
	return p.N == o.N && p.Correct == o.Correct &&
		floatbits.Equal([]float64{p.LossSum, p.RecentLoss, p.RecentZeroLoss, p.RecentAccuracy},
			[]float64{o.LossSum, o.RecentLoss, o.RecentZeroLoss, o.RecentAccuracy}) &&
		floatbits.Equal(p.RecentPredicted, o.RecentPredicted) && floatbits.Equal(p.RecentLabels, o.RecentLabels)
}

// Progress returns a copy of the learner's progressive statistics and
// true, or false without Config.Progress.
func (l *Learner) Progress() (Progress, bool) {
	if !l.cfg.Progress {
		return Progress{}, false
	}
	p := l.opt.prog
	p.RecentPredicted = slices.Clone(p.RecentPredicted)
	p.RecentLabels = slices.Clone(p.RecentLabels)
	return p, true
}

// MeanLoss returns LossSum/N (NaN when N = 0).
func (p Progress) MeanLoss() float64 { return p.LossSum / float64(p.N) }

// Accuracy returns Correct/N and true, or false for a regression or when
// N = 0.
func (p Progress) Accuracy() (float64, bool) {
	if len(p.RecentPredicted) == 0 || p.N == 0 {
		return 0, false
	}
	return float64(p.Correct) / float64(p.N), true
}

// Diagnosis is what [Progress.Diagnose] finds wrong with a learner.
type Diagnosis struct {
	// Diverged: the recent progressive loss is above the zero model's —
	// the learner predicts worse than it did at θ0, the mark of a step
	// size too large for the features' scale (the paper's learner on raw
	// features) — or not finite.
	Diverged bool
	// SingleClass: at least 99% of the recent predictions are of one
	// class (Class) while at most 90% of the recent labels are.
	SingleClass bool
	Class       int
}

// Diagnose judges the statistics once at least 100 inserts have been
// scored (the zero value before). The thresholds are in Diagnosis.
func (p Progress) Diagnose() Diagnosis {
	var d Diagnosis
	if p.N < progressMinInserts {
		return d
	}
	d.Diverged = !(p.RecentLoss <= p.RecentZeroLoss)
	for k, share := range p.RecentPredicted {
		if share >= 0.99 && p.RecentLabels[k] <= 0.9 {
			d.SingleClass, d.Class = true, k
		}
	}
	return d
}

// Warnings returns the Diagnosis as sentences for a user, naming classes
// with className (the label of class index k), or none.
func (p Progress) Warnings(className func(k int) string) []string {
	d := p.Diagnose()
	var out []string
	if d.Diverged {
		out = append(out, fmt.Sprintf("the progressive loss of the last %d inserts (%.4g) is above the zero model's (%.4g): "+
			"the learner is diverging or not learning — lower the step size (--eta), standardize the features "+
			"(--standardize), or use --profile practitioner", min(p.N, ProgressWindow), p.RecentLoss, p.RecentZeroLoss))
	}
	if d.SingleClass {
		out = append(out, fmt.Sprintf("the model predicts a single class: %.1f%% of the last %d inserts were predicted as %s, "+
			"while %.1f%% of them are; lower the step size or use --profile practitioner",
			100*p.RecentPredicted[d.Class], min(p.N, ProgressWindow), className(d.Class), 100*p.RecentLabels[d.Class]))
	}
	return out
}
