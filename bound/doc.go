// Package bound computes the recursive bound on the deviation of an
// unlearned online L-BFGS state from its deletion-edited counterfactual,
// from problem constants, a contraction factor and the deletions, each
// quantity labelled with its [Provenance] (proved, estimated or assumed).
// It knows nothing of the rest of the toolkit: its inputs and outputs are
// plain numbers. Derivations are in docs/theory.md.
//
// # Lemma "One-step state-error recursion"
//
// Δ_{t+1} ≤ ρ·Δ_t + η_t·ε_t: [Recursion] applies it step by step (streaming)
// and [Series] over a horizon. Every result is rounded up, so floating-point
// error never shrinks a bound; an exact 0 stays 0.
//
// # Theorem "Bounded counterfactual state deviation"
//
// α_t = ρ^{t−t0}·Δ_{t0} + Σ_{s=t0}^{t−1} ρ^{t−1−s}·η_s·ε_s: [ClosedForm]
// evaluates it term by term, [Constant] for a constant η·ε (stably as ρ → 0
// and ρ → 1⁻) and [Limit] as t → ∞. ρ must lie in [0, 1): ρ ≥ 1 is refused
// with ErrRho, since the recursion then bounds nothing.
//
// # Perturbation models
//
// The paper leaves ε_s(m, τ) unspecified. [Constants] (G, hMin, hMax, η, τ)
// give the per-step bounds η·hMax·G for the step of a deleted insert and
// η·(hMax−hMin)·G for a step taken with differing memories; a
// [MemoryModel] says at which steps the latter applies: every step after
// the first deleted insert (proved), only τ steps after each (assumes no
// indirect memory), or never, with the memory in the state metric instead
// (the paper's coupled contraction, assumed). [Scenario.Bound] returns
// α_{t0+k} for given deletion ages and horizon, with the list of [Term]s it
// rests on; [Tracker] maintains α online.
//
// # Decaying steps, time-varying contraction, averaged iterates
//
// [Dynamics] holds the public constants of a projected learner with a step
// schedule η(t) = η₀/(1 + η₀·λ_η·t) ([Schedule], indexed by the learner's
// own count), a preconditioner with spectrum in [hMin, hMax] (hMin = hMax:
// no curvature memory), loss constants μ, L, G, the radius W' and an
// optional running average of the iterates ([Averaging]: uniform or
// polynomial-decay weights). [Dynamics.Bound] takes a [Stream] — the
// actual learner's number of steps, its deleted steps and the
// interventions applied to it — and returns the bound on the deviation of
// the released vector from the counterfactual's: the time-varying recursion
// Δ_s ≤ ρ_s·Δ_{s−1} + π_s with a contraction proved at each step's size
// (commuting, general or near-isotropic) and the counterfactual's schedule
// shift (it applied fewer inserts, so it takes larger steps) as a
// perturbation. Without memory, its bound is of order
// G·(1 + ln(T/p))/(λ_η·T) for a deletion at step p of T: it shrinks with the
// stream, unlike the constant-step worst-case memory model. Every
// operation is rounded outward (interval arithmetic), so the result bounds
// the exact value. Derivations: docs/theory.md §16.
//
// # Contraction
//
// [AnalyticContraction] proves ρ for the parameter map with a fixed
// preconditioner from μ, L, η, hMin, hMax: max(|1−η·hMin·μ|, |1−η·hMax·L|)
// when preconditioner and Hessians commute, sqrt(hMax/hMin) times that in
// general. [EstimateFromDecay] (log-linear fit of an error series) and
// [EstimateFromPairs] (one-step ratios of trajectory distances) estimate
// it; [AssumedContraction] labels the paper's assumed ρ.
//
// # Errors
//
// Bad arguments are returned as *[ArgError] values naming the function and
// the argument and wrapping a sentinel (ErrRho, ErrValue, ErrInvalid,
// ErrNoContraction, ErrTooFewPoints, ErrRange), for errors.Is and
// errors.As. Programmer errors (a dst of the wrong length, an invalid
// provenance passed to Combine) panic with a "bound: " prefix. The package
// never logs.
package bound
