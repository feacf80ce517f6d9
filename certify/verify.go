package certify

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/stat/distuv"

	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// recomputeTol is the relative tolerance for the values Verify recomputes
// with transcendental functions (α through exp and log, σ through the DP
// library's bisection, zCDP): they are deterministic on one platform, and
// 10⁻¹² leaves room for a different libm on another (a few ulps, ~10⁻¹⁵)
// while any deliberate change of a value is caught by the digest anyway.
const recomputeTol = 1e-12

// noiseFalseRejection is the false-rejection probability of Verify's χ²
// test of the noise: a genuine release fails it with probability 10⁻¹⁰.
const noiseFalseRejection = 1e-10

// Report is the outcome of a successful verification.
type Report struct {
	// Certificate is the verified certificate.
	Certificate *Certificate
	// Checked lists what was checked.
	Checked []string
	// Skipped lists what could not be checked, and why (a redacted
	// certificate has no before-state hash).
	Skipped []string
}

// String returns the report as text: the certificate's summary, then the
// checks.
func (r *Report) String() string {
	var b strings.Builder
	b.WriteString(r.Certificate.Summary())
	for _, c := range r.Checked {
		fmt.Fprintf(&b, "  ok          %s\n", c)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "  not checked %s\n", s)
	}
	return b.String()
}

// Verify checks a certificate against the snapshots (olbfgs.MarshalSnapshot
// files) of the state before the noise and of the released state: it
// recomputes α from its recorded inputs, σ from α, ε, δ and the
// calibration, the zCDP cost, the guarantee (ε, δ + β), the provenance and
// the statement; checks σ ≥ the required σ, the digest, the format
// (version), the SHA-256 of both states (of their canonical snapshot bytes,
// so formatting does not matter), that the released state differs from the
// one before only where the certificate says (w by noise whose size a χ²
// test at false-rejection rate 10⁻¹⁰ finds consistent with σ; Z as the
// memory policy says: empty after a reset, built from the retained ids only
// after a rebuild, unchanged when kept), and that the coverage matches the
// released memory.
//
// A redacted certificate ([Certificate.Public]) is verified without
// before (pass nil): everything but the before-state checks.
//
// It returns a *VerifyError naming the first field that fails and wrapping
// the cause (ErrFormat, ErrDigest, ErrHash, ErrAlpha, ErrSigma,
// ErrCoverage, ErrInconsistent, ErrNoise, ErrSnapshot, or the sentinel of
// a value out of range such as ErrEpsilon).
func Verify(cert *Certificate, before, after []byte) (*Report, error) {
	if cert == nil {
		return nil, verifyErr("certificate", ErrFormat, "missing")
	}
	// The two snapshots are parsed on two goroutines (each is sequential
	// JSON decoding).
	var (
		a, b   *olbfgs.Learner
		ha, hb stream.Header
		errB   error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if len(before) > 0 {
			b, hb, errB = olbfgs.UnmarshalSnapshot(before)
		}
	}()
	a, ha, errA := olbfgs.UnmarshalSnapshot(after)
	<-done
	if errA != nil {
		return nil, &VerifyError{Field: "after", Err: fmt.Errorf("%w: %w", ErrSnapshot, errA)}
	}
	if errB != nil {
		return nil, &VerifyError{Field: "before", Err: fmt.Errorf("%w: %w", ErrSnapshot, errB)}
	}
	// Bytes that hash to the recorded value are that canonical snapshot
	// (SHA-256 is collision resistant): no need to re-marshal them.
	known := map[*olbfgs.Learner]string{}
	if sha256Hex(after) == cert.AfterSHA256 {
		known[a] = cert.AfterSHA256
	}
	if b != nil && cert.BeforeSHA256 != "" && sha256Hex(before) == cert.BeforeSHA256 {
		known[b] = cert.BeforeSHA256
	}
	return verify(cert, b, hb, a, ha, known)
}

// VerifyStates is [Verify] for states in memory. header is the stream
// header the states are hashed with (nil: [HeaderOf] the after-state's
// loss, as [Certify] does by default); before may be nil for a redacted
// certificate.
func VerifyStates(cert *Certificate, before, after *olbfgs.Learner, header *stream.Header) (*Report, error) {
	if cert == nil {
		return nil, verifyErr("certificate", ErrFormat, "missing")
	}
	if after == nil {
		return nil, verifyErr("after", ErrSnapshot, "missing")
	}
	var h stream.Header
	if header != nil {
		h = *header
	} else {
		var err error
		if h, err = HeaderOf(after.Loss()); err != nil {
			return nil, &VerifyError{Field: "after", Err: err}
		}
	}
	return verify(cert, before, h, after, h, nil)
}

// verify checks the certificate and the states; known holds hashes
// already established for some of the states (by their raw bytes).
func verify(c *Certificate, before *olbfgs.Learner, hb stream.Header, after *olbfgs.Learner, ha stream.Header, known map[*olbfgs.Learner]string) (*Report, error) {
	hash := func(l *olbfgs.Learner, h stream.Header, what string) (string, error) {
		if s, ok := known[l]; ok {
			return s, nil
		}
		return hashState(l, h, what)
	}
	rep := &Report{Certificate: c}
	ok := func(s string, args ...any) { rep.Checked = append(rep.Checked, fmt.Sprintf(s, args...)) }
	if err := verifyCertificate(c, ok); err != nil {
		return nil, err
	}
	if err := verifyAfter(c, after, ha, ok, hash); err != nil {
		return nil, err
	}
	switch {
	case c.Redacted:
		rep.Skipped = append(rep.Skipped, "the state before the noise: the certificate is redacted (no before-state hash)")
	case before == nil:
		return nil, verifyErr("before", ErrSnapshot, "the state before the noise is required to verify an unredacted certificate")
	default:
		if err := verifyBefore(c, before, hb, after, ok, &rep.Skipped, hash); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// near compares recomputed values: equal within recomputeTol relative;
// NaN is never near anything.
func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return false
	}
	return scalar.EqualWithinAbsOrRel(a, b, 0, recomputeTol)
}

// jsonField maps a Spec field to the certificate's JSON name.
func jsonField(specField string) string {
	switch specField {
	case "Epsilon":
		return "epsilon"
	case "Delta":
		return "delta"
	case "Beta":
		return "beta"
	case "Calibration":
		return "calibration"
	}
	return "alpha.bound"
}

// verifyCertificate checks everything that needs no state.
func verifyCertificate(c *Certificate, ok func(string, ...any)) error {
	if c.Format != Format {
		return verifyErr("format", ErrFormat, "%q, want %q", c.Format, Format)
	}
	d, err := c.digest()
	if err != nil {
		return &VerifyError{Field: "digest", Err: fmt.Errorf("%w: %w", ErrFormat, err)}
	}
	if d != c.Digest {
		return verifyErr("digest", ErrDigest, "the content hashes to %s, the certificate says %q", d, c.Digest)
	}
	ok("format %s and digest", c.Format)
	if err := checkPrivacy(c.Epsilon, c.Delta, c.Beta); err != nil {
		var se *SpecError
		errors.As(err, &se)
		return &VerifyError{Field: jsonField(se.Field), Err: err}
	}
	if g := guarantee(c.Epsilon, c.Delta, c.Beta); g != c.Guarantee {
		return verifyErr("guarantee", ErrInconsistent, "(%v, %v), but (ε, δ + β) = (%v, %v)", c.Guarantee.Epsilon, c.Guarantee.Delta, g.Epsilon, g.Delta)
	}
	ok("guarantee (ε, δ + β) = (%v, %v)", c.Guarantee.Epsilon, c.Guarantee.Delta)

	s := c.Sensitivity
	var spec Spec
	switch s.Source {
	case "given":
		if s.Bound != nil || s.Shift != 0 || s.BoundAlpha != 0 {
			return verifyErr("alpha.bound", ErrAlpha, "a given α has no bound inputs or shift")
		}
		spec.Alpha = &Given{Alpha: s.Alpha, Provenance: s.Provenance, Method: s.Method}
	case "bound":
		if s.Bound == nil {
			return verifyErr("alpha.bound", ErrAlpha, "missing the bound's inputs")
		}
		sc, err := s.Bound.Scenario()
		if err != nil {
			return &VerifyError{Field: "alpha.bound", Err: fmt.Errorf("%w: %w", ErrAlpha, err)}
		}
		spec.Scenario, spec.Shift = &sc, s.Shift
	default:
		return verifyErr("alpha.source", ErrAlpha, "%q, want \"given\" or \"bound\"", s.Source)
	}
	want, err := spec.Sensitivity()
	if err != nil {
		return &VerifyError{Field: "alpha", Err: fmt.Errorf("%w: %w", ErrAlpha, err)}
	}
	switch {
	case !near(s.Alpha, want.Alpha):
		return verifyErr("alpha.value", ErrAlpha, "α = %v, but its inputs give %v", s.Alpha, want.Alpha)
	case !near(s.BoundAlpha, want.BoundAlpha):
		return verifyErr("alpha.bound_alpha", ErrAlpha, "%v, but the bound's inputs give %v", s.BoundAlpha, want.BoundAlpha)
	case s.Provenance != want.Provenance:
		return verifyErr("alpha.provenance", ErrAlpha, "%v, but its inputs are at best %v", s.Provenance, want.Provenance)
	case s.Metric != want.Metric || s.Method != want.Method:
		return verifyErr("alpha.metric", ErrAlpha, "metric or method differ from the recomputed ones")
	case !reflect.DeepEqual(s.Terms, want.Terms):
		return verifyErr("alpha.terms", ErrAlpha, "the terms differ from the recomputed ones")
	}
	if c.Provenance != s.Provenance {
		return verifyErr("provenance", ErrInconsistent, "%v, but α is %v", c.Provenance, s.Provenance)
	}
	ok("α = %.6g recomputed from its %s inputs (%s)", s.Alpha, s.Source, s.Provenance)

	req, err := noise.Sigma(c.Calibration, want.Alpha, c.Epsilon, c.Delta)
	if err != nil {
		return &VerifyError{Field: jsonField(noiseField(err, "Alpha")), Err: err}
	}
	switch {
	case c.Sigma < req && !near(c.Sigma, req):
		return verifyErr("sigma", ErrSigma, "σ = %v is below the required %v (%s, α = %v, ε = %v, δ = %v)", c.Sigma, req, c.Calibration, want.Alpha, c.Epsilon, c.Delta)
	case !near(c.Sigma, req):
		return verifyErr("sigma", ErrSigma, "σ = %v is not the calibrated %v", c.Sigma, req)
	case c.SigmaApplied < c.Sigma:
		return verifyErr("sigma_applied", ErrSigma, "the applied σ = %v is below σ = %v", c.SigmaApplied, c.Sigma)
	case !near(c.SigmaApplied, c.Sigma):
		return verifyErr("sigma_applied", ErrSigma, "the applied σ = %v differs from σ = %v beyond round-off", c.SigmaApplied, c.Sigma)
	}
	z := 0.0
	if want.Alpha > 0 {
		if z, err = noise.ZCDP(want.Alpha, c.SigmaApplied); err != nil {
			return &VerifyError{Field: "sigma_applied", Err: fmt.Errorf("%w: %w", ErrSigma, err)}
		}
	}
	if !near(c.ZCDP, z) {
		return verifyErr("zcdp", ErrSigma, "%v, but α²/(2σ²) = %v", c.ZCDP, z)
	}
	ok("σ = %.6g ≥ the required %.6g (%s), zCDP %.6g", c.Sigma, req, c.Calibration, c.ZCDP)
	if c.Exact != (s.Alpha == 0) {
		return verifyErr("exact", ErrInconsistent, "%v with α = %v", c.Exact, s.Alpha)
	}

	switch {
	case c.Sampler != noise.NameSecure && c.Sampler != noise.NameSeeded:
		return verifyErr("sampler", ErrInconsistent, "%q, want %q or %q", c.Sampler, noise.NameSecure, noise.NameSeeded)
	case c.Deployable != (c.Sampler == noise.NameSecure):
		return verifyErr("deployable", ErrInconsistent, "%v with the %s sampler", c.Deployable, c.Sampler)
	}
	if c.Covers != c.Memory.coverage() {
		return verifyErr("covers", ErrCoverage, "%q with memory %s, which covers %q", c.Covers, c.Memory, c.Memory.coverage())
	}
	if (c.Retained != nil) != (c.Memory == Rebuild) {
		return verifyErr("retained", ErrInconsistent, "retained data recorded with memory %s", c.Memory)
	}
	if c.Deletions < 0 {
		return verifyErr("deletions", ErrInconsistent, "%d", c.Deletions)
	}
	if s.Bound != nil && c.Deletions != len(s.Bound.Ages) {
		return verifyErr("deletions", ErrInconsistent, "%d deletions for the bound's %d ages", c.Deletions, len(s.Bound.Ages))
	}
	if c.Redacted != (c.BeforeSHA256 == "") {
		return verifyErr("redacted", ErrInconsistent, "redacted = %v with before_sha256 %q", c.Redacted, c.BeforeSHA256)
	}
	for _, h := range []struct{ field, v string }{{"before_sha256", c.BeforeSHA256}, {"after_sha256", c.AfterSHA256}} {
		if b, err := hex.DecodeString(h.v); (h.v != "" || h.field == "after_sha256") && (err != nil || len(b) != 32) {
			return verifyErr(h.field, ErrHash, "%q is not a SHA-256 in hex", h.v)
		}
	}
	st, warn := statement(c)
	if st != c.Statement {
		return verifyErr("statement", ErrInconsistent, "does not match the certificate's fields")
	}
	if !slices.Equal(warn, c.Warnings) {
		return verifyErr("warnings", ErrInconsistent, "%q, but the fields call for %q", c.Warnings, warn)
	}
	ok("coverage %q (memory %s), sampler %s, statement and warnings", c.Covers, c.Memory, c.Sampler)
	return nil
}

// hasher returns the SHA-256 of a state's canonical snapshot.
type hasher func(l *olbfgs.Learner, h stream.Header, what string) (string, error)

// verifyAfter checks the released state against the certificate.
func verifyAfter(c *Certificate, after *olbfgs.Learner, h stream.Header, ok func(string, ...any), hash hasher) error {
	sum, err := hash(after, h, "released state")
	if err != nil {
		return &VerifyError{Field: "after", Err: fmt.Errorf("%w: %w", ErrSnapshot, err)}
	}
	if sum != c.AfterSHA256 {
		return verifyErr("after_sha256", ErrHash, "the released state hashes to %s, the certificate says %s", sum, c.AfterSHA256)
	}
	if d := after.Config().Dim; d != c.Dim {
		return verifyErr("dim", ErrInconsistent, "%d, but the released state has d = %d", c.Dim, d)
	}
	m := after.Memory()
	switch c.Memory {
	case Reset:
		if m.Len() != 0 {
			return verifyErr("after.memory", ErrCoverage, "memory reset, but the released memory holds %d pairs", m.Len())
		}
	case Rebuild:
		ids := stream.NewIDSet(c.Retained.IDs...)
		for _, id := range c.Retained.IDs {
			if after.IsDeleted(id) {
				return verifyErr("retained.ids", ErrCoverage, "retained id %d is deleted", id)
			}
		}
		for i := range m.Len() {
			for _, id := range m.Pair(i).Source {
				if !ids.Has(id) {
					return verifyErr("after.memory", ErrCoverage, "pair %d comes from id %d, which is not retained data", i, id)
				}
			}
		}
	}
	ok("released state: SHA-256 %s, memory consistent with %s", sum[:12], c.Memory)
	return nil
}

// verifyBefore checks the state before the noise and what changed.
func verifyBefore(c *Certificate, before *olbfgs.Learner, h stream.Header, after *olbfgs.Learner, ok func(string, ...any), skipped *[]string, hash hasher) error {
	sum, err := hash(before, h, "state")
	if err != nil {
		return &VerifyError{Field: "before", Err: fmt.Errorf("%w: %w", ErrSnapshot, err)}
	}
	if sum != c.BeforeSHA256 {
		return verifyErr("before_sha256", ErrHash, "the state hashes to %s, the certificate says %s", sum, c.BeforeSHA256)
	}
	switch {
	case before.Config() != after.Config():
		return verifyErr("after.config", ErrInconsistent, "the configuration changed")
	case before.T() != after.T() || before.Skipped() != after.Skipped():
		return verifyErr("after.t", ErrInconsistent, "the counters changed")
	case !slices.Equal(before.Deleted(), after.Deleted()):
		return verifyErr("after.deleted", ErrInconsistent, "the deleted ids changed")
	case c.Memory == Keep && !before.Memory().Equal(after.Memory()):
		return verifyErr("after.memory", ErrCoverage, "memory kept, but the released memory differs")
	}
	tested, err := checkNoise(before.W(), after.W(), c.SigmaApplied)
	if err != nil {
		return err
	}
	ok("state before the noise: SHA-256 %s; only w and the memory changed", sum[:12])
	if tested {
		ok("noise: ‖Δw‖²/σ² within the χ²_%d range (false-rejection rate %g)", c.Dim, noiseFalseRejection)
	} else {
		*skipped = append(*skipped, "the noise: σ is below 2⁻³⁰·max|w_i|, where float round-off of Δw dominates it")
	}
	return nil
}

// noiseResolution: Verify tests the noise only when σ ≥ noiseResolution ·
// max|w_i|; below it the round-off of each Δw_i (≤ 2⁻⁵²·|w_i|) is no longer
// negligible against σ (here ≤ 2⁻²² of it), and the released w may not
// change at all.
const noiseResolution = 0x1p-30

// checkNoise tests that after − before is plausibly N(0, σ²I): with σ = 0
// the vectors must be identical; otherwise q = ‖after − before‖²/σ² must
// be positive and within the two-sided χ²_d quantiles at total rate
// noiseFalseRejection.
//
// It reports whether the χ² test was made: not when σ is below
// noiseResolution·max|w_i|.
func checkNoise(before, after []float64, sigma float64) (bool, error) {
	var q, scale float64
	same := true
	for i := range before {
		d := after[i] - before[i]
		same = same && math.Float64bits(after[i]) == math.Float64bits(before[i])
		scale = max(scale, math.Abs(before[i]), math.Abs(after[i]))
		if sigma > 0 {
			q += (d / sigma) * (d / sigma)
		}
	}
	if sigma == 0 {
		if !same {
			return false, verifyErr("after.w", ErrNoise, "σ = 0, but w changed")
		}
		return true, nil
	}
	if sigma < noiseResolution*scale {
		return false, nil
	}
	chi := distuv.ChiSquared{K: float64(len(before))}
	lo, hi := chi.Quantile(noiseFalseRejection/2), chi.Quantile(1-noiseFalseRejection/2)
	if q == 0 || q < lo || q > hi {
		return true, verifyErr("after.w", ErrNoise, "‖Δw‖²/σ² = %.6g outside [%.6g, %.6g], the χ²_%d range at false-rejection rate %g",
			q, lo, hi, len(before), noiseFalseRejection)
	}
	return true, nil
}
