package membw

import (
	"fmt"
	"testing"
)

var sink float64

// BenchmarkSum measures Sum's bandwidth (MB/s) over vectors from 1 MB to
// 128 MB: where the rate drops to the DRAM rate, the data no longer stays
// in cache between passes (docs/performance.md).
func BenchmarkSum(b *testing.B) {
	for _, mb := range []int{1, 4, 8, 16, 32, 64, 128} {
		x := make([]float64, mb<<17)
		for i := range x {
			x[i] = 1
		}
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			b.SetBytes(int64(len(x) * 8))
			for b.Loop() {
				sink = Sum(x)
			}
		})
	}
}

// BenchmarkCopyScale measures STREAM's Copy (the builtin copy) and Scale
// (membw.Scale) kernels over vectors from 1 MB to 256 MB, counting 16 bytes
// per element as STREAM does (one read, one write). The rate at 128 MB and
// more (beyond this machine's 32 MiB L3) is the memory bandwidth that the
// sparse-training benchmark's floor is stated in (docs/performance.md):
//
//	go test ./internal/membw -run '^$' -bench CopyScale -benchtime 20x
func BenchmarkCopyScale(b *testing.B) {
	for _, mb := range []int{1, 8, 32, 128, 256} {
		n := mb << 17
		src, dst := make([]float64, n), make([]float64, n)
		for i := range src {
			src[i] = float64(i)
		}
		b.Run(fmt.Sprintf("copy/%dMB", mb), func(b *testing.B) {
			b.SetBytes(int64(16 * n))
			for b.Loop() {
				copy(dst, src)
			}
		})
		b.Run(fmt.Sprintf("scale/%dMB", mb), func(b *testing.B) {
			b.SetBytes(int64(16 * n))
			for b.Loop() {
				Scale(dst, src, 3)
			}
		})
	}
}
