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
	// Loss is the mean loss (1/N)·Σ ℓ_z(w) (stream.Loss.Value), summed in
	// stream order.
	Loss float64
	// Accuracy is, for a logistic loss, the fraction of samples with
	// sign(wᵀx) = y, counting wᵀx = 0 as +1; HasAccuracy is false for other
	// losses.
	Accuracy    float64
	HasAccuracy bool
}

// Evaluate reports the held-out loss and, for a logistic loss, the accuracy
// of the parameters w of l on the samples of src, read one at a time. It
// does not change l. It returns an error if the data set has no insert.
func Evaluate(l *olbfgs.Learner, src EventSource) (Evaluation, error) {
	var ev Evaluation
	loss, w := l.Loss(), l.W()
	logistic := loss.Kind() == stream.KindLogistic
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
		sum += loss.Value(w, e.Sample)
		if logistic {
			var m float64
			for i, x := range e.Sample.Dense(len(w)) {
				m += w[i] * x
			}
			if (m >= 0) == (e.Sample.S > 0) {
				correct++
			}
		}
		ev.N++
	}
	if ev.N == 0 {
		return ev, fmt.Errorf("%w: no samples to evaluate on", ErrEvent)
	}
	ev.Loss = sum / float64(ev.N)
	if logistic {
		ev.Accuracy, ev.HasAccuracy = float64(correct)/float64(ev.N), true
	}
	return ev, nil
}
