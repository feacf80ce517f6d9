package serve

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"unlearn/dataset"
	"unlearn/model"
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
	// Features returns the names of the model's features in the order of a
	// row (the CSV columns its data contract records), or nil when they
	// have no names. A request that names its columns must name these, in
	// this order.
	Features() []string
	// Predict returns the predictions of rows, each of Dim finite numbers
	// in the stream's units: the service checks them and applies the
	// store's data contract's preprocessing (model.RawRowsOf: an IDX
	// image's pixels divided by the scale) to the request's raw rows
	// before calling.
	Predict(rows [][]float64) (Predictions, error)
}

// Predictions are a Predictor's answer.
type Predictions struct {
	// Classes are the class labels in the data's own names, in the order
	// of each row's probabilities; nil for a regression.
	Classes []string
	// Labels are the predicted class of each row (a classifier); nil for a
	// regression.
	Labels []string
	// Values are the predicted value of each row (a regression); nil for a
	// classifier.
	Values []float64
	// Probabilities are, for each row, the probability of each class; nil
	// for a regression.
	Probabilities [][]float64
}

// PredictorFunc builds the Predictor of a state of the store's learner
// (a copy the Predictor may keep) for the store's stream header.
type PredictorFunc func(state *olbfgs.Learner, h stream.Header) (Predictor, error)

// ErrNoPredictions is returned by a PredictorFunc for a loss that makes no
// predictions (the quadratic loss of the paper's synthetic experiments has
// no features).
var ErrNoPredictions = errors.New("the loss makes no predictions")

// ModelPredictor is the default PredictorFunc: the state applied by package
// model with the data contract the store's header records — the
// learner's own scores (its deployed parameters, the average when it
// averages, its standardization and intercepts), the labels in the data's
// own class names, the probability of each class (logistic: σ(−u), σ(u);
// multinomial: the softmax of the K scores), a regression's value: what
// `unlearn predict --data` writes for the same raw rows, bit for bit (the
// service preprocesses the rows as the data readers do). A loss without
// rows to predict on (quadratic) makes no predictions (ErrNoPredictions).
func ModelPredictor(state *olbfgs.Learner, h stream.Header) (Predictor, error) {
	switch h.Kind {
	case stream.KindLogistic, stream.KindRegression, stream.KindMultinomial:
	default:
		return nil, fmt.Errorf("%w: %s", ErrNoPredictions, h.Kind)
	}
	c, err := model.ContractOf(h)
	if err != nil {
		return nil, fmt.Errorf("the store's data contract: %w", err)
	}
	m, err := model.New(state, c)
	if err != nil {
		return nil, err
	}
	return &modelPredictor{m: m, classes: m.Classes(), features: contractFeatures(h)}, nil
}

type modelPredictor struct {
	m        *model.Model
	classes  []string
	features []string
}

func (p *modelPredictor) Dim() int { return p.m.Dim() }

func (p *modelPredictor) Features() []string { return p.features }

func (p *modelPredictor) Predict(rows [][]float64) (Predictions, error) {
	var out Predictions
	k := len(p.classes)
	if k > 0 {
		out.Classes = p.classes
		out.Labels = make([]string, len(rows))
		out.Probabilities = make([][]float64, len(rows))
	} else {
		out.Values = make([]float64, len(rows))
	}
	// One backing array for the probabilities of every row.
	probs := make([]float64, len(rows)*k)
	var pr model.Prediction
	for i, x := range rows {
		if err := p.m.PredictTo(&pr, stream.Sample{V: x}); err != nil {
			return Predictions{}, problem("unprocessable", "rows[%d]: %v", i, err).at(fmt.Sprintf("rows[%d]", i))
		}
		if k == 0 {
			out.Values[i] = pr.Value
			continue
		}
		out.Labels[i] = pr.Label
		out.Probabilities[i] = probs[i*k : (i+1)*k : (i+1)*k]
		copy(out.Probabilities[i], pr.Probabilities)
	}
	return out, nil
}

// predictRequest is the body of POST /v1/predict.
type predictRequest struct {
	// Rows or RowsF64 (as in POST /v1/events): in the data's own units,
	// preprocessed as the data readers preprocess a file's rows.
	Rows    [][]float64 `json:"rows,omitempty"`
	RowsF64 []byte      `json:"rows_f64,omitempty"`
	Cols    *int        `json:"cols,omitempty"`
	// Columns optionally names the rows' columns: they must be the model's
	// features, in its order (its data contract's).
	Columns []string `json:"columns,omitempty"`
}

// predictResponse is its answer: for a classifier the classes, each row's
// label and probabilities; for a regression each row's value (as
// "predictions") and null classes and probabilities.
type predictResponse struct {
	Classes       []string    `json:"classes"`
	Predictions   any         `json:"predictions"`
	Probabilities [][]float64 `json:"probabilities"`
	// Head is the log position of the state that predicted.
	Head int64 `json:"head"`
	// Noised reports that the state that predicted is the noised one an
	// approximate deletion left (the store keeps only a noised w until
	// the exact replay resolves it): its predictions are worse, the more
	// so the larger the noise. PendingRequests are the store requests
	// pending that replay.
	Noised          bool    `json:"noised"`
	PendingRequests []int64 `json:"pending_requests,omitempty"`
}

// contractFeatures returns the feature names of the data contract the
// header records (a CSV's), or nil.
func contractFeatures(h stream.Header) []string {
	c, err := model.ContractOf(h)
	if err != nil || c == nil || c.Format != dataset.CSV {
		return nil
	}
	return c.Features
}

// checkColumns checks the column names a request gives (field) against
// the model's features: the same names in the same order, or a problem
// naming the first difference (model.Contract.Check's words).
func checkColumns(field string, columns, features []string) *Problem {
	if columns == nil {
		return nil
	}
	if features == nil {
		return problem("contract-mismatch", "the model's features have no names (it was not trained on a CSV file): send the rows in its feature order without %s", field).at(field)
	}
	want := &model.Contract{Format: dataset.CSV, Features: features}
	if err := want.Check(&model.Contract{Format: dataset.CSV, Features: columns}, model.CheckOptions{}); err != nil {
		return problem("contract-mismatch", "%v", err).at(field)
	}
	return nil
}

func (s *Server) postPredict(w http.ResponseWriter, r *http.Request, c *call) error {
	// A slot before the body is read: the memory of the predictions
	// running at once is bounded by PredictSlots bodies and their rows.
	release, p := s.predictSlot(r)
	if p != nil {
		return p
	}
	defer release()
	var req predictRequest
	if p := decodeBody(w, r, s.opt.MaxBody, &req); p != nil {
		return p
	}
	v := s.view.Load()
	if v.predictErr != nil {
		return problem("no-predictions", "%v", v.predictErr)
	}
	// The contract before the rows' length: a missing or extra column
	// changes it, and the names say which.
	if p := checkColumns("columns", req.Columns, v.predictor.Features()); p != nil {
		return p
	}
	if req.RowsF64 != nil {
		if req.Rows != nil {
			return problem("bad-request", "send rows or rows_f64, not both").at("rows_f64")
		}
		var p *Problem
		if req.Rows, p = unpackRows(req.RowsF64, req.Cols, v.predictor.Dim(), v.predictor.Features()); p != nil {
			return p
		}
	}
	if len(req.Rows) == 0 {
		return problem("unprocessable", "the batch has no rows: send at least one row").at("rows")
	}
	if len(req.Rows) > s.opt.MaxRows {
		return problem("too-many-rows", "%d rows; at most %d rows a request (the service's limit): send several requests", len(req.Rows), s.opt.MaxRows).at("rows")
	}
	if p := checkRows("rows", req.Rows, v.predictor.Dim(), v.predictor.Features()); p != nil {
		return p
	}
	if p := preprocessRows("rows", req.Rows, s.raw); p != nil {
		return p
	}
	c.count = len(req.Rows)
	pred, err := v.predictor.Predict(req.Rows)
	if err != nil {
		return err
	}
	res := predictResponse{Classes: pred.Classes, Predictions: pred.Labels, Probabilities: pred.Probabilities, Head: v.head,
		Noised: v.needsNoise}
	if v.needsNoise {
		for _, q := range v.status.Pending {
			res.PendingRequests = append(res.PendingRequests, q.Request)
		}
	}
	if pred.Classes == nil {
		res.Predictions = pred.Values
	}
	return writeJSON(w, http.StatusOK, res)
}

// predictSlotWait is how long a prediction waits for a slot before it is
// answered 429.
const predictSlotWait = time.Second

// predictSlot takes one of the PredictSlots, waiting at most
// predictSlotWait; it returns the release, or a 429 problem with
// Retry-After.
func (s *Server) predictSlot(r *http.Request) (func(), *Problem) {
	t := time.NewTimer(predictSlotWait)
	defer t.Stop()
	select {
	case s.predictSlots <- struct{}{}:
		return func() { <-s.predictSlots }, nil
	case <-t.C:
		p := problem("rate-limited", "%d predictions are running, the service's limit: retry", cap(s.predictSlots))
		p.retryAfter = time.Second
		return nil, p
	case <-r.Context().Done():
		return nil, problem("timeout", "the request was cancelled while waiting for a prediction slot")
	}
}
