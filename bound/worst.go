package bound

import (
	"fmt"
	"math"
	"slices"
)

// AgeRange says that Count deleted inserts have ages in [Lo, Hi] (update
// steps before the release: age a is step Steps − a), without saying
// which: what a certificate that discloses ages only by ranges (powers of
// two, or nothing but their number) lets a verifier know.
type AgeRange struct {
	Lo    int `json:"lo"`
	Hi    int `json:"hi"`
	Count int `json:"count"`
}

// WorstBound returns an upper bound on [Dynamics.Bound] over every stream
// with the given steps and interventions whose deleted steps are consistent
// with ranges: for each range, exactly Count distinct deleted steps
// Steps − a with a in [Lo, Hi], and none elsewhere (docs/theory.md §16.12).
//
// The bound is computed by dynamic programming over (step, number of
// deleted steps so far j) rather than by enumerating the configurations:
// the state of Bound's recursion after a step — α, the average's bound D
// and the paired sum Σα — is updated by maps that are non-decreasing in
// each component (upward-rounded products and sums with non-negative
// coefficients, min with 2W', an intervention's +Move or reset to W'),
// and every other quantity of a step (its contraction and perturbation,
// whether the trajectories have diverged, whether the state is in the
// ball) depends only on the step, j and the interventions. Keeping, for
// each (step, j), the componentwise maximum over the configurations that
// reach it therefore dominates each configuration's state, and the final
// min(D, Σα/N + 2mW'/N) is non-decreasing too. Without averaging the
// result is exactly the largest Bound over the configurations (the maximum
// α at each (step, j) is attained by one of them). Cost O(Steps·m) time,
// O(m) memory, m the total count.
//
// Errors (*ArgError): an invalid field of d, a range outside [0, steps −
// 1], overlapping ranges or a Count larger than its range (ErrInvalid);
// overflow (ErrRange).
func (d Dynamics) WorstBound(steps int, ranges []AgeRange, iv []Intervention) (Deviation, error) {
	const fn = "Dynamics.WorstBound"
	if err := d.Validate(); err != nil {
		return Deviation{}, err
	}
	if steps < 0 || steps > MaxSteps {
		return Deviation{}, argErr(fn, "steps", float64(steps), fmt.Errorf("%w: must be in [0, %d]", ErrInvalid, MaxSteps))
	}
	rs, m, err := stepRanges(fn, steps, ranges)
	if err != nil {
		return Deviation{}, err
	}
	_, ivs, err := Stream{Steps: steps, Interventions: iv}.validate(d)
	if err != nil {
		return Deviation{}, err
	}
	w := d.worstWalk(steps, rs, m, ivs)
	out := Deviation{Last: w.last, Alpha: w.last, Released: "last iterate"}
	if S := d.Average.From; S > 0 && steps >= S {
		out.Released = fmt.Sprintf("average of the iterates from step %d to %d (κ = %v)", S, steps, d.Average.Power)
		if w.diverged {
			n := steps - S + 1
			avg := w.average
			if d.Average.Power == 0 && steps-m >= S {
				nf := float64(n)
				avg = min(avg, uAdd(uDiv(w.pairedSum, nf), uDiv(uMul(float64(m), uMul(2, d.Radius)), nf)))
			}
			out.Average = uAdd(avg, d.averageRoundOff(n))
		}
		out.Alpha = out.Average
	}
	if isInf(out.Alpha) || isInf(out.Last) {
		return Deviation{}, argErr(fn, "G", d.G, ErrRange)
	}
	out.Terms = append(d.terms(Stream{Steps: steps}, m, ivs), Term{fmt.Sprintf("worst case over the deleted steps in %d disclosed age ranges", len(ranges)), float64(m), Proved,
		"not in the paper: the largest bound over every placement of the deleted inserts consistent with the disclosed ages (docs/theory.md §16.12)"})
	ps := make([]Provenance, len(out.Terms))
	for i, t := range out.Terms {
		ps[i] = t.Provenance
	}
	out.Provenance = Combine(ps...)
	return out, nil
}

// stepRange is an AgeRange as steps [first, last] with the number of
// deleted steps up to its end (through).
type stepRange struct{ first, last, through int }

// stepRanges converts ranges to steps, sorted, and returns the total count.
func stepRanges(fn string, steps int, ranges []AgeRange) ([]stepRange, int, error) {
	rs := make([]stepRange, 0, len(ranges))
	counts := make(map[int]int, len(ranges))
	for i, r := range ranges {
		if r.Lo < 0 || r.Hi < r.Lo || r.Hi > steps-1 || r.Count < 0 || r.Count > r.Hi-r.Lo+1 {
			return nil, 0, argErr(fn, fmt.Sprintf("ranges[%d]", i), float64(r.Count),
				fmt.Errorf("%w: ages %d…%d with %d deletions: need 0 ≤ lo ≤ hi ≤ steps − 1 = %d and count ≤ hi − lo + 1", ErrInvalid, r.Lo, r.Hi, r.Count, steps-1))
		}
		rs = append(rs, stepRange{first: steps - r.Hi, last: steps - r.Lo})
		counts[steps-r.Hi] = r.Count
	}
	slices.SortFunc(rs, func(a, b stepRange) int { return a.first - b.first })
	m := 0
	for i := range rs {
		if i > 0 && rs[i].first <= rs[i-1].last {
			return nil, 0, argErr(fn, "ranges", float64(rs[i].first), fmt.Errorf("%w: two age ranges overlap", ErrInvalid))
		}
		m += counts[rs[i].first]
		rs[i].through = m
	}
	return rs, m, nil
}

// worstState is the componentwise maximum of walk's state over the
// configurations reaching one (step, j); ok is false when none does.
type worstState struct {
	alpha, avg, paired float64
	ok                 bool
}

// worstWalk is walk over every configuration at once (see WorstBound).
func (d Dynamics) worstWalk(steps int, rs []stepRange, m int, iv []Intervention) walkResult {
	sm := newStepModel(d)
	diameter := math.Inf(1)
	if d.Radius > 0 {
		diameter = uMul(2, d.Radius)
	}
	cur := make([]worstState, m+1)
	next := make([]worstState, m+1)
	cur[0].ok = true
	ivDiverged, inBall := false, true
	ii := 0
	apply := func(step int) {
		for ; ii < len(iv) && iv[ii].After == step; ii++ {
			for j := range cur {
				if iv[ii].Zero {
					cur[j].alpha = d.Radius
				}
				if iv[ii].Move > 0 {
					cur[j].alpha = uAdd(cur[j].alpha, iv[ii].Move)
				}
			}
			if iv[ii].Zero {
				ivDiverged, inBall = true, true
			}
			if iv[ii].Move > 0 {
				ivDiverged, inBall = true, false
			}
			if !sm.identity {
				ivDiverged = true
			}
		}
	}
	apply(0)
	S := d.Average.From
	ri := 0
	// advance computes one configuration's state after step from its state
	// before (j deletions before the step).
	advance := func(st worstState, step, j int, deleted bool) worstState {
		if deleted || j > 0 || ivDiverged {
			var rho, pert float64
			if deleted {
				rho, pert = sm.deletedStep(step - 1)
			} else {
				rho, pert = sm.sharedStep(step-1, j, inBall)
			}
			st.alpha = min(uAdd(uAdd(uMul(rho, st.alpha), pert), sm.ro), diameter)
		}
		jj := j
		if deleted {
			jj++
		}
		if S > 0 {
			st.avg = d.Average.step(st.avg, st.alpha, step-S+1, step-jj-S+1, deleted, diameter)
			if !deleted && step-jj >= S {
				st.paired = uAdd(st.paired, st.alpha)
			}
		}
		return st
	}
	for step := 1; step <= steps; step++ {
		for ri < len(rs) && rs[ri].last < step {
			ri++
		}
		inRange := ri < len(rs) && rs[ri].first <= step
		clear(next)
		for j, st := range cur {
			if !st.ok {
				continue
			}
			merge(&next[j], advance(st, step, j, false))
			if inRange && j < rs[ri].through {
				merge(&next[j+1], advance(st, step, j, true))
			}
		}
		if inRange && step == rs[ri].last {
			for j := range next {
				if j != rs[ri].through {
					next[j] = worstState{}
				}
			}
		}
		cur, next = next, cur
		inBall = true
		apply(step)
	}
	st := cur[m]
	return walkResult{last: st.alpha, pairedSum: st.paired, average: st.avg, diverged: m > 0 || ivDiverged}
}

// merge sets *dst to the componentwise maximum of *dst and s.
func merge(dst *worstState, s worstState) {
	if !dst.ok {
		*dst = s
		dst.ok = true
		return
	}
	dst.alpha, dst.avg, dst.paired = max(dst.alpha, s.alpha), max(dst.avg, s.avg), max(dst.paired, s.paired)
}
