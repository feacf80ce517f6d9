package stream

import (
	"fmt"
	"slices"
)

// Op is the type of an event.
type Op uint8

const (
	// Insert adds a sample to the learner.
	Insert Op = iota + 1
	// Delete requests the removal of an earlier insert; it has no payload.
	Delete
)

// String returns "insert" or "delete" (the names of the stream format).
func (o Op) String() string {
	switch o {
	case Insert:
		return "insert"
	case Delete:
		return "delete"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Sample is the payload of an insert event. Its meaning depends on the loss
// kind (spec §1):
//
//   - quadratic: V is the minimizer a ∈ R^d and S is the curvature mix
//     α ∈ [0,1];
//   - logistic: V is the feature vector x ∈ R^d and S is the label
//     y ∈ {−1,+1};
//   - regression: V is x ∈ R^d and S is the real target y.
//
// A payload is sparse when Idx is set (logistic and regression, and
// registered kinds whose LossSpec has Sparse): V[k] is entry Idx[k] of the
// d-vector, every other entry is zero; indices are 0-based and strictly
// increasing. The losses then cost O(nnz) for the data term, and a stream
// of T events holds O(T·nnz) numbers instead of O(T·d).
//
// Samples are treated as immutable once they are part of an event: the
// learner, histories and checkpoints share them without copying.
type Sample struct {
	V []float64
	S float64
	// Idx, if not nil, makes the payload sparse (see above).
	Idx []int32
}

// Event is one element e_t = (op, id, payload) of a stream (paper,
// Definition "Actual event stream").
type Event struct {
	Op Op
	// ID is the sample index i_t. Unique among inserts; a delete names the
	// ID of an earlier insert.
	ID int64
	// Sample is the payload of an insert; it is the zero Sample for a delete.
	Sample Sample
}

// InsertEvent returns an insert event for sample (v, s).
func InsertEvent(id int64, v []float64, s float64) Event {
	return Event{Op: Insert, ID: id, Sample: Sample{V: v, S: s}}
}

// DeleteEvent returns a delete event for id.
func DeleteEvent(id int64) Event { return Event{Op: Delete, ID: id} }

// IDSet is a set of event ids, such as a deletion set U. The zero value is
// an empty set ready to use for lookups; use [NewIDSet] or Add to fill it.
type IDSet map[int64]struct{}

// NewIDSet returns the set of the given ids.
func NewIDSet(ids ...int64) IDSet {
	s := make(IDSet, len(ids))
	for _, id := range ids {
		s[id] = struct{}{}
	}
	return s
}

// Has reports whether id is in the set.
func (s IDSet) Has(id int64) bool {
	_, ok := s[id]
	return ok
}

// Add adds id to the set.
func (s IDSet) Add(id int64) { s[id] = struct{}{} }

// Meets reports whether any of ids is in the set.
func (s IDSet) Meets(ids []int64) bool {
	for _, id := range ids {
		if s.Has(id) {
			return true
		}
	}
	return false
}

// Sorted returns the ids in ascending order.
func (s IDSet) Sorted() []int64 {
	out := make([]int64, 0, len(s))
	for id := range s {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Counterfactual returns the deletion-edited counterfactual of events for
// the deletion set u: the subsequence of events whose id is not in u, with
// the original order preserved. Inserts and deletes of ids in u are both
// dropped (paper, Definition "Deletion-edited counterfactual history";
// spec §2). The returned slice is new; the events share their samples with
// the input.
func Counterfactual(events []Event, u IDSet) []Event {
	out := make([]Event, 0, len(events))
	for _, e := range events {
		if !u.Has(e.ID) {
			out = append(out, e)
		}
	}
	return out
}

// InsertIDs returns the ids of the insert events, in stream order.
func InsertIDs(events []Event) []int64 {
	var ids []int64
	for _, e := range events {
		if e.Op == Insert {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

// LastInserts returns the last n insert events of events (all of them if
// there are fewer), in stream order. Composed with Counterfactual it gives
// the retained samples among the last n inserts, as retain fine-tuning and
// a rebuilt memory use them (spec §8).
func LastInserts(events []Event, n int) []Event {
	start, count := len(events), 0
	for start > 0 && count < n {
		start--
		if events[start].Op == Insert {
			count++
		}
	}
	out := make([]Event, 0, count)
	for _, e := range events[start:] {
		if e.Op == Insert {
			out = append(out, e)
		}
	}
	return out
}

// DeletedIDs returns the set of ids named by the delete events: the realized
// deletion requests of a prefix (spec §8).
func DeletedIDs(events []Event) IDSet {
	u := IDSet{}
	for _, e := range events {
		if e.Op == Delete {
			u.Add(e.ID)
		}
	}
	return u
}
