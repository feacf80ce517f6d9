package store

import (
	"errors"
	"fmt"
	"io"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// Evaluation is a model's utility on held-out data.
type Evaluation struct {
	// N is the number of samples (the inserts of the data; deletes are
	// ignored).
	N int
	// Loss is the mean loss (1/N)·Σ ℓ_z, summed in stream order: for the
	// paper's learner the stream's loss at w (stream.Loss.Value, the ridge
	// included); for a learner with options (olbfgs.Config.HasOptions) the
	// data term at the deployed parameters' scores (olbfgs.Learner.Scores,
	// stream.Linear.Link) plus the ridge (λ/2)‖w‖² of the deployed weights
	// (the intercepts too with RidgeIntercept).
	Loss float64
	// Accuracy is, for a classification loss (logistic, multinomial), the
	// fraction of samples whose predicted label is y (logistic: sign of the
	// score, counting 0 as +1; multinomial: the class of the largest
	// score); HasAccuracy is false for other losses.
	Accuracy    float64
	HasAccuracy bool
}

// Evaluate reports the held-out loss and, for a classification loss, the
// accuracy of the learner's deployed parameters (olbfgs.Learner.Deployed)
// on the samples of src, read one at a time. It does not change l's state.
// It returns an error if the data set has no insert.
func Evaluate(l *olbfgs.Learner, src EventSource) (Evaluation, error) {
	var ev Evaluation
	loss, w := l.Loss(), l.W()
	lin, _ := loss.(stream.Linear)
	classes := lin != nil && lin.Kind() != stream.KindRegression
	options := l.Config().HasOptions()
	var u, c []float64
	var ridge float64
	if lin != nil {
		u, c = make([]float64, l.Outputs()), make([]float64, l.Outputs())
		ridge = l.DeployedRidge()
	}
	var sum float64
	correct := 0
	for {
		e, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ev, err
		}
		if e.Op != stream.Insert {
			continue
		}
		if field, err := loss.CheckSample(e.Sample); err != nil {
			return ev, fmt.Errorf("%w: sample id %d: field %q: %w", ErrEvent, e.ID, field, err)
		}
		if lin != nil {
			l.Scores(u, e.Sample)
		}
		if options {
			sum += lin.Link(c, u, e.Sample.S) + ridge
		} else {
			sum += loss.Value(w, e.Sample)
		}
		if classes {
			if pred, _ := lin.Predict(u); pred == e.Sample.S {
				correct++
			}
		}
		ev.N++
	}
	if ev.N == 0 {
		return ev, fmt.Errorf("%w: no samples to evaluate on", ErrEvent)
	}
	ev.Loss = sum / float64(ev.N)
	if classes {
		ev.Accuracy, ev.HasAccuracy = float64(correct)/float64(ev.N), true
	}
	return ev, nil
}
