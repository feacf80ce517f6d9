package certify_test

import (
	"fmt"

	"unlearn/certify"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/sign"
	"unlearn/stream"
	"unlearn/unlearn"
)

// A certifiable learner (radius, sample bound, pair guard) trained on an
// isotropic quadratic stream; one sample is deleted and the no-op state is
// released with a derived α; window replay over a window that holds the
// deleted insert is certified exact. The seeded sampler makes the example
// reproducible: it is for examples and tests only, never for deployment.
func Example() {
	const d = 2
	loss, _ := stream.NewQuadratic([][]float64{{1, 0}, {0, 1}}, [][]float64{{1, 0}, {0, 1}})
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory, cfg.StepSize = 3, 0.5
	cfg.Radius, cfg.SampleBound = 4, 2
	cfg.PairAngle, cfg.PairMin, cfg.PairMax = 1e-6, 1-1e-9, 1+1e-9
	var events []stream.Event
	for i := 1; i <= 40; i++ {
		events = append(events, stream.InsertEvent(int64(i), []float64{float64(i%5) / 5, float64(i%3) / 3}, 0))
	}
	actual, _ := olbfgs.New(cfg, loss)
	_ = actual.KeepCheckpoints(10)
	_ = actual.Run(events)
	req := unlearn.Request{Actual: actual, Prefix: events, U: stream.NewIDSet(35)}
	spec := certify.Spec{Epsilon: 1, Delta: 1e-5, Sampler: noise.NewSeededSampler(1, noise.SamplerOptions{})}

	noop, _ := certify.Wrap(unlearn.NoOp(), spec)
	rel, cert, _, _ := noop.ApplyCertified(req)
	fmt.Printf("no-op: α %s (%s), σ > 0: %v, memory released: %d pairs\n", cert.Sensitivity.Source, cert.Provenance, cert.Sigma > 0, len(rel.Memory))

	window, _ := certify.Wrap(unlearn.WindowReplay(10, "window-10", "Window replay 10"), spec)
	_, cert, _, _ = window.ApplyCertified(req)
	fmt.Printf("window replay: exact %v, σ = %v\n", cert.Exact, cert.Sigma)

	key, _ := sign.Generate()
	_ = certify.Sign(cert, key)
	b, _ := rel.Marshal()
	_, err := certify.Verify(cert, b, key.Public())
	fmt.Println("verify against another release:", err != nil)
	// Output:
	// no-op: α derived (proved), σ > 0: true, memory released: 0 pairs
	// window replay: exact true, σ = 0
	// verify against another release: true
}
