package noise

import "fmt"

// GaussianOptions configures a vector Gaussian mechanism.
type GaussianOptions struct {
	// Alpha is the L2 sensitivity α ≥ 0 of the released vector: in this
	// toolkit, the bound α_t on the distance between the unlearned and the
	// counterfactual parameters (package bound). Required. α = 0 (exact
	// unlearning) gives σ = 0 and releases the vector unchanged.
	Alpha float64
	// Epsilon is the privacy parameter ε > 0. Required. The classic
	// calibration requires ε < 1.
	Epsilon float64
	// Delta is the privacy parameter δ ∈ (0, 1). Required.
	Delta float64
	// Calibration selects how σ is computed. Defaults to Analytic (the zero
	// value).
	Calibration Calibration
	// Sampler draws the noise. If nil, it defaults to
	// NewSecureSampler(SamplerOptions{}).
	Sampler Sampler
}

// Gaussian is the vector Gaussian mechanism x ↦ x + N(0, σ²I) for vectors
// of L2 sensitivity α: ONE (ε, δ)-DP mechanism for the whole vector, with σ
// computed once from (α, ε, δ) when the mechanism is made — never d
// per-coordinate mechanisms composed. Its privacy follows from the
// calibration (Balle & Wang 2018, Theorem 8, or Dwork & Roth 2014, Theorem
// A.1), both of which are stated for vector outputs and the L2 sensitivity;
// this is the noise of the paper's Theorem "o-LBFGS Unlearning Certificate".
//
// A Gaussian is safe for concurrent use if its sampler is.
type Gaussian struct {
	opts  GaussianOptions // resolved private copy
	sigma float64
}

// NewGaussian validates opts, resolves its defaults into a private copy and
// computes σ. It returns the *ArgError of [Sigma] for a bad α, ε, δ or
// calibration.
func NewGaussian(opts GaussianOptions) (*Gaussian, error) {
	if opts.Sampler == nil {
		opts.Sampler = NewSecureSampler(SamplerOptions{})
	}
	s, err := Sigma(opts.Calibration, opts.Alpha, opts.Epsilon, opts.Delta)
	if err != nil {
		return nil, err
	}
	return &Gaussian{opts: opts, sigma: s}, nil
}

// Sigma returns the calibrated σ.
func (g *Gaussian) Sigma() float64 { return g.sigma }

// Options returns the resolved options (defaults filled in).
func (g *Gaussian) Options() GaussianOptions { return g.opts }

// Release records one application of the mechanism: everything a
// certificate needs to state about the noise.
type Release struct {
	// Alpha, Epsilon and Delta are the mechanism's parameters.
	Alpha   float64 `json:"alpha"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Calibration is how Sigma was computed.
	Calibration Calibration `json:"calibration"`
	// Sigma is the calibrated σ required for (ε, δ).
	Sigma float64 `json:"sigma"`
	// SigmaApplied is the σ the sampler actually used, ≥ Sigma (the secure
	// sampler may exceed it by a relative ≈10⁻¹⁶; see SecureSampler).
	SigmaApplied float64 `json:"sigma_applied"`
	// ZCDP is the zero-concentrated DP parameter α²/(2·SigmaApplied²) of
	// this release (see [ZCDP]), for an accountant; 0 when α = 0.
	ZCDP float64 `json:"zcdp"`
	// Sampler is the sampler's name: "secure" or "seeded".
	Sampler string `json:"sampler"`
	// Dim is the length of the released vector.
	Dim int `json:"dim"`
}

// Release stores x + N(0, σ²I) in dst (which may alias x) and describes the
// release. It panics if len(dst) != len(x); it returns the sampler's
// *ArgError for a non-finite x[i] or an out-of-range result.
func (g *Gaussian) Release(dst, x []float64) (Release, error) {
	applied, err := g.opts.Sampler.AddNoise(dst, x, g.sigma)
	if err != nil {
		return Release{}, err
	}
	if applied < g.sigma {
		panic(fmt.Sprintf("noise: Gaussian.Release: sampler %q applied σ = %v below the calibrated %v",
			g.opts.Sampler.Name(), applied, g.sigma))
	}
	z := 0.0
	if g.opts.Alpha > 0 {
		if z, err = ZCDP(g.opts.Alpha, applied); err != nil {
			return Release{}, err
		}
	}
	return Release{
		Alpha:        g.opts.Alpha,
		Epsilon:      g.opts.Epsilon,
		Delta:        g.opts.Delta,
		Calibration:  g.opts.Calibration,
		Sigma:        g.sigma,
		SigmaApplied: applied,
		ZCDP:         z,
		Sampler:      g.opts.Sampler.Name(),
		Dim:          len(x),
	}, nil
}
