package store

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// The attacker of these tests has every byte of the store directory after
// an approximate forget, the learner's public configuration and the
// algorithm, and rebuilds the deleted payload by least squares: it
// restores the newest stored state before the deleted insert, and fits the
// payload z so that stepping z and then the retained events of the log
// (and the intervention) gives a stored state after it. Before version 6
// the store kept the un-noised state and every checkpoint after the
// deleted insert, and this solver rebuilt the payload to 11–14 digits; now
// it must fail, while the same solver on the same store before the forget
// (the control) succeeds, so that the test can fail.

// attackModel maps a candidate payload to the state a stored one is
// compared with: from start, step the candidate (id), then the events
// after it.
type attackModel struct {
	start *olbfgs.Learner
	id    int64
	after []stream.Event
	kind  stream.Kind
	label float64 // logistic: the label tried (±1)
	d     int
	w     bool // compare w only (the stored state's memory is empty)
}

// params is the number of unknowns: x for logistic (the label is tried
// both ways), (α, a) for quadratic.
func (m attackModel) params() int {
	if m.kind == stream.KindLogistic {
		return m.d
	}
	return m.d + 1
}

func (m attackModel) sample(p []float64) stream.Sample {
	if m.kind == stream.KindLogistic {
		return stream.Sample{S: m.label, V: slices.Clone(p)}
	}
	return stream.Sample{S: p[0], V: slices.Clone(p[1:])}
}

// state flattens the learner's state for the residual: w, then every
// memory pair's s and y (only w when m.w).
func (m attackModel) state(p []float64) []float64 {
	l := m.start.Clone()
	if err := l.Step(stream.Event{Op: stream.Insert, ID: m.id, Sample: m.sample(p)}); err != nil {
		return nil
	}
	if err := l.Run(m.after); err != nil {
		return nil
	}
	out := slices.Clone(l.W())
	if !m.w {
		for i := range l.Memory().Len() {
			pr := l.Memory().Pair(i)
			out = append(out, pr.S...)
			out = append(out, pr.Y...)
		}
	}
	return out
}

// solve fits p to target by Levenberg–Marquardt with a central-difference
// Jacobian, from p0; it returns the best p and its residual norm. A
// candidate whose state has another shape (another number of pairs) has
// an infinite residual.
func (m attackModel) solve(target, p0 []float64) ([]float64, float64) {
	n := m.params()
	p := slices.Clone(p0)
	res := func(p []float64) []float64 {
		s := m.state(p)
		if len(s) != len(target) {
			return nil
		}
		floats.Sub(s, target)
		return s
	}
	norm := func(r []float64) float64 {
		if r == nil {
			return math.Inf(1)
		}
		return floats.Norm(r, 2)
	}
	r := res(p)
	best, lambda := norm(r), 1e-3
	for it := 0; it < 200 && r != nil && best > 1e-15; it++ {
		J := mat.NewDense(len(r), n, nil)
		for j := range n {
			h := 1e-6 * math.Max(1, math.Abs(p[j]))
			pp, pm := slices.Clone(p), slices.Clone(p)
			pp[j] += h
			pm[j] -= h
			rp, rm := res(pp), res(pm)
			if rp == nil || rm == nil {
				return p, best
			}
			for i := range r {
				J.Set(i, j, (rp[i]-rm[i])/(2*h))
			}
		}
		var jtj mat.Dense
		jtj.Mul(J.T(), J)
		var g mat.VecDense
		g.MulVec(J.T(), mat.NewVecDense(len(r), r))
		improved := false
		for range 20 {
			a := mat.DenseCopyOf(&jtj)
			for i := range n {
				a.Set(i, i, a.At(i, i)*(1+lambda)+1e-300)
			}
			var step mat.VecDense
			if err := step.SolveVec(a, &g); err != nil {
				lambda *= 10
				continue
			}
			q := slices.Clone(p)
			for i := range n {
				q[i] -= step.AtVec(i)
			}
			if rq := res(q); norm(rq) < best {
				p, r, best = q, rq, norm(rq)
				lambda = math.Max(lambda/10, 1e-12)
				improved = true
				break
			}
			lambda *= 10
		}
		if !improved {
			break
		}
	}
	return p, best
}

// attack runs the solver for every label (logistic) from the origin and
// from every payload of starts (the attacker guesses that the deleted row
// looks like the retained ones), and returns the candidate with the
// smallest residual, as a sample.
func attack(m attackModel, target []float64, starts []stream.Event) stream.Sample {
	labels := []float64{0}
	if m.kind == stream.KindLogistic {
		labels = []float64{-1, 1}
	}
	origin := stream.Sample{V: make([]float64, m.d), S: 0.5}
	inits := []stream.Sample{origin}
	for _, e := range starts {
		inits = append(inits, e.Sample)
	}
	var out stream.Sample
	best := math.Inf(1)
	for _, y := range labels {
		m.label = y
		for _, z0 := range inits {
			p, r := m.solve(target, stateParams(m.kind, z0))
			if r < best {
				best, out = r, m.sample(p)
			}
		}
	}
	return out
}

// relErr is the relative error of a rebuilt payload. A logistic step
// depends on the payload through y·x only, so that is what is compared:
// ‖ŷx̂ − yx‖/‖x‖; a quadratic payload is compared whole: ‖â − a‖/‖a‖ +
// |α̂ − α|.
func relErr(got, want stream.Sample) float64 {
	g, w := slices.Clone(got.V), slices.Clone(want.V)
	if got.S == 1 || got.S == -1 {
		floats.Scale(got.S, g)
		floats.Scale(want.S, w)
		floats.Sub(g, w)
		return floats.Norm(g, 2) / floats.Norm(want.V, 2)
	}
	floats.Sub(g, w)
	return floats.Norm(g, 2)/floats.Norm(want.V, 2) + math.Abs(got.S-want.S)
}

// storedMaterial reads what the attacker finds in the store: the newest
// checkpoint before seq, every checkpoint after it and the state, decoded,
// and the log's events (payloads of retained inserts) after seq.
func storedMaterial(t *testing.T, s *Store, seq int64) (before *olbfgs.Learner, after map[int64]*olbfgs.Learner, state *olbfgs.Learner, log []stream.Event) {
	t.Helper()
	rows, err := s.db.Query(`SELECT seq, snapshot FROM checkpoints ORDER BY seq`)
	require.NoError(t, err)
	after = map[int64]*olbfgs.Learner{}
	for rows.Next() {
		var c int64
		var snap []byte
		require.NoError(t, rows.Scan(&c, &snap))
		l, err := s.decodeState(snap)
		require.NoError(t, err)
		if c < seq {
			before = l
		} else {
			after[c] = l
		}
	}
	require.NoError(t, rows.Close())
	var snap []byte
	require.NoError(t, s.db.QueryRow(`SELECT snapshot FROM state`).Scan(&snap))
	state, err = s.decodeState(snap)
	require.NoError(t, err)
	rows, err = s.db.Query(`SELECT seq, id, payload FROM events WHERE seq > ? ORDER BY seq`, seq)
	require.NoError(t, err)
	for rows.Next() {
		var c, id int64
		var p []byte
		require.NoError(t, rows.Scan(&c, &id, &p))
		if p == nil {
			continue
		}
		z, err := decodePayload(p, s.cfg.Dim)
		require.NoError(t, err)
		log = append(log, stream.Event{Op: stream.Insert, ID: id, Sample: z})
	}
	require.NoError(t, rows.Close())
	return before, after, state, log
}

// TestAttackAfterApproximateForget: the solver rebuilds the deleted
// payload from the store before the forget (every checkpoint after the
// insert, and the un-noised current state that a pre-version-6 noop forget
// kept as it was), and fails on every byte the store holds after it.
func TestAttackAfterApproximateForget(t *testing.T) {
	for _, tc := range []struct {
		kind      stream.Kind
		d, n, del int
		byKey     bool
	}{
		{stream.KindLogistic, 3, 40, 30, false}, // 10 events old
		{stream.KindLogistic, 3, 40, 30, true},  // forgotten by its key
		{stream.KindQuadratic, 2, 20, 15, false},
	} {
		t.Run(string(tc.kind)+map[bool]string{true: " by key", false: ""}[tc.byKey], func(t *testing.T) {
			h := genHistory(t, tc.kind, tc.d, tc.n, 41)
			cfg := learnerConfig(tc.d, 3)
			s, err := Create(t.TempDir(), Config{Header: h.Header, Learner: cfg, CheckpointEvery: 1}) // a checkpoint after every event: all the attacker could wish for
			require.NoError(t, err)
			defer s.Close()
			_, err = s.IngestEvents(keyedFile(h.Events), IngestOptions{})
			require.NoError(t, err)
			seq := int64(tc.del)
			z := h.Events[tc.del-1].Sample
			base := attackModel{id: int64(tc.del), kind: tc.kind, d: tc.d}

			// Control: the stored checkpoint at the deleted insert, and the
			// current state, each give z back.
			before, after, state, log := storedMaterial(t, s, seq)
			starts := h.Events[:4] // the attacker's initial guesses: retained rows
			m := base
			m.start, m.after, m.label = before, nil, z.S
			require.Less(t, relErr(attack(m, m.state(stateParams(tc.kind, z)), starts), z), 1e-9, "the solver works on an exact step (sanity)")
			require.Less(t, relErr(attack(m, flatten(after[seq], false), starts), z), 1e-7, "control: the checkpoint at the deleted insert")
			m.after = log
			ctl := relErr(attack(m, flatten(state, false), starts), z)
			t.Logf("control: relative error from the un-noised state alone: %.3g", ctl)
			require.Less(t, ctl, 1e-6, "control: the un-noised current state alone (what a noop forget kept before version 6)")

			o := ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "noop", SkipVacuum: true}
			if tc.byKey {
				_, err = s.ForgetKeys([]string{userKey(int64(tc.del))}, nil, o)
			} else {
				_, err = s.Forget([]int64{int64(tc.del)}, o)
			}
			require.NoError(t, err)

			before, after, state, log = storedMaterial(t, s, seq)
			require.Len(t, after, 1, "only the noised checkpoint at the head is after the deleted insert")
			noised := after[int64(tc.n)]
			require.True(t, noised.Equal(state), "it is the state")
			require.Zero(t, state.Memory().Len(), "with an empty memory")
			m = base
			m.start, m.after, m.w = before, log, true
			got := attack(m, flatten(state, true), starts)
			t.Logf("relative error of the rebuilt payload after the forget: %.3g", relErr(got, z))
			require.Greater(t, relErr(got, z), 0.1, "the payload was rebuilt from the stored bytes")
			// The kept release publishes the same noised w (before its
			// projection onto the ball): the store holds nothing more.
			rs, err := s.Releases()
			require.NoError(t, err)
			require.Len(t, rs, 1)
		})
	}
}

// stateParams is the solver's parameter vector of a sample.
func stateParams(kind stream.Kind, z stream.Sample) []float64 {
	if kind == stream.KindLogistic {
		return slices.Clone(z.V)
	}
	return append([]float64{z.S}, z.V...)
}

func flatten(l *olbfgs.Learner, wOnly bool) []float64 {
	out := slices.Clone(l.W())
	if !wOnly {
		for i := range l.Memory().Len() {
			pr := l.Memory().Pair(i)
			out = append(out, pr.S...)
			out = append(out, pr.Y...)
		}
	}
	return out
}
