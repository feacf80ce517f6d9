package noise

// WithSampler returns the same mechanism — the same α, ε, δ, calibration and
// σ, which is not computed again — drawing its noise from s (nil: a new
// NewSecureSampler(SamplerOptions{})). It is for many releases of one
// calibrated mechanism with different samplers, such as an audit's trials
// (package audit): σ is fixed when the mechanism is made and does not
// depend on the noise.
func (g *Gaussian) WithSampler(s Sampler) *Gaussian {
	if s == nil {
		s = NewSecureSampler(SamplerOptions{})
	}
	c := *g
	c.opts.Sampler = s
	return &c
}
