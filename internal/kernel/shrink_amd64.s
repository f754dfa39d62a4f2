//go:build amd64 && !purego

#include "textflag.h"

// The kernels below do, for j < n (n a multiple of 4):
//
//	u = a*w[j] - c*dir[j]
//	w[j] = max(u - thr, 0) + min(u + thr, 0)
//	s[j mod 4] += w[j]*next[j]
//
// The soft threshold takes no branches: it gives u - thr, 0 or u + thr as
// softThreshold does, and a NaN u stays NaN (MAXPD and MINPD return their
// second operand, u -/+ thr, when it is NaN). With the same partial sums,
// ShrinkDot's results are shrinkDotGeneric's bit for bit.

// func shrinkDot4SSE2(w, dir, next *float64, n int, a, c, thr float64, s *[4]float64)
// Two elements per instruction; SSE2, which every amd64 processor has.
TEXT ·shrinkDot4SSE2(SB), NOSPLIT, $0-64
	MOVQ     w+0(FP), DI
	MOVQ     dir+8(FP), SI
	MOVQ     next+16(FP), DX
	MOVQ     n+24(FP), CX
	MOVSD    a+32(FP), X14
	UNPCKLPD X14, X14
	MOVSD    c+40(FP), X13
	UNPCKLPD X13, X13
	MOVSD    thr+48(FP), X12
	UNPCKLPD X12, X12
	XORPD    X8, X8 // s0, s1
	XORPD    X9, X9 // s2, s3
	XORQ     AX, AX

sseloop:
	CMPQ   AX, CX
	JGE    ssedone
	MOVUPD (DI)(AX*8), X0
	MOVUPD 16(DI)(AX*8), X1
	MULPD  X14, X0
	MULPD  X14, X1
	MOVUPD (SI)(AX*8), X2
	MOVUPD 16(SI)(AX*8), X3
	MULPD  X13, X2
	MULPD  X13, X3
	SUBPD  X2, X0 // u
	SUBPD  X3, X1
	MOVAPD X0, X2
	MOVAPD X1, X3
	SUBPD  X12, X0 // u - thr
	SUBPD  X12, X1
	ADDPD  X12, X2 // u + thr
	ADDPD  X12, X3
	XORPD  X4, X4
	XORPD  X5, X5
	XORPD  X6, X6
	XORPD  X7, X7
	MAXPD  X0, X4 // 0 > u-thr ? 0 : u-thr
	MAXPD  X1, X5
	MINPD  X2, X6 // 0 < u+thr ? 0 : u+thr
	MINPD  X3, X7
	ADDPD  X6, X4
	ADDPD  X7, X5
	MOVUPD X4, (DI)(AX*8)
	MOVUPD X5, 16(DI)(AX*8)
	MOVUPD (DX)(AX*8), X0
	MOVUPD 16(DX)(AX*8), X1
	MULPD  X0, X4
	MULPD  X1, X5
	ADDPD  X4, X8
	ADDPD  X5, X9
	ADDQ   $4, AX
	JMP    sseloop

ssedone:
	MOVQ   s+56(FP), DI
	MOVUPD X8, (DI)
	MOVUPD X9, 16(DI)
	RET

// func shrinkDot4AVX(w, dir, next *float64, n int, a, c, thr float64, s *[4]float64)
// Four elements per instruction: one YMM register holds s0..s3. AVX, no FMA
// (a fused multiply-add would round differently).
TEXT ·shrinkDot4AVX(SB), NOSPLIT, $0-64
	MOVQ         w+0(FP), DI
	MOVQ         dir+8(FP), SI
	MOVQ         next+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSD a+32(FP), Y14
	VBROADCASTSD c+40(FP), Y13
	VBROADCASTSD thr+48(FP), Y12
	VXORPD       Y11, Y11, Y11 // 0
	VXORPD       Y8, Y8, Y8    // s0..s3
	XORQ         AX, AX

avxloop:
	CMPQ    AX, CX
	JGE     avxdone
	VMOVUPD (DI)(AX*8), Y0
	VMULPD  Y14, Y0, Y0
	VMOVUPD (SI)(AX*8), Y1
	VMULPD  Y13, Y1, Y1
	VSUBPD  Y1, Y0, Y0  // u
	VSUBPD  Y12, Y0, Y2 // u - thr
	VADDPD  Y12, Y0, Y3 // u + thr
	VMAXPD  Y2, Y11, Y4 // 0 > u-thr ? 0 : u-thr
	VMINPD  Y3, Y11, Y5 // 0 < u+thr ? 0 : u+thr
	VADDPD  Y5, Y4, Y4
	VMOVUPD Y4, (DI)(AX*8)
	VMOVUPD (DX)(AX*8), Y0
	VMULPD  Y0, Y4, Y4
	VADDPD  Y4, Y8, Y8
	ADDQ    $4, AX
	JMP     avxloop

avxdone:
	MOVQ       s+56(FP), DI
	VMOVUPD    Y8, (DI)
	VZEROUPPER
	RET
