package olbfgs

import (
	"testing"

	"pgregory.net/rapid"

	"unlearn/stream"
)

// TestFollowProperty (rapid): a learner equal to another that follows its
// inserts (Follow) stays bitwise Equal to a third that steps them itself,
// through pushed and skipped pairs (the curvature guard), capacities 0..3
// and deletes; Follow refuses, changing nothing, when its conditions do not
// hold (another event's id, a source that stepped twice or changed since,
// a follower with checkpoints).
func TestFollowProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		const d = 3
		tau := rapid.IntRange(0, 3).Draw(rt, "tau")
		cfg := DefaultConfig(d)
		cfg.Memory = tau
		cfg.CurvatureTol = rapid.SampledFrom([]float64{cfg.CurvatureTol, 0.9}).Draw(rt, "tol")
		loss, err := stream.NewLogistic(d, 0.1)
		if err != nil {
			rt.Fatal(err)
		}
		mk := func() *Learner {
			l, err := New(cfg, loss)
			if err != nil {
				rt.Fatal(err)
			}
			return l
		}
		src, fol, own := mk(), mk(), mk()
		for i := range rapid.IntRange(1, 25).Draw(rt, "events") {
			id := int64(i + 1)
			if rapid.IntRange(0, 5).Draw(rt, "op") == 0 {
				e := stream.Event{Op: stream.Delete, ID: id - 1}
				if fol.Follow(src, e) {
					rt.Fatal("Follow of a delete")
				}
				for _, l := range []*Learner{src, fol, own} {
					_ = l.Step(e) // a repeated deletion fails on all three alike
				}
				continue
			}
			x := []float64{rapid.Float64Range(-2, 2).Draw(rt, "x0"), rapid.Float64Range(-2, 2).Draw(rt, "x1"), rapid.Float64Range(-2, 2).Draw(rt, "x2")}
			e := stream.Event{Op: stream.Insert, ID: id, Sample: stream.Sample{V: x, S: float64(1 - 2*(i%2))}}
			if fol.Follow(src, e) {
				rt.Fatal("Follow before the source stepped")
			}
			if err := src.Step(e); err != nil {
				rt.Fatal(err)
			}
			if err := own.Step(e); err != nil {
				rt.Fatal(err)
			}
			other := e
			other.ID++
			if fol.Follow(src, other) {
				rt.Fatal("Follow of another event")
			}
			if !fol.Follow(src, e) {
				rt.Fatal("Follow refused")
			}
			if !fol.Equal(own) || !fol.Equal(src) {
				rt.Fatalf("event %d: the follower differs from stepping itself", i)
			}
			if fol.Follow(src, e) {
				rt.Fatal("Follow twice")
			}
		}
		// A source changed after its step is not followed.
		e := stream.Event{Op: stream.Insert, ID: 1000, Sample: stream.Sample{V: []float64{1, -1, 0.5}, S: 1}}
		if err := src.Step(e); err != nil {
			rt.Fatal(err)
		}
		c := fol.Clone()
		src2 := src.Clone()
		src.SetW(src.W())
		if fol.Follow(src, e) || !fol.Equal(c) {
			rt.Fatal("Follow of a source whose w was set after its step")
		}
		if err := src2.Step(e); err != nil {
			rt.Fatal(err)
		}
		src2.Memory().Reset()
		if fol.Follow(src2, e) || !fol.Equal(c) {
			rt.Fatal("Follow of a source whose memory changed after its step")
		}
	})
}
