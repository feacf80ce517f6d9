package certify_test

import (
	"bytes"
	"fmt"

	"unlearn/certify"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// Many releases of one state, as an audit draws them: the spec is resolved
// once (α and σ), and each release only draws noise. With the same seeded
// sampler a prepared release is the one Certify publishes. The seeded
// sampler is for examples and tests only, never for deployment.
func ExamplePrepare() {
	loss, _ := stream.NewQuadratic([][]float64{{1, 0}, {0, 1}}, [][]float64{{1, 0}, {0, 1}})
	cfg := olbfgs.DefaultConfig(2)
	cfg.Memory, cfg.StepSize, cfg.Radius = 3, 0.5, 4
	state, _ := olbfgs.New(cfg, loss)
	for i := 1; i <= 20; i++ {
		_ = state.Step(stream.InsertEvent(int64(i), []float64{float64(i%5) / 5, float64(i%3) / 3}, 0))
	}
	spec := certify.Spec{Epsilon: 1, Delta: 1e-5, Alpha: &certify.Given{Alpha: 0.5, Method: "assumed for the example"}}

	p, err := certify.Prepare(state, spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	spec.Sampler = noise.NewSeededSampler(7, noise.SamplerOptions{})
	want, cert, _ := certify.Certify(state, spec)
	got, _ := p.Release(noise.NewSeededSampler(7, noise.SamplerOptions{}))
	wb, _ := want.Marshal()
	gb, _ := got.Marshal()
	fmt.Printf("σ = %.4g (the certificate's: %v), memory %s\n", p.Sigma(), p.Sigma() == cert.Sigma, p.Memory())
	fmt.Println("same release as Certify:", bytes.Equal(wb, gb))
	// Output:
	// σ = 1.866 (the certificate's: true), memory reset
	// same release as Certify: true
}
