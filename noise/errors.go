package noise

import (
	"errors"

	"unlearn/internal/argerr"
)

// Sentinel errors. Every error this package returns for a bad argument is an
// *ArgError wrapping one of these, so callers can test the cause with
// errors.Is and recover the argument's name and value with errors.As.
var (
	// ErrEpsilon: ε is not finite and strictly positive (or, for the
	// analytic calibration, below the DP library's minimum 2⁻⁵⁰).
	ErrEpsilon = errors.New("ε must be finite and > 0")
	// ErrClassicEpsilon: the classic calibration was asked for ε ≥ 1, where
	// Dwork–Roth Theorem A.1 does not hold.
	ErrClassicEpsilon = errors.New("the classic calibration holds only for 0 < ε < 1")
	// ErrDelta: δ is not in (0, 1), or is below the smallest normal float64
	// (see [SigmaAnalytic]).
	ErrDelta = errors.New("δ must be in (0, 1)")
	// ErrSensitivity: the L2 sensitivity α is negative or not finite.
	ErrSensitivity = errors.New("the L2 sensitivity α must be finite and ≥ 0")
	// ErrSigma: a noise scale σ is negative or not finite.
	ErrSigma = errors.New("σ must be finite and ≥ 0")
	// ErrRange: the result cannot be represented (σ would overflow or
	// underflow float64, or a noised coordinate is not finite).
	ErrRange = errors.New("result out of floating-point range")
	// ErrNonFinite: an input vector holds NaN or ±Inf.
	ErrNonFinite = errors.New("non-finite value")
	// ErrCalibration: an unknown calibration name or value.
	ErrCalibration = errors.New("unknown calibration")
	// ErrZCDP: a zCDP parameter is negative or not finite.
	ErrZCDP = errors.New("the zCDP parameter must be finite and ≥ 0")
	// ErrMu: a Gaussian differential privacy parameter μ is negative or
	// not finite.
	ErrMu = errors.New("the GDP parameter μ must be finite and ≥ 0")
)

// ArgError reports a bad argument. Err is one of the sentinels above. Its
// fields:
//
//   - Func is the function that refused the argument, e.g. "SigmaClassic".
//   - Arg names the argument: "epsilon", "delta", "alpha", "sigma", "x[17]", …
//   - Value is the refused value.
//   - Err is the sentinel describing the violated condition.
//
// Its message is "noise: Func: Arg = Value: Err" and Unwrap returns Err. It is
// a type of this package's own (not the same type as any other package's
// ArgError), defined once for bound and noise in an internal package.
type ArgError = argerr.Error[noisePrefix]

// noisePrefix instantiates argerr.Error as this package's ArgError.
type noisePrefix struct{}

func (noisePrefix) Prefix() string { return "noise" }

func argErr(fn, arg string, v float64, err error) error {
	return argerr.New[noisePrefix](fn, arg, v, err)
}
