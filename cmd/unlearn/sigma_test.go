package main

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/noise"
)

func TestSigmaCmd(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		want      float64 // exact σ (mpmath values of docs/theory.md §8; the 256-bit reference for the tiny ε)
		tolerance float64 // relative: analytic ≤ 0.1% above exact; the printout adds ≤ 1e-4 by rounding up to 5 digits
	}{
		{"analytic-default", []string{"--alpha", "1", "--epsilon", "1", "--delta", "1e-5"}, 3.730632, 1.1e-3},
		{"analytic-scaled", []string{"--alpha", "2", "--epsilon", "0.5", "--delta", "1e-3"}, 2 * 4.610128, 1.1e-3},
		{"classic", []string{"--alpha", "1", "--epsilon", "0.1", "--delta", "1e-6", "--calibration", "classic"}, 52.98803, 1e-4},
		{"zero-alpha", []string{"--alpha", "0", "--epsilon", "1", "--delta", "1e-5"}, 0, 0},
		// Issue 9, finding 5: this printed 1.67e15 (the DP library's δ(σ)
		// cancels at small ε); the exact σ is 3.5904676e16.
		{"tiny-epsilon", []string{"--alpha", "1", "--epsilon", "1e-15", "--delta", "1e-300"}, 3.5904676e16, 1.1e-3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCLI(t, append([]string{"sigma"}, tt.args...)...)
			require.NoError(t, err)
			got, err := strconv.ParseFloat(strings.TrimSpace(out), 64)
			require.NoError(t, err, "output %q is not a number", out)
			if got < tt.want || got > tt.want*(1+tt.tolerance) {
				t.Errorf("σ = %v, want in [%v, %v·(1+%v)]", got, tt.want, tt.want, tt.tolerance)
			}
			if len(strings.TrimSpace(out)) > len("3.5905e+16") {
				t.Errorf("output %q is not at 5 significant digits", out)
			}
		})
	}
}

func TestSigmaCmdJSON(t *testing.T) {
	out, err := runCLI(t, "sigma", "--alpha", "2", "--epsilon", "0.5", "--delta", "1e-3", "--json")
	require.NoError(t, err)
	var v sigmaJSON
	require.NoError(t, json.Unmarshal([]byte(out), &v), "output %q", out)
	want, err := noise.SigmaAnalytic(2, 0.5, 1e-3)
	require.NoError(t, err)
	assert.Equal(t, sigmaJSON{Alpha: 2, Epsilon: 0.5, Delta: 1e-3, Calibration: "analytic", Sigma: want}, v, "full precision")
	human, err := runCLI(t, "sigma", "--alpha", "2", "--epsilon", "0.5", "--delta", "1e-3")
	require.NoError(t, err)
	assert.Equal(t, formatUp(want, 5)+"\n", human)
}

func TestFormatUp(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{3.7324218750000004, "3.7325"}, {52.988025268504746, "52.989"}, {2, "2"}, {0, "0"},
		{9.99999, "10"}, {99999.5, "1e+05"}, {1.23456e-300, "1.2346e-300"}, {0.5, "0.5"},
	} {
		assert.Equal(t, tc.want, formatUp(tc.x, 5), "formatUp(%v)", tc.x)
	}
	rapid.Check(t, func(t *rapid.T) {
		x := math.Exp(rapid.Float64Range(-700, 700).Draw(t, "log x"))
		s := formatUp(x, 5)
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		if v < x || v > x*(1+1e-4) {
			t.Fatalf("formatUp(%v) = %s: not the 5-digit decimal at or above it", x, s)
		}
	})
}
