package experiment

import (
	"fmt"
	"math"

	"unlearn/align"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// meter adapts package align to the runner: one align.Engine per run, fed
// the reference and every state at each step, with the points appended to
// align.Series buffers that a worker reuses from run to run. The metrics
// and summaries are align's.
type meter struct {
	eng     *align.Engine
	tau     int
	buffers []*align.Series
	points  []align.Point
	workers int // states measured in parallel at each step

	// Twin states (twins.go): whether to detect them (detectTwins at
	// reset), each state's root at the current step (−1: none, the state
	// is measured), what was last seen of each twin, the roots' states and
	// points for MeasureAll, and the numbers of twin points this run: in
	// all, and of states not identical to the reference.
	twins      bool
	roots      []int
	seen       []twinSeen
	rootStates []*olbfgs.Learner
	rootIdx    []int
	rootPts    []align.Point
	twinPoints int
	twinDiffer int
}

// memoryErrorMethod is how the meter's engines compute E_Z: align's
// default (the coefficient space from d ≥ align.CoefficientMinDim). Tests
// set it to reach the coefficient space at small d.
var memoryErrorMethod = align.MemoryErrorAuto

// reset prepares the meter for a run of configuration c in dimension d with
// deletion set u and n states.
func (m *meter) reset(c Config, d int, u stream.IDSet, n int) error {
	opt := align.Options{Probes: c.Probes, LambdaZ: c.LambdaZ, ProbeVectors: c.ProbeVectors, MemoryError: memoryErrorMethod}
	if c.ProbeSeed != nil {
		opt.Seed = *c.ProbeSeed
	}
	eng, err := align.NewEngine(d, opt)
	if err != nil {
		if c.ProbeVectors != nil {
			return &ConfigError{Field: "ProbeVectors", Value: len(c.ProbeVectors), Want: err.Error()}
		}
		return &ConfigError{Field: "Probes", Value: c.Probes, Want: err.Error()}
	}
	eng.SetDeletion(u)
	m.eng, m.tau = eng, c.Tau
	m.twins, m.twinPoints, m.twinDiffer = detectTwins, 0, 0
	for i := range m.seen {
		m.seen[i].root = -1 // the versions seen were of another run's learners
	}
	for len(m.buffers) < n {
		m.buffers = append(m.buffers, align.NewSeries(c.Horizon+1))
	}
	for _, s := range m.buffers[:n] {
		s.Ew, s.EZ, s.ETheta = s.Ew[:0], s.EZ[:0], s.ETheta[:0]
		s.Dupd, s.DupdDefined, s.Mdirect, s.RefWNorm = s.Dupd[:0], s.DupdDefined[:0], s.Mdirect[:0], s.RefWNorm[:0]
	}
	return nil
}

// measure appends step k of every state against the reference; next is the
// payload of the next insert after state k, or nil (D_upd undefined). A
// state bitwise equal to an earlier one (its root, twins.go) takes a copy of
// its root's point; the roots are measured on m.workers goroutines
// (align.Engine.MeasureAll: the same bits as one by one). m.roots then
// holds each state's root for stepAll.
func (m *meter) measure(ref *olbfgs.Learner, states []*olbfgs.Learner, next *stream.Sample) {
	m.eng.SetReference(ref, next)
	n := len(states)
	if cap(m.points) < n {
		m.points = make([]align.Point, n)
	}
	pts := m.points[:n]
	m.findTwins(states)
	roots := m.roots[:n]
	m.rootStates, m.rootIdx = m.rootStates[:0], m.rootIdx[:0]
	for i, st := range states {
		if roots[i] < 0 {
			m.rootStates = append(m.rootStates, st)
			m.rootIdx = append(m.rootIdx, i)
		}
	}
	if len(m.rootStates) == n {
		m.eng.MeasureAll(pts, states, m.workers)
	} else {
		if cap(m.rootPts) < n {
			m.rootPts = make([]align.Point, n)
		}
		rp := m.rootPts[:len(m.rootStates)]
		m.eng.MeasureAll(rp, m.rootStates, m.workers)
		for j, i := range m.rootIdx {
			pts[i] = rp[j]
		}
		for i, r := range roots {
			if r >= 0 {
				pts[i] = pts[r]
				if !pts[i].Identical {
					m.twinDiffer++
				}
			}
		}
	}
	for i, p := range pts {
		m.buffers[i].Append(p)
	}
}

// result returns state i's summary and, if keep, a copy of its series with
// NaN where D_upd is undefined.
func (m *meter) result(i int, keep bool) (Summary, *Series) {
	s := m.buffers[i]
	a := s.Summarize(m.tau)
	sum := Summary{
		InitialParam: a.Initial.Ew, InitialMemory: a.Initial.EZ, InitialState: a.Initial.ETheta,
		FinalState: a.Final.ETheta, AUC: a.StateAUC, ParamAUC: a.ParamAUC, MemoryAUC: a.MemoryAUC,
		UpdateAUC: a.UpdateAUC, DirectMass: a.Initial.Mdirect, Clearance: -1, Exact: a.ExactRecovery,
	}
	if a.Cleared {
		sum.Clearance = a.ClearanceStep
	}
	for p, f := range a.Decay {
		if f.OK {
			sum.Rho[p] = new(f.Rho)
		}
	}
	if !keep {
		return sum, nil
	}
	out := newSeries(s.Len())
	copy(out.Ew, s.Ew)
	copy(out.EZ, s.EZ)
	copy(out.ETheta, s.ETheta)
	copy(out.Mdirect, s.Mdirect)
	for k, v := range s.Dupd {
		out.Dupd[k] = v
		if !s.DupdDefined[k] {
			out.Dupd[k] = math.NaN()
		}
	}
	return sum, out
}

// checkSeries panics if the meter's buffers do not hold steps steps (a
// programmer error in the runner).
func (m *meter) checkSeries(n, steps int) {
	for _, s := range m.buffers[:n] {
		if s.Len() != steps {
			panic(fmt.Sprintf("experiment: series of %d steps, want %d", s.Len(), steps))
		}
	}
}
