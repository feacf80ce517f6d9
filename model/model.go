package model

import (
	"fmt"
	"math"
	"slices"

	"unlearn/dataset"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// Model is a trained model ready to be applied to raw rows: a learner's
// state and the contract of its data. Create it with [New]. A Model is
// safe for concurrent use: it never changes after New.
type Model struct {
	state    *olbfgs.Learner
	contract *Contract
	kind     stream.Kind
	d        int
	classes  []string // nil for regression
}

// New returns the model of a learner's state (a store's state or exact
// counterfactual, a snapshot, a release's learner) with the contract of
// its data, or nil when none is recorded. The state is cloned: later
// changes to it do not reach the model. It returns an error for a loss
// kind the model cannot apply (the synthetic quadratic loss has no rows to
// predict on) or a contract that cannot describe the state
// (Contract.Validate; ErrContract).
func New(state *olbfgs.Learner, c *Contract) (*Model, error) {
	if state == nil {
		panic("model: New: nil state")
	}
	m := &Model{state: state.Clone(), kind: state.Loss().Kind(), d: state.Config().Dim}
	switch m.kind {
	case stream.KindLogistic:
		m.classes = UnnamedClasses
	case stream.KindRegression:
	default:
		return nil, fmt.Errorf("model: a %s loss has no rows to predict on (want logistic or regression)", m.kind)
	}
	if c != nil {
		if err := c.Validate(m.kind, m.d); err != nil {
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

// Kind returns the loss kind: logistic (a classifier) or regression.
func (m *Model) Kind() stream.Kind { return m.kind }

// Dim returns d, the length of a row's feature vector.
func (m *Model) Dim() int { return m.d }

// Classes returns the class labels in the order of the model's outputs
// (nil for regression): the contract's, or [UnnamedClasses].
func (m *Model) Classes() []string { return slices.Clone(m.classes) }

// State returns the model's learner state. It is the model's own: read it,
// do not change it.
func (m *Model) State() *olbfgs.Learner { return m.state }

// outputs is the number of raw scores of a row: 1 for the binary logistic
// and the regression models.
func (m *Model) outputs() int { return 1 }

// scoreBuf returns room for a row's raw scores: buf when it is large
// enough, else a new slice.
func (m *Model) scoreBuf(buf []float64) []float64 {
	if k := m.outputs(); k <= len(buf) {
		return buf[:k]
	}
	return make([]float64, m.outputs())
}

// scores stores the model's raw scores of the sample x in dst (length
// m.outputs()): the margin wᵀx of the binary logistic loss, the
// prediction wᵀx of regression. It is the one place where a state meets a
// row; x must fit d (the callers check it).
//
// The margin is summed in increasing index order, each product rounded
// before it is added, as stream.Logistic.Value sums it: the margin behind
// a prediction is the one behind the held-out loss, bit for bit, on every
// build (GOAMD64=v3 included, where the compiler could otherwise fuse a
// multiply and an add). A sparse x sums its entries in increasing index
// order, the dense sum's nonzero terms (the sign of a zero margin aside).
func (m *Model) scores(dst []float64, x stream.Sample) {
	w := m.state.W()
	var s float64
	if x.Idx != nil {
		for k, j := range x.Idx {
			s += float64(x.V[k] * w[j])
		}
	} else {
		w = w[:len(x.V)]
		for j, xj := range x.V {
			s += float64(xj * w[j])
		}
	}
	dst[0] = s
}

// link maps the raw scores of a classifier to the probability of each
// class, in dst (length K): for one score s (binary logistic) the
// probabilities of the negative and the positive class, σ(−s) and σ(s)
// (each evaluated in its stable form, so a tiny probability keeps its
// digits; they sum to 1 up to rounding); for K ≥ 2 scores the softmax
// exp(s_k − max s)/Σ exp(s_j − max s).
func link(dst, scores []float64) {
	if len(scores) == 1 {
		dst[0], dst[1] = stream.Sigmoid(-scores[0]), stream.Sigmoid(scores[0])
		return
	}
	top := slices.Max(scores)
	var sum float64
	for k, s := range scores {
		dst[k] = math.Exp(s - top)
		sum += dst[k]
	}
	for k := range dst {
		dst[k] /= sum
	}
}

// decide returns the predicted class of the raw scores: for one score, the
// positive class (1) when s ≥ 0 — the rule behind the held-out accuracy —
// else 0; for K scores the first largest.
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

// classOf returns the class index of a labelled sample's scalar: for the
// binary logistic loss y = −1 is class 0 and y = +1 class 1.
func classOf(y float64) int {
	if y > 0 {
		return 1
	}
	return 0
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
	// Value is the raw score: the margin wᵀx of a binary classifier, the
	// prediction of regression.
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
// sparse with Idx set; its scalar S is ignored) in p, reusing
// p.Probabilities's storage. It does not allocate once p has room for the
// probabilities. Errors wrap ErrRow: a vector that does not fit d, a value
// that is not finite, a score that is not a number.
func (m *Model) PredictTo(p *Prediction, x stream.Sample) error {
	if err := m.checkShape(x); err != nil {
		return err
	}
	var buf [16]float64
	s := m.scoreBuf(buf[:])
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
	link(p.Probabilities, s)
	p.Class = decide(s)
	p.Label = m.classes[p.Class]
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
