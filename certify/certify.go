package certify

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"unlearn/internal/established"
	"unlearn/internal/floatbits"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Certify releases an unlearned state with (ε, δ + β)-certified unlearning
// (paper: Definition "(ε,δ)-State Certified Unlearning", Theorem "o-LBFGS
// Unlearning Certificate"; spec §7) and returns the release and its
// certificate. It never modifies state.
//
// α is computed from public inputs only (see [Spec]): derived from the
// learner's configuration and the request's [Deletion], the diameter bound
// 2W', or an assumed α. The released w is
//
//	w_released = P(w̃) + N(0, σ²I),
//
// with P the projection onto the learner's ball (when it has a radius: a
// non-expansive map that fixes the counterfactual, so it never increases
// ‖w̃ − w⁻‖) and σ computed once from (α, ε, δ); the memory is released
// empty (Reset) or rebuilt from the noised w by replaying retained data
// (Rebuild). The un-noised memory is never released. Certify refuses a σ
// below 2⁻³⁰·W', where the noise could vanish in rounding, and never
// returns a release equal to the un-noised state. Exactness is never
// granted here: a caller's word is not a proof; [Wrap] and the model
// store establish it by replay.
//
// Errors: a *SpecError naming the bad field (ErrSpec, ErrValue,
// ErrNotCertifiable, ErrResolution, ErrRetained, …), or the sampler's
// error. Cost: the sampler's (about 7 µs per coordinate with the secure
// one) plus a rebuild's replay.
func Certify(state *olbfgs.Learner, spec Spec) (*Release, *Certificate, error) {
	if state == nil {
		panic("certify: Certify: nil state")
	}
	r, err := spec.resolve(state, "")
	if err != nil {
		return nil, nil, err
	}
	return certify(state, r)
}

// certify is Certify on a resolved spec (exact or noised).
func certify(state *olbfgs.Learner, r *resolved) (*Release, *Certificate, error) {
	out, sigma, applied, err := released(state, r)
	if err != nil {
		return nil, nil, err
	}
	release := releaseOf(out, r.header, r.contract)
	b, err := release.Marshal()
	if err != nil {
		return nil, nil, err
	}
	c := &Certificate{
		Format:        Format,
		Toolkit:       r.Toolkit,
		Memory:        r.Memory,
		Retained:      len(r.Retained),
		Epsilon:       r.Epsilon,
		Delta:         r.Delta,
		Beta:          r.Beta,
		Guarantee:     guarantee(r.Epsilon, r.Delta, r.Beta),
		Sensitivity:   r.sens,
		Sigma:         sigma,
		SigmaApplied:  applied,
		Calibration:   r.Calibration,
		Sampler:       r.sampler,
		Deployable:    r.sampler != noise.NameSeeded,
		Exact:         r.sens.Source == "exact",
		Intervention:  r.Intervention,
		Deletions:     r.Deletions,
		Dim:           len(release.W),
		Config:        release.Config,
		ReleaseSHA256: sha256Hex(b),
		Provenance:    r.sens.Provenance,
	}
	if err := c.seal(); err != nil {
		return nil, nil, err
	}
	return release, c, nil
}

// released returns the state a release under r publishes (w projected and
// noised, memory reset or rebuilt; the state itself for an exact release)
// with the calibrated and the applied σ (0 for an exact release). It is the
// one implementation of the noise and the memory policy, shared by
// [Certify], [CertifyExact], [CertifyTrained] and [Prepared.Release].
func released(state *olbfgs.Learner, r *resolved) (out *olbfgs.Learner, sigma, applied float64, err error) {
	if err := checkRetained(state, r.Retained); err != nil {
		return nil, 0, 0, err
	}
	out = state.Clone()
	if r.gauss != nil {
		// The noise is on the deployed parameters (the average with
		// olbfgs.Config.Average), and the released learner holds nothing
		// else of the state's options: a new learner at the noised w, whose
		// deployed parameters are w.
		w := slices.Clone(state.Deployed())
		if out, err = olbfgs.New(state.Config(), state.Loss()); err != nil {
			return nil, 0, 0, fmt.Errorf("certify: %w", err)
		}
		if rad := state.Config().RadiusBound(); !math.IsInf(rad, 0) {
			if n := floats.Norm(w, 2); n > rad {
				floats.Scale(rad/n, w)
			}
		}
		un := slices.Clone(w)
		rel, err := r.gauss.Release(w, w)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("certify: noise: %w", err)
		}
		if floatbits.Equal(w, un) {
			return nil, 0, 0, specErr("Epsilon", r.Epsilon, fmt.Errorf("%w: the noised w equals the un-noised one", ErrResolution))
		}
		// σ must dominate the rounding of every released coordinate; the
		// released w is public, so this check reveals nothing more.
		if m := floats.Norm(w, math.Inf(1)); rel.Sigma < resolution*m {
			return nil, 0, 0, specErr("Epsilon", r.Epsilon, fmt.Errorf("%w: σ = %g < 2⁻³⁰·max|w_i| = %g of the released w", ErrResolution, rel.Sigma, resolution*m))
		}
		sigma, applied = rel.Sigma, rel.SigmaApplied
		out.SetW(w)
		switch r.Memory {
		case Reset:
			out.Memory().Reset()
		case Rebuild:
			if err := rebuild(out, r.Retained); err != nil {
				return nil, 0, 0, err
			}
		}
	}
	return out, sigma, applied, nil
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
// parameters).
func rebuild(out *olbfgs.Learner, events []stream.Event) error {
	tmp, err := olbfgs.New(out.Config(), out.Loss())
	if err != nil {
		return fmt.Errorf("certify: rebuild: %w", err)
	}
	tmp.SetW(out.W())
	if err := tmp.Run(events); err != nil {
		return specErr("Retained", nil, fmt.Errorf("%w: replay: %w", ErrRetained, err))
	}
	out.Memory().CopyFrom(tmp.Memory())
	return nil
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

// CertifyExact releases, without noise, a state that the toolkit itself
// established to be the counterfactual — spec.Established says how (the
// model store's replay of its deletion-edited log). The whole state is
// released, memory included, with α = 0. A caller outside this module
// cannot construct spec.Established, so it cannot obtain an exact release
// for a state of its own: exactness is the toolkit's finding, never a
// caller's word (spec §7). Errors: ErrNotCertifiable without
// spec.Established, the errors of [Certify].
func CertifyExact(state *olbfgs.Learner, spec Spec) (*Release, *Certificate, error) {
	if state == nil {
		panic("certify: CertifyExact: nil state")
	}
	if spec.Alpha != nil || spec.Deletion != nil || spec.Beta != 0 {
		return nil, nil, specErr("Alpha", nil, fmt.Errorf("%w: an exact release has α = 0 and β = 0", ErrSpec))
	}
	how := spec.Established.How()
	if how == "" {
		return nil, nil, specErr("Established", nil, fmt.Errorf("%w: an exact release is established by the toolkit's own replay", ErrNotCertifiable))
	}
	spec.Memory, spec.Retained = Reset, nil
	r, err := spec.resolve(state, how)
	if err != nil {
		return nil, nil, err
	}
	return certify(state, r)
}

// CertifyTrained releases a state trained on a stream whose delete events
// are the deletion request (the no-op intervention, as 'unlearn certify
// --stream' does). It first establishes that the state is what the stream
// describes: it replays the stream's first state.T() events from θ0 with the
// state's configuration and loss and requires the result to equal the
// state bit for bit (w, memory, deleted ids, counters); then the deleted
// inserts' ages come from that same prefix, and α is derived — "proved".
// spec.Alpha, Deletion and Established must be unset. Errors: a prefix that
// does not reproduce the state (ErrNotCertifiable), the errors of [Certify].
func CertifyTrained(state *olbfgs.Learner, prefix []stream.Event, spec Spec) (*Release, *Certificate, error) {
	if state == nil {
		panic("certify: CertifyTrained: nil state")
	}
	if spec.Alpha != nil || spec.Deletion != nil || spec.Established != nil {
		return nil, nil, specErr("Deletion", nil, fmt.Errorf("%w: CertifyTrained derives the deletion from the stream", ErrSpec))
	}
	if len(prefix) < state.T() {
		return nil, nil, specErr("Prefix", len(prefix), fmt.Errorf("%w: the stream has %d events, the state has applied %d", ErrNotCertifiable, len(prefix), state.T()))
	}
	prefix = prefix[:state.T()]
	replay, err := olbfgs.Replay(state.Config(), state.Loss(), prefix)
	if err != nil || !replay.Equal(state) {
		return nil, nil, specErr("Prefix", nil, fmt.Errorf("%w: replaying the stream's first %d events does not give the state: it was not trained on this stream (with this configuration)", ErrNotCertifiable, state.T()))
	}
	u := stream.NewIDSet(state.Deleted()...)
	spec.Deletion = &Deletion{Ages: AgesOf(prefix, u), Intervention: unlearn.Builtin{Kind: unlearn.KindNoop}}
	spec.Established = established.New("the stream's first events, replayed, give the state bit for bit; the deletions are its delete events")
	return Certify(state, spec)
}
