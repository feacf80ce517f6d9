package stream

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestOpString(t *testing.T) {
	for _, tt := range []struct {
		op   Op
		want string
	}{{Insert, "insert"}, {Delete, "delete"}, {0, "Op(0)"}, {9, "Op(9)"}} {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.op.String())
		})
	}
}

func TestIDSet(t *testing.T) {
	s := NewIDSet(5, -1, 3, 5)
	assert.Equal(t, []int64{-1, 3, 5}, s.Sorted(), "Sorted()")
	assert.True(t, s.Has(3), "Has(3)")
	assert.False(t, s.Has(4), "Has(4)")
	assert.True(t, s.Meets([]int64{9, 8, 5}), "Meets([9 8 5])")
	assert.False(t, s.Meets([]int64{9, 8}), "Meets([9 8])")
	assert.False(t, s.Meets(nil), "Meets(nil)")
	s.Add(4)
	assert.True(t, s.Has(4), "Add(4) did not add")
	var zero IDSet
	assert.False(t, zero.Has(1), "the zero IDSet has 1")
	assert.Empty(t, zero.Sorted(), "the zero IDSet is not an empty set")
}

// sampleEvents is a small valid logistic history with deletes.
func sampleEvents() []Event {
	x := func(v float64) []float64 { return []float64{v, -v} }
	return []Event{
		InsertEvent(1, x(1), 1),
		InsertEvent(2, x(2), -1),
		InsertEvent(3, x(3), 1),
		DeleteEvent(1),
		InsertEvent(4, x(4), 1),
		DeleteEvent(3),
		InsertEvent(5, x(5), -1),
	}
}

func ids(events []Event) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

func TestCounterfactual(t *testing.T) {
	tests := []struct {
		name    string
		u       IDSet
		wantIDs []int64
		wantOps []Op
	}{
		{"empty U keeps everything", nil, []int64{1, 2, 3, 1, 4, 3, 5},
			[]Op{Insert, Insert, Insert, Delete, Insert, Delete, Insert}},
		{"drops insert and delete of 1", NewIDSet(1), []int64{2, 3, 4, 3, 5},
			[]Op{Insert, Insert, Insert, Delete, Insert}},
		{"drops never-deleted insert", NewIDSet(2, 5), []int64{1, 3, 1, 4, 3},
			[]Op{Insert, Insert, Delete, Insert, Delete}},
		{"ids not in stream are ignored", NewIDSet(42, 3), []int64{1, 2, 1, 4, 5},
			[]Op{Insert, Insert, Delete, Insert, Insert}},
		{"everything", NewIDSet(1, 2, 3, 4, 5), []int64{}, []Op{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := sampleEvents()
			before := slices.Clone(in)
			got := Counterfactual(in, tt.u)
			assert.Equal(t, tt.wantIDs, ids(got), "ids")
			ops := make([]Op, len(got))
			for i, e := range got {
				ops[i] = e.Op
			}
			assert.Equal(t, tt.wantOps, ops, "ops")
			assert.True(t, slices.EqualFunc(in, before, func(a, b Event) bool { return a.ID == b.ID && a.Op == b.Op }),
				"Counterfactual modified its input")
		})
	}
}

func TestInsertAndDeletedIDs(t *testing.T) {
	ev := sampleEvents()
	assert.Equal(t, []int64{1, 2, 3, 4, 5}, InsertIDs(ev), "InsertIDs")
	assert.Equal(t, []int64{1, 3}, DeletedIDs(ev).Sorted(), "DeletedIDs")
}

// validStream draws a random valid event sequence of a d-dimensional
// logistic stream: inserts with distinct (not necessarily ordered) ids and
// deletes of earlier, not yet deleted inserts.
func validStream(t *rapid.T, d int) []Event {
	n := rapid.IntRange(0, 60).Draw(t, "n")
	var events []Event
	var live []int64
	used := map[int64]bool{}
	for range n {
		if len(live) > 0 && rapid.Bool().Draw(t, "delete") {
			k := rapid.IntRange(0, len(live)-1).Draw(t, "victim")
			events = append(events, DeleteEvent(live[k]))
			live = slices.Delete(live, k, k+1)
			continue
		}
		id := rapid.Int64Range(-1000, 1000).Filter(func(id int64) bool { return !used[id] }).Draw(t, "id")
		used[id] = true
		live = append(live, id)
		x := rapid.SliceOfN(rapid.Float64Range(-10, 10), d, d).Draw(t, "x")
		y := rapid.SampledFrom([]float64{-1, 1}).Draw(t, "y")
		events = append(events, InsertEvent(id, x, y))
	}
	return events
}

func TestCounterfactualProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const d = 2
		loss, err := NewLogistic(d, 0.05)
		require.NoError(t, err)
		events := validStream(t, d)
		require.NoError(t, Validate(loss, events), "generated stream invalid")
		// U mixes ids of the stream and ids that are not in it.
		u := NewIDSet(rapid.SliceOf(rapid.Int64Range(-1100, 1100)).Draw(t, "U")...)
		cf := Counterfactual(events, u)
		require.NoError(t, Validate(loss, cf), "counterfactual invalid")
		for _, e := range cf {
			require.False(t, u.Has(e.ID), "counterfactual contains id %d of U", e.ID)
		}
		// cf is exactly the subsequence of events with id ∉ U, in order.
		j := 0
		for _, e := range events {
			if u.Has(e.ID) {
				continue
			}
			if j >= len(cf) || cf[j].ID != e.ID || cf[j].Op != e.Op {
				t.Fatalf("counterfactual event %d is not the next retained event %+v", j, e)
			}
			if e.Op == Insert && &cf[j].Sample.V[0] != &e.Sample.V[0] {
				t.Fatalf("counterfactual event %d does not share its sample with the input", j)
			}
			j++
		}
		require.Equal(t, j, len(cf), "events in the counterfactual")
	})
}

func TestLastInserts(t *testing.T) {
	events := []Event{
		InsertEvent(1, []float64{0}, 0), InsertEvent(2, []float64{0}, 0), DeleteEvent(1),
		InsertEvent(3, []float64{0}, 0), DeleteEvent(3), InsertEvent(4, []float64{0}, 0),
	}
	ids := func(es []Event) []int64 {
		var out []int64
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	for _, tt := range []struct {
		n    int
		want []int64
	}{
		{0, nil},
		{1, []int64{4}},
		{2, []int64{3, 4}}, // the delete between them is skipped, not counted
		{3, []int64{2, 3, 4}},
		{9, []int64{1, 2, 3, 4}}, // fewer inserts than n: all of them
	} {
		require.Equal(t, tt.want, ids(LastInserts(events, tt.n)), "n = %d", tt.n)
	}
	// Composed with Counterfactual: the retained samples among the last 3.
	require.Equal(t, []int64{2, 4}, ids(Counterfactual(LastInserts(events, 3), NewIDSet(3))))
}
