package stream

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/internal/testutil"
)

// testSeedStream is the PCG stream word of the tests' random sources, so
// that test data never coincides with generator output.
const testSeedStream = 0x7465737473 // "tests"

func newTestRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, testSeedStream)) }

// randomSPD returns a random SPD d×d matrix with eigenvalues log-spaced in
// [1, kappa], built with the generator's own helpers.
func randomSPD(r *rand.Rand, d int, kappa float64) [][]float64 {
	return fromSpectrum(haar(r, d), logSpaced(1, kappa, d))
}

func randomVec(r *rand.Rand, d int) []float64 {
	v := make([]float64, d)
	normals(r, v)
	return v
}

// assertClose fails unless got and want agree within the absolute or
// relative tolerance (testutil.Near; NaN never agrees).
func assertClose(t testing.TB, what string, got, want, absTol, relTol float64) {
	t.Helper()
	if !testutil.Near(got, want, absTol, relTol) {
		t.Errorf("%s = %v, want %v (abs tol %g, rel tol %g)", what, got, want, absTol, relTol)
	}
}

// sameFloat reports whether a and b have the same bits.
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameFloat(a[i], b[i]) {
			return false
		}
	}
	return true
}

func sameMatrix(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameFloats(a[i], b[i]) {
			return false
		}
	}
	return true
}

// diffHistory returns "" if a and b are identical bit for bit (header,
// metadata bytes and events), else a description of the first difference.
func diffHistory(a, b *History) string {
	ha, hb := a.Header, b.Header
	switch {
	case ha.Format != hb.Format:
		return fmt.Sprintf("format %q vs %q", ha.Format, hb.Format)
	case ha.Kind != hb.Kind:
		return fmt.Sprintf("kind %q vs %q", ha.Kind, hb.Kind)
	case ha.D != hb.D:
		return fmt.Sprintf("d %d vs %d", ha.D, hb.D)
	case !sameMatrix(ha.H0, hb.H0):
		return "H0 differs"
	case !sameMatrix(ha.H1, hb.H1):
		return "H1 differs"
	case !sameFloat(ha.Lambda, hb.Lambda):
		return fmt.Sprintf("lambda %v vs %v", ha.Lambda, hb.Lambda)
	case len(ha.Meta) != len(hb.Meta):
		return fmt.Sprintf("%d vs %d meta fields", len(ha.Meta), len(hb.Meta))
	}
	for k, v := range ha.Meta {
		if w, ok := hb.Meta[k]; !ok || !bytes.Equal(v, w) {
			return fmt.Sprintf("meta %q: %s vs %s", k, v, w)
		}
	}
	if a.Loss == nil || b.Loss == nil || a.Loss.Kind() != b.Loss.Kind() || a.Loss.Dim() != b.Loss.Dim() {
		return "losses differ"
	}
	if len(a.Events) != len(b.Events) {
		return fmt.Sprintf("%d vs %d events", len(a.Events), len(b.Events))
	}
	for i, e := range a.Events {
		f := b.Events[i]
		if e.Op != f.Op || e.ID != f.ID || !sameFloat(e.Sample.S, f.Sample.S) ||
			!sameFloats(e.Sample.V, f.Sample.V) || (e.Sample.V == nil) != (f.Sample.V == nil) {
			return fmt.Sprintf("event %d: %+v vs %+v", i, e, f)
		}
	}
	return ""
}

// fataler is the part of testing.TB and *rapid.T that the helpers need.
type fataler interface {
	require.TestingT
	Helper()
}

// roundTrip writes h and reads it back.
func roundTrip(t fataler, h *History) (*History, []byte) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, h), "Write")
	out := bytes.Clone(buf.Bytes())
	h2, err := Read(&buf)
	require.NoError(t, err, "Read(Write(h))")
	return h2, out
}
