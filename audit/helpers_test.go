package audit

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"

	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// pipeline is a deletion scenario of the paper's Experiment 2 shape: a
// drifting quadratic stream (d = 25, κ = 10, spec §1.2) generated with
// seed, the prefix e_1..e_tdel, U the count most recent inserts (spec §4).
type pipeline struct {
	cfg    olbfgs.Config
	loss   stream.Loss
	prefix []stream.Event
	u      stream.IDSet
}

func newPipeline(t testing.TB, seed uint64, tdel, count int) pipeline {
	t.Helper()
	o := stream.DefaultQuadraticOptions()
	o.Seed, o.T = seed, tdel
	h, err := stream.GenerateQuadratic(o)
	require.NoError(t, err)
	ids, err := stream.ChooseDeletions(h.Events, stream.Recent, count, stream.ChooseOptions{})
	require.NoError(t, err)
	u := stream.DeletedIDs(h.Events)
	for _, id := range ids {
		u.Add(id)
	}
	return pipeline{cfg: olbfgs.DefaultConfig(h.Header.D), loss: h.Loss, prefix: h.Events, u: u}
}

// worlds returns the un-noised states of the two worlds for op and their
// true distance ‖w_A − w_B‖₂.
func (p pipeline) worlds(t testing.TB, op unlearn.Operator) (a, b *olbfgs.Learner, dist float64) {
	t.Helper()
	a, b, err := Worlds(p.cfg, p.loss, p.prefix, p.u, op)
	require.NoError(t, err)
	return a, b, floats.Distance(a.W(), b.W(), 2)
}
