package audit

import (
	"fmt"

	"unlearn/certify"
	"unlearn/noise"
	"unlearn/olbfgs"
)

// certified is the mechanism of Certified and Prepared.
type certified struct {
	p        *certify.Prepared
	dim, tau int
}

// Certified returns the mechanism that releases state through the
// toolkit's certified release, certify.Certify(state, spec), with the
// trial's sampler: the released w followed by the released memory,
// flattened as [Flatten] lays it out (zeros after a reset). Giving both
// worlds the same spec audits the mechanism as deployed: σ is computed
// from spec's public inputs only, so it is the same in both worlds by
// construction. spec.Sampler is replaced in every trial; the rest is used
// as given.
//
// The spec is resolved once (certify.Prepare: α and σ do not depend on
// the noise) and each trial runs certify.Prepared.Release, the same code
// as Certify for the projection, the noise and the memory policy: a trial
// publishes exactly what Certify would with the same sampler, without
// re-deriving α or sealing a certificate per trial. It panics if spec is
// not valid for state (check it once with certify.Certify or
// certify.Prepare before auditing).
func Certified(state *olbfgs.Learner, spec certify.Spec) Mechanism {
	spec.Sampler = noise.NewSeededSampler(0, noise.SamplerOptions{})
	p, err := certify.Prepare(state, spec)
	if err != nil {
		panic(fmt.Sprintf("audit: Certified: the spec does not certify the state: %v", err))
	}
	return Prepared(p, state.Config())
}

// Prepared returns the mechanism whose trials are p.Release with the
// trial's sampler, flattened (w, then the memory as [Flatten] lays it out
// for cfg's parameter dimension and τ). cfg must be the configuration of
// p's state.
func Prepared(p *certify.Prepared, cfg olbfgs.Config) Mechanism {
	d := cfg.ParamDim()
	return &certified{p: p, dim: d + 2*cfg.Memory*d, tau: cfg.Memory}
}

func (c *certified) Dim() int { return c.dim }

func (c *certified) Release(dst []float64, s noise.Sampler) error {
	if len(dst) != c.dim {
		panic(fmt.Sprintf("audit: Certified.Release: len(dst) = %d, want %d", len(dst), c.dim))
	}
	rel, err := c.p.Release(s)
	if err != nil {
		return err
	}
	FlattenRelease(dst, rel)
	return nil
}

// FlattenRelease stores a release in dst as an audit artifact: w, then the
// released memory pairs in [Flatten]'s layout (slot k holds s_k then y_k;
// slots beyond the released pairs are zero). dst must have length
// d + 2·τ·d for the release's parameter dimension d and τ; it panics
// otherwise.
func FlattenRelease(dst []float64, rel *certify.Release) {
	d, tau := rel.Config.Olbfgs().ParamDim(), rel.Config.Memory
	if len(dst) != d+2*tau*d || len(rel.W) != d || len(rel.Memory) > tau {
		panic(fmt.Sprintf("audit: FlattenRelease: len(dst) = %d, want %d", len(dst), d+2*tau*d))
	}
	copy(dst, rel.W)
	mem := dst[d:]
	clear(mem)
	for k, p := range rel.Memory {
		copy(mem[2*k*d:], p.S)
		copy(mem[(2*k+1)*d:], p.Y)
	}
}
