//go:build amd64 && !purego

#include "textflag.h"
#include "ddots4_amd64.h"

// AVX, no FMA: a fused multiply-add would round differently from the Go
// loops whose bits these kernels give.

// TRANSPOSE4 turns the rows R0..R3 (four elements a, b, c, d of four rows)
// into their columns, in place, using Y10..Y13: the unpacks give
// [a0 b0 a2 b2], [a1 b1 a3 b3], [c0 d0 c2 d2] and [c1 d1 c3 d3], the
// permutes [a0 b0 c0 d0], [a1 b1 c1 d1], [a2 b2 c2 d2] and [a3 b3 c3 d3].
#define TRANSPOSE4(R0, R1, R2, R3) \
	VUNPCKLPD  R1, R0, Y10 \
	VUNPCKHPD  R1, R0, Y11 \
	VUNPCKLPD  R3, R2, Y12 \
	VUNPCKHPD  R3, R2, Y13 \
	VPERM2F128 $0x20, Y12, Y10, R0 \
	VPERM2F128 $0x20, Y13, Y11, R1 \
	VPERM2F128 $0x31, Y12, Y10, R2 \
	VPERM2F128 $0x31, Y13, Y11, R3

// ADDCOLS adds the columns R0..R3 to the row sums ACC, in column order.
#define ADDCOLS(R0, R1, R2, R3, ACC) \
	VADDPD R0, ACC, ACC \
	VADDPD R1, ACC, ACC \
	VADDPD R2, ACC, ACC \
	VADDPD R3, ACC, ACC

// func seqDots4AVX(w, x0, x1, x2, x3 *float64, n int, s *[4]float64)
TEXT ·seqDots4AVX(SB), NOSPLIT, $0-56
	MOVQ   w+0(FP), DI
	MOVQ   x0+8(FP), R8
	MOVQ   x1+16(FP), R9
	MOVQ   x2+24(FP), R10
	MOVQ   x3+32(FP), R11
	MOVQ   n+40(FP), CX
	VXORPD Y8, Y8, Y8
	XORQ   AX, AX

sdloop:
	CMPQ    AX, CX
	JGE     sddone
	VMOVUPD (DI)(AX*8), Y4
	VMULPD  (R8)(AX*8), Y4, Y0
	VMULPD  (R9)(AX*8), Y4, Y1
	VMULPD  (R10)(AX*8), Y4, Y2
	VMULPD  (R11)(AX*8), Y4, Y3
	TRANSPOSE4(Y0, Y1, Y2, Y3)
	ADDCOLS(Y0, Y1, Y2, Y3, Y8)
	ADDQ    $4, AX
	JMP     sdloop

sddone:
	MOVQ       s+48(FP), DI
	VMOVUPD    Y8, (DI)
	VZEROUPPER
	RET

// func seqSquares4AVX(x0, x1, x2, x3 *float64, n int, s *[4]float64)
TEXT ·seqSquares4AVX(SB), NOSPLIT, $0-48
	MOVQ   x0+0(FP), R8
	MOVQ   x1+8(FP), R9
	MOVQ   x2+16(FP), R10
	MOVQ   x3+24(FP), R11
	MOVQ   n+32(FP), CX
	VXORPD Y8, Y8, Y8
	XORQ   AX, AX

ssloop:
	CMPQ    AX, CX
	JGE     ssdone
	VMOVUPD (R8)(AX*8), Y0
	VMOVUPD (R9)(AX*8), Y1
	VMOVUPD (R10)(AX*8), Y2
	VMOVUPD (R11)(AX*8), Y3
	VMULPD  Y0, Y0, Y0
	VMULPD  Y1, Y1, Y1
	VMULPD  Y2, Y2, Y2
	VMULPD  Y3, Y3, Y3
	TRANSPOSE4(Y0, Y1, Y2, Y3)
	ADDCOLS(Y0, Y1, Y2, Y3, Y8)
	ADDQ    $4, AX
	JMP     ssloop

ssdone:
	MOVQ       s+40(FP), DI
	VMOVUPD    Y8, (DI)
	VZEROUPPER
	RET

// func ddots4AVX(w, x0, x1, x2, x3 *float64, n int, p *[16]float64)
// Lane k of row r's register is gonum's partial sum s_k.
TEXT ·ddots4AVX(SB), NOSPLIT, $0-56
	MOVQ   w+0(FP), DI
	MOVQ   x0+8(FP), R8
	MOVQ   x1+16(FP), R9
	MOVQ   x2+24(FP), R10
	MOVQ   x3+32(FP), R11
	MOVQ   n+40(FP), CX
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	XORQ   AX, AX

ddloop:
	CMPQ    AX, CX
	JGE     dddone
	DDOTS4STEP
	ADDQ    $4, AX
	JMP     ddloop

dddone:
	MOVQ       p+48(FP), DI
	VMOVUPD    Y8, (DI)
	VMOVUPD    Y9, 32(DI)
	VMOVUPD    Y10, 64(DI)
	VMOVUPD    Y11, 96(DI)
	VZEROUPPER
	RET

// func addRows4AVX(acc, x0, x1, x2, x3 *float64, n int, c *[4]float64)
TEXT ·addRows4AVX(SB), NOSPLIT, $0-56
	MOVQ         acc+0(FP), DI
	MOVQ         x0+8(FP), R8
	MOVQ         x1+16(FP), R9
	MOVQ         x2+24(FP), R10
	MOVQ         x3+32(FP), R11
	MOVQ         n+40(FP), CX
	MOVQ         c+48(FP), DX
	VBROADCASTSD (DX), Y12
	VBROADCASTSD 8(DX), Y13
	VBROADCASTSD 16(DX), Y14
	VBROADCASTSD 24(DX), Y15
	XORQ         AX, AX

arloop:
	CMPQ    AX, CX
	JGE     ardone
	VMOVUPD (DI)(AX*8), Y0
	VMULPD  (R8)(AX*8), Y12, Y1
	VADDPD  Y1, Y0, Y0
	VMULPD  (R9)(AX*8), Y13, Y2
	VADDPD  Y2, Y0, Y0
	VMULPD  (R10)(AX*8), Y14, Y3
	VADDPD  Y3, Y0, Y0
	VMULPD  (R11)(AX*8), Y15, Y4
	VADDPD  Y4, Y0, Y0
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     arloop

ardone:
	VZEROUPPER
	RET

// func seqSquares8AVX(x *float64, stride, n int, s *[8]float64)
// The first n (a multiple of 4) elements of eight rows stride elements
// apart: rows 0..3 summed in Y8 and rows 4..7 in Y9, two independent
// chains of additions in column order.
TEXT ·seqSquares8AVX(SB), NOSPLIT, $0-32
	MOVQ   x+0(FP), R8
	MOVQ   stride+8(FP), BX
	SHLQ   $3, BX
	MOVQ   n+16(FP), CX
	LEAQ   (R8)(BX*1), R9
	LEAQ   (R9)(BX*1), R10
	LEAQ   (R10)(BX*1), R11
	LEAQ   (R11)(BX*1), R12
	LEAQ   (R12)(BX*1), R13
	LEAQ   (R13)(BX*1), DX
	LEAQ   (DX)(BX*1), SI
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	XORQ   AX, AX

s8loop:
	CMPQ    AX, CX
	JGE     s8done
	VMOVUPD (R8)(AX*8), Y0
	VMOVUPD (R9)(AX*8), Y1
	VMOVUPD (R10)(AX*8), Y2
	VMOVUPD (R11)(AX*8), Y3
	VMOVUPD (R12)(AX*8), Y4
	VMOVUPD (R13)(AX*8), Y5
	VMOVUPD (DX)(AX*8), Y6
	VMOVUPD (SI)(AX*8), Y7
	VMULPD  Y0, Y0, Y0
	VMULPD  Y1, Y1, Y1
	VMULPD  Y2, Y2, Y2
	VMULPD  Y3, Y3, Y3
	VMULPD  Y4, Y4, Y4
	VMULPD  Y5, Y5, Y5
	VMULPD  Y6, Y6, Y6
	VMULPD  Y7, Y7, Y7
	TRANSPOSE4(Y0, Y1, Y2, Y3)
	ADDCOLS(Y0, Y1, Y2, Y3, Y8)
	TRANSPOSE4(Y4, Y5, Y6, Y7)
	ADDCOLS(Y4, Y5, Y6, Y7, Y9)
	ADDQ    $4, AX
	JMP     s8loop

s8done:
	MOVQ    s+24(FP), DI
	VMOVUPD Y8, (DI)
	VMOVUPD Y9, 32(DI)
	VZEROUPPER
	RET
