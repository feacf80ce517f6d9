package audit

import (
	"fmt"

	"unlearn/certify"
	"unlearn/noise"
	"unlearn/olbfgs"
)

// certified is the mechanism of Certified.
type certified struct {
	state *olbfgs.Learner
	spec  certify.Spec
	dim   int
}

// Certified returns the mechanism that releases state through the
// toolkit's certified release, certify.Certify(state, spec), with the
// trial's sampler: the released w followed by the released memory,
// flattened as [Flatten] lays it out (zeros after a reset). Giving both
// worlds the same spec audits the mechanism as deployed: σ is computed
// from spec's public inputs only, so it is the same in both worlds by
// construction. spec.Sampler is replaced in every trial; the rest is used
// as given. It panics if spec is not valid for state (check it once with
// certify.Certify before auditing).
func Certified(state *olbfgs.Learner, spec certify.Spec) Mechanism {
	if _, _, err := certify.Certify(state, withSampler(spec, noise.NewSeededSampler(0, noise.SamplerOptions{}))); err != nil {
		panic(fmt.Sprintf("audit: Certified: the spec does not certify the state: %v", err))
	}
	cfg := state.Config()
	return &certified{state: state.Clone(), spec: spec, dim: cfg.Dim + 2*cfg.Memory*cfg.Dim}
}

func withSampler(s certify.Spec, sampler noise.Sampler) certify.Spec {
	s.Sampler = sampler
	return s
}

func (c *certified) Dim() int { return c.dim }

func (c *certified) Release(dst []float64, s noise.Sampler) error {
	if len(dst) != c.dim {
		panic(fmt.Sprintf("audit: Certified.Release: len(dst) = %d, want %d", len(dst), c.dim))
	}
	rel, _, err := certify.Certify(c.state, withSampler(c.spec, s))
	if err != nil {
		return err
	}
	l, err := rel.Learner()
	if err != nil {
		return err
	}
	d := len(rel.W)
	copy(dst[:d], rel.W)
	copy(dst[d:], Flatten(l.Memory()))
	return nil
}
