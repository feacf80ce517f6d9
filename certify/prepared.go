package certify

import (
	"fmt"

	"unlearn/noise"
	"unlearn/olbfgs"
)

// Prepared is a noised release of one state whose spec has been resolved
// once: α (from the public description, the diameter bound or an assumed
// α) and σ do not depend on the noise, so repeated releases of the same
// state — an audit's trials (package audit) — need only draw fresh noise.
// Each [Prepared.Release] runs the same code as [Certify] for the
// projection, the noise and the memory policy, so given the same seeded
// sampler it publishes exactly the release Certify would (TestPrepared).
// A Prepared keeps a clone of the state; it is not safe for concurrent
// use when its sampler is not.
type Prepared struct {
	state *olbfgs.Learner
	r     *resolved
}

// Prepare validates spec for state and computes α and σ once, as
// [Certify] does (same errors); it draws no noise. The spec's Sampler is
// only checked: each Release is given its own.
func Prepare(state *olbfgs.Learner, spec Spec) (*Prepared, error) {
	if state == nil {
		panic("certify: Prepare: nil state")
	}
	r, err := spec.resolve(state, "")
	if err != nil {
		return nil, err
	}
	if err := checkRetained(state, r.Retained); err != nil {
		return nil, err
	}
	return &Prepared{state: state.Clone(), r: r}, nil
}

// Sigma returns the calibrated σ of every release.
func (p *Prepared) Sigma() float64 { return p.r.gauss.Sigma() }

// Sensitivity returns α and how it was obtained.
func (p *Prepared) Sensitivity() Sensitivity { return p.r.sens }

// Memory returns the memory policy of the releases (Reset or Rebuild).
func (p *Prepared) Memory() MemoryPolicy { return p.r.Memory }

// Release draws one release with noise from s (noise.SecureSampler or
// noise.SeededSampler; nil means a fresh secure sampler): exactly what
// Certify(state, spec) with spec.Sampler = s publishes, without the
// certificate; σ is not computed again (noise.Gaussian.WithSampler).
// Errors: ErrSampler for another sampler type, the sampler's error,
// ErrResolution as Certify.
func (p *Prepared) Release(s noise.Sampler) (*Release, error) {
	r := *p.r
	g := p.r.gauss.WithSampler(s) // σ as calibrated by Prepare, not computed again
	switch g.Options().Sampler.(type) {
	case *noise.SecureSampler, *noise.SeededSampler:
	default:
		return nil, specErr("Sampler", fmt.Sprintf("%T", s), fmt.Errorf("%w: use noise.NewSecureSampler (deployment) or noise.NewSeededSampler (experiments only)", ErrSampler))
	}
	r.gauss = g
	out, _, _, err := released(p.state, &r)
	if err != nil {
		return nil, err
	}
	return releaseOf(out, r.header, r.contract), nil
}
