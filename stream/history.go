package stream

import "fmt"

// Validator checks a sequence of events incrementally against spec §1: ids
// unique per insert, deletes naming an earlier, not yet deleted insert, and
// payloads valid for the loss. The zero value is not usable; create one with
// [NewValidator].
type Validator struct {
	loss     Loss
	inserted IDSet
	deleted  IDSet
	n        int
}

// NewValidator returns a validator for events of the given loss. It panics
// if loss is nil.
func NewValidator(loss Loss) *Validator {
	if loss == nil {
		panic("stream: NewValidator: nil loss")
	}
	return &Validator{loss: loss, inserted: IDSet{}, deleted: IDSet{}}
}

// Check validates the next event and, if it is valid, records it. The
// returned error is an *EventError wrapping one of the package's sentinels.
func (v *Validator) Check(e Event) error {
	idx := v.n
	fail := func(field string, err error) error {
		return &EventError{Index: idx, ID: e.ID, Field: field, Err: err}
	}
	switch e.Op {
	case Insert:
		if v.inserted.Has(e.ID) {
			return fail("id", fmt.Errorf("id %d: %w", e.ID, ErrDuplicateID))
		}
		if field, err := v.loss.CheckSample(e.Sample); err != nil {
			return fail(field, err)
		}
		v.inserted.Add(e.ID)
	case Delete:
		if !v.inserted.Has(e.ID) {
			return fail("id", fmt.Errorf("id %d: %w", e.ID, ErrUnknownDeletion))
		}
		if v.deleted.Has(e.ID) {
			return fail("id", fmt.Errorf("id %d: %w", e.ID, ErrRepeatedDeletion))
		}
		if e.Sample.V != nil || e.Sample.S != 0 || e.Sample.Idx != nil {
			return fail("", fmt.Errorf("delete carries a payload: %w", ErrInvalidValue))
		}
		v.deleted.Add(e.ID)
	default:
		return fail("op", fmt.Errorf("op %v: %w", e.Op, ErrInvalidValue))
	}
	v.n++
	return nil
}

// Validate checks a whole sequence of events; see [Validator].
func Validate(loss Loss, events []Event) error {
	v := NewValidator(loss)
	for _, e := range events {
		if err := v.Check(e); err != nil {
			return err
		}
	}
	return nil
}

// History is a validated event history H_T = (e_1, …, e_T) together with its
// loss. Construct it with [NewHistory] (or read it with [Read]); the events
// must not be modified afterwards.
type History struct {
	Header Header
	Loss   Loss
	Events []Event
}

// NewHistory validates the header and events and returns the history.
func NewHistory(h Header, events []Event) (*History, error) {
	loss, err := h.Loss()
	if err != nil {
		return nil, fmt.Errorf("stream header: %w", err)
	}
	if err := Validate(loss, events); err != nil {
		return nil, err
	}
	return &History{Header: h, Loss: loss, Events: events}, nil
}

// Prefix returns the first t events e_1..e_t. It panics if t is out of range.
func (h *History) Prefix(t int) []Event {
	if t < 0 || t > len(h.Events) {
		panic(fmt.Sprintf("stream: History.Prefix(%d) out of range [0,%d]", t, len(h.Events)))
	}
	return h.Events[:t:t]
}

// Counterfactual returns the deletion-edited counterfactual history for u
// (see [Counterfactual]). It is valid whenever h is.
func (h *History) Counterfactual(u IDSet) *History {
	return &History{Header: h.Header, Loss: h.Loss, Events: Counterfactual(h.Events, u)}
}
