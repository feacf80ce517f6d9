//go:build amd64

package membw

import "golang.org/x/sys/cpu"

var useAVX2 = cpu.X86.HasAVX2

// sumAVX2 returns the sum of the n elements at x; n is a positive multiple
// of 16.
//
//go:noescape
func sumAVX2(x *float64, n int) float64
