// Package olbfgs implements the online L-BFGS (o-LBFGS) learner of spec §2
// with curvature-pair provenance, checkpoints, deterministic replay and
// versioned state snapshots.
//
// # State
//
// The learner's state is θ = (w, Z): parameters w ∈ R^d (w0 = 0) and a FIFO
// memory Z of at most τ curvature pairs (s, y). Every pair carries its
// source, the set of event ids whose data produced it, so that a deletion set
// U can be traced to the pairs it touches ([Memory.DirectMass],
// [Memory.DropTouching]) — the paper's "direct memory" (Proposition "Direct
// memory is bounded for finite curvature pairs").
//
// # Inverse-Hessian action
//
// [Memory.Apply] computes H_Z q by the two-loop recursion (Nocedal & Wright,
// Numerical Optimization, 2nd ed., Algorithm 7.4, p. 178) with initial matrix
// γI, γ = sᵀy/yᵀy of the newest pair, or γ0 when Z is empty. It works on any
// vector, does not allocate, and costs 4τd flops. Each axpy is fused with
// the dot product that follows it, and on amd64 with AVX2 the fused sweeps
// run in assembly that prefetches the pairs ahead; the assembly performs the
// same separately rounded operations as the Go code, so on amd64 H_Z q has
// the same bits with or without AVX2 (the payload of a NaN aside). (Across architectures the bits may
// differ: gonum's dot products, used for sᵀy and yᵀy, sum in another order
// off amd64.) At d = 100000 it runs within a few per cent of the time to
// read the pairs twice, the least any two-loop can do (docs/performance.md).
//
// Storage: a memory with τ·d up to 2¹⁶ is allocated at once; a larger one
// grows its slots as pairs arrive, doubling up to τ. [Config.Validate]
// rejects a learner whose full size would exceed [MaxStateFloats] words.
//
// # Step
//
// An insert of sample z (Schraudolph, Yu & Günter 2007, o-LBFGS with the same
// sample at both points):
//
//	g  = ∇ℓ_z(w);  p = −H_Z g;  w⁺ = w + ηp;  s = w⁺ − w;  y = ∇ℓ_z(w⁺) − g
//	if sᵀy > tol·‖s‖‖y‖ { push (s, y, {id}), evicting the oldest pair at τ }
//	w = w⁺
//
// A delete records the id as deleted and changes neither w nor Z. With no
// line search, the curvature guard is the only safeguard; skipped pairs are
// counted ([Learner.Skipped]). [Learner.Step] does not allocate.
//
// # Checkpoints and replay
//
// [Learner.KeepCheckpoints] lets a caller restore θ_{t−W} for any W up to a
// window, at a cost of two extra states and at most 2·window logged events
// (not a state per step); [Learner.StateAgo] rebuilds the state by replaying
// fewer than 2·window events. [Replay] applies a history from θ0;
// replaying the same events always gives bit-identical states.
//
// # Snapshots
//
// [MarshalSnapshot] and [UnmarshalSnapshot] save and load the full state
// (parameters, memory with provenance, deleted ids, counters, configuration
// and the stream header) as a versioned JSON document ("olbfgs-state/v1")
// that round-trips exactly. [WriteSnapshot] writes the same bytes to an
// io.Writer as it formats them, so that saving a state at d = 10⁵ needs
// little memory beyond the state (MarshalSnapshot returns the whole
// document).
//
// # Errors
//
// Configuration and data errors are returned (wrapping [ErrConfig],
// [ErrSnapshot], [ErrDiverged], …); dimension mismatches between slices a
// caller passes in are programmer errors and panic with an "olbfgs: " prefix.
// A Learner is not safe for concurrent use; distinct learners are.
package olbfgs
