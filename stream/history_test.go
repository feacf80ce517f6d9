package stream

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestValidatorErrors(t *testing.T) {
	q, err := NewQuadratic([][]float64{{1, 0}, {0, 1}}, [][]float64{{2, 0}, {0, 2}})
	require.NoError(t, err)
	ok := func(id int64) Event { return InsertEvent(id, []float64{1, 2}, 0.5) }
	tests := []struct {
		name     string
		events   []Event
		index    int // 0-based index of the bad event
		id       int64
		field    string
		sentinel error
	}{
		{"unknown deletion", []Event{ok(1), DeleteEvent(2)}, 1, 2, "id", ErrUnknownDeletion},
		{"delete before insert", []Event{DeleteEvent(1), ok(1)}, 0, 1, "id", ErrUnknownDeletion},
		{"repeated deletion", []Event{ok(1), DeleteEvent(1), ok(2), DeleteEvent(1)}, 3, 1, "id", ErrRepeatedDeletion},
		{"duplicate id", []Event{ok(1), ok(2), ok(1)}, 2, 1, "id", ErrDuplicateID},
		{"duplicate id after delete", []Event{ok(1), DeleteEvent(1), ok(1)}, 2, 1, "id", ErrDuplicateID},
		{"wrong dimension", []Event{ok(1), InsertEvent(2, []float64{1, 2, 3}, 0.5)}, 1, 2, "a", ErrDimension},
		{"empty payload", []Event{InsertEvent(7, nil, 0.5)}, 0, 7, "a", ErrDimension},
		{"NaN in payload", []Event{InsertEvent(3, []float64{math.NaN(), 0}, 0.5)}, 0, 3, "a", ErrNonFinite},
		{"Inf in payload", []Event{ok(1), InsertEvent(3, []float64{0, math.Inf(1)}, 0.5)}, 1, 3, "a", ErrNonFinite},
		{"NaN alpha", []Event{InsertEvent(4, []float64{0, 0}, math.NaN())}, 0, 4, "alpha", ErrNonFinite},
		{"alpha out of range", []Event{InsertEvent(4, []float64{0, 0}, 2)}, 0, 4, "alpha", ErrInvalidValue},
		{"delete with payload", []Event{ok(1), {Op: Delete, ID: 1, Sample: Sample{V: []float64{1, 2}}}}, 1, 1, "", ErrInvalidValue},
		{"delete with scalar", []Event{ok(1), {Op: Delete, ID: 1, Sample: Sample{S: 1}}}, 1, 1, "", ErrInvalidValue},
		{"invalid op", []Event{ok(1), {Op: 0, ID: 5}}, 1, 5, "op", ErrInvalidValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(q, tt.events)
			require.ErrorIs(t, err, tt.sentinel)
			var ee *EventError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, tt.index, ee.Index, "EventError.Index")
			assert.Equal(t, tt.id, ee.ID, "EventError.ID")
			assert.Equal(t, tt.field, ee.Field, "EventError.Field")
			_, err = NewHistory(Header{Kind: KindQuadratic, D: 2, H0: q.H0(), H1: q.H1()}, tt.events)
			assert.ErrorIs(t, err, tt.sentinel, "NewHistory")
		})
	}
}

func TestEventErrorMessage(t *testing.T) {
	err := &EventError{Index: 2, ID: 9, Field: "x", Err: ErrNonFinite}
	assert.EqualError(t, err, `event 3 (id 9), field "x": non-finite value`)
	le := &LineError{Line: 4, Err: ErrFormat}
	assert.EqualError(t, le, "line 4: malformed stream")
}

func TestNewHistoryHeaderErrors(t *testing.T) {
	tests := []struct {
		name     string
		h        Header
		sentinel error
	}{
		{"unknown kind", Header{Kind: "linear", D: 2}, ErrInvalidValue},
		{"d = 0", Header{Kind: KindLogistic, D: 0}, ErrInvalidValue},
		{"negative lambda", Header{Kind: KindLogistic, D: 2, Lambda: -1}, ErrInvalidValue},
		{"H0 rows ≠ d", Header{Kind: KindQuadratic, D: 3, H0: [][]float64{{1}}, H1: [][]float64{{1}}}, ErrDimension},
		{"H1 missing", Header{Kind: KindQuadratic, D: 1, H0: [][]float64{{1}}}, ErrDimension},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewHistory(tt.h, nil)
			require.ErrorIs(t, err, tt.sentinel)
		})
	}
}

func TestHistoryPrefixAndCounterfactual(t *testing.T) {
	h, err := NewHistory(Header{Kind: KindLogistic, D: 2, Lambda: 0.05}, sampleEvents())
	require.NoError(t, err)
	p := h.Prefix(4)
	assert.Equal(t, []int64{1, 2, 3, 1}, ids(p), "Prefix(4) ids")
	assert.Equal(t, 4, cap(p), "cap(Prefix(4)) must be 4 so appends cannot overwrite the history")
	cf := h.Counterfactual(NewIDSet(1))
	assert.NoError(t, Validate(cf.Loss, cf.Events), "counterfactual history invalid")
	assert.Equal(t, []int64{2, 3, 4, 3, 5}, ids(cf.Events), "counterfactual ids")
	for _, bad := range []int{-1, 8} {
		t.Run(fmt.Sprintf("Prefix(%d) panics", bad), func(t *testing.T) {
			assert.Panics(t, func() { h.Prefix(bad) })
		})
	}
}

// TestValidatorStateMachine checks the Validator against a model (the sets of
// inserted and deleted ids) on random sequences of valid and invalid events:
// after every action, the Validator's verdict must be the model's.
func TestValidatorStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const d = 3
		loss, err := NewLogistic(d, 0.05)
		require.NoError(t, err)
		v := NewValidator(loss)
		inserted, deleted := IDSet{}, IDSet{}
		var insertedList []int64
		accepted := 0
		x := func() []float64 { return rapid.SliceOfN(rapid.Float64Range(-5, 5), d, d).Draw(t, "x") }
		expect := func(e Event, want error) {
			t.Helper()
			err := v.Check(e)
			if want == nil {
				require.NoError(t, err, "Check(%+v)", e)
				accepted++
				return
			}
			require.ErrorIs(t, err, want, "Check(%+v)", e)
			var ee *EventError
			require.ErrorAs(t, err, &ee)
			require.Equal(t, accepted, ee.Index, "error %v does not locate event %d (id %d)", err, accepted, e.ID)
			require.Equal(t, e.ID, ee.ID, "error %v does not locate event %d (id %d)", err, accepted, e.ID)
		}
		t.Repeat(map[string]func(*rapid.T){
			"insert new": func(t *rapid.T) {
				id := rapid.Int64().Filter(func(id int64) bool { return !inserted.Has(id) }).Draw(t, "id")
				expect(InsertEvent(id, x(), 1), nil)
				inserted.Add(id)
				insertedList = append(insertedList, id)
			},
			"insert duplicate": func(t *rapid.T) {
				if len(insertedList) == 0 {
					t.Skip("nothing inserted")
				}
				id := rapid.SampledFrom(insertedList).Draw(t, "id")
				expect(InsertEvent(id, x(), -1), ErrDuplicateID)
			},
			"insert wrong dimension": func(t *rapid.T) {
				n := rapid.IntRange(0, 2*d).Filter(func(n int) bool { return n != d }).Draw(t, "n")
				expect(InsertEvent(rapid.Int64().Filter(func(id int64) bool { return !inserted.Has(id) }).Draw(t, "id"),
					make([]float64, n), 1), ErrDimension)
			},
			"insert non-finite": func(t *rapid.T) {
				v := x()
				v[rapid.IntRange(0, d-1).Draw(t, "at")] = rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), math.Inf(-1)}).Draw(t, "bad")
				expect(InsertEvent(rapid.Int64().Filter(func(id int64) bool { return !inserted.Has(id) }).Draw(t, "id"), v, 1), ErrNonFinite)
			},
			"delete live": func(t *rapid.T) {
				var live []int64
				for _, id := range insertedList {
					if !deleted.Has(id) {
						live = append(live, id)
					}
				}
				if len(live) == 0 {
					t.Skip("nothing live")
				}
				id := rapid.SampledFrom(live).Draw(t, "id")
				expect(DeleteEvent(id), nil)
				deleted.Add(id)
			},
			"delete again": func(t *rapid.T) {
				if len(deleted) == 0 {
					t.Skip("nothing deleted")
				}
				expect(DeleteEvent(rapid.SampledFrom(deleted.Sorted()).Draw(t, "id")), ErrRepeatedDeletion)
			},
			"delete unknown": func(t *rapid.T) {
				id := rapid.Int64().Filter(func(id int64) bool { return !inserted.Has(id) }).Draw(t, "id")
				expect(DeleteEvent(id), ErrUnknownDeletion)
			},
		})
	})
}

func TestNewValidatorNilPanics(t *testing.T) {
	assert.Panics(t, func() { NewValidator(nil) })
}
