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

// func dot4HubAVX512(v *[10]*float64, n int, out *[16][8]float64)
//
// The register-blocked Gram sweep (dot4Hub in coeff.go): one hub pair
// (v[0], v[1] = s, y) against four partner pairs (v[2+2t], v[3+2t]), the
// sixteen products s·s', s·y', y·s', y·y' of every partner in one pass.
// Lane j (0..7) of each ZMM accumulator sums the products of the
// coordinates k ≡ j (mod 8) in increasing k, each product rounded before
// the add (VMULPD then VADDPD): the lanes of dot4AVX2's two YMM
// accumulators, so the same bits. The hub is loaded once per eight
// coordinates for four partners (10 loads for 16 products instead of 16).
// n is a multiple of 8.
TEXT ·dot4HubAVX512(SB), NOSPLIT, $0-24
	MOVQ v+0(FP), DX
	MOVQ 0(DX), SI
	MOVQ 8(DX), DI
	MOVQ 16(DX), R8
	MOVQ 24(DX), R9
	MOVQ 32(DX), R10
	MOVQ 40(DX), R11
	MOVQ 48(DX), R12
	MOVQ 56(DX), R13
	MOVQ 64(DX), BX
	MOVQ 72(DX), DX
	MOVQ n+8(FP), CX

	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	VPXORQ Z12, Z12, Z12
	VPXORQ Z13, Z13, Z13
	VPXORQ Z14, Z14, Z14
	VPXORQ Z15, Z15, Z15
	XORQ   AX, AX
	SHLQ   $3, CX

hub_loop:
	CMPQ    AX, CX
	JGE     hub_done
	VMOVUPD (SI)(AX*1), Z16
	VMOVUPD (DI)(AX*1), Z17
	VMOVUPD (R8)(AX*1), Z18
	VMOVUPD (R9)(AX*1), Z19
	VMULPD  Z18, Z16, Z20
	VADDPD  Z20, Z0, Z0
	VMULPD  Z19, Z16, Z21
	VADDPD  Z21, Z1, Z1
	VMULPD  Z18, Z17, Z22
	VADDPD  Z22, Z2, Z2
	VMULPD  Z19, Z17, Z23
	VADDPD  Z23, Z3, Z3
	VMOVUPD (R10)(AX*1), Z18
	VMOVUPD (R11)(AX*1), Z19
	VMULPD  Z18, Z16, Z20
	VADDPD  Z20, Z4, Z4
	VMULPD  Z19, Z16, Z21
	VADDPD  Z21, Z5, Z5
	VMULPD  Z18, Z17, Z22
	VADDPD  Z22, Z6, Z6
	VMULPD  Z19, Z17, Z23
	VADDPD  Z23, Z7, Z7
	VMOVUPD (R12)(AX*1), Z18
	VMOVUPD (R13)(AX*1), Z19
	VMULPD  Z18, Z16, Z20
	VADDPD  Z20, Z8, Z8
	VMULPD  Z19, Z16, Z21
	VADDPD  Z21, Z9, Z9
	VMULPD  Z18, Z17, Z22
	VADDPD  Z22, Z10, Z10
	VMULPD  Z19, Z17, Z23
	VADDPD  Z23, Z11, Z11
	VMOVUPD (BX)(AX*1), Z18
	VMOVUPD (DX)(AX*1), Z19
	VMULPD  Z18, Z16, Z20
	VADDPD  Z20, Z12, Z12
	VMULPD  Z19, Z16, Z21
	VADDPD  Z21, Z13, Z13
	VMULPD  Z18, Z17, Z22
	VADDPD  Z22, Z14, Z14
	VMULPD  Z19, Z17, Z23
	VADDPD  Z23, Z15, Z15
	ADDQ    $64, AX
	JMP     hub_loop

hub_done:
	MOVQ    out+16(FP), DX
	VMOVUPD Z0, 0(DX)
	VMOVUPD Z1, 64(DX)
	VMOVUPD Z2, 128(DX)
	VMOVUPD Z3, 192(DX)
	VMOVUPD Z4, 256(DX)
	VMOVUPD Z5, 320(DX)
	VMOVUPD Z6, 384(DX)
	VMOVUPD Z7, 448(DX)
	VMOVUPD Z8, 512(DX)
	VMOVUPD Z9, 576(DX)
	VMOVUPD Z10, 640(DX)
	VMOVUPD Z11, 704(DX)
	VMOVUPD Z12, 768(DX)
	VMOVUPD Z13, 832(DX)
	VMOVUPD Z14, 896(DX)
	VMOVUPD Z15, 960(DX)
	VZEROUPPER
	RET

// func dot2HubAVX512(v *[9]*float64, n int, out *[8][8]float64)
//
// The register-blocked probe products (dot2Hub in coeff.go): one probe q
// (v[0]) against four pairs (v[1+2t], v[2+2t] = s, y), the eight products
// qᵀs, qᵀy in one pass, each ZMM accumulator's lane j summing the
// coordinates k ≡ j (mod 8) in increasing k, products rounded before the
// add: the lanes of dot2AVX2, so the same bits. The probe is loaded once
// per eight coordinates for four pairs. n is a multiple of 8.
TEXT ·dot2HubAVX512(SB), NOSPLIT, $0-24
	MOVQ v+0(FP), DX
	MOVQ 0(DX), SI
	MOVQ 8(DX), DI
	MOVQ 16(DX), R8
	MOVQ 24(DX), R9
	MOVQ 32(DX), R10
	MOVQ 40(DX), R11
	MOVQ 48(DX), R12
	MOVQ 56(DX), R13
	MOVQ 64(DX), BX
	MOVQ n+8(FP), CX

	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	XORQ   AX, AX
	SHLQ   $3, CX

phub_loop:
	CMPQ    AX, CX
	JGE     phub_done
	VMOVUPD (SI)(AX*1), Z16
	VMOVUPD (DI)(AX*1), Z17
	VMULPD  Z17, Z16, Z17
	VADDPD  Z17, Z0, Z0
	VMOVUPD (R8)(AX*1), Z18
	VMULPD  Z18, Z16, Z18
	VADDPD  Z18, Z1, Z1
	VMOVUPD (R9)(AX*1), Z19
	VMULPD  Z19, Z16, Z19
	VADDPD  Z19, Z2, Z2
	VMOVUPD (R10)(AX*1), Z20
	VMULPD  Z20, Z16, Z20
	VADDPD  Z20, Z3, Z3
	VMOVUPD (R11)(AX*1), Z21
	VMULPD  Z21, Z16, Z21
	VADDPD  Z21, Z4, Z4
	VMOVUPD (R12)(AX*1), Z22
	VMULPD  Z22, Z16, Z22
	VADDPD  Z22, Z5, Z5
	VMOVUPD (R13)(AX*1), Z23
	VMULPD  Z23, Z16, Z23
	VADDPD  Z23, Z6, Z6
	VMOVUPD (BX)(AX*1), Z24
	VMULPD  Z24, Z16, Z24
	VADDPD  Z24, Z7, Z7
	ADDQ    $64, AX
	JMP     phub_loop

phub_done:
	MOVQ    out+16(FP), DX
	VMOVUPD Z0, 0(DX)
	VMOVUPD Z1, 64(DX)
	VMOVUPD Z2, 128(DX)
	VMOVUPD Z3, 192(DX)
	VMOVUPD Z4, 256(DX)
	VMOVUPD Z5, 320(DX)
	VMOVUPD Z6, 384(DX)
	VMOVUPD Z7, 448(DX)
	VZEROUPPER
	RET
