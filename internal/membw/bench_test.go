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
