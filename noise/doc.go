// Package noise calibrates and applies the Gaussian noise that turns a
// bounded state deviation into certified unlearning: the paper's Definition
// "(ε,δ)-State Certified Unlearning" and Theorem "o-LBFGS Unlearning
// Certificate" (spec §7). It knows only the Google differential-privacy
// library (github.com/google/differential-privacy/go/v3), for its secure
// sampler; the bound α it is given comes from package bound. Derivations
// are in docs/theory.md.
//
// # Calibration
//
// For a vector with L2 sensitivity α, [SigmaClassic] is the classic
// σ = α·sqrt(2 ln(1.25/δ))/ε of Dwork & Roth (Theorem A.1; refused for
// ε ≥ 1, where it does not hold) and [SigmaAnalytic] the analytic Gaussian
// mechanism of Balle & Wang (2018, Theorem 8), tight for every ε > 0;
// [Sigma] dispatches on a [Calibration] (analytic by default). Every
// argument is validated and σ is rounded up: the analytic σ is never below
// the exact value at any accepted argument, because the condition
// δ(σ) ≤ δ is tested with an upper bound on δ(σ) computed without the
// cancellation of the formula as written (delta.go; docs/theory.md §8.1).
// α = 0 gives σ = 0: exact unlearning needs no noise.
//
// # Vector Gaussian mechanism
//
// [Gaussian] releases x + N(0, σ²I) as one mechanism for the whole vector,
// with σ computed once, and returns a [Release] record (parameters, σ
// required and applied, sampler name, zCDP cost) for a certificate.
//
// # Samplers
//
// [SecureSampler] takes its noise from the DP library's floating-point-safe
// Gaussian sampler and cannot be seeded; it is the default and the only one
// for deployment. [SeededSampler] is an insecure, reproducible sampler for
// experiments and tests. The seeded sampler spreads long vectors over all
// cores, with an output that does not depend on their number; the secure
// one runs on one core by default, because the DP library serializes its
// randomness behind a global mutex and more workers only contend (measured:
// 2 workers 1.3× slower on 2 cores).
//
// # Composition
//
// Gaussian differential privacy (Dong, Roth & Su 2022) composes Gaussian
// releases exactly: [GDPMu] gives μ = α/σ of one release, [GDPCompose]
// sqrt(Σμ_i²) of several, [GDPDelta] the exact δ(ε) of μ-GDP (the same
// curve and the same code as the analytic calibration) and [GDPEpsilon]
// its inverse, all rounded so the privacy claim is never understated.
// [ZCDP] gives the zCDP cost α²/(2σ²) of one release and [ZCDPEpsilon]
// converts a (summed) zCDP cost to (ε, δ) (Bun & Steinke 2016,
// Propositions 1.3 and 1.6), a looser bound kept for comparison.
//
// # Errors
//
// Bad arguments are returned as *[ArgError] values naming the function and
// the argument and wrapping a sentinel (ErrEpsilon, ErrClassicEpsilon,
// ErrDelta, ErrSensitivity, ErrSigma, ErrRange, ErrNonFinite,
// ErrCalibration, ErrZCDP, ErrMu), for errors.Is and errors.As. Programmer errors
// (slices of different lengths) panic with a "noise: " prefix. The package
// never logs.
package noise
