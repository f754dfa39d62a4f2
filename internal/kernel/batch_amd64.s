//go:build amd64 && !purego

#include "textflag.h"
#include "ddots4_amd64.h"

// AVX, no FMA: a fused multiply-add would round differently from the Go
// loops whose bits these kernels give (batchDot, batchAxpy).

// ROWAT(k, R) sets R to the address of the row of index k(BX): x (SI) plus
// the index times the stride in bytes (DX).
#define ROWAT(k, R) \
	MOVQ  k(BX), R \
	IMULQ DX, R    \
	ADDQ  SI, R

// DOTRED(X, Xh) turns the partial sums [s0 s1] of X and [s2 s3] of Xh (the
// high half of the register, saved before the tail) into (s0+s2) + (s1+s3)
// in the low element of X.
#define DOTRED(X, Xh) \
	VADDPD    Xh, X, X \
	VPERMILPD $1, X, X4 \
	VADDSD    X4, X, X

// func dotsAt4AVX(z, w, x *float64, stride, m, n int, idx, ahead *int, na int)
TEXT ·dotsAt4AVX(SB), NOSPLIT, $0-72
	MOVQ w+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ stride+24(FP), DX
	SHLQ $3, DX             // stride in bytes
	MOVQ n+40(FP), CX
	ANDQ $-4, CX            // n &^ 3
	XORQ R12, R12           // q

dgroup:
	CMPQ R12, m+32(FP)
	JGE  ddone

	// Hint the rows ahead[q+r] for r < min(4, na-q) to the L2 cache, every
	// cache line of each, from the line of its first element to that of its
	// last, four lines per iteration.
	MOVQ na+64(FP), R9
	SUBQ R12, R9
	JLE  dload
	CMPQ R9, $4
	JLE  dhint
	MOVQ $4, R9

dhint:
	MOVQ ahead+56(FP), R13
	LEAQ (R13)(R12*8), R13

dhrow:
	MOVQ  (R13), AX
	IMULQ DX, AX
	ADDQ  SI, AX            // first element
	MOVQ  n+40(FP), R8
	LEAQ  -8(AX)(R8*8), R8  // last element
	ANDQ  $-64, AX
	ANDQ  $-64, R8
	SUBQ  AX, R8            // 64 (lines - 1)

dh4:
	CMPQ       R8, $192
	JLT        dh1
	PREFETCHT1 (AX)
	PREFETCHT1 64(AX)
	PREFETCHT1 128(AX)
	PREFETCHT1 192(AX)
	ADDQ       $256, AX
	SUBQ       $256, R8
	JMP        dh4

dh1:
	CMPQ       R8, $0
	JLT        dhnext
	PREFETCHT1 (AX)
	CMPQ       R8, $64
	JLT        dhnext
	PREFETCHT1 64(AX)
	CMPQ       R8, $128
	JLT        dhnext
	PREFETCHT1 128(AX)

dhnext:
	ADDQ $8, R13
	DECQ R9
	JNZ  dhrow

dload:
	MOVQ   idx+48(FP), BX
	LEAQ   (BX)(R12*8), BX
	ROWAT(0, R8)
	ROWAT(8, R9)
	ROWAT(16, R10)
	ROWAT(24, R11)
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	XORQ   AX, AX

dloop:
	CMPQ    AX, CX
	JGE     dtail
	DDOTS4STEP
	ADDQ    $4, AX
	JMP     dloop

dtail:
	// The high halves [s2 s3] first: the scalar additions of the tail
	// into s0 clear them.
	VEXTRACTF128 $1, Y8, X12
	VEXTRACTF128 $1, Y9, X13
	VEXTRACTF128 $1, Y10, X14
	VEXTRACTF128 $1, Y11, X15
	MOVQ         n+40(FP), R13

dtl:
	CMPQ   AX, R13
	JGE    dred
	VMOVSD (DI)(AX*8), X4
	VMULSD (R8)(AX*8), X4, X0
	VMULSD (R9)(AX*8), X4, X1
	VMULSD (R10)(AX*8), X4, X2
	VMULSD (R11)(AX*8), X4, X3
	VADDSD X0, X8, X8
	VADDSD X1, X9, X9
	VADDSD X2, X10, X10
	VADDSD X3, X11, X11
	INCQ   AX
	JMP    dtl

dred:
	DOTRED(X8, X12)
	DOTRED(X9, X13)
	DOTRED(X10, X14)
	DOTRED(X11, X15)
	MOVQ   z+0(FP), R13
	LEAQ   (R13)(R12*8), R13
	VMOVSD X8, (R13)
	VMOVSD X9, 8(R13)
	VMOVSD X10, 16(R13)
	VMOVSD X11, 24(R13)
	ADDQ   $4, R12
	JMP    dgroup

ddone:
	VZEROUPPER
	RET

// ADDROW(R, Yc) adds the four products of the elements at AX of the row at
// R with the coefficient in Yc to Y0.
#define ADDROW(R, Yc) \
	VMULPD (R)(AX*8), Yc, Y1 \
	VADDPD Y1, Y0, Y0

// ADDROW1 is ADDROW for the one element at AX, into X0.
#define ADDROW1(R, Xc) \
	VMULSD (R)(AX*8), Xc, X1 \
	VADDSD X1, X0, X0

// func addRowsAt8AVX(acc, x *float64, stride, m, n int, idx *int, c *float64)
// Rows q..q+7 are at R8..R13, SI and BX, their coefficients in Y8..Y15.
TEXT ·addRowsAt8AVX(SB), NOSPLIT, $8-56
	MOVQ acc+0(FP), DI
	MOVQ $0, q-8(SP)

agroup:
	MOVQ         q-8(SP), DX
	CMPQ         DX, m+24(FP)
	JGE          adone
	MOVQ         c+48(FP), AX
	LEAQ         (AX)(DX*8), AX
	VBROADCASTSD (AX), Y8
	VBROADCASTSD 8(AX), Y9
	VBROADCASTSD 16(AX), Y10
	VBROADCASTSD 24(AX), Y11
	VBROADCASTSD 32(AX), Y12
	VBROADCASTSD 40(AX), Y13
	VBROADCASTSD 48(AX), Y14
	VBROADCASTSD 56(AX), Y15
	MOVQ         idx+40(FP), AX
	LEAQ         (AX)(DX*8), AX
	ADDQ         $8, DX
	MOVQ         DX, q-8(SP)
	MOVQ         stride+16(FP), DX
	SHLQ         $3, DX
	MOVQ         x+8(FP), CX
	MOVQ         (AX), R8
	IMULQ        DX, R8
	ADDQ         CX, R8
	MOVQ         8(AX), R9
	IMULQ        DX, R9
	ADDQ         CX, R9
	MOVQ         16(AX), R10
	IMULQ        DX, R10
	ADDQ         CX, R10
	MOVQ         24(AX), R11
	IMULQ        DX, R11
	ADDQ         CX, R11
	MOVQ         32(AX), R12
	IMULQ        DX, R12
	ADDQ         CX, R12
	MOVQ         40(AX), R13
	IMULQ        DX, R13
	ADDQ         CX, R13
	MOVQ         48(AX), SI
	IMULQ        DX, SI
	ADDQ         CX, SI
	MOVQ         56(AX), BX
	IMULQ        DX, BX
	ADDQ         CX, BX
	MOVQ         n+32(FP), CX
	ANDQ         $-4, CX
	XORQ         AX, AX

aloop:
	CMPQ    AX, CX
	JGE     atail
	VMOVUPD (DI)(AX*8), Y0
	ADDROW(R8, Y8)
	ADDROW(R9, Y9)
	ADDROW(R10, Y10)
	ADDROW(R11, Y11)
	ADDROW(R12, Y12)
	ADDROW(R13, Y13)
	ADDROW(SI, Y14)
	ADDROW(BX, Y15)
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     aloop

atail:
	MOVQ n+32(FP), CX

atl:
	CMPQ   AX, CX
	JGE    agroup
	VMOVSD (DI)(AX*8), X0
	ADDROW1(R8, X8)
	ADDROW1(R9, X9)
	ADDROW1(R10, X10)
	ADDROW1(R11, X11)
	ADDROW1(R12, X12)
	ADDROW1(R13, X13)
	ADDROW1(SI, X14)
	ADDROW1(BX, X15)
	VMOVSD X0, (DI)(AX*8)
	INCQ   AX
	JMP    atl

adone:
	VZEROUPPER
	RET

// func hintAt(v *float64, idx *int, n int)
TEXT ·hintAt(SB), NOSPLIT, $0-24
	MOVQ v+0(FP), SI
	MOVQ idx+8(FP), BX
	MOVQ n+16(FP), CX
	LEAQ (BX)(CX*8), CX

hloop:
	MOVQ       (BX), AX
	PREFETCHT0 (SI)(AX*8)
	ADDQ       $8, BX
	CMPQ       BX, CX
	JB         hloop
	RET

// func hintIntsAt(v *int, idx *int, n int)
// An int is 8 bytes on amd64, as a float64: hintAt's loop.
TEXT ·hintIntsAt(SB), NOSPLIT, $0-24
	JMP ·hintAt(SB)
