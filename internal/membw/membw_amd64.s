//go:build amd64

#include "textflag.h"

// Keep equal to PrefetchDistance in membw.go.
#define PFDIST 1024

// func sumAVX2(x *float64, n int) float64
TEXT ·sumAVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	SHRQ   $4, CX

loop:
	PREFETCHT0 PFDIST(SI)
	PREFETCHT0 PFDIST+64(SI)
	VADDPD     (SI), Y0, Y0
	VADDPD     32(SI), Y1, Y1
	VADDPD     64(SI), Y2, Y2
	VADDPD     96(SI), Y3, Y3
	ADDQ       $128, SI
	DECQ       CX
	JNZ        loop

	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VHADDPD      X0, X0, X0
	VZEROUPPER
	MOVSD        X0, ret+16(FP)
	RET
