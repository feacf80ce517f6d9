package align

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultProbes is m_q, the number of probe vectors of the memory-operator
// error (the paper's Table 1, spec §3).
const DefaultProbes = 32

// ProbeStream is the second word of the PCG state that [Options].Seed
// seeds: the probes of seed s come from rand.NewPCG(s, ProbeStream). It is
// the ASCII of "probe", so that a probe draw and a stream generator seeded
// with the same number do not share a random sequence.
const ProbeStream = 0x70726f6265

// ProbeGenerator names the probe generator of [SeededProbes] (and of an
// [Engine] given Options.Seed): m_q·d standard normals from Go's
// math/rand/v2 (rand.NewPCG(seed, ProbeStream), Rand.NormFloat64), drawn
// and normalized as [DrawProbes] says. A run record stores this name, the
// seed and m_q instead of the m_q·d numbers; a reader that meets another
// name must refuse the record rather than draw different probes.
const ProbeGenerator = "go-math-rand-v2-pcg-normfloat64/v1"

// SeededProbes returns the m unit probes of dimension d that an Engine with
// Options{Seed: seed, Probes: m} uses: DrawProbes(rand.New(rand.NewPCG(seed,
// ProbeStream)), d, m). The same arguments give bit-identical vectors on
// every platform (math/rand/v2's PCG and NormFloat64 are specified
// algorithms). It panics if d < 1 or m < 1.
func SeededProbes(seed uint64, d, m int) [][]float64 {
	return DrawProbes(rand.New(rand.NewPCG(seed, ProbeStream)), d, m)
}

// ProbeNormTol is the tolerance on the norm of user-provided probes:
// |‖q‖₂ − 1| ≤ ProbeNormTol. It admits unit vectors written with the
// shortest round-trip decimal representation and read back (an error of a
// few ulps) and rejects vectors that were not normalized.
const ProbeNormTol = 1e-12

// DrawProbes returns m probe vectors of dimension d drawn from rng as spec §3
// prescribes: each is a standard normal vector N(0, I_d), divided by its
// Euclidean norm. The draw order is probe by probe, coordinate 0 to d−1
// within a probe (d consecutive rng.NormFloat64 calls per probe); the norm is
// sqrt(Σ_i q_i²) accumulated in index order and each coordinate is divided by
// it. A draw of norm 0 (probability 0) is discarded and drawn again. Go's
// normal sampler is not that of other languages: another implementation
// reproduces a run's probes by calling [SeededProbes] (or reading vectors
// written by it), and [Options].ProbeVectors accepts given vectors back.
// It panics if d < 1 or m < 1.
func DrawProbes(rng *rand.Rand, d, m int) [][]float64 {
	if d < 1 || m < 1 {
		panic(fmt.Sprintf("align: DrawProbes(d=%d, m=%d): both must be at least 1", d, m))
	}
	probes := make([][]float64, m)
	for j := range probes {
		q := make([]float64, d)
		for {
			for i := range q {
				q[i] = rng.NormFloat64()
			}
			if nrm := norm2(q); nrm > 0 {
				for i := range q {
					q[i] /= nrm
				}
				break
			}
		}
		probes[j] = q
	}
	return probes
}

// CheckProbes reports whether probes is a usable probe set of dimension d:
// at least one vector, each of length d, finite, of unit norm within
// ProbeNormTol. The probes are used as given, never renormalized, so that a
// run record's probes reproduce its E_Z bit for bit. Errors wrap ErrProbes
// and name the probe.
func CheckProbes(probes [][]float64, d int) error {
	if len(probes) == 0 {
		return fmt.Errorf("%w: no probe vectors", ErrProbes)
	}
	for j, q := range probes {
		if len(q) != d {
			return fmt.Errorf("%w: probe %d has length %d, want d = %d", ErrProbes, j, len(q), d)
		}
		for i, v := range q {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: probe %d, entry %d = %v", ErrProbes, j, i, v)
			}
		}
		if nrm := norm2(q); !(math.Abs(nrm-1) <= ProbeNormTol) {
			return fmt.Errorf("%w: probe %d has norm %v, want 1 within %g", ErrProbes, j, nrm, ProbeNormTol)
		}
	}
	return nil
}

// norm2 returns sqrt(Σ v_i²) accumulated in index order, rescaling when the
// plain sum overflows or underflows.
func norm2(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += float64(x * x) // rounded before the add: no FMA on any build
	}
	if s > 0x1p-900 && s < 0x1p900 || s == 0 && allZero(v) {
		return math.Sqrt(s)
	}
	return scaledNorm(v)
}

func allZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// scaledNorm is the Euclidean norm computed on v scaled by a power of two
// (exact) so that neither the squares nor their sum over- or underflow.
func scaledNorm(v []float64) float64 {
	var mx float64
	for _, x := range v {
		mx = math.Max(mx, math.Abs(x))
	}
	if mx == 0 || math.IsInf(mx, 0) || math.IsNaN(mx) {
		return mx
	}
	_, e := math.Frexp(mx)
	var s float64
	for _, x := range v {
		y := math.Ldexp(x, -e)
		s += y * y
	}
	return math.Ldexp(math.Sqrt(s), e)
}
