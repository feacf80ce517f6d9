//go:build amd64

package align

import "golang.org/x/sys/cpu"

//go:noescape
func dot4AVX2(s, y, s2, y2 *float64, n int, out *[32]float64)

//go:noescape
func dot2AVX2(q, a, b *float64, n int, out *[16]float64)

//go:noescape
func dot4HubAVX512(v *[10]*float64, n int, out *[16][8]float64)

// hasAVX512 reports whether the CPU (and OS) run AVX-512F; dot4Hub uses its
// 32 registers only when useAVX2 is set too, so that switching useAVX2 off
// selects the Go loops everywhere.
var hasAVX512 = cpu.X86.HasAVX512F

//go:noescape
func dot2HubAVX512(v *[9]*float64, n int, out *[8][8]float64)
