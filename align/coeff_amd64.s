//go:build amd64

#include "textflag.h"

// AVX2 dot products of the coefficient space (dot2 and dot4 in coeff.go).
// Lane j (0..7) of each result's two accumulators sums the products of the
// coordinates k ≡ j (mod 8) in increasing k, each product rounded before
// the add (VMULPD then VADDPD, no fused multiply-add): the arithmetic of
// the Go loops, so both give the same bits. n is a multiple of 8.

// func dot4AVX2(s, y, s2, y2 *float64, n int, out *[32]float64)
TEXT ·dot4AVX2(SB), NOSPLIT, $0-48
	MOVQ   s+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   s2+16(FP), R8
	MOVQ   y2+24(FP), R9
	MOVQ   n+32(FP), CX
	MOVQ   out+40(FP), DX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ   AX, AX
	SHLQ   $3, CX

d4_loop:
	CMPQ    AX, CX
	JGE     d4_done
	VMOVUPD (SI)(AX*1), Y8
	VMOVUPD (DI)(AX*1), Y9
	VMOVUPD (R8)(AX*1), Y10
	VMOVUPD (R9)(AX*1), Y11
	VMULPD  Y10, Y8, Y12
	VADDPD  Y12, Y0, Y0
	VMULPD  Y11, Y8, Y13
	VADDPD  Y13, Y2, Y2
	VMULPD  Y10, Y9, Y14
	VADDPD  Y14, Y4, Y4
	VMULPD  Y11, Y9, Y15
	VADDPD  Y15, Y6, Y6
	VMOVUPD 32(SI)(AX*1), Y8
	VMOVUPD 32(DI)(AX*1), Y9
	VMOVUPD 32(R8)(AX*1), Y10
	VMOVUPD 32(R9)(AX*1), Y11
	VMULPD  Y10, Y8, Y12
	VADDPD  Y12, Y1, Y1
	VMULPD  Y11, Y8, Y13
	VADDPD  Y13, Y3, Y3
	VMULPD  Y10, Y9, Y14
	VADDPD  Y14, Y5, Y5
	VMULPD  Y11, Y9, Y15
	VADDPD  Y15, Y7, Y7
	ADDQ    $64, AX
	JMP     d4_loop

d4_done:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	VZEROUPPER
	RET

// func dot2AVX2(q, a, b *float64, n int, out *[16]float64)
TEXT ·dot2AVX2(SB), NOSPLIT, $0-40
	MOVQ   q+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   b+16(FP), R8
	MOVQ   n+24(FP), CX
	MOVQ   out+32(FP), DX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ   AX, AX
	SHLQ   $3, CX

d2_loop:
	CMPQ    AX, CX
	JGE     d2_done
	VMOVUPD (SI)(AX*1), Y4
	VMOVUPD (DI)(AX*1), Y5
	VMOVUPD (R8)(AX*1), Y6
	VMULPD  Y5, Y4, Y8
	VADDPD  Y8, Y0, Y0
	VMULPD  Y6, Y4, Y9
	VADDPD  Y9, Y2, Y2
	VMOVUPD 32(SI)(AX*1), Y4
	VMOVUPD 32(DI)(AX*1), Y5
	VMOVUPD 32(R8)(AX*1), Y6
	VMULPD  Y5, Y4, Y10
	VADDPD  Y10, Y1, Y1
	VMULPD  Y6, Y4, Y11
	VADDPD  Y11, Y3, Y3
	ADDQ    $64, AX
	JMP     d2_loop

d2_done:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VZEROUPPER
	RET
