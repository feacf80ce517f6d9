package experiment

import (
	"errors"
	"fmt"
	"testing"

	"unlearn/align"
	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// TestStepAll: stepping the reference and the states on several goroutines
// gives each learner exactly the state of stepping them one after the other,
// and a failure is reported for the reference first, else for the first
// failing state in order, whatever the number of workers.
func TestStepAll(t *testing.T) {
	newLearner := func(d int) *olbfgs.Learner {
		t.Helper()
		loss, err := stream.NewLogistic(d, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		l, err := olbfgs.New(olbfgs.DefaultConfig(d), loss)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	ev := func(id int64, x ...float64) stream.Event {
		return stream.Event{Op: stream.Insert, ID: id, Sample: stream.Sample{V: x, S: 1}}
	}
	for _, workers := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			ref := newLearner(2)
			states := []*olbfgs.Learner{newLearner(2), newLearner(2), newLearner(2)}
			want := []*olbfgs.Learner{newLearner(2), newLearner(2), newLearner(2), newLearner(2)}
			for k, e := range []stream.Event{ev(1, 0.5, -1), ev(2, 1, 0.25), ev(3, -0.75, 2)} {
				if err := stepAll(ref, states, e, workers, nil, nil); err != nil {
					t.Fatal(err)
				}
				for _, l := range want {
					if err := l.Step(e); err != nil {
						t.Fatal(err)
					}
				}
				for i, l := range append([]*olbfgs.Learner{ref}, states...) {
					if !l.Memory().Equal(want[i].Memory()) || !floatbits.Equal(l.W(), want[i].W()) {
						t.Fatalf("step %d, learner %d: not the state of stepping one by one", k, i)
					}
				}
			}
			// States flagged identical to the reference follow its steps
			// (olbfgs.Learner.Follow): the same states, bit for bit.
			ref2 := newLearner(2)
			fol := []*olbfgs.Learner{newLearner(2), newLearner(2), newLearner(2)}
			flags := []align.Point{{Identical: true}, {}, {Identical: true}}
			for k, e := range []stream.Event{ev(1, 0.5, -1), ev(2, 1, 0.25), ev(3, -0.75, 2), ev(5, 0, 0)} {
				if err := stepAll(ref2, fol, e, workers, flags, nil); err != nil {
					t.Fatal(err)
				}
				for i, l := range fol {
					if !l.Equal(ref2) {
						t.Fatalf("step %d, follower %d: not the reference's state", k, i)
					}
				}
			}
			// States 1 and 2 of dimension 3 fail on a 2-dimensional event.
			bad := []*olbfgs.Learner{newLearner(2), newLearner(3), newLearner(3)}
			err := stepAll(newLearner(2), bad, ev(4, 1, 1), workers, nil, nil)
			var se *stepError
			if !errors.As(err, &se) || se.i != 1 {
				t.Fatalf("error %v, want the failure of state 1", err)
			}
			err = stepAll(newLearner(3), bad, ev(4, 1, 1), workers, nil, nil)
			if !errors.As(err, &se) || se.i != -1 {
				t.Fatalf("error %v, want the failure of the reference", err)
			}
		})
	}
}
