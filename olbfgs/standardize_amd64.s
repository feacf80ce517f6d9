//go:build amd64

#include "textflag.h"

// AVX2 body of the standardization pass (step_options.go,
// standardizeScores): Welford's update of four features per YMM register,
// their standardized values x̃ written over x, and the partial sums of
// Dot4(x̃, w) (and of Dot4(x̃, avg)) in the accumulator's lanes — lane j
// adds the products of the features k ≡ j (mod 4) in increasing k, as the
// Go loop's s_j does. Every operation is the Go loop's, in its order and
// separately rounded (no fused multiply-add); VSQRTPD and VDIVPD round
// correctly as math.Sqrt and the Go division do, and the mask of
// s > 0 (ordered: false for NaN) zeroes 1/s where the Go code returns 0.
// So the results are the Go loop's bit for bit (the payload of a NaN
// aside).

// func standardizeAVX2(x, mean, m2, nm, nq, w, avg *float64, n int, rn float64, acc *[8]float64)
// n is a positive multiple of 4; avg may be nil (no second sum). acc holds
// the partial sums (w's in [0:4], avg's in [4:8]) on entry and on return.
TEXT ·standardizeAVX2(SB), NOSPLIT, $0-80
	MOVQ         x+0(FP), DI
	MOVQ         mean+8(FP), SI
	MOVQ         m2+16(FP), DX
	MOVQ         nm+24(FP), R9
	MOVQ         nq+32(FP), R10
	MOVQ         w+40(FP), R11
	MOVQ         avg+48(FP), R12
	MOVQ         n+56(FP), CX
	VBROADCASTSD rn+64(FP), Y15
	MOVQ         acc+72(FP), R8
	VMOVUPD      (R8), Y0
	VMOVUPD      32(R8), Y1
	VXORPD       Y14, Y14, Y14
	MOVQ         $0x3FF0000000000000, AX
	MOVQ         AX, X13
	VBROADCASTSD X13, Y13
	SHRQ         $2, CX
	TESTQ        R12, R12
	JZ           loopw

loopwa:
	VMOVUPD (DI), Y2           // x
	VMOVUPD (SI), Y3           // m
	VSUBPD  Y3, Y2, Y4         // δ = x − m
	VMULPD  Y15, Y4, Y5        // δ·rn
	VADDPD  Y5, Y3, Y3         // m' = m + δ·rn
	VMOVUPD Y3, (R9)
	VSUBPD  Y3, Y2, Y6         // e = x − m'
	VMULPD  Y6, Y4, Y7         // δ·e
	VADDPD  (DX), Y7, Y7       // q' = q + δ·e
	VMOVUPD Y7, (R10)
	VMULPD  Y15, Y7, Y8        // q'·rn
	VSQRTPD Y8, Y8             // s
	VCMPPD  $0x1E, Y14, Y8, Y9 // s > 0 (ordered)
	VDIVPD  Y8, Y13, Y10       // 1/s
	VANDPD  Y9, Y10, Y10       // v = 1/s, or +0
	VMULPD  Y10, Y6, Y11       // x̃ = e·v
	VMOVUPD Y11, (DI)
	VMULPD  (R11), Y11, Y12
	VADDPD  Y12, Y0, Y0        // Σ x̃·w
	VMULPD  (R12), Y11, Y12
	VADDPD  Y12, Y1, Y1        // Σ x̃·avg
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, R9
	ADDQ    $32, R10
	ADDQ    $32, R11
	ADDQ    $32, R12
	DECQ    CX
	JNZ     loopwa
	JMP     done

loopw:
	VMOVUPD (DI), Y2
	VMOVUPD (SI), Y3
	VSUBPD  Y3, Y2, Y4
	VMULPD  Y15, Y4, Y5
	VADDPD  Y5, Y3, Y3
	VMOVUPD Y3, (R9)
	VSUBPD  Y3, Y2, Y6
	VMULPD  Y6, Y4, Y7
	VADDPD  (DX), Y7, Y7
	VMOVUPD Y7, (R10)
	VMULPD  Y15, Y7, Y8
	VSQRTPD Y8, Y8
	VCMPPD  $0x1E, Y14, Y8, Y9
	VDIVPD  Y8, Y13, Y10
	VANDPD  Y9, Y10, Y10
	VMULPD  Y10, Y6, Y11
	VMOVUPD Y11, (DI)
	VMULPD  (R11), Y11, Y12
	VADDPD  Y12, Y0, Y0
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, R9
	ADDQ    $32, R10
	ADDQ    $32, R11
	DECQ    CX
	JNZ     loopw

done:
	VMOVUPD Y0, (R8)
	VMOVUPD Y1, 32(R8)
	VZEROUPPER
	RET
