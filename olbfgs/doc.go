// Package olbfgs implements the online L-BFGS (o-LBFGS) learner of spec §2
// with curvature-pair provenance, checkpoints, deterministic replay and
// versioned state snapshots.
//
// # State
//
// The learner's state is θ = (w, Z): parameters w ∈ R^p (w0 = 0; p = d for
// the paper's learner, see Dimensions) and a FIFO
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
// # Dimensions
//
// Config.Dim is the feature dimension d: the length of a dense payload
// vector and the stream header's d. The parameter dimension p — the length
// of w, of the deployed parameters and of every curvature pair — is
// [Config.ParamDim]: K·(d + 1) with an intercept and K·d without, with K
// the loss's number of outputs (Config.Outputs, the classes of a
// multinomial loss; 1 otherwise). Each output's block holds its d weights
// and then its intercept.
//
// # Options
//
// The practitioner's options (docs/spec.md §2.1) are Config fields, each
// off at its zero value, so DefaultConfig is the paper's learner bit for
// bit: Intercept (and RidgeIntercept), Standardize (online mean and
// deviation by Welford's update, the insert's own features counted),
// Average (Polyak–Ruppert, or polynomial-decay with AveragePower, after
// AverageStart inserts), Damping (pairs
// y + δs, Schraudolph, Yu & Günter 2007), StepDecay and StepPower (the
// schedule below), Progress (predict-then-train statistics,
// [Learner.Progress], [Progress.Diagnose]). Each is part of the state:
// checkpoints, snapshots (format v2), Clone, CopyFrom, Equal and replay
// carry it, so an exact forget by replay reproduces it bit for bit.
// [Config.Practitioner] turns them on with the defaults of the
// practitioner's profile.
//
// The step schedule: the insert that follows t earlier inserts steps with
//
//	η_t = η·(1 + a·η·t)^(−c),  computed as η · math.Pow(1 + (a·η)·t, −c)
//
// (a = StepDecay, c = StepPower or 1; [Config.StepAt]), non-increasing and
// at most η: Bottou (2012), "Stochastic Gradient Descent Tricks", section
// 5.2 for c = 1, and section 5.3 with Xu (2011) for c = 3/4 with
// averaging.
//
// # Scores
//
// [Learner.Scores] stores the [Learner.Outputs] raw scores of a raw sample:
// the state's preprocessing applied (standardization with the current
// statistics, the intercept) and the deployed parameters
// ([Learner.Deployed]: the average when Average has begun, else w):
//
//	u_k = Σ_j w_kj·x̃_j + b_k,  x̃_j = (x_j − m_j)/s_j  (or x_j),
//
// summed as stream.Dot4 sums. A logistic model predicts +1 when u_0 ≥ 0
// (probability σ(u_0)), a multinomial one the class of the largest score
// (probabilities softmax(u)), a regression u_0 (stream.Linear's Predict and
// Link say the same). It does not allocate and gives a sparse sample its
// dense form's bits. [Learner.Scorer] freezes a state into a [Scorer], safe
// for concurrent use, with the same bits; a learner loaded from a snapshot
// (UnmarshalSnapshot) or a release scores the same way.
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
// (parameters, memory with provenance, deleted ids, counters, configuration,
// the options' state and the stream header) as a versioned JSON document
// that round-trips exactly: "olbfgs-state/v1" for the paper's learner,
// "olbfgs-state/v2" for a learner with options or several outputs. [WriteSnapshot] writes the same bytes to an
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
