package olbfgs

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

// hingeSq is a user's loss kind registered through stream.RegisterLoss: the
// squared hinge ½·max(0, 1 − y xᵀw)² + (λ/2)‖w‖², with λ in the header's
// "lambda" and a margin constant in the header metadata.
type hingeSq struct {
	d              int
	lambda, margin float64
}

const kindHingeSq stream.Kind = "squared-hinge-test"

func (h *hingeSq) Kind() stream.Kind { return kindHingeSq }
func (h *hingeSq) Dim() int          { return h.d }
func (h *hingeSq) Grad(dst, w []float64, z stream.Sample) {
	var m float64
	for j := range w {
		m += z.V[j] * w[j]
	}
	c := -z.S * math.Max(0, h.margin-z.S*m)
	for i := range dst {
		dst[i] = c*z.V[i] + h.lambda*w[i]
	}
}
func (h *hingeSq) Value(w []float64, z stream.Sample) float64 {
	var m, ww float64
	for j := range w {
		m += z.V[j] * w[j]
		ww += w[j] * w[j]
	}
	r := math.Max(0, h.margin-z.S*m)
	return r*r/2 + h.lambda/2*ww
}
func (h *hingeSq) CheckSample(z stream.Sample) (string, error) {
	if len(z.V) != h.d {
		return "x", stream.ErrDimension
	}
	return "", nil
}
func (h *hingeSq) Header() stream.Header {
	hdr := stream.Header{Kind: kindHingeSq, D: h.d, Lambda: h.lambda}
	if err := hdr.SetMeta("margin", h.margin); err != nil {
		panic(err)
	}
	return hdr
}

// TestSnapshotRegisteredLoss: a learner on a user's registered loss kind is
// saved and loaded through stream.HeaderOf and the registry, bit for bit.
func TestSnapshotRegisteredLoss(t *testing.T) {
	require.NoError(t, stream.RegisterLoss(kindHingeSq, stream.LossSpec{
		Vector: "x", Scalar: "y", Lambda: true,
		New: func(h stream.Header) (stream.Loss, error) {
			var margin float64
			if ok, err := h.MetaValue("margin", &margin); err != nil || !ok {
				return nil, &stream.FieldError{Field: "margin", Err: stream.ErrFormat}
			}
			return &hingeSq{d: h.D, lambda: h.Lambda, margin: margin}, nil
		},
	}))
	loss := &hingeSq{d: 3, lambda: 0.05, margin: 1}
	var events []stream.Event
	for i := range 40 {
		x := []float64{math.Sin(float64(i)), math.Cos(float64(3 * i)), 1}
		y := 1.0
		if i%3 == 0 {
			y = -1
		}
		events = append(events, stream.InsertEvent(int64(i+1), x, y))
	}
	events = append(events, stream.DeleteEvent(7))
	l, err := Replay(DefaultConfig(3), loss, events)
	require.NoError(t, err)
	h, err := stream.HeaderOf(loss)
	require.NoError(t, err)
	data, err := MarshalSnapshot(l, h)
	require.NoError(t, err)
	back, h2, err := UnmarshalSnapshot(data)
	require.NoError(t, err)
	require.Equal(t, kindHingeSq, h2.Kind)
	require.Equal(t, loss, back.Loss())
	data2, err := MarshalSnapshot(back, h2)
	require.NoError(t, err)
	require.Equal(t, string(data), string(data2), "save(load(save(l))) = save(l)")
	// Training on from the loaded state equals training on from the original.
	more := stream.InsertEvent(100, []float64{0.3, -0.2, 1}, -1)
	require.NoError(t, l.Step(more))
	require.NoError(t, back.Step(more))
	require.Equal(t, l.W(), back.W())
}
