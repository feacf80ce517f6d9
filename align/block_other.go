//go:build !amd64

package align

import "unlearn/olbfgs"

// useAVX2 is false without assembly: blockApplier uses Memory.ApplyBlock.
var useAVX2 = false

func (b *blockApplier) applyAVX2(m *olbfgs.Memory, dst, q []float64) {
	panic("align: no assembly sweeps on this architecture")
}
