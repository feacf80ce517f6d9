// Package certify releases unlearned online L-BFGS states with certified
// unlearning, and checks such releases. A release publishes the learner's
// public configuration, the loss's header, the noised parameters w and a
// memory that is empty, rebuilt from the noised w and retained data, or —
// for an exact release — the counterfactual's own (a [Release]); a signed
// [Certificate] says what it guarantees and on what it rests; [Verify]
// recomputes it from public data. It also plans the σ a deployment needs
// ([RequiredSigma]), wraps an intervention as a certified one ([Wrap]) and
// composes repeated releases under a budget ([Accountant]). Derivations are
// in docs/theory.md; the guide is docs/packages/certify.md.
//
// # The rule (spec §7)
//
// Everything published — the release, σ, α, every certificate field — is a
// function of public quantities (ε, δ, β, the learner's configuration, the
// loss header, the number and ages of the deletions, the intervention's
// kind) and of the noised state only: never of the deleted payloads or of
// the un-noised state. The noise is calibrated to a sensitivity that holds
// in floating point for every deletion set the certificate speaks of
// (paper, Definition "(ε,δ)-State Certified Unlearning": for all U with
// |U| ≤ m).
//
// # Where α comes from
//
//   - Derived ("proved"): [DeriveProfile] turns a certifiable learner's
//     enforced options (olbfgs.Config.Radius, SampleBound, and the pair
//     guard PairAngle, PairMin, PairMax) and the loss header into G, μ, L,
//     hMin, hMax, the contraction ρ (the commuting case only when the header
//     shows every Hessian is a multiple of I) and a per-step round-off
//     bound; the recursion of Theorem "Bounded counterfactual state
//     deviation" over the deletions' ages, plus the intervention's a-priori
//     allowance (parameter-only: η·hMax·G per deleted sample; retain
//     fine-tuning: per replayed insert), capped by the diameter 2W' of the
//     learner's ball, is α ([DerivedAlpha]).
//   - Diameter ("proved"): without a request description or a guard, α = 2W':
//     every state of a learner with a radius lies in its ball, and the
//     release projects onto it.
//   - Assumed: a user's [Given] α. The certificate says the guarantee is
//     conditional on it.
//   - Exact: α = 0 only where the toolkit itself replayed the
//     deletion-edited history ([Wrap] with oracle replay, or a window replay
//     whose window holds every deleted insert; the model store) — never on a
//     caller's word.
//
// # Theorem "o-LBFGS Unlearning Certificate"
//
// [Certify] projects w onto the learner's ball, adds N(0, σ²I) as ONE
// Gaussian mechanism for the whole vector (σ computed once), refuses a σ
// below 2⁻³⁰·W' where the noise could vanish in rounding, and never returns
// a release equal to the un-noised state. The un-noised memory is never
// released: the "keep" policy is refused.
//
// # Certificates
//
// A [Certificate] (format "unlearn-certificate/v2") records ε, δ, β, the
// guarantee (ε, δ + β), α with its public inputs and terms, σ, the
// calibration, the sampler, the configuration, the SHA-256 of the release,
// a plain statement and warnings, a digest, and the certifier's Ed25519
// signature ([Sign]). [Verify] checks the signature first, then recomputes
// α from the RELEASE's configuration and header (no constant is an input),
// σ, the statement, and cross-checks the release. It cannot check that the
// noise was drawn, and says so.
//
// # Composition
//
// [Accountant] composes repeated releases under a budget (see its doc).
//
// # Errors
//
// A bad specification returns a *[SpecError] naming the field, a failed
// verification a *[VerifyError] naming the certificate field, a refused
// release an *[AccountError]; each wraps a sentinel for errors.Is.
// Programmer errors (a nil state or operator) panic with a "certify: "
// prefix. The package never logs or prints.
package certify
