// Package certify turns an unlearned online L-BFGS state into a certified
// release: it computes the sensitivity α from a bound (package bound) or
// takes it as given, adds Gaussian noise calibrated to it (package noise),
// decides what happens to the curvature memory, and issues a JSON
// certificate that [Verify] recomputes. It also plans the σ a deployment
// needs ([RequiredSigma]), wraps any intervention as a certified one
// ([Wrap]) and composes repeated releases under a budget ([Accountant]).
// Derivations are in docs/theory.md; the guide is docs/packages/certify.md.
//
// # Definition "(ε,δ)-State Certified Unlearning"
//
// If P[‖w̃ − w⁻‖₂ ≤ α] ≥ 1 − β for the unlearned parameters w̃ and those of
// the deletion-edited counterfactual w⁻, then releasing w̃ + N(0, σ²I) with
// σ calibrated to the L2 sensitivity α at (ε, δ) is (ε, δ + β)-certified
// unlearning: for every set S, P[M ∈ S] ≤ e^ε·P[M⁻ ∈ S] + δ + β
// (docs/theory.md §9). [Spec] holds ε, δ, β, the source of α, the
// calibration (analytic by default; the paper's classic
// σ = α·sqrt(2 ln(1.25/δ))/ε for ε < 1 only) and the sampler (the secure
// one by default; the seeded one only when asked for, and then every
// certificate says it is not for deployment).
//
// # Theorem "Bounded counterfactual state deviation"
//
// With a bound.Scenario, α = α_t = ρ^{t−t0}·Δ_{t0} + Σ_s ρ^{t−1−s}·η_s·ε_s
// (Lemma "One-step state-error recursion" iterated), from the problem
// constants G, hMin, hMax, η, τ, a contraction ρ and the deletions' ages.
// An intervention that moved the parameters by Shift = ‖w̃ − w‖₂ from the
// untouched state is covered by α_t + Shift (triangle inequality); [Wrap]
// computes the ages and the shift from each request, so every
// intervention is certified with a bound as strong as the scenario's. A
// certificate carries the weakest provenance of α's inputs (proved,
// estimated or assumed) and says it in words: it is only as good as its
// assumptions.
//
// # Theorem "o-LBFGS Unlearning Certificate"
//
// [Certify] adds noise to w only, as ONE Gaussian mechanism for the whole
// vector (σ computed once), then applies the memory policy: Reset (Z = ∅)
// or Rebuild (Z rebuilt by replaying retained data from the noised w) — the
// released memory is then post-processing of the noised w and of data
// common to both worlds, and the whole state (w, Z) is covered — or Keep,
// which covers the parameters only, as the certificate says. α = 0 (exact
// unlearning, "only obtained when α_t = 0") gives σ = 0: the state is
// released unchanged.
//
// # Certificates
//
// A [Certificate] (format "unlearn-certificate/v1") records what it covers,
// ε, δ, β, the guarantee (ε, δ + β), α with all its inputs and terms, σ
// and the applied σ, the calibration, the sampler, the intervention, the
// deletion count, the SHA-256 of the canonical snapshots of the state
// before and after the noise, the toolkit version, the weakest provenance,
// a plain statement and a digest. [Verify] recomputes all of it from the
// inputs and the two snapshots and returns a typed error naming the first
// field that fails. The before-state hash identifies the un-noised state:
// publish [Certificate.Public], which drops it.
//
// # Composition
//
// [Accountant] adds the zCDP costs ρ_i = α²/(2σ²) of repeated releases
// (Bun & Steinke 2016, Lemma 1.7) and their failure probabilities β_i, and
// converts to ε = ρ + 2·sqrt(ρ·ln(1/(δ − Σβ_i))) at the budget's δ
// (Proposition 1.3); WouldExceed asks before a release, Spend refuses one
// that would exceed the budget.
//
// # Errors
//
// A bad specification returns a *[SpecError] naming the field (ε ≤ 0,
// δ ∉ (0, 1), β ∉ [0, 1), ρ ∉ [0, 1), negative or non-finite constants,
// the classic calibration at ε ≥ 1, …), a failed verification a
// *[VerifyError] naming the certificate field (a hash mismatch, α or σ
// that do not follow from their inputs, …), a refused release an
// *[AccountError]; each wraps a sentinel for errors.Is. Programmer errors
// (a nil state or operator) panic with a "certify: " prefix. The package
// never logs or prints.
package certify
