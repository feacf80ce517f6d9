package align

import (
	"fmt"
	"math"
)

// ExactTol is the relative tolerance of exact recovery (spec §3): a
// trajectory recovers the counterfactual exactly when
// E_Θ(k) ≤ ExactTol·max(1, ‖w⁻_k‖₂) at every step k ∈ [0, H].
const ExactTol = 1e-9

// Series holds the per-step metrics of one state trajectory against the
// reference, k = 0..H (index k is post-deletion step k; k = 0 is the state
// right after the intervention, spec §8). The slices have equal lengths.
type Series struct {
	Ew, EZ, ETheta []float64
	// Dupd[k] is meaningful only where DupdDefined[k] (it is 0 elsewhere).
	Dupd        []float64
	DupdDefined []bool
	Mdirect     []int
	RefWNorm    []float64
}

// NewSeries returns an empty series with room for capacity steps, so that
// Append does not allocate until it holds more.
func NewSeries(capacity int) *Series {
	return &Series{
		Ew:          make([]float64, 0, capacity),
		EZ:          make([]float64, 0, capacity),
		ETheta:      make([]float64, 0, capacity),
		Dupd:        make([]float64, 0, capacity),
		DupdDefined: make([]bool, 0, capacity),
		Mdirect:     make([]int, 0, capacity),
		RefWNorm:    make([]float64, 0, capacity),
	}
}

// Append adds the metrics of the next step.
func (s *Series) Append(p Point) {
	s.Ew = append(s.Ew, p.Ew)
	s.EZ = append(s.EZ, p.EZ)
	s.ETheta = append(s.ETheta, p.ETheta)
	s.Dupd = append(s.Dupd, p.Dupd)
	s.DupdDefined = append(s.DupdDefined, p.DupdDefined)
	s.Mdirect = append(s.Mdirect, p.Mdirect)
	s.RefWNorm = append(s.RefWNorm, p.RefWNorm)
}

// Len returns the number of steps held, H+1.
func (s *Series) Len() int { return len(s.ETheta) }

// At returns the metrics of step k (Identical is not kept and is false).
func (s *Series) At(k int) Point {
	return Point{
		Ew: s.Ew[k], EZ: s.EZ[k], ETheta: s.ETheta[k],
		Dupd: s.Dupd[k], DupdDefined: s.DupdDefined[k],
		Mdirect: s.Mdirect[k], RefWNorm: s.RefWNorm[k],
	}
}

// Summary condenses a series into the per-run figures of spec §3 and §6.
type Summary struct {
	// Horizon is H: the series covers k = 0..H.
	Horizon int
	// Initial and Final are the metrics at k = 0 and k = H.
	Initial, Final Point
	// StateAUC is the future state AUC Σ_{k=0..H} E_Θ(k).
	StateAUC float64
	// ParamAUC is the parameter-trajectory AUC Σ_{k=0..H} E_w(k).
	ParamAUC float64
	// MemoryAUC is Σ_{k=0..H} E_Z(k).
	MemoryAUC float64
	// UpdateAUC is Σ D_upd(k) over the steps where it is defined
	// (UpdateSteps of them; spec §8).
	UpdateAUC   float64
	UpdateSteps int
	// ClearanceStep is the direct-clearance time, the first k with
	// M_direct(k) = 0; it is meaningful only when Cleared is true (the
	// direct mass reached 0 within the horizon).
	ClearanceStep int
	Cleared       bool
	// ExactRecovery reports E_Θ(k) ≤ ExactTol·max(1, ‖w⁻_k‖) for every k.
	ExactRecovery bool
	// Decay holds the decay-rate fits of E_Θ over the phases P1, P2, P3 of
	// Phases(τ, H).
	Decay [3]Fit
}

// Summarize returns the summary of s for memory size τ (which sets the
// decay phases). It panics if s is empty or tau < 1.
func (s *Series) Summarize(tau int) Summary {
	n := s.Len()
	if n == 0 {
		panic("align: Summarize of an empty series")
	}
	if tau < 1 {
		panic(fmt.Sprintf("align: Summarize: tau = %d must be at least 1", tau))
	}
	h := n - 1
	sum := Summary{Horizon: h, Initial: s.At(0), Final: s.At(h), ExactRecovery: true}
	for k := 0; k < n; k++ {
		sum.StateAUC += s.ETheta[k]
		sum.ParamAUC += s.Ew[k]
		sum.MemoryAUC += s.EZ[k]
		if s.DupdDefined[k] {
			sum.UpdateAUC += s.Dupd[k]
			sum.UpdateSteps++
		}
		if !sum.Cleared && s.Mdirect[k] == 0 {
			sum.ClearanceStep, sum.Cleared = k, true
		}
		if !(s.ETheta[k] <= ExactTol*math.Max(1, s.RefWNorm[k])) {
			sum.ExactRecovery = false
		}
	}
	for i, r := range Phases(tau, h) {
		sum.Decay[i] = FitDecay(s.ETheta, r.From, r.To)
	}
	return sum
}
