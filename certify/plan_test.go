package certify

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/bound"
	"unlearn/noise"
)

// planSpec: G = 1, hMin = 0.5, hMax = 2, η = 0.1, ρ = 0.9 (assumed): step
// term η·hMax·G = 0.2, memory term η·(hMax−hMin)·G = 0.15.
func planSpec() PlanSpec {
	return PlanSpec{
		Epsilon: 1, Delta: 1e-5,
		Constants:   bound.Constants{G: 1, HMin: 0.5, HMax: 2, Eta: 0.1, Tau: 10, Source: bound.Proved},
		Contraction: bound.Contraction{Rho: 0.9, Provenance: bound.Assumed, Method: "assumed"},
		Deletions:   []int{1, 3},
		Taus:        []int{5, 10},
		Since:       []int{0, 4},
	}
}

func TestRequiredSigmaHandValues(t *testing.T) {
	// One deletion just before the release (since 0): α = 0.2, the step term.
	// Since 4 (worst case): α = 0.2·0.9⁴ + 0.15·(1 + 0.9 + 0.9² + 0.9³)
	// = 0.13122 + 0.15·3.439 = 0.64707.
	tab, err := RequiredSigma(planSpec())
	require.NoError(t, err)
	require.Len(t, tab.Rows, 2*2*2, "rows")
	require.Equal(t, bound.Assumed, tab.Provenance, "provenance")
	for _, tc := range []struct {
		name  string
		row   int
		alpha float64
	}{
		{"m=1,tau=5,since=0", 0, 0.2},
		{"m=1,tau=5,since=4", 1, 0.64707},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tab.Rows[tc.row]
			// α is rounded up: ≥ the exact value, within 1e-14 relative.
			if r.Alpha < tc.alpha || !approx(r.Alpha, tc.alpha, 0, 1e-14) {
				t.Errorf("α = %.17g, want %v", r.Alpha, tc.alpha)
			}
			want, err := noise.SigmaAnalytic(r.Alpha, 1, 1e-5)
			assert.NoError(t, err)
			if r.Sigma != want {
				t.Errorf("σ = %v, want %v", r.Sigma, want)
			}
		})
	}
	// Worst case: τ does not matter; more deletions need more noise.
	for i := 0; i < 4; i++ {
		a, b := tab.Rows[i], tab.Rows[i+4]
		assert.Equal(t, 1, a.Deletions, "row %d: deletions", i)
		assert.Equal(t, 3, b.Deletions, "row %d: deletions", i+4)
		if b.Sigma <= a.Sigma {
			t.Errorf("rows %d, %d: σ = %v (m = 1) vs σ = %v (m = 3)", i, i+4, a.Sigma, b.Sigma)
		}
	}
	if tab.Rows[0].Alpha != tab.Rows[2].Alpha {
		t.Errorf("worst-case α depends on τ: %v vs %v", tab.Rows[0].Alpha, tab.Rows[2].Alpha)
	}
	// σ grows with α, so the largest σ is that of the largest α.
	top := tab.Rows[0]
	for _, r := range tab.Rows {
		if r.Alpha > top.Alpha {
			top = r
		}
	}
	if m := tab.MaxSigma(); m != top.Sigma {
		t.Errorf("MaxSigma = %v, the row with the largest α has σ = %v", m, top.Sigma)
	}
}

func TestRequiredSigmaDirectDependsOnTau(t *testing.T) {
	// Under the direct-window model a longer memory keeps the memory term
	// longer: at since = 8, τ = 10 needs more noise than τ = 5.
	p := planSpec()
	p.Memory, p.Deletions, p.Since = bound.MemoryDirect, []int{1}, []int{8}
	tab, err := RequiredSigma(p)
	require.NoError(t, err)
	if tab.Rows[1].Sigma <= tab.Rows[0].Sigma {
		t.Errorf("τ = 10: σ = %v, τ = 5: σ = %v", tab.Rows[1].Sigma, tab.Rows[0].Sigma)
	}
}

func TestSigmaTableOutput(t *testing.T) {
	tab, err := RequiredSigma(planSpec())
	require.NoError(t, err)
	var md bytes.Buffer
	require.NoError(t, tab.WriteMarkdown(&md))
	lines := strings.Split(strings.TrimSpace(md.String()), "\n")
	require.Len(t, lines, 2+2+8, "markdown:\n%s", md.String())
	assert.True(t, strings.HasPrefix(lines[2], "| deletions |"), "markdown:\n%s", md.String())
	assert.Contains(t, lines[4], "| 1 | 5 | 0 | 0.2 |", "markdown:\n%s", md.String())
	var c bytes.Buffer
	require.NoError(t, tab.WriteCSV(&c))
	recs, err := csv.NewReader(&c).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 9, "csv records")
	assert.Equal(t, "deletions", recs[0][0], "csv header")
	assert.Equal(t, "assumed", recs[1][5], "csv provenance")
	assert.Equal(t, "analytic", recs[1][8], "csv calibration")
}

func TestRequiredSigmaRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edit     func(*PlanSpec)
		field    string
		sentinel error
	}{
		{"epsilon", func(p *PlanSpec) { p.Epsilon = -1 }, "Epsilon", ErrEpsilon},
		{"delta", func(p *PlanSpec) { p.Delta = 2 }, "Delta", ErrDelta},
		{"no-deletions", func(p *PlanSpec) { p.Deletions = nil }, "Deletions", ErrSpec},
		{"zero-deletions", func(p *PlanSpec) { p.Deletions = []int{0} }, "Deletions[0]", ErrSpec},
		{"tau", func(p *PlanSpec) { p.Taus = []int{5, 0} }, "Taus[1]", ErrSpec},
		{"since", func(p *PlanSpec) { p.Since = []int{-1} }, "Since[0]", ErrSpec},
		{"rho", func(p *PlanSpec) { p.Contraction.Rho = 1.5 }, "Contraction.Rho", ErrRho},
		{"G", func(p *PlanSpec) { p.Constants.G = -1 }, "Constants.G", ErrValue},
		{"classic", func(p *PlanSpec) { p.Calibration = noise.Classic }, "Epsilon", ErrClassicEpsilon},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planSpec()
			tc.edit(&p)
			_, err := RequiredSigma(p)
			wantSpecError(t, err, tc.field, tc.sentinel)
		})
	}
}
