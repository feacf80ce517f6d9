package bound

import (
	"fmt"
	"math"
	"slices"
)

// Dynamics are the public constants of a learner whose update step number
// t+1 (t = the learner's count of applied inserts before it) is
//
//	w ← P_W(w − η(t)·H·∇ℓ_z(w)),
//
// P_W the Euclidean projection onto the ball of radius W, H a symmetric
// preconditioner with spectrum in [HMin, HMax] (the inverse-Hessian
// approximation of a guarded curvature memory, or HMin·I when HMin = HMax:
// no memory), ℓ_z μ-strongly convex, L-smooth and C². They are everything
// [Dynamics.Bound] needs to bound the deviation of an unlearned state from
// its deletion-edited counterfactual; nothing in them may depend on the data
// (docs/theory.md, "Decaying steps, time-varying contraction, averaged
// iterates").
type Dynamics struct {
	// Schedule is the step-size schedule η(t). Required.
	Schedule Schedule `json:"schedule"`
	// HMin and HMax bound the spectrum of every preconditioner H either
	// trajectory uses, 0 < HMin ≤ HMax, finite. Required. HMin = HMax means
	// H = HMin·I exactly (a symmetric matrix with a one-point spectrum): the
	// learner keeps no curvature memory, H commutes with every Hessian, and
	// the two trajectories' preconditioners never differ.
	HMin float64 `json:"h_min"`
	HMax float64 `json:"h_max"`
	// Mu and L bound the spectrum of every loss Hessian, 0 < Mu ≤ L,
	// finite. Required.
	Mu float64 `json:"mu"`
	L  float64 `json:"l"`
	// Commuting says that every loss Hessian is a multiple of I (d = 1, or
	// isotropic losses; read from the loss's header, never asserted), so
	// that it commutes with any H. Defaults to false. With HMin = HMax it
	// is not needed: H = HMin·I commutes with everything.
	Commuting bool `json:"commuting"`
	// G bounds ‖∇ℓ_z(w)‖ for every sample the learner accepts and every w
	// in the ball, ≥ 0, finite. Required.
	G float64 `json:"g"`
	// Radius is W' ≥ ‖w‖ for every state of either trajectory (the
	// learner's projection, with its round-off), ≥ 0, finite. 0 means no
	// radius: the bound is then not capped by the diameter 2W', and
	// averaging and zeroing interventions are refused.
	Radius float64 `json:"radius"`
	// RoundOff bounds the divergence one step adds between two float
	// trajectories (twice one float step's forward error, plus W' − W for a
	// state between the projection's radius and its bound), ≥ 0, finite.
	// It is added at every step once the trajectories have diverged (the
	// first deleted insert or intervention). Defaults to 0: exact
	// arithmetic.
	RoundOff float64 `json:"round_off"`
	// Average says whether the learner releases a running average of its
	// iterates. Defaults to none: the last iterate. Requires Radius > 0.
	Average Averaging `json:"average"`
	// Provenance says how HMin, HMax, Mu, L, G and Radius were obtained.
	// Required.
	Provenance Provenance `json:"provenance"`
}

// Averaging is the learner's running average of its iterates, indexed by
// its own count: from the count From on, the k-th averaged iterate w
// updates w̄ ← w̄ + β_k·(w − w̄) with β_k = (1+κ)/(k+κ) (β₁ = 1), and w̄ is
// what the learner releases; below From it releases its last iterate.
// κ = 0 is the uniform average (Polyak–Ruppert for From = 1, tail averaging
// for From > 1); κ > 0 is the polynomial-decay average of O. Shamir and
// T. Zhang ("Stochastic gradient descent for non-smooth optimization:
// convergence results and optimal averaging schemes", ICML 2013), which
// weighs recent iterates more and keeps the last iterate's sensitivity
// order, where the uniform average adds a factor log(T/p) (docs/theory.md,
// "The averaged iterate").
type Averaging struct {
	// From is the count S ≥ 1 at which averaging starts; 0 (the default)
	// means no averaging.
	From int `json:"from,omitempty"`
	// Power is κ ≥ 0, finite. Defaults to 0: uniform weights.
	Power float64 `json:"power,omitempty"`
}

// on reports whether the learner averages.
func (a Averaging) on() bool { return a.From > 0 }

// weight returns bounds lo ≤ β_k ≤ hi on the exact weight of the k-th
// averaged iterate (k ≥ 1).
func (a Averaging) weight(k int) (lo, hi float64) {
	if k == 1 {
		return 1, 1
	}
	kf := float64(k)
	if a.Power == 0 {
		return dDiv(1, kf), uDiv(1, kf)
	}
	return dDiv(dAdd(1, a.Power), uAdd(kf, a.Power)), uDiv(uAdd(1, a.Power), dAdd(kf, a.Power))
}

// Intervention is an unlearning operator applied to the actual learner
// after one of its steps. It acts on w (and the memory) only: it does not
// change the learner's count of steps (the schedule's t) nor an iterate
// average already accumulated. With a curvature memory (HMin < HMax) every
// intervention is taken to change it (pair drop, memory reset): the
// trajectories may differ from then on even if it did not move w.
type Intervention struct {
	// After is the number of steps the actual learner had applied when the
	// intervention acted, 0 ≤ After ≤ Stream.Steps.
	After int `json:"after"`
	// Move bounds how far it moved w, ≥ 0, finite (its a-priori allowance,
	// round-off included): the deviation grows by at most Move. An allowance
	// derived from G (such as [Dynamics.StepMove]) holds for an
	// intervention applied to a state in the ball, that is right after a
	// step or a zeroing; a second moving intervention before the next step
	// must bound its move for the moved state. The moved state need not
	// lie in the ball: the next step projects it.
	Move float64 `json:"move"`
	// Zero says that it set w to 0 (drop and refill): the deviation is then
	// ‖w⁻‖ ≤ W', whatever it was. Requires Dynamics.Radius > 0.
	Zero bool `json:"zero,omitempty"`
}

// Stream describes, in public numbers, what the actual learner did up to
// a release: how many update steps it applied (deleted inserts included),
// which of them are deleted, and the interventions applied to it. The
// counterfactual is the same learner run on the same inserts without the
// deleted ones, from the same initial state.
type Stream struct {
	// Steps is T, the number of update steps (inserts) the actual learner
	// applied, 0 ≤ Steps ≤ MaxSteps.
	Steps int `json:"steps"`
	// Deleted lists the steps (1 … Steps; step s is the s-th insert the
	// actual learner applied) whose inserts are deleted, distinct, in any
	// order. An insert of age a at a release after T steps is step T − a.
	Deleted []int `json:"deleted"`
	// Interventions lists the interventions applied to the actual learner,
	// in any order (several at the same step act in the order given).
	Interventions []Intervention `json:"interventions,omitempty"`
}

// MaxSteps is the largest Stream.Steps: [Dynamics.Bound] costs O(Steps −
// first deleted step) (about 0.2 µs of CPU a step).
const MaxSteps = 1 << 28

// Deviation is the bound of [Dynamics.Bound].
type Deviation struct {
	// Alpha bounds ‖w̃ − w⁻‖₂ of the released vectors: Average when the
	// learner averages and its count has reached Averaging.From, Last
	// otherwise.
	Alpha float64 `json:"alpha"`
	// Last bounds the deviation of the last iterates.
	Last float64 `json:"last"`
	// Average bounds the deviation of the released averages (0 unless the
	// actual learner's count has reached Averaging.From).
	Average float64 `json:"average"`
	// Released names the vector Alpha is for.
	Released string `json:"released"`
	// Provenance is the weakest provenance among Terms.
	Provenance Provenance `json:"provenance"`
	// Terms lists the quantities the bound rests on.
	Terms []Term `json:"terms"`
}

// Validate reports the first invalid field as an *ArgError (ErrValue,
// ErrInvalid).
func (d Dynamics) Validate() error {
	const fn = "Dynamics.Validate"
	if err := d.Schedule.Validate(); err != nil {
		return err
	}
	for _, a := range []struct {
		name string
		v    float64
	}{{"HMin", d.HMin}, {"HMax", d.HMax}, {"Mu", d.Mu}, {"L", d.L}} {
		if !(a.v > 0) || math.IsInf(a.v, 0) {
			return argErr(fn, a.name, a.v, fmt.Errorf("%w: must be > 0", ErrValue))
		}
	}
	if d.HMin > d.HMax {
		return argErr(fn, "HMin", d.HMin, fmt.Errorf("%w: h_min > h_max = %v", ErrInvalid, d.HMax))
	}
	if d.Mu > d.L {
		return argErr(fn, "Mu", d.Mu, fmt.Errorf("%w: μ > L = %v", ErrInvalid, d.L))
	}
	for _, a := range []struct {
		name string
		v    float64
	}{{"G", d.G}, {"Radius", d.Radius}, {"RoundOff", d.RoundOff}} {
		if err := checkNonNeg(fn, a.name, a.v); err != nil {
			return err
		}
	}
	if d.Average.From < 0 || (d.Average.on() && d.Radius == 0) {
		return argErr(fn, "Average.From", float64(d.Average.From), fmt.Errorf("%w: ≥ 0, and averaging needs Radius > 0", ErrInvalid))
	}
	if bad(d.Average.Power) {
		return argErr(fn, "Average.Power", d.Average.Power, ErrValue)
	}
	if !d.Provenance.valid() {
		return argErr(fn, "Provenance", float64(d.Provenance), ErrInvalid)
	}
	return nil
}

// validate checks the stream against the dynamics and returns its deleted
// steps sorted and its interventions sorted (stably) by After.
func (s Stream) validate(d Dynamics) ([]int, []Intervention, error) {
	const fn = "Dynamics.Bound"
	if s.Steps < 0 || s.Steps > MaxSteps {
		return nil, nil, argErr(fn, "Steps", float64(s.Steps), fmt.Errorf("%w: must be in [0, %d]", ErrInvalid, MaxSteps))
	}
	pos := slices.Clone(s.Deleted)
	for i, p := range pos {
		if p < 1 || p > s.Steps {
			return nil, nil, argErr(fn, fmt.Sprintf("Deleted[%d]", i), float64(p), fmt.Errorf("%w: a step in [1, Steps = %d]", ErrInvalid, s.Steps))
		}
	}
	slices.Sort(pos)
	for i := 1; i < len(pos); i++ {
		if pos[i] == pos[i-1] {
			return nil, nil, argErr(fn, "Deleted", float64(pos[i]), fmt.Errorf("%w: a step deleted twice", ErrInvalid))
		}
	}
	iv := slices.Clone(s.Interventions)
	for i, v := range iv {
		switch {
		case v.After < 0 || v.After > s.Steps:
			return nil, nil, argErr(fn, fmt.Sprintf("Interventions[%d].After", i), float64(v.After), fmt.Errorf("%w: must be in [0, Steps = %d]", ErrInvalid, s.Steps))
		case bad(v.Move):
			return nil, nil, argErr(fn, fmt.Sprintf("Interventions[%d].Move", i), v.Move, ErrValue)
		case v.Zero && d.Radius == 0:
			return nil, nil, argErr(fn, fmt.Sprintf("Interventions[%d].Zero", i), 1, fmt.Errorf("%w: zeroing w is bounded through the radius, and Dynamics.Radius is 0", ErrInvalid))
		}
	}
	slices.SortStableFunc(iv, func(a, b Intervention) int { return a.After - b.After })
	return pos, iv, nil
}

// stepModel holds the constants of one step's Lipschitz and perturbation
// bounds, rounded in the safe direction once.
type stepModel struct {
	sched              Schedule
	hMin, hMax, g, ro  float64
	identity, commutes bool    // H = hMin·I; H commutes with every Hessian
	aLo, bHi           float64 // hMin·μ (down), hMax·L (up)
	general            float64 // sqrt(hMax/hMin) (up)
	qLo, r2Hi          float64 // near-isotropic: hMid·(μ − e·L) (down), (hMax·L)² (up)
	spread             float64 // hMax − hMin (up)
}

func newStepModel(d Dynamics) *stepModel {
	m := &stepModel{sched: d.Schedule, hMin: d.HMin, hMax: d.HMax, g: d.G, ro: d.RoundOff}
	m.identity = d.HMin == d.HMax
	m.commutes = m.identity || d.Commuting
	m.aLo, m.bHi = dMul(d.HMin, d.Mu), uMul(d.HMax, d.L)
	m.general = uSqrt(uDiv(d.HMax, d.HMin))
	// q = ((hMin+hMax)·μ − (hMax−hMin)·L)/2 = hMid·(μ − e·L), e the
	// relative half-width of [hMin, hMax]; halving is exact.
	m.qLo = dSub(dMul(dAdd(d.HMin, d.HMax), d.Mu), uMul(uSub(d.HMax, d.HMin), d.L)) / 2
	m.r2Hi = uMul(m.bHi, m.bHi)
	if !m.identity {
		m.spread = uSub(d.HMax, d.HMin)
	}
	return m
}

// lipschitzAt returns an upper bound on ‖I − η·H·A‖₂ for every symmetric H
// with spectrum in [hMin, hMax] and A with spectrum in [μ, L], at one step
// size η ≥ 0 (docs/theory.md, "Contraction of a scheduled step"): the
// smallest of the bounds that apply —
//
//   - commuting (H = hMin·I, or Hessians multiples of I):
//     max(1 − η·hMin·μ, η·hMax·L − 1);
//   - general: sqrt(hMax/hMin) times that;
//   - near-isotropic: sqrt(1 − 2η·hMid·(μ − e·L) + η²·(hMax·L)²), with
//     hMid = (hMin+hMax)/2 and e = (hMax−hMin)/(hMax+hMin), which is below 1
//     for small η when e·L < μ.
//
// The result may be ≥ 1 (the step is then not a contraction, and the
// recursion still holds).
func (m *stepModel) lipschitzAt(eta float64) float64 {
	r0 := max(uSub(1, dMul(eta, m.aLo)), uSub(uMul(eta, m.bHi), 1))
	if m.commutes {
		return r0
	}
	// In the commuting case the near-isotropic bound is never smaller
	// (docs/theory.md), so it is computed only here.
	var f float64
	if m.qLo >= 0 {
		f = uSub(1, 2*dMul(eta, m.qLo))
	} else {
		f = uAdd(1, 2*uMul(eta, -m.qLo))
	}
	f = uAdd(f, uMul(uMul(eta, eta), m.r2Hi))
	return min(uMul(m.general, r0), uSqrt(f))
}

// lipschitz returns the bound of lipschitzAt for every η in [lo, hi]: each
// bound is convex in η, so its maximum is at an end.
func (m *stepModel) lipschitz(lo, hi float64) float64 {
	if lo == hi {
		return m.lipschitzAt(lo)
	}
	return max(m.lipschitzAt(lo), m.lipschitzAt(hi))
}

// deletedStep returns the contraction and perturbation of the step of a
// deleted insert at the actual learner's count t: the actual learner steps,
// the counterfactual does not.
func (m *stepModel) deletedStep(t int) (rho, pert float64) {
	lo, hi := m.sched.Enclose(t)
	return m.lipschitz(lo, hi), uMul(uMul(hi, m.hMax), m.g)
}

// sharedStep returns the contraction and perturbation of a step both
// trajectories take, at the actual learner's count t and the
// counterfactual's count t − shift. The perturbation is the gradient at
// the counterfactual's state (in the ball) times the difference of the two
// step operators, and the contraction that of the actual learner's map;
// when the actual state is in the ball too (inBall: no intervention moved
// it since its last step), the symmetric decomposition also holds, and the
// smaller of the two contractions is used.
func (m *stepModel) sharedStep(t, shift int, inBall bool) (rho, pert float64) {
	lo, hi := m.sched.Enclose(t)
	if shift == 0 {
		// Same count, same float η: only the memories may differ.
		return m.lipschitz(lo, hi), uMul(uMul(hi, m.spread), m.g)
	}
	clo, chi := m.sched.Enclose(t - shift)
	rho = m.lipschitz(lo, hi)
	if inBall {
		rho = min(rho, m.lipschitz(clo, chi))
	}
	// ‖η⁻·H⁻ − η̃·H̃‖₂ for symmetric H with spectra in [hMin, hMax]: the
	// difference of two symmetric matrices with spectra in [a₁, a₂] and
	// [b₁, b₂] has norm ≤ max(a₂ − b₁, b₂ − a₁).
	var diff float64
	if m.identity { // γ·|η⁻ − η̃|: exactly 0 for a constant schedule
		diff = uMul(max(uSub(chi, lo), uSub(hi, clo), 0), m.hMin)
	} else {
		diff = max(uSub(uMul(chi, m.hMax), dMul(lo, m.hMin)), uSub(uMul(hi, m.hMax), dMul(clo, m.hMin)), 0)
	}
	return rho, uMul(diff, m.g)
}

// walkResult is what walk computes.
type walkResult struct {
	// last is α after the last step and its interventions.
	last float64
	// pairedSum is the upward-rounded Σ α_s over the iterates the uniform
	// average pairs (non-deleted steps s with s − j(s) ≥ From).
	pairedSum float64
	// average is the weighted average's recursive bound after the last
	// step.
	average float64
	// diverged is false while the two trajectories are bit-identical (no
	// deleted step yet, no intervention that moved w or, with a memory,
	// acted).
	diverged bool
}

// walk runs the recursion over the stream's steps. visit, if not nil, is
// called after every step s with the bound α_s on the deviation of the
// iterates after step s (before any intervention after it), whether the
// step's insert is deleted, and the number of deleted steps up to and
// including s.
func (d Dynamics) walk(s Stream, pos []int, iv []Intervention, visit func(step int, alpha float64, deleted bool, j int)) walkResult {
	m := newStepModel(d)
	diameter := math.Inf(1)
	if d.Radius > 0 {
		diameter = uMul(2, d.Radius)
	}
	var res walkResult
	var alpha, avg float64
	inBall := true
	pi, ii, j := 0, 0, 0
	apply := func(step int) {
		for ; ii < len(iv) && iv[ii].After == step; ii++ {
			if iv[ii].Zero {
				alpha, res.diverged, inBall = d.Radius, true, true
			}
			if iv[ii].Move > 0 {
				alpha, res.diverged, inBall = uAdd(alpha, iv[ii].Move), true, false
			}
			if !m.identity {
				res.diverged = true // it may have changed the memory
			}
		}
	}
	apply(0)
	S := d.Average.From
	for step := 1; step <= s.Steps; step++ {
		deleted := pi < len(pos) && pos[pi] == step
		if deleted || res.diverged {
			var rho, pert float64
			if deleted {
				rho, pert = m.deletedStep(step - 1)
			} else {
				rho, pert = m.sharedStep(step-1, j, inBall)
			}
			alpha = min(uAdd(uAdd(uMul(rho, alpha), pert), m.ro), diameter)
			res.diverged = true
		}
		inBall = true // every step ends with the projection
		if deleted {
			pi++
			j++
		}
		if S > 0 {
			avg = d.Average.step(avg, alpha, step-S+1, step-j-S+1, deleted, diameter)
			if !deleted && step-j >= S {
				res.pairedSum = uAdd(res.pairedSum, alpha)
			}
		}
		if visit != nil {
			visit(step, alpha, deleted, j)
		}
		apply(step)
	}
	res.last, res.average = alpha, avg
	return res
}

// step advances the bound D on ‖w̄̃ − w̄⁻‖ (the released averages) by one
// step of the actual learner, whose averaged index becomes kA, while the
// counterfactual's is kC (kC = kA − j; kC < 1: it has not started
// averaging and releases its last iterate); alpha bounds the deviation of
// the iterates after the step. With β̃ = β_kA, β⁻ = β_kC and any point C of
// the ball,
//
//	w̄̃' − w̄⁻' = (1 − β̃)(w̄̃ − C) + β̃(w̃ − w⁻) + (β⁻ − β̃)(C − w⁻)   (shared step, C = w̄⁻),
//	w̄̃' − w̄⁻  = (1 − β̃)(w̄̃ − w̄⁻) + β̃(w̃ − w̄⁻)                       (deleted step),
//
// so D' ≤ (1 − β̃)D + β̃·α + |β⁻ − β̃|·2W', resp. (1 − β̃)D + β̃·2W'; at
// the counterfactual's first averaged iterate (β⁻ = 1, C = w⁻)
// D' ≤ (1 − β̃)·2W' + β̃·α. Everything is capped by 2W' (both released
// vectors lie in the ball).
func (a Averaging) step(prev, alpha float64, kA, kC int, deleted bool, diameter float64) float64 {
	if kA < 1 {
		return 0 // neither averages yet: the last iterates are released
	}
	lo, hi := a.weight(kA)
	var next float64
	switch {
	case kC < 1:
		return diameter
	case deleted:
		next = uAdd(uMul(uSub(1, lo), prev), uMul(hi, diameter))
	case kC == 1:
		next = uAdd(uMul(uSub(1, lo), diameter), uMul(hi, alpha))
	default:
		clo, chi := a.weight(kC)
		diff := max(uSub(chi, lo), uSub(hi, clo), 0)
		next = uAdd(uAdd(uMul(uSub(1, lo), prev), uMul(hi, alpha)), uMul(diff, diameter))
	}
	return min(next, diameter)
}

// Bound returns a bound on the deviation ‖w̃ − w⁻‖₂ of the released vector
// of the actual learner, after the stream's steps and interventions, from
// the counterfactual's, for every pair of worlds that agree on the retained
// inserts and every data the constants allow (docs/theory.md, "Decaying
// steps, time-varying contraction, averaged iterates"). It applies the
// time-varying recursion α_s = min(ρ_s·α_{s−1} + π_s, 2W'), where at a
// deleted step ρ_s is the Lipschitz bound at the actual learner's step
// size and π_s = η̃·hMax·G, and at a shared step ρ_s is the Lipschitz bound
// at the step sizes of the two learners and π_s = ‖η⁻H⁻ − η̃H̃‖·G (the
// schedule shift and the memories), plus the round-off; every operation is
// rounded upward. The average's bound is its own recursion (any weights),
// and for uniform weights also (1/N)·Σ α_s over the paired iterates +
// 2mW'/N, N the number of averaged iterates and m the number of deleted
// inserts, whichever is smaller, plus the averages' round-off. Cost
// O(Steps) time, O(deletions + interventions) memory.
//
// Errors (*ArgError): an invalid field of d or s (ErrValue, ErrInvalid);
// overflow (ErrRange).
func (d Dynamics) Bound(s Stream) (Deviation, error) {
	const fn = "Dynamics.Bound"
	if err := d.Validate(); err != nil {
		return Deviation{}, err
	}
	pos, iv, err := s.validate(d)
	if err != nil {
		return Deviation{}, err
	}
	res := d.walk(s, pos, iv, nil)
	out := Deviation{Last: res.last, Alpha: res.last, Released: "last iterate"}
	if S := d.Average.From; S > 0 && s.Steps >= S {
		out.Released = fmt.Sprintf("average of the iterates from step %d to %d (κ = %v)", S, s.Steps, d.Average.Power)
		if res.diverged {
			n, m := s.Steps-S+1, len(pos)
			avg := res.average
			if d.Average.Power == 0 && s.Steps-m >= S {
				nf := float64(n)
				avg = min(avg, uAdd(uDiv(res.pairedSum, nf), uDiv(uMul(float64(m), uMul(2, d.Radius)), nf)))
			}
			out.Average = uAdd(avg, d.averageRoundOff(n))
		} // else bit-identical trajectories, bit-identical averages: 0
		out.Alpha = out.Average
	}
	if isInf(out.Alpha) || isInf(out.Last) {
		return Deviation{}, argErr(fn, "G", d.G, ErrRange)
	}
	out.Terms = d.terms(s, len(pos), iv)
	ps := make([]Provenance, len(out.Terms))
	for i, t := range out.Terms {
		ps[i] = t.Provenance
	}
	out.Provenance = Combine(ps...)
	return out, nil
}

// averageRoundOff bounds the round-off of the two learners' running
// averages of at most n iterates: an update w̄ + β̂·(w − w̄), β̂ the float of
// β_k, computed with at most six roundings in all, errs by at most
// u·|exact| + γ₆·β_k·|w − w̄| in each coordinate; later updates damp it by
// Π(1 − β_r) ≤ 1, and Σ_k β_k·Π_{r>k}(1 − β_r) = 1, so with ‖w‖ ≤ W' (and
// the errors below W'/2) one average errs by at most W'·(1.5·n·u + 2.5γ₆)
// (docs/theory.md, "Floating point of the scheduled bound"); two, by
// W'·(3n + 32)·u.
func (d Dynamics) averageRoundOff(n int) float64 {
	return uMul(d.Radius, uMul(float64(3*n+32), u))
}

// StepMove returns an upper bound on how far one step at the learner's
// count t can move w: η(t)·hMax·G (the projection is non-expansive and
// fixes the ball). It is the unit of an intervention's allowance (a
// parameter-only correction moves w by at most one such step per deleted
// insert, plus its round-off).
func (d Dynamics) StepMove(t int) float64 {
	_, hi := d.Schedule.Enclose(t)
	return uMul(uMul(hi, d.HMax), d.G)
}

// terms lists what a bound rests on.
func (d Dynamics) terms(s Stream, deletions int, iv []Intervention) []Term {
	p := d.Provenance
	lip := "max(1 − η·hMin·μ, η·hMax·L − 1)"
	switch {
	case d.HMin == d.HMax:
		lip += " (H = hMin·I commutes with every Hessian)"
	case d.Commuting:
		lip += " (Hessians multiples of I)"
	default:
		lip = "min(sqrt(hMax/hMin)·" + lip + ", sqrt(1 − 2η·hMid·(μ − e·L) + η²·hMax²·L²))"
	}
	ts := []Term{
		{"eta0", d.Schedule.Eta0, Proved, "η₀ of the schedule η(t) = η₀/(1 + η₀·λ_η·t), t the learner's own count (exact)"},
		{"decay", d.Schedule.Decay, Proved, "λ_η of the schedule (exact; 0: the constant step of the paper's learner)"},
		{"G", d.G, p, "G of Assumption \"Bounded stochastic gradients\", over the ball"},
		{"hMin", d.HMin, p, "m of Assumption \"Bounded inverse-Hessian approximations\""},
		{"hMax", d.HMax, p, "M of Assumption \"Bounded inverse-Hessian approximations\""},
		{"mu", d.Mu, p, "μ of Assumption \"Strong convexity and smoothness\""},
		{"L", d.L, p, "L of Assumption \"Strong convexity and smoothness\""},
		{"steps", float64(s.Steps), Proved, "update steps of the actual learner at the release (exact)"},
		{"deletions", float64(deletions), Proved, "m = |U|, the number of deleted inserts (exact)"},
		{"time-varying contraction ρ_s = " + lip + " at the step's size(s)", 0, Proved,
			"ρ of Lemma \"One-step state-error recursion\", per step (the paper's Theorem indexes η_s; docs/theory.md proves ρ_s)"},
		{"deleted-insert step term η̃_s·hMax·G", 0, Proved, "η_s·ε_s at the step of a deleted insert"},
		{"shared-step term max(η⁻hMax − η̃hMin, η̃hMax − η⁻hMin)·G", 0, Proved,
			"η_s·ε_s at a later step: the schedule shift of the counterfactual (fewer steps, larger η) and the memory difference"},
	}
	if d.Radius > 0 {
		ts = append(ts, Term{"radius W'", d.Radius, p, "not in the paper: every state lies in the learner's ball; α_s ≤ 2W'"})
	}
	if d.RoundOff > 0 {
		ts = append(ts, Term{"round-off per step (two float trajectories)", d.RoundOff, Proved,
			"not in the paper (exact arithmetic): added at every step once the trajectories diverged"})
	}
	if len(iv) > 0 {
		var move float64
		zero := 0
		for _, v := range iv {
			move = uAdd(move, v.Move)
			if v.Zero {
				zero++
			}
		}
		ts = append(ts, Term{fmt.Sprintf("interventions (%d, %d zeroing w)", len(iv), zero), move, Proved,
			"their a-priori allowances, added to Δ when they act; zeroing w leaves Δ ≤ W'"})
	}
	if d.Average.on() {
		ts = append(ts, Term{fmt.Sprintf("iterate average from step %d, weights (1+κ)/(k+κ), κ = %v", d.Average.From, d.Average.Power), d.Average.Power, Proved,
			"not in the paper: the averages' recursion D' ≤ (1−β̃)D + β̃α + |β⁻−β̃|·2W' (uniform weights: also (1/N)·Σ α_s + 2mW'/N), plus their round-off"})
	}
	return ts
}
