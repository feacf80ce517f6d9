package membw

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"

	"unlearn/internal/testutil"
)

// TestSumMatchesGonum: Sum agrees with gonum's sum (to rounding: the order
// differs) at lengths around every multiple of 16, with and without the
// assembly.
func TestSumMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100, 4097} {
		x := make([]float64, n)
		abs := 0.0
		for i := range x {
			x[i] = rng.NormFloat64()
			abs += x[i]
			if x[i] < 0 {
				abs -= 2 * x[i]
			}
		}
		want := floats.Sum(x)
		for _, asm := range []bool{true, false} {
			t.Run(fmt.Sprintf("n=%d/asm=%v", n, asm), func(t *testing.T) {
				saved := useAVX2
				defer func() { useAVX2 = saved }()
				useAVX2 = useAVX2 && asm
				got := Sum(x)
				require.Truef(t, testutil.Near(got, want, 1e-15*abs+1e-300, 0), "Sum = %v, want %v", got, want)
			})
		}
	}
}

// TestSumExact: on integers (exact in any order) Sum is exact.
func TestSumExact(t *testing.T) {
	x := make([]float64, 1000)
	for i := range x {
		x[i] = float64(i)
	}
	require.Equal(t, 999.0*1000/2, Sum(x))
}

// TestPrefetchDistanceMatches: the assembly of membw and of olbfgs's
// two-loop sweep prefetch PrefetchDistance bytes ahead, so the stricter
// benchmark reference streams the way the two-loop does.
func TestPrefetchDistanceMatches(t *testing.T) {
	want := fmt.Sprintf("#define PFDIST %d\n", PrefetchDistance)
	for _, path := range []string{"membw_amd64.s", "../../olbfgs/kernels_amd64.s"} {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Containsf(t, string(src), want, "%s must prefetch PrefetchDistance = %d bytes ahead", path, PrefetchDistance)
	}
}

// TestScale: Scale stores q·src exactly (one rounding per element, as the
// product is computed alone), and panics on a length mismatch.
func TestScale(t *testing.T) {
	src := []float64{1, -2.5, 0.1, 3e300}
	dst := make([]float64, len(src))
	Scale(dst, src, 3)
	for i, x := range src {
		require.Equal(t, 3*x, dst[i])
	}
	require.Panics(t, func() { Scale(dst[:1], src, 3) })
}
