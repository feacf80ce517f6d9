package bound

import (
	"errors"

	"unlearn/internal/argerr"
)

// Sentinel errors. Every error this package returns for a bad argument is an
// *ArgError wrapping one of these, so callers can test the cause with
// errors.Is and recover the argument's name and value with errors.As.
var (
	// ErrRho: a contraction factor ρ outside [0, 1). ρ ≥ 1 is refused: the
	// recursion Δ_{t+1} ≤ ρΔ_t + η_tε_t then gives no bound that stays
	// finite, and the paper's Assumption "Contractive update map" requires
	// ρ < 1.
	ErrRho = errors.New("the contraction factor ρ must be in [0, 1)")
	// ErrValue: a constant that must be finite and ≥ 0 (or > 0 where the
	// documentation says so) is not.
	ErrValue = errors.New("value must be finite and non-negative")
	// ErrInvalid: a value outside its domain for another reason: hMin >
	// hMax, μ > L, τ < 1, a negative count or one above its limit (such as
	// MaxHorizon), repeated deletion ages, an unknown enum value or
	// provenance.
	ErrInvalid = errors.New("invalid value")
	// ErrNoContraction: the analytic formula or an estimator gives ρ ≥ 1,
	// so no contraction is proved or observed. The *ArgError's Value holds
	// the factor found.
	ErrNoContraction = errors.New("no contraction: factor ≥ 1")
	// ErrTooFewPoints: an estimator has fewer than the points it needs.
	ErrTooFewPoints = errors.New("too few usable points")
	// ErrRange: a bound overflows float64.
	ErrRange = errors.New("result out of floating-point range")
)

// ArgError reports a bad argument. Err is one of the sentinels above. Its
// fields:
//
//   - Func is the function that refused the argument, e.g. "Series".
//   - Arg names the argument: "rho", "delta0", "etaEps[3]", "G", "Ages[2]", …
//   - Value is the refused value (integers converted to float64).
//   - Err is the sentinel describing the violated condition.
//
// Its message is "bound: Func: Arg = Value: Err" and Unwrap returns Err. It is
// a type of this package's own (not the same type as any other package's
// ArgError), defined once for bound and noise in an internal package.
type ArgError = argerr.Error[boundPrefix]

// boundPrefix instantiates argerr.Error as this package's ArgError.
type boundPrefix struct{}

func (boundPrefix) Prefix() string { return "bound" }

func argErr(fn, arg string, v float64, err error) error {
	return argerr.New[boundPrefix](fn, arg, v, err)
}
