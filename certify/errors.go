package certify

import (
	"errors"
	"fmt"

	"unlearn/bound"
	"unlearn/noise"
)

// Sentinel errors. Every error this package returns is a *[SpecError] (a bad
// specification or input), a *[VerifyError] (a certificate that does not
// verify) or an *[AccountError] (a refused release); each wraps one of these
// sentinels, or the sentinel of package noise or bound that refused a value,
// so that callers test the cause with errors.Is and recover the field with
// errors.As.
//
// Some sentinels are those of packages noise and bound, re-exported so that
// errors.Is works with either name.
var (
	// ErrEpsilon: ε is not finite and > 0 (noise.ErrEpsilon).
	ErrEpsilon = noise.ErrEpsilon
	// ErrDelta: δ is not in (0, 1) (noise.ErrDelta).
	ErrDelta = noise.ErrDelta
	// ErrClassicEpsilon: the classic calibration at ε ≥ 1, where Dwork–Roth
	// Theorem A.1 does not hold (noise.ErrClassicEpsilon).
	ErrClassicEpsilon = noise.ErrClassicEpsilon
	// ErrCalibration: an unknown calibration (noise.ErrCalibration).
	ErrCalibration = noise.ErrCalibration
	// ErrRho: a contraction factor ρ outside [0, 1) (bound.ErrRho).
	ErrRho = bound.ErrRho
	// ErrValue: a constant (G, hMin, hMax, η, α, a shift, Δ₀, λ_Z) that is
	// negative or not finite (bound.ErrValue).
	ErrValue = bound.ErrValue

	// ErrBeta: β, the failure probability of the bound, is not in [0, 1),
	// or δ + β ≥ 1, which certifies nothing.
	ErrBeta = errors.New("β must be in [0, 1) with δ + β < 1")
	// ErrSpec: a specification that is inconsistent as a whole: no
	// sensitivity or two of them, a field that the chosen options do not
	// use, an unknown memory policy, a deletion count that contradicts the
	// bound's ages, a header that does not describe the state.
	ErrSpec = errors.New("invalid certification spec")
	// ErrSampler: a sampler other than noise's secure or seeded one. Only
	// those two are accepted, so a certificate's sampler name is true.
	ErrSampler = errors.New("unsupported noise sampler")
	// ErrNotCertifiable: the learner's configuration gives no proved bound
	// (no radius), or a request asks for what the toolkit cannot establish
	// (exactness on a caller's word, an operator whose behaviour it does
	// not know).
	ErrNotCertifiable = errors.New("not certifiable")
	// ErrSignature: a certificate that is unsigned, signed by another key,
	// or whose signature does not verify.
	ErrSignature = errors.New("certificate signature")
	// ErrResolution: σ would not dominate the round-off of the released
	// parameters, so the release could equal the un-noised state.
	ErrResolution = errors.New("σ below the resolution of the released parameters")
	// ErrRetained: retained data for a memory rebuild that names a deleted
	// id, or is not a list of valid events for the state's loss.
	ErrRetained = errors.New("invalid retained data")

	// ErrFormat: a certificate of an unknown format (version), or one that
	// is not valid JSON of this format.
	ErrFormat = errors.New("unknown or malformed certificate format")
	// ErrRelease: a malformed release file.
	ErrRelease = errors.New("malformed release")
	// ErrDigest: the certificate's digest does not match its content: a
	// field was edited after it was issued.
	ErrDigest = errors.New("certificate digest mismatch")
	// ErrHash: a state snapshot whose SHA-256 differs from the one the
	// certificate records.
	ErrHash = errors.New("release hash mismatch")
	// ErrAlpha: the sensitivity α recorded does not follow from its
	// recorded inputs.
	ErrAlpha = errors.New("α does not follow from its inputs")
	// ErrSigma: σ is below the σ required for (α, ε, δ) and the
	// calibration, or the recorded σ, applied σ or zCDP cost do not follow
	// from them.
	ErrSigma = errors.New("σ does not match the required σ")
	// ErrCoverage: what the certificate says it covers does not match the
	// released state (e.g. coverage "state" with a reset memory, but the
	// released memory is not empty).
	ErrCoverage = errors.New("coverage does not match the released state")
	// ErrInconsistent: a field that is derived from others (the guarantee
	// (ε, δ+β), the statement, provenance, deployability, the deletion
	// count, the dimension, a counter of the state) does not match them.
	ErrInconsistent = errors.New("inconsistent certificate")
	// ErrNoise: the difference between the released and the unlearned
	// parameters is not plausibly N(0, σ²I) for the σ the certificate
	// claims (a χ² test at false-rejection rate 10⁻¹⁰).
	ErrNoise = errors.New("the released parameters do not carry the claimed noise")
	// ErrSnapshot: a state snapshot that cannot be read, or is missing.
	ErrSnapshot = errors.New("unreadable or missing state snapshot")

	// ErrBudget: a release that would exceed the accountant's budget.
	ErrBudget = errors.New("privacy budget exceeded")
)

// SpecError reports a bad field of a [Spec], [PlanSpec], [Budget] or
// [Charge] (or a bad argument), naming it. Err wraps a sentinel of this
// package or the *ArgError of package noise or bound that refused the
// value.
type SpecError struct {
	// Field names the field, e.g. "Epsilon", "Scenario.Contraction.rho",
	// "Retained[3]".
	Field string
	// Value is the refused value, if any.
	Value any
	// Err is the cause.
	Err error
}

func (e *SpecError) Error() string {
	if e.Value == nil {
		return fmt.Sprintf("certify: %s: %v", e.Field, e.Err)
	}
	return fmt.Sprintf("certify: %s = %v: %v", e.Field, e.Value, e.Err)
}

func (e *SpecError) Unwrap() error { return e.Err }

func specErr(field string, v any, err error) error {
	return &SpecError{Field: field, Value: v, Err: err}
}

// VerifyError reports why a certificate does not verify: the certificate
// field (JSON name) or state part that fails, and the cause.
type VerifyError struct {
	// Field is the JSON field of the certificate ("release_sha256",
	// "alpha.value", "sigma", …) or the part of a state ("after.memory").
	Field string
	// Err wraps one of the sentinels above (ErrHash, ErrAlpha, ErrSigma, …).
	Err error
}

func (e *VerifyError) Error() string { return fmt.Sprintf("certify: verify: %s: %v", e.Field, e.Err) }

func (e *VerifyError) Unwrap() error { return e.Err }

func verifyErr(field string, sentinel error, format string, args ...any) error {
	return &VerifyError{Field: field, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))}
}

// AccountError reports a release the [Accountant] refused.
type AccountError struct {
	// Label is the refused charge's label.
	Label string
	// Err wraps ErrBudget (with the totals) or a *SpecError for a bad
	// charge.
	Err error
}

func (e *AccountError) Error() string {
	return fmt.Sprintf("certify: accountant: release %q: %v", e.Label, e.Err)
}

func (e *AccountError) Unwrap() error { return e.Err }
