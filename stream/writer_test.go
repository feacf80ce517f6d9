package stream

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriterMatchesWrite(t *testing.T) {
	q, err := GenerateQuadratic(QuadraticOptions{D: 3, T: 60, Seed: 4})
	require.NoError(t, err)
	l, err := GenerateLogistic(LogisticOptions{D: 3, T: 60, Seed: 4})
	require.NoError(t, err)
	l.Events = append(l.Events, DeleteEvent(7))
	for _, h := range []*History{q, l} {
		var whole, streamed bytes.Buffer
		require.NoError(t, Write(&whole, h))
		sw, err := NewWriter(&streamed, h.Header)
		require.NoError(t, err)
		for _, e := range h.Events {
			require.NoError(t, sw.Write(e))
		}
		require.NoError(t, sw.Flush())
		assert.Equal(t, len(h.Events), sw.Count())
		assert.Equal(t, whole.String(), streamed.String(), "%s: Writer writes what Write writes", h.Header.Kind)
	}
}

func TestWriterValidates(t *testing.T) {
	var b bytes.Buffer
	sw, err := NewWriter(&b, Header{Kind: KindRegression, D: 2, Lambda: 0.1})
	require.NoError(t, err)
	require.NoError(t, sw.Write(InsertEvent(5, []float64{1, 2}, 3.5)))
	err = sw.Write(InsertEvent(5, []float64{1, 2}, 3.5))
	var ee *EventError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.Index)
	assert.ErrorIs(t, err, ErrDuplicateID)
	assert.ErrorIs(t, sw.Write(InsertEvent(6, []float64{1}, 0)), ErrDimension)
	require.NoError(t, sw.Flush())
	back, err := Read(&b)
	require.NoError(t, err)
	assert.Len(t, back.Events, 1, "rejected events are not written")

	_, err = NewWriter(&b, Header{Kind: "nonesuch", D: 1})
	assert.ErrorIs(t, err, ErrInvalidValue)
}
