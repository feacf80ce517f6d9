// Command sparsegen writes a seeded sparse binary classification data set
// in LIBSVM/svmlight form, for measuring the CLI's training path end to end
// on a file (issue #12; docs/performance.md, "Sparse training"): N rows of
// nnz distinct features drawn uniformly from 1..d (1-based, increasing),
// values N(0, 1/nnz), the label the sign of xᵀw* for a hidden w* ~ N(0, I),
// flipped with probability 0.1 — the distribution of olbfgs's
// BenchmarkSparseTraining. The same flags give the same bytes.
//
//	go run ./tools/sparsegen -n 1000000 -d 100000 -nnz 20 -seed 1 > sparse.svm
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
)

func main() {
	n := flag.Int("n", 1000, "rows")
	d := flag.Int("d", 100000, "dimension d (features are 1..d)")
	nnz := flag.Int("nnz", 20, "non-zeros per row (at most d)")
	seed := flag.Uint64("seed", 1, "PCG seed")
	flag.Parse()
	if *n < 0 || *d < 1 || *nnz < 1 || *nnz > *d {
		log.Fatalf("sparsegen: want n ≥ 0, d ≥ 1 and 1 ≤ nnz ≤ d (got n=%d d=%d nnz=%d)", *n, *d, *nnz)
	}
	if err := write(bufio.NewWriterSize(os.Stdout, 1<<20), *n, *d, *nnz, *seed); err != nil {
		log.Fatal("sparsegen: ", err)
	}
}

func write(w *bufio.Writer, n, d, nnz int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 12))
	wStar := make([]float64, d)
	for i := range wStar {
		wStar[i] = rng.NormFloat64()
	}
	idx, v := make([]int, nnz), make([]float64, nnz)
	scale := 1 / math.Sqrt(float64(nnz))
	var buf []byte
	for range n {
		for k := range idx {
		draw:
			j := rng.IntN(d)
			if slices.Contains(idx[:k], j) {
				goto draw
			}
			idx[k] = j
		}
		slices.Sort(idx)
		m := 0.0
		for k, j := range idx {
			v[k] = scale * rng.NormFloat64()
			m += v[k] * wStar[j]
		}
		y := m >= 0
		if rng.Float64() < 0.1 {
			y = !y
		}
		buf = buf[:0]
		if y {
			buf = append(buf, "+1"...)
		} else {
			buf = append(buf, "-1"...)
		}
		for k, j := range idx {
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(j+1), 10)
			buf = append(buf, ':')
			buf = strconv.AppendFloat(buf, v[k], 'g', -1, 64)
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing: %w", err)
	}
	return nil
}
