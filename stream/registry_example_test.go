package stream_test

import (
	"bytes"
	"fmt"
	"math"

	"unlearn/stream"
)

// huber is a user's loss kind: the Huber regression loss with threshold c
// (a header metadata constant) and ridge λ (the header's lambda).
type huber struct {
	d         int
	c, lambda float64
}

func (h *huber) Kind() stream.Kind { return "huber" }
func (h *huber) Dim() int          { return h.d }
func (h *huber) Grad(dst, w []float64, z stream.Sample) {
	var r float64
	for j := range w {
		r += z.V[j] * w[j]
	}
	g := math.Max(-h.c, math.Min(h.c, r-z.S))
	for i := range dst {
		dst[i] = g*z.V[i] + h.lambda*w[i]
	}
}
func (h *huber) Value(w []float64, z stream.Sample) float64 {
	var r, ww float64
	for j := range w {
		r += z.V[j] * w[j]
		ww += w[j] * w[j]
	}
	r = math.Abs(r - z.S)
	if r <= h.c {
		return r*r/2 + h.lambda/2*ww
	}
	return h.c*(r-h.c/2) + h.lambda/2*ww
}
func (h *huber) CheckSample(z stream.Sample) (string, error) {
	if len(z.V) != h.d {
		return "x", stream.ErrDimension
	}
	return "", nil
}

// Header makes the loss a stream.HeaderProvider: its constants go in the
// header, so streams and snapshots of this kind can be written and read.
func (h *huber) Header() stream.Header {
	hdr := stream.Header{Kind: "huber", D: h.d, Lambda: h.lambda}
	_ = hdr.SetMeta("c", h.c)
	return hdr
}

// Register a loss kind of one's own; streams of that kind are then written
// and read like the built-in ones.
func ExampleRegisterLoss() {
	err := stream.RegisterLoss("huber", stream.LossSpec{
		Vector: "x", Scalar: "y", Lambda: true,
		New: func(h stream.Header) (stream.Loss, error) {
			var c float64
			if ok, err := h.MetaValue("c", &c); err != nil || !ok || !(c > 0) {
				return nil, &stream.FieldError{Field: "c", Err: stream.ErrInvalidValue}
			}
			return &huber{d: h.D, c: c, lambda: h.Lambda}, nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	hdr, _ := stream.HeaderOf(&huber{d: 2, c: 1.5, lambda: 0.01})
	h, _ := stream.NewHistory(hdr, []stream.Event{stream.InsertEvent(1, []float64{0.5, -1}, 3)})
	var b bytes.Buffer
	_ = stream.Write(&b, h)
	fmt.Print(b.String())
	back, err := stream.Read(&b)
	fmt.Println(back.Loss.Kind(), back.Loss.(*huber).c, err)
	// Output:
	// {"format":"olbfgs-stream/v1","kind":"huber","d":2,"lambda":0.01,"c":1.5}
	// {"op":"insert","id":1,"x":[0.5,-1],"y":3}
	// huber 1.5 <nil>
}
