package olbfgs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// TestReadmeTour runs the Go snippet of README.md: on the default drifting
// quadratic stream, the five most recent inserts of a 500-event prefix all
// sit in the τ = 10 memory, and the oracle's memory is free of them.
func TestReadmeTour(t *testing.T) {
	h, err := stream.GenerateQuadratic(stream.DefaultQuadraticOptions())
	require.NoError(t, err)
	actual, err := olbfgs.Replay(olbfgs.DefaultConfig(h.Header.D), h.Loss, h.Events[:500])
	require.NoError(t, err)
	u := stream.NewIDSet(496, 497, 498, 499, 500)
	if got := actual.Memory().DirectMass(u); got != 5 {
		t.Fatalf("DirectMass = %d, want 5 (README)", got)
	}
	oracle, err := olbfgs.Replay(actual.Config(), h.Loss, stream.Counterfactual(h.Events[:500], u))
	require.NoError(t, err)
	if oracle.Memory().DirectMass(u) != 0 || oracle.T() != 495 {
		t.Fatalf("oracle: DirectMass = %d, T = %d; want 0, 495", oracle.Memory().DirectMass(u), oracle.T())
	}
}
