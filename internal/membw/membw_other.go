//go:build !amd64

package membw

var useAVX2 = false

func sumAVX2(x *float64, n int) float64 { panic("membw: no assembly on this architecture") }
