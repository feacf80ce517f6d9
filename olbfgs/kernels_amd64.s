//go:build amd64

#include "textflag.h"

// AVX2 body of the two-loop's fused sweep (kernels.go): r = γ·(r + c·u) and
// the dot product xᵀr of the updated r, four elements per YMM register.
// Lane j of the accumulator is the partial sum s_j of the Go kernels: it
// adds the products of the elements k ≡ j (mod 4) in increasing k, so the
// results are bit-identical to the Go loops of axpyScaleDot (except for the
// payload of a NaN result, which neither Go nor x86 pins down). No fused
// multiply-add: every product and sum is rounded separately, as in the Go
// code.
//
// The loop software-prefetches the two pair streams u and x PFDIST bytes
// ahead (one 64-byte line of each per iteration). At d = 100000 the sweep
// is bound by memory latency on one core, and the prefetches keep more
// lines in flight than the hardware prefetchers alone (docs/performance.md).
// Prefetches past the end of a slice are harmless: they are hints and
// never fault.
#define PFDIST 1024

// func axpyScaleDotAVX2(r, u, x *float64, n int, c, gamma float64, acc *[4]float64)
// n is a positive multiple of 8; acc holds the partial sums on entry and
// on return.
TEXT ·axpyScaleDotAVX2(SB), NOSPLIT, $0-56
	MOVQ         r+0(FP), DI
	MOVQ         u+8(FP), SI
	MOVQ         x+16(FP), BX
	MOVQ         n+24(FP), CX
	VBROADCASTSD c+32(FP), Y14
	VBROADCASTSD gamma+40(FP), Y15
	MOVQ         acc+48(FP), R8
	VMOVUPD      (R8), Y0
	SHRQ         $3, CX

loop:
	PREFETCHT0 PFDIST(SI)
	PREFETCHT0 PFDIST(BX)

	// r[0:4] = γ·(r + c·u); acc += x·r
	VMULPD  (SI), Y14, Y1
	VADDPD  (DI), Y1, Y1
	VMULPD  Y15, Y1, Y1
	VMOVUPD Y1, (DI)
	VMULPD  (BX), Y1, Y2
	VADDPD  Y2, Y0, Y0

	// r[4:8], the same
	VMULPD  32(SI), Y14, Y3
	VADDPD  32(DI), Y3, Y3
	VMULPD  Y15, Y3, Y3
	VMOVUPD Y3, 32(DI)
	VMULPD  32(BX), Y3, Y4
	VADDPD  Y4, Y0, Y0

	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, BX
	DECQ CX
	JNZ  loop

	VMOVUPD Y0, (R8)
	VZEROUPPER
	RET
