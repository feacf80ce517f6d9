package model

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"unlearn/dataset"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// Model is a trained model ready to be applied to raw rows: a learner's
// state and the contract of its data. Create it with [New]. A Model is
// safe for concurrent use: it never changes after New.
type Model struct {
	state    *olbfgs.Learner
	scorer   *olbfgs.Scorer
	lin      stream.Linear
	contract *Contract
	kind     stream.Kind
	d        int
	k        int      // the number of raw scores of a row
	classes  []string // nil for regression
	// options says that the held-out loss is formed from the scores (a
	// learner with options or several outputs: olbfgs.Config.HasOptions),
	// with ridge the deployed parameters' ridge term; the paper's learner
	// uses its loss's Value at w.
	options bool
	ridge   float64
}

// New returns the model of a learner's state (a store's state or exact
// counterfactual, a snapshot, a release's learner) with the contract of
// its data, or nil when none is recorded. The model predicts with the
// state's deployed parameters and preprocessing — the average of the
// iterates of a learner that averages, its intercepts, its
// standardization statistics — through [olbfgs.Learner.Scorer], the
// learner's own scores. The state is cloned: later changes to it do not
// reach the model. It returns an error for a loss kind the model cannot
// apply (the synthetic quadratic loss has no rows to predict on) or a
// contract that cannot describe the state (Contract.Validate;
// ErrContract).
func New(state *olbfgs.Learner, c *Contract) (*Model, error) {
	if state == nil {
		panic("model: New: nil state")
	}
	st := state.Clone()
	kind := st.Loss().Kind()
	lin, ok := st.Loss().(stream.Linear)
	if !ok || (kind != stream.KindLogistic && kind != stream.KindRegression && kind != stream.KindMultinomial) {
		return nil, fmt.Errorf("model: a %s loss has no rows to predict on (want logistic, multinomial or regression)", kind)
	}
	m := &Model{state: st, scorer: st.Scorer(), lin: lin, kind: kind, d: st.Config().Dim, k: st.Outputs(),
		options: st.Config().HasOptions(), ridge: st.DeployedRidge()}
	m.classes = unnamedClasses(kind, m.k)
	if c != nil {
		if err := c.Validate(m.kind, m.d, m.k); err != nil {
			return nil, err
		}
		cc := *c
		cc.Features, cc.Exclude, cc.Classes, cc.Shape = slices.Clone(c.Features), slices.Clone(c.Exclude), slices.Clone(c.Classes), slices.Clone(c.Shape)
		m.contract = &cc
		if len(cc.Classes) > 0 {
			m.classes = cc.Classes
		}
	}
	return m, nil
}

// unnamedClasses returns the class labels of a model whose contract names
// none: −1 and 1 for a binary logistic model, the class indices 0 … K−1
// (a multinomial stream's y) for a multinomial one, nil for regression.
func unnamedClasses(kind stream.Kind, k int) []string {
	switch kind {
	case stream.KindLogistic:
		return UnnamedClasses
	case stream.KindMultinomial:
		cs := make([]string, k)
		for i := range cs {
			cs[i] = strconv.Itoa(i)
		}
		return cs
	}
	return nil
}

// Contract returns a copy of the model's contract, or nil when none is
// recorded.
func (m *Model) Contract() *Contract {
	if m.contract == nil {
		return nil
	}
	c := *m.contract
	c.Features, c.Exclude, c.Classes, c.Shape = slices.Clone(c.Features), slices.Clone(c.Exclude), slices.Clone(c.Classes), slices.Clone(c.Shape)
	return &c
}

// Kind returns the loss kind: logistic or multinomial (a classifier) or
// regression.
func (m *Model) Kind() stream.Kind { return m.kind }

// Dim returns d, the length of a row's feature vector.
func (m *Model) Dim() int { return m.d }

// Classes returns the class labels in the order of the model's outputs
// (nil for regression): the contract's, or the unnamed ones
// ([UnnamedClasses] for a binary model, "0" … "K−1" for a multinomial one).
func (m *Model) Classes() []string { return slices.Clone(m.classes) }

// State returns the model's learner state. It is the model's own: read it,
// do not change it.
func (m *Model) State() *olbfgs.Learner { return m.state }

// scores stores the model's raw scores of the sample x in dst (length
// m.k): one score for the binary logistic and the regression models, K
// for a multinomial one. It is the one place where a state meets a row; x
// must fit d (the callers check it).
//
// The scores are the learner's own ([olbfgs.Scorer.Scores], the scores
// its held-out accuracy and its progressive statistics use): the deployed
// parameters (the average when the learner averages), the standardized
// features (x_j − m_j)·(1/s_j) when it standardizes, a stream.Dot4 in
// increasing j (each product rounded before it is added, on every build),
// plus the intercept. A sparse x gives the bits of its dense form.
func (m *Model) scores(dst []float64, x stream.Sample) { m.scorer.Scores(dst, x) }

// link maps the raw scores of a classifier to the probability of each
// class, in dst (length K): for one score s (binary logistic) the
// probabilities of the negative and the positive class, σ(−s) and σ(s)
// (each evaluated in its stable form, so a tiny probability keeps its
// digits; they sum to 1 up to rounding); for K ≥ 2 scores the softmax
// exp(s_k − max s)/Σ exp(s_j − max s) of the multinomial loss
// (stream.Softmax).
func link(dst, scores []float64) {
	if len(scores) == 1 {
		dst[0], dst[1] = stream.Sigmoid(-scores[0]), stream.Sigmoid(scores[0])
		return
	}
	stream.Softmax(dst, scores)
}

// decide returns the predicted class of the raw scores: for one score, the
// positive class (1) when s ≥ 0 — the rule behind the held-out accuracy —
// else 0; for K scores the first largest (stream.Linear.Predict's rule).
func decide(scores []float64) int {
	if len(scores) == 1 {
		if scores[0] >= 0 {
			return 1
		}
		return 0
	}
	best := 0
	for k, s := range scores {
		if s > scores[best] {
			best = k
		}
	}
	return best
}

// classOf returns the class index of a labelled sample's scalar
// (stream.Linear.Class): for the binary logistic loss y = −1 is class 0
// and y = +1 class 1; for the multinomial loss y is the class index.
func (m *Model) classOf(y float64) int {
	k, _ := m.lin.Class(y)
	return k
}

// Prediction is the model's prediction for one row.
type Prediction struct {
	// Class is the index of the predicted class in Model.Classes, and Label
	// its name; −1 and "" for regression.
	Class int
	Label string
	// Probabilities holds the probability of each class, in the order of
	// Model.Classes (nil for regression).
	Probabilities []float64
	// Scores holds the raw scores: the margin of a binary classifier, the
	// prediction of a regression, the K scores of a multinomial classifier
	// (whose softmax is Probabilities).
	Scores []float64
	// Value is the raw score of the prediction: the margin of a binary
	// classifier, the prediction of a regression, the predicted class's
	// score of a multinomial classifier.
	Value float64
}

// Predict returns the model's prediction for the dense feature vector x
// (length d, finite values, in the contract's feature order). Errors wrap
// ErrRow. It is the per-row call of a service; see [Model.PredictTo] for
// one that reuses its result's storage.
func (m *Model) Predict(x []float64) (Prediction, error) {
	var p Prediction
	err := m.PredictTo(&p, stream.Sample{V: x})
	return p, err
}

// PredictTo stores the model's prediction for the sample x (dense, or
// sparse with Idx set; its scalar S is ignored) in p, reusing the storage
// of p.Probabilities and p.Scores. It does not allocate once p has room
// for them. Errors wrap ErrRow: a vector that does not fit d, a value that
// is not finite, a score that is not a number.
func (m *Model) PredictTo(p *Prediction, x stream.Sample) error {
	if err := m.checkShape(x); err != nil {
		return err
	}
	if cap(p.Scores) < m.k {
		p.Scores = make([]float64, m.k)
	}
	s := p.Scores[:m.k]
	p.Scores = s
	m.scores(s, x)
	for _, v := range s {
		// A value that is not finite makes every score it enters NaN or
		// ±Inf (x·w is ±Inf or NaN, and so is any sum with it), so the
		// values are checked only when a score is not finite.
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if err := m.checkValues(x); err != nil {
				return err
			}
		}
		if math.IsNaN(v) {
			return fmt.Errorf("%w: the score is not a number (the row's values overflow against the model's)", ErrRow)
		}
	}
	p.Value = s[0]
	if m.kind == stream.KindRegression {
		p.Class, p.Label, p.Probabilities = -1, "", nil
		if math.IsInf(s[0], 0) {
			return fmt.Errorf("%w: the prediction overflows", ErrRow)
		}
		return nil
	}
	k := len(m.classes)
	if cap(p.Probabilities) < k {
		p.Probabilities = make([]float64, k)
	}
	p.Probabilities = p.Probabilities[:k]
	if len(s) > 1 && slices.ContainsFunc(s, func(v float64) bool { return math.IsInf(v, 0) }) {
		// The softmax of an infinite score is not a number.
		return fmt.Errorf("%w: a score overflows (the row's values are too large for the model's)", ErrRow)
	}
	link(p.Probabilities, s)
	p.Class = decide(s)
	p.Label = m.classes[p.Class]
	if len(s) > 1 {
		p.Value = s[p.Class]
	}
	return nil
}

// checkShape reports whether x fits the model: length d, or a sparse
// vector of dimension d (strictly increasing indices in [0, d)).
func (m *Model) checkShape(x stream.Sample) error {
	if x.Idx != nil {
		if len(x.Idx) != len(x.V) {
			return fmt.Errorf("%w: %d indices for %d values", ErrRow, len(x.Idx), len(x.V))
		}
		prev := int32(-1)
		for k, j := range x.Idx {
			if j <= prev || int(j) >= m.d {
				return fmt.Errorf("%w: index %d = %d: want strictly increasing indices in [0, %d)", ErrRow, k, j, m.d)
			}
			prev = j
		}
	} else if len(x.V) != m.d {
		return fmt.Errorf("%w: %d values, the model's d is %d", ErrRow, len(x.V), m.d)
	}
	return nil
}

// checkValues reports whether the values of x are finite.
func (m *Model) checkValues(x stream.Sample) error {
	for k, v := range x.V {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: value %d is %v, not a finite number", ErrRow, k, v)
		}
	}
	return nil
}

// Vector returns the dense feature vector of a row given by feature name
// (a CSV model's columns; the names of [Contract.Features]), for a service
// that receives named values. Every feature must be given, and no other
// name. Errors wrap ErrRow and name the feature.
func (m *Model) Vector(named map[string]float64) ([]float64, error) {
	if m.contract == nil || m.contract.Format != dataset.CSV {
		return nil, fmt.Errorf("%w: the model's features have no names (its contract is not a CSV's): give the vector", ErrRow)
	}
	x := make([]float64, m.d)
	for i, f := range m.contract.Features {
		v, ok := named[f]
		if !ok {
			return nil, fmt.Errorf("%w: feature %q is missing", ErrRow, f)
		}
		x[i] = v
	}
	if len(named) != m.d {
		var extra []string
		for name := range named {
			if !slices.Contains(m.contract.Features, name) {
				extra = append(extra, name)
			}
		}
		slices.Sort(extra)
		return nil, fmt.Errorf("%w: %q is not a feature of the model", ErrRow, extra[0])
	}
	return x, nil
}
