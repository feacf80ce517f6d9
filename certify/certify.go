package certify

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"

	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// Certify releases an unlearned state with (ε, δ + β)-certified unlearning
// (paper: Definition "(ε,δ)-State Certified Unlearning", Theorem "o-LBFGS
// Unlearning Certificate"; SPEC §7) and returns the released state and its
// certificate. It never modifies state.
//
// Given α ≥ ‖w̃ − w⁻‖₂ — the distance of the unlearned parameters from
// those of the deletion-edited counterfactual, given or computed from a
// bound (spec.Sensitivity) — it adds noise to w only, as ONE Gaussian
// mechanism for the whole vector with σ computed once from (α, ε, δ) and
// the calibration:
//
//	w_released = w̃ + N(0, σ²I),
//
// then applies the memory policy (reset: Z = ∅; rebuild: Z from replaying
// the retained data from the noised w; keep: Z unchanged, and only the
// parameters are covered). A bound that holds with probability 1 − β gives
// (ε, δ + β) (docs/theory.md §9).
//
// α = 0 (exact unlearning, e.g. oracle replay: the paper's "exact
// unlearning is only obtained when α_t = 0") needs σ = 0: no noise is
// added, w is released unchanged, and the certificate says "exact". Such a
// certificate is only as good as the claim α = 0, whose provenance it
// states.
//
// The certificate records the SHA-256 of the canonical snapshots
// (olbfgs.MarshalSnapshot with spec.Header) of state and of the released
// state. The released state keeps state's counters and deleted ids.
//
// Errors: a *SpecError naming the bad field of spec (see [Spec] and the
// sentinels; a scenario whose η or τ is not the state's learner's is
// refused), retained data that names a deleted id or is invalid
// (ErrRetained), a state that cannot be snapshotted with the header
// (ErrSpec), or the sampler's error. Cost: the sampler's — about 7 µs per
// coordinate with the secure sampler (one core; see noise.SecureSampler),
// far less with the seeded one — plus two snapshots and a rebuild's replay.
func Certify(state *olbfgs.Learner, spec Spec) (*olbfgs.Learner, *Certificate, error) {
	if state == nil {
		panic("certify: Certify: nil state")
	}
	r, err := spec.resolve()
	if err != nil {
		return nil, nil, err
	}
	return certify(state, r)
}

// certify is Certify on a resolved spec.
func certify(state *olbfgs.Learner, r *resolved) (*olbfgs.Learner, *Certificate, error) {
	if r.Scenario != nil {
		c, cfg := r.Scenario.Constants, state.Config()
		if c.Eta != cfg.StepSize {
			return nil, nil, specErr("Scenario.Constants.Eta", c.Eta, fmt.Errorf("%w: the state's learner uses η = %v", ErrSpec, cfg.StepSize))
		}
		if cfg.Memory >= 1 && c.Tau != cfg.Memory {
			return nil, nil, specErr("Scenario.Constants.Tau", c.Tau, fmt.Errorf("%w: the state's learner keeps τ = %d pairs", ErrSpec, cfg.Memory))
		}
	}
	h, err := r.header(state)
	if err != nil {
		return nil, nil, err
	}
	if err := checkRetained(state, r.Retained); err != nil {
		return nil, nil, err
	}
	g := r.gauss
	out := state.Clone()
	w := slices.Clone(state.W())
	// The snapshot of the state before the noise is hashed while the noise
	// is drawn: the secure sampler uses one core (noise.SecureSampler), and
	// both only read state.
	var before string
	var hashErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		before, hashErr = hashState(state, h, "state")
	}()
	rel, err := g.Release(w, w)
	<-done
	if hashErr != nil {
		return nil, nil, hashErr
	}
	if err != nil {
		return nil, nil, fmt.Errorf("certify: noise: %w", err)
	}
	out.SetW(w)
	var retained *RetainedRecord
	switch r.Memory {
	case Reset:
		out.Memory().Reset()
	case Rebuild:
		if retained, err = rebuild(out, r.Retained, h); err != nil {
			return nil, nil, err
		}
	case Keep:
	}
	after, err := hashState(out, h, "released state")
	if err != nil {
		return nil, nil, err
	}
	c := &Certificate{
		Format:       Format,
		Toolkit:      r.Toolkit,
		Covers:       r.Memory.coverage(),
		Memory:       r.Memory,
		Retained:     retained,
		Epsilon:      r.Epsilon,
		Delta:        r.Delta,
		Beta:         r.Beta,
		Guarantee:    guarantee(r.Epsilon, r.Delta, r.Beta),
		Sensitivity:  r.sens,
		Sigma:        rel.Sigma,
		SigmaApplied: rel.SigmaApplied,
		Calibration:  r.Calibration,
		Sampler:      r.sampler,
		Deployable:   r.sampler == noise.NameSecure,
		ZCDP:         rel.ZCDP,
		Exact:        r.sens.Alpha == 0,
		Intervention: r.Intervention,
		Deletions:    r.Deletions,
		Dim:          len(w),
		BeforeSHA256: before,
		AfterSHA256:  after,
		Provenance:   r.sens.Provenance,
	}
	if err := c.seal(); err != nil {
		return nil, nil, err
	}
	return out, c, nil
}

// header returns the spec's header or the one derived from the state's
// loss.
func (r *resolved) header(state *olbfgs.Learner) (stream.Header, error) {
	if r.Header != nil {
		return *r.Header, nil
	}
	return HeaderOf(state.Loss())
}

// hashState returns the SHA-256 (hex) of the canonical snapshot of l.
func hashState(l *olbfgs.Learner, h stream.Header, what string) (string, error) {
	b, err := olbfgs.MarshalSnapshot(l, h)
	if err != nil {
		return "", specErr("Header", nil, fmt.Errorf("%w: cannot snapshot the %s: %w", ErrSpec, what, err))
	}
	return sha256Hex(b), nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// checkRetained validates the data of a rebuild: inserts with valid
// payloads, distinct ids, none of them deleted in state.
func checkRetained(state *olbfgs.Learner, events []stream.Event) error {
	seen := make(map[int64]bool, len(events))
	for i, e := range events {
		field := fmt.Sprintf("Retained[%d]", i)
		switch {
		case e.Op != stream.Insert:
			return specErr(field, e.ID, fmt.Errorf("%w: %v event; retained data is inserts only", ErrRetained, e.Op))
		case state.IsDeleted(e.ID):
			return specErr(field, e.ID, fmt.Errorf("%w: id %d is deleted", ErrRetained, e.ID))
		case seen[e.ID]:
			return specErr(field, e.ID, fmt.Errorf("%w: repeated id %d", ErrRetained, e.ID))
		}
		if f, err := state.Loss().CheckSample(e.Sample); err != nil {
			return specErr(field+"."+f, e.ID, fmt.Errorf("%w: %w", ErrRetained, err))
		}
		seen[e.ID] = true
	}
	return nil
}

// rebuild replaces out's memory by the one o-LBFGS builds when it replays
// the retained events from (w_out, ∅), keeping w_out (the noised
// parameters), and describes the data.
func rebuild(out *olbfgs.Learner, events []stream.Event, h stream.Header) (*RetainedRecord, error) {
	tmp, err := olbfgs.New(out.Config(), out.Loss())
	if err != nil {
		return nil, fmt.Errorf("certify: rebuild: %w", err)
	}
	tmp.SetW(out.W())
	if err := tmp.Run(events); err != nil {
		return nil, specErr("Retained", nil, fmt.Errorf("%w: replay: %w", ErrRetained, err))
	}
	out.Memory().CopyFrom(tmp.Memory())
	rec := &RetainedRecord{IDs: make([]int64, len(events))}
	for i, e := range events {
		rec.IDs[i] = e.ID
	}
	sum, err := eventsHash(events, h)
	if err != nil {
		return nil, err
	}
	rec.SHA256 = sum
	return rec, nil
}

// eventsHash returns the SHA-256 of the events' JSON Lines encoding under
// header h (the header line itself excluded).
func eventsHash(events []stream.Event, h stream.Header) (string, error) {
	hist := &stream.History{Header: h, Events: events}
	var b strings.Builder
	if err := stream.Write(&b, hist); err != nil {
		return "", specErr("Retained", nil, fmt.Errorf("%w: %w", ErrRetained, err))
	}
	s := b.String()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return sha256Hex([]byte(s)), nil
}

// ShiftOf returns an upper bound on ‖after.w − before.w‖₂, the distance by
// which an intervention moved the parameters (for [Spec.Shift]): computed
// in floating point and inflated by its relative error bound (d + 4)·2⁻⁵³,
// then rounded up. It panics if the dimensions differ.
func ShiftOf(before, after *olbfgs.Learner) float64 {
	a, b := before.W(), after.W()
	if len(a) != len(b) {
		panic(fmt.Sprintf("certify: ShiftOf: dimensions %d and %d", len(a), len(b)))
	}
	var scale, ssq float64 = 0, 1 // scaled sum of squares (LAPACK dnrm2 style), no overflow
	for i := range a {
		v := math.Abs(b[i] - a[i])
		if v == 0 {
			continue
		}
		if scale < v {
			ssq = 1 + ssq*(scale/v)*(scale/v)
			scale = v
		} else {
			ssq += (v / scale) * (v / scale)
		}
	}
	n := scale * math.Sqrt(ssq)
	if n == 0 {
		return 0
	}
	return roundUp(n * (1 + float64(len(a)+4)*0x1p-53))
}

// AgesOf returns, for each insert of prefix whose id is in u, its age: the
// number of inserts after it in prefix (update steps; delete events are
// not steps, docs/theory.md §1, A5). These are the bound.Scenario.Ages of
// a deletion request made after prefix. Ids of u that prefix does not
// insert are ignored (unlearn.Request.Validate refuses them). The ages come
// in the order of the inserts.
func AgesOf(prefix []stream.Event, u stream.IDSet) []int {
	var pos []int // insert index of each deleted insert
	n := 0
	for _, e := range prefix {
		if e.Op != stream.Insert {
			continue
		}
		if u.Has(e.ID) {
			pos = append(pos, n)
		}
		n++
	}
	ages := make([]int, len(pos))
	for i, p := range pos {
		ages[i] = n - 1 - p
	}
	return ages
}
