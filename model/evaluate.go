package model

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"unlearn/stream"
)

// Evaluation is a model's utility on labelled held-out rows: the paper's
// held-out loss and what a practitioner reads first. Metrics that do not
// apply (accuracy for regression, AUC for a data set of one class) are nil.
type Evaluation struct {
	// N is the number of rows (the inserts of the data; deletes are
	// skipped).
	N int `json:"n"`
	// Loss is the mean per-sample loss of the model's loss, summed in row
	// order: the held-out loss of docs/spec.md, store.Evaluate's bit for
	// bit. For the paper's learner (1/N)·Σ ℓ_z(w) (stream.Loss.Value, its
	// ridge term (λ/2)‖w‖² included); for a learner with options or
	// several outputs the data term at the deployed parameters' scores
	// (stream.Linear.Link) plus the ridge of the deployed weights
	// (olbfgs.Learner.DeployedRidge).
	Loss float64 `json:"loss"`
	// Accuracy is the fraction of rows whose predicted class is their
	// class (a binary classifier predicts the positive class when its
	// score is ≥ 0, a multinomial one the class of the largest score).
	Accuracy *float64 `json:"accuracy,omitempty"`
	// LogLoss is the mean cross-entropy −(1/N)·Σ log p(class of the row),
	// without the ridge term: for a binary classifier
	// (1/N)·Σ log(1 + exp(−y·u)), u its score; for a multinomial one
	// (1/N)·Σ (log Σ_k exp(u_k) − u_class).
	LogLoss *float64 `json:"log_loss,omitempty"`
	// AUC is the area under the ROC curve of a binary classifier's score
	// wᵀx: the probability that a positive row scores above a negative
	// one, ties counting one half (Hanley and McNeil, "The meaning and use
	// of the area under a receiver operating characteristic (ROC) curve",
	// Radiology 143, 1982: the Mann–Whitney statistic). Exact: the count of
	// ordered pairs is an integer, divided once. nil when the rows hold
	// one class only.
	AUC *float64 `json:"auc,omitempty"`
	// RMSE is the root mean squared error √((1/N)·Σ (wᵀx − y)²) of a
	// regression.
	RMSE *float64 `json:"rmse,omitempty"`
	// Classes holds, for a classifier, each class's support, predictions
	// and recall, in the order of Model.Classes.
	Classes []ClassMetrics `json:"classes,omitempty"`
	// Confusion is the confusion matrix of a classifier: Confusion[i][j]
	// rows of class i predicted as class j.
	Confusion [][]int `json:"confusion,omitempty"`
	// Scores is the observed spread of the model's scores xᵀw over the
	// rows (every output's score of a multinomial model): what the noise
	// of a release is compared with ([Evaluation.NoiseOnScores]).
	Scores Spread `json:"scores"`

	// rowNorms are the norms ‖x‖ of the rows as the model scores them —
	// the features after the contract's scaling, with the intercept's
	// constant feature 1 — for NoiseOnScores.
	rowNorms []float64
}

// Spread summarizes a distribution over the held-out rows: its standard
// deviation and the 99th percentile of its absolute value.
type Spread struct {
	// SD is the standard deviation (population: divided by the count).
	SD float64 `json:"sd"`
	// P99 is the 99th percentile of the absolute value (nearest rank, for
	// observed values; the exact quantile of the distribution implied by
	// σ, for the noise).
	P99 float64 `json:"p99_abs"`
}

// P99Factor is z₀.₉₉₅ = Φ⁻¹(0.995): the 99th percentile of |Z| for a
// standard normal Z, so σ·B·P99Factor bounds the 99th percentile of |xᵀn|
// for every row with ‖x‖ ≤ B.
const P99Factor = 2.5758293035489004

// NoiseOnScores returns the spread over the held-out rows of the effect
// xᵀn of Gaussian noise n ~ N(0, σ²I) on a score — the distribution a
// release's certificate implies, NOT an observation (the noise itself is
// not available to anyone: n = released w − un-noised w). Each row's xᵀn is
// N(0, σ²‖x‖²); over the rows, xᵀn follows the mixture of those normals,
// whose standard deviation is σ·√(mean ‖x‖²) and whose 99th percentile of
// |xᵀn| is the q with mean_i erfc(q/(√2·σ‖x_i‖)) = 0.01, found by
// bisection (to a relative 10⁻¹²). It panics if σ < 0.
func (ev *Evaluation) NoiseOnScores(sigma float64) Spread {
	if sigma < 0 {
		panic("model: NoiseOnScores: negative σ")
	}
	if len(ev.rowNorms) == 0 || sigma == 0 {
		return Spread{}
	}
	var sq, top float64
	for _, r := range ev.rowNorms {
		sq += r * r
		top = max(top, r)
	}
	n := float64(len(ev.rowNorms))
	out := Spread{SD: sigma * math.Sqrt(sq/n)}
	tail := func(q float64) float64 {
		var t float64
		for _, r := range ev.rowNorms {
			if r > 0 {
				t += math.Erfc(q / (math.Sqrt2 * sigma * r))
			}
		}
		return t / n
	}
	lo, hi := 0.0, P99Factor*sigma*top // every row's tail is ≤ 0.01 at hi
	for hi-lo > 1e-12*hi {
		mid := (lo + hi) / 2
		if tail(mid) > 0.01 {
			lo = mid
		} else {
			hi = mid
		}
	}
	out.P99 = hi
	return out
}

// spreadOf returns the observed spread of values (it sorts their absolute
// values in place).
func spreadOf(values []float64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	var mean float64
	for _, v := range values {
		mean += v
	}
	mean /= float64(len(values))
	var ss float64
	for i, v := range values {
		ss += (v - mean) * (v - mean)
		values[i] = math.Abs(v)
	}
	slices.Sort(values)
	rank := int(math.Ceil(0.99*float64(len(values)))) - 1
	return Spread{SD: math.Sqrt(ss / float64(len(values))), P99: values[max(rank, 0)]}
}

// ClassMetrics describes one class of an [Evaluation].
type ClassMetrics struct {
	// Label is the class's name.
	Label string `json:"label"`
	// Support is the number of rows of the class; Predicted the number of
	// rows predicted as it.
	Support   int `json:"support"`
	Predicted int `json:"predicted"`
	// Recall is the fraction of the class's rows predicted as it; nil when
	// it has no row.
	Recall *float64 `json:"recall"`
}

// Evaluate evaluates the model on the labelled rows of src, read one at a
// time, and returns the held-out loss, and for a classifier the accuracy,
// log loss, ROC AUC (binary), per-class recall and confusion matrix, for a
// regression the RMSE. The loss and the accuracy are computed as the
// model store's evaluation computes them (store.Evaluate), bit for bit,
// and the accuracy is that of [WritePredictions]'s labels. Memory is
// constant in the number of rows, except for a binary classifier's AUC,
// which keeps each row's score and class (16 bytes a row) to sort them.
// Errors: src's; a row whose payload is not valid for the model's loss, or
// cannot be scored, wrapping ErrRow with its id; ErrEmpty without a row.
func Evaluate(m *Model, src Rows) (*Evaluation, error) {
	loss, w := m.state.Loss(), m.state.W()
	classify := m.kind != stream.KindRegression
	k := len(m.classes)
	ev := &Evaluation{}
	if classify {
		ev.Confusion = make([][]int, k)
		for i := range ev.Confusion {
			ev.Confusion[i] = make([]int, k)
		}
	}
	var (
		sum, logLoss, sq float64
		correct          int
		ranked           []scored
	)
	s, c := make([]float64, m.k), make([]float64, m.k)
	var all []float64 // every score, for Scores
	intercept := m.state.Config().Intercept
	for {
		e, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if e.Op != stream.Insert {
			continue
		}
		if field, err := loss.CheckSample(e.Sample); err != nil {
			return nil, fmt.Errorf("%w: row with id %d: field %q: %w", ErrRow, e.ID, field, err)
		}
		m.scores(s, e.Sample)
		if slices.ContainsFunc(s, math.IsNaN) {
			return nil, fmt.Errorf("%w: row with id %d: the score is not a number", ErrRow, e.ID)
		}
		all = append(all, s...)
		norm2 := floats.Dot(e.Sample.V, e.Sample.V)
		if intercept {
			norm2++
		}
		ev.rowNorms = append(ev.rowNorms, math.Sqrt(norm2))
		if m.options {
			sum += m.lin.Link(c, s, e.Sample.S) + m.ridge
		} else {
			sum += loss.Value(w, e.Sample)
		}
		ev.N++
		if !classify {
			r := s[0] - e.Sample.S
			sq += r * r
			continue
		}
		truth, pred := m.classOf(e.Sample.S), decide(s)
		ev.Confusion[truth][pred]++
		if truth == pred {
			correct++
		}
		logLoss += crossEntropy(s, truth)
		if len(s) == 1 {
			ranked = append(ranked, scored{s[0], truth == 1})
		}
	}
	if ev.N == 0 {
		return nil, fmt.Errorf("%w: no rows to evaluate on", ErrEmpty)
	}
	n := float64(ev.N)
	ev.Loss = sum / n
	ev.Scores = spreadOf(all)
	if !classify {
		ev.RMSE = ptr(math.Sqrt(sq / n))
		return ev, nil
	}
	ev.Accuracy = ptr(float64(correct) / n)
	ev.LogLoss = ptr(logLoss / n)
	if ranked != nil {
		if a, ok := auc(ranked); ok {
			ev.AUC = ptr(a)
		}
	}
	ev.Classes = make([]ClassMetrics, k)
	for i := range ev.Classes {
		c := ClassMetrics{Label: m.classes[i]}
		for j := range k {
			c.Support += ev.Confusion[i][j]
			c.Predicted += ev.Confusion[j][i]
		}
		if c.Support > 0 {
			c.Recall = ptr(float64(ev.Confusion[i][i]) / float64(c.Support))
		}
		ev.Classes[i] = c
	}
	return ev, nil
}

func ptr(v float64) *float64 { return &v }

// crossEntropy returns −log p(class) of the raw scores: for one score s
// (binary, class 1 positive) log(1 + e^{∓s}) in its stable form
// (stream.Softplus); for K scores log Σ_j e^{s_j} − s_class, with the
// largest score factored out.
func crossEntropy(s []float64, class int) float64 {
	if len(s) == 1 {
		if class == 1 {
			return stream.Softplus(-s[0])
		}
		return stream.Softplus(s[0])
	}
	top := slices.Max(s)
	var sum float64
	for _, v := range s {
		sum += math.Exp(v - top)
	}
	return (top - s[class]) + math.Log(sum)
}

// scored is one row of a binary AUC: its score and whether it is positive.
type scored struct {
	s   float64
	pos bool
}

// auc returns the ROC AUC of the rows, sorting them in place, and false
// when they hold one class only. With the rows sorted by score and grouped
// by equal score, a group's positives rank above every negative of the
// groups before it and tie with its own negatives, so
//
//	2·(n₊n₋)·AUC = Σ_groups 2·p·(negatives before) + p·q
//
// (p positives, q negatives in the group): an integer, exact in uint64
// for n below 2³², divided once by 2·n₊n₋, so the AUC is correctly rounded
// while 2·n₊n₋ < 2⁵³ (n below 1.3·10⁸ rows).
func auc(rows []scored) (float64, bool) {
	slices.SortFunc(rows, func(a, b scored) int { return cmp.Compare(a.s, b.s) })
	var twice, negBefore, pos, neg uint64
	for i := 0; i < len(rows); {
		j := i
		var p, q uint64
		for ; j < len(rows) && rows[j].s == rows[i].s; j++ {
			if rows[j].pos {
				p++
			} else {
				q++
			}
		}
		twice += 2*p*negBefore + p*q
		negBefore += q
		pos += p
		neg += q
		i = j
	}
	if pos == 0 || neg == 0 {
		return 0, false
	}
	return float64(twice) / (2 * float64(pos) * float64(neg)), true
}

// ReportFormat is the format tag of [Report].
const ReportFormat = "unlearn-evaluation/v1"

// Report is the JSON document of `unlearn evaluate --json`
// (docs/schemas/unlearn-evaluation-v1.schema.json): the held-out data and
// each model's evaluation.
type Report struct {
	// Format is ReportFormat.
	Format string `json:"format"`
	// Data is the held-out file as given.
	Data string `json:"data"`
	// Models are the evaluated models, in the order given.
	Models []ModelReport `json:"models"`
}

// ModelReport is one model's evaluation in a [Report]: its name (the
// store's "current state" or "exact counterfactual", a snapshot's or a
// release's file), the norm ‖w‖ of its deployed parameters — those it
// predicts with (olbfgs.Learner.Deployed): the average of the iterates for
// a learner that averages, else the last iterate; intercepts included —
// and its metrics.
type ModelReport struct {
	Model string  `json:"model"`
	NormW float64 `json:"norm_w"`
	Evaluation
	// Sigma is the σ the noise of a noised release was drawn with (its
	// verified certificate's sigma_applied); 0 (absent) for other models and
	// for a release used unverified.
	Sigma float64 `json:"sigma,omitempty"`
	// NoiseOnScores is the spread over the rows of the noise's effect xᵀn
	// on a score that Sigma implies (Evaluation.NoiseOnScores: a
	// distribution, not an observation), beside Evaluation.Scores, the
	// observed spread of the release's own scores. Present with Sigma.
	NoiseOnScores *Spread `json:"noise_on_scores,omitempty"`
	// Warnings are what the evaluation shows is wrong with the model, in
	// words: it predicts a single class ([Evaluation.SingleClass]), or the
	// noise of a release dominates its scores ([NoiseDominates]).
	Warnings []string `json:"warnings,omitempty"`
}

// SingleClass reports whether a classifier predicts one class for every
// row while the rows hold at least two classes, and which (its index in
// Classes). A model that does has learned a constant answer, whatever its
// accuracy says (the share of the majority class).
func (ev *Evaluation) SingleClass() (int, bool) {
	if ev.N == 0 {
		return 0, false
	}
	only, classes := -1, 0
	for k, c := range ev.Classes {
		if c.Support > 0 {
			classes++
		}
		if c.Predicted == ev.N {
			only = k
		}
	}
	return only, only >= 0 && classes >= 2
}

// NoiseDominates reports whether the noise of a release spreads its scores
// more than the model's own weights do: sd(xᵀn) > sd(xᵀw), where noise is
// the spread [Evaluation.NoiseOnScores] implies and scores the observed
// spread of the released scores xᵀ(w + n). The model's own spread is not
// observed (w is not published); it is estimated as
// √(max(0, sd(xᵀ(w+n))² − sd(xᵀn)²)), the variance of a sum of
// uncorrelated terms less the noise's.
func NoiseDominates(scores, noise Spread) bool {
	own := math.Sqrt(max(0, scores.SD*scores.SD-noise.SD*noise.SD))
	return noise.SD > own
}
