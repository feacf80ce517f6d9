package serve

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// Predictor makes predictions with one published model state: rows in,
// predicted labels (or values) and class probabilities out. The service
// builds one per published state with its PredictorFunc and calls it from
// many goroutines at once.
type Predictor interface {
	// Dim is the number of features a row must have.
	Dim() int
	// Predict returns the predictions of rows, each of Dim finite numbers
	// (the service checks that before calling).
	Predict(rows [][]float64) (Predictions, error)
}

// Predictions are a Predictor's answer.
type Predictions struct {
	// Classes are the class labels, in the order of each row's
	// probabilities; nil for a regression.
	Classes []float64 `json:"classes"`
	// Labels are the predicted class of each row (classification) or its
	// predicted value (regression).
	Labels []float64 `json:"predictions"`
	// Probabilities are, for each row, the probability of each class; nil
	// for a regression.
	Probabilities [][]float64 `json:"probabilities"`
}

// PredictorFunc builds the Predictor of a state of the store's learner
// (a copy the Predictor may keep) for the store's stream header.
type PredictorFunc func(state *olbfgs.Learner, h stream.Header) (Predictor, error)

// ErrNoPredictions is returned by a PredictorFunc for a loss that makes no
// predictions (the quadratic loss of the paper's synthetic experiments has
// no features).
var ErrNoPredictions = errors.New("the loss makes no predictions")

// LinearPredictor is the default PredictorFunc: the learner's own model,
// with the margin xᵀw summed in increasing index order as the loss does
// (spec §1). For the ridge logistic loss the probability of the class +1 is
// σ(xᵀw) (stream.Sigmoid, the loss's overflow-free logistic function) and
// the label is +1 when it is at least ½; for ridge regression the
// prediction is xᵀw. Other losses make no predictions (ErrNoPredictions).
func LinearPredictor(state *olbfgs.Learner, h stream.Header) (Predictor, error) {
	switch h.Kind {
	case stream.KindLogistic, stream.KindRegression:
		return &linear{kind: h.Kind, w: slices.Clone(state.W())}, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrNoPredictions, h.Kind)
}

type linear struct {
	kind stream.Kind
	w    []float64
}

func (p *linear) Dim() int { return len(p.w) }

func (p *linear) Predict(rows [][]float64) (Predictions, error) {
	out := Predictions{Labels: make([]float64, len(rows))}
	if p.kind == stream.KindLogistic {
		out.Classes = []float64{-1, 1}
		out.Probabilities = make([][]float64, len(rows))
	}
	for i, x := range rows {
		var m float64
		for j, v := range x {
			m += v * p.w[j]
		}
		if p.kind != stream.KindLogistic {
			out.Labels[i] = m
			continue
		}
		pos := stream.Sigmoid(m)
		out.Probabilities[i] = []float64{stream.Sigmoid(-m), pos}
		out.Labels[i] = -1
		if pos >= 0.5 {
			out.Labels[i] = 1
		}
	}
	return out, nil
}

// predictRequest is the body of POST /v1/predict.
type predictRequest struct {
	// Rows or RowsF64 (as in POST /v1/events).
	Rows    [][]float64 `json:"rows,omitempty"`
	RowsF64 []byte      `json:"rows_f64,omitempty"`
	Cols    *int        `json:"cols,omitempty"`
}

// predictResponse is its answer.
type predictResponse struct {
	Predictions
	// Head is the log position of the state that predicted.
	Head int64 `json:"head"`
}

func (s *Server) postPredict(w http.ResponseWriter, r *http.Request, c *call) error {
	var req predictRequest
	if p := decodeBody(w, r, s.opt.MaxBody, &req); p != nil {
		return p
	}
	v := s.view.Load()
	if v.predictErr != nil {
		return problem("no-predictions", "%v", v.predictErr)
	}
	if req.RowsF64 != nil {
		if req.Rows != nil {
			return problem("bad-request", "send rows or rows_f64, not both").at("rows_f64")
		}
		var p *Problem
		if req.Rows, p = unpackRows(req.RowsF64, req.Cols, v.predictor.Dim()); p != nil {
			return p
		}
	}
	if len(req.Rows) == 0 {
		return problem("unprocessable", "rows is empty: send at least one row").at("rows")
	}
	if p := checkRows("rows", req.Rows, v.predictor.Dim()); p != nil {
		return p
	}
	c.count = len(req.Rows)
	pred, err := v.predictor.Predict(req.Rows)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, predictResponse{Predictions: pred, Head: v.head})
}
