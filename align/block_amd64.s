//go:build amd64

#include "textflag.h"

// AVX2 sweeps of the block two-loop recursion (block_amd64.go). Each lane
// reproduces the arithmetic of olbfgs.Memory.Apply on one column: the
// coefficient a = acc/(sᵀy) or α − acc/(sᵀy) by division, products c·u_k,
// sums r + c·u, dot products in four partial sums over k mod 4 combined as
// (s0+s1)+(s2+s3). The columns go in groups of four (one YMM
// register); within a group the rows go in steps of four, row k adding into
// partial sum k mod 4 (Y4..Y7), rows past the last multiple of four into Y4.
// No fused multiply-add is used: every lane performs the same separately
// rounded operations as olbfgs.Memory.Apply on its column.
//
// General registers: DI r, R8 row stride in bytes, R9 rows, R10 cols in
// bytes, R11 alpha, R12 u, R13 x, BX column offset in bytes, SI row pointer,
// AX u cursor (or acc), DX x cursor, CX rows left.
// Vector registers: Y0 coefficients, Y1 Y2 scratch, Y3 γ, Y4..Y7 partial
// sums, Y8 sᵀy, Y9 Y10 coefficient scratch, Y11 sign mask.

// Y1 = r_k + c·u_k (Y0 = c).
#define UPDATE(uoff) \
	VBROADCASTSD uoff(AX), Y1; \
	VMULPD       Y0, Y1, Y1; \
	VADDPD       (SI), Y1, Y1

// ACC += x_k·Y1.
#define DOT(xoff, ACC) \
	VBROADCASTSD xoff(DX), Y2; \
	VMULPD       Y1, Y2, Y2; \
	VADDPD       Y2, ACC, ACC

#define AXPYDOT_ROW(off, ACC) \
	UPDATE(off); \
	VMOVUPD Y1, (SI); \
	DOT(off, ACC); \
	ADDQ    R8, SI

#define AXPYSCALEDOT_ROW(off, ACC) \
	UPDATE(off); \
	VMULPD  Y3, Y1, Y1; \
	VMOVUPD Y1, (SI); \
	DOT(off, ACC); \
	ADDQ    R8, SI

#define DOT_ROW(off, ACC) \
	VMOVUPD (SI), Y1; \
	DOT(off, ACC); \
	ADDQ    R8, SI

#define AXPY_ROW(off) \
	UPDATE(off); \
	VMOVUPD Y1, (SI); \
	ADDQ    R8, SI

// Loads the arguments common to all sweeps.
#define PROLOGUE \
	MOVQ r+0(FP), DI; \
	MOVQ ld+8(FP), R8; \
	SHLQ $3, R8; \
	MOVQ rows+16(FP), R9; \
	MOVQ cols+24(FP), R10; \
	SHLQ $3, R10; \
	XORQ BX, BX

// Loads sᵀy, alpha and the sign mask for the coefficient macros.
#define COEF_PROLOGUE \
	VBROADCASTSD sy+40(FP), Y8; \
	MOVQ         alpha+48(FP), R11; \
	VPCMPEQQ     Y11, Y11, Y11; \
	VPSLLQ       $63, Y11, Y11

// a = acc/sᵀy; alpha = a; c = −a.
#define COEF_FIRST \
	MOVQ    acc+32(FP), AX; \
	VMOVUPD (AX)(BX*1), Y9; \
	VDIVPD  Y8, Y9, Y9; \
	VMOVUPD Y9, (R11)(BX*1); \
	VXORPD  Y11, Y9, Y0

// c = alpha − acc/sᵀy.
#define COEF_SECOND \
	MOVQ    acc+32(FP), AX; \
	VMOVUPD (AX)(BX*1), Y9; \
	VDIVPD  Y8, Y9, Y9; \
	VMOVUPD (R11)(BX*1), Y10; \
	VSUBPD  Y9, Y10, Y0

// Stores (s0+s1)+(s2+s3) of the group at acc (argument at ACCOFF).
#define GROUP_STORE(ACCOFF) \
	MOVQ    ACCOFF(FP), AX; \
	VADDPD  Y5, Y4, Y4; \
	VADDPD  Y7, Y6, Y6; \
	VADDPD  Y6, Y4, Y4; \
	VMOVUPD Y4, (AX)(BX*1)

// func dotAVX2(r *float64, ld, rows, cols int, x, acc *float64)
TEXT ·dotAVX2(SB), NOSPLIT, $0-48
	PROLOGUE
	MOVQ x+32(FP), R13
	MOVQ R13, R12
dot_group:
	
	LEAQ   (DI)(BX*1), SI
	MOVQ   R12, AX
	MOVQ   R13, DX
	MOVQ   R9, CX
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

dot_rows4:
	CMPQ CX, $4
	JLT  dot_tail
	DOT_ROW(0, Y4)
	DOT_ROW(8, Y5)
	DOT_ROW(16, Y6)
	DOT_ROW(24, Y7)
	ADDQ $32, AX
	ADDQ $32, DX
	SUBQ $4, CX
	JMP  dot_rows4

dot_tail:
	TESTQ CX, CX
	JEQ   dot_done
	DOT_ROW(0, Y4)
	ADDQ  $8, AX
	ADDQ  $8, DX
	DECQ  CX
	JMP   dot_tail

dot_done:
	GROUP_STORE(acc+40)
	ADDQ $32, BX
	CMPQ BX, R10
	JLT  dot_group
	VZEROUPPER
	RET

// func firstAVX2(r *float64, ld, rows, cols int, acc *float64, sy float64, alpha, u, x *float64)
TEXT ·firstAVX2(SB), NOSPLIT, $0-72
	PROLOGUE
	COEF_PROLOGUE
	MOVQ u+56(FP), R12
	MOVQ x+64(FP), R13
first_group:
	COEF_FIRST
	LEAQ   (DI)(BX*1), SI
	MOVQ   R12, AX
	MOVQ   R13, DX
	MOVQ   R9, CX
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

first_rows4:
	CMPQ CX, $4
	JLT  first_tail
	AXPYDOT_ROW(0, Y4)
	AXPYDOT_ROW(8, Y5)
	AXPYDOT_ROW(16, Y6)
	AXPYDOT_ROW(24, Y7)
	ADDQ $32, AX
	ADDQ $32, DX
	SUBQ $4, CX
	JMP  first_rows4

first_tail:
	TESTQ CX, CX
	JEQ   first_done
	AXPYDOT_ROW(0, Y4)
	ADDQ  $8, AX
	ADDQ  $8, DX
	DECQ  CX
	JMP   first_tail

first_done:
	GROUP_STORE(acc+32)
	ADDQ $32, BX
	CMPQ BX, R10
	JLT  first_group
	VZEROUPPER
	RET

// func firstScaleAVX2(r *float64, ld, rows, cols int, acc *float64, sy float64, alpha, u *float64, gamma float64, x *float64)
TEXT ·firstScaleAVX2(SB), NOSPLIT, $0-80
	PROLOGUE
	COEF_PROLOGUE
	MOVQ         u+56(FP), R12
	VBROADCASTSD gamma+64(FP), Y3
	MOVQ         x+72(FP), R13
fscale_group:
	COEF_FIRST
	LEAQ   (DI)(BX*1), SI
	MOVQ   R12, AX
	MOVQ   R13, DX
	MOVQ   R9, CX
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

fscale_rows4:
	CMPQ CX, $4
	JLT  fscale_tail
	AXPYSCALEDOT_ROW(0, Y4)
	AXPYSCALEDOT_ROW(8, Y5)
	AXPYSCALEDOT_ROW(16, Y6)
	AXPYSCALEDOT_ROW(24, Y7)
	ADDQ $32, AX
	ADDQ $32, DX
	SUBQ $4, CX
	JMP  fscale_rows4

fscale_tail:
	TESTQ CX, CX
	JEQ   fscale_done
	AXPYSCALEDOT_ROW(0, Y4)
	ADDQ  $8, AX
	ADDQ  $8, DX
	DECQ  CX
	JMP   fscale_tail

fscale_done:
	GROUP_STORE(acc+32)
	ADDQ $32, BX
	CMPQ BX, R10
	JLT  fscale_group
	VZEROUPPER
	RET

// func secondAVX2(r *float64, ld, rows, cols int, acc *float64, sy float64, alpha, u, x *float64)
TEXT ·secondAVX2(SB), NOSPLIT, $0-72
	PROLOGUE
	COEF_PROLOGUE
	MOVQ u+56(FP), R12
	MOVQ x+64(FP), R13
second_group:
	COEF_SECOND
	LEAQ   (DI)(BX*1), SI
	MOVQ   R12, AX
	MOVQ   R13, DX
	MOVQ   R9, CX
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

second_rows4:
	CMPQ CX, $4
	JLT  second_tail
	AXPYDOT_ROW(0, Y4)
	AXPYDOT_ROW(8, Y5)
	AXPYDOT_ROW(16, Y6)
	AXPYDOT_ROW(24, Y7)
	ADDQ $32, AX
	ADDQ $32, DX
	SUBQ $4, CX
	JMP  second_rows4

second_tail:
	TESTQ CX, CX
	JEQ   second_done
	AXPYDOT_ROW(0, Y4)
	ADDQ  $8, AX
	ADDQ  $8, DX
	DECQ  CX
	JMP   second_tail

second_done:
	GROUP_STORE(acc+32)
	ADDQ $32, BX
	CMPQ BX, R10
	JLT  second_group
	VZEROUPPER
	RET

// func lastAVX2(r *float64, ld, rows, cols int, acc *float64, sy float64, alpha, u *float64)
TEXT ·lastAVX2(SB), NOSPLIT, $0-64
	PROLOGUE
	COEF_PROLOGUE
	MOVQ u+56(FP), R12

last_group:
	COEF_SECOND
	LEAQ (DI)(BX*1), SI
	MOVQ R12, AX
	MOVQ R9, CX

last_rows:
	AXPY_ROW(0)
	ADDQ $8, AX
	DECQ CX
	JNE  last_rows
	ADDQ $32, BX
	CMPQ BX, R10
	JLT  last_group
	VZEROUPPER
	RET
