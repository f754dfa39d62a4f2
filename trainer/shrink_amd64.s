#include "textflag.h"

// func shrinkDotSSE2(w, dir, next *float64, n int, a, c, thr float64) float64
//
// For j < n: u = a*w[j] - c*dir[j]; w[j] = max(u - thr, 0) + min(u + thr, 0)
// (the soft threshold, without branches; a NaN u stays NaN); returns
// sum_j w[j]*next[j] with four partial sums s0..s3 over j mod 4, the tail
// added to s0, and (s0 + s1) + (s2 + s3): shrinkDotGeneric, bit for bit,
// two elements per instruction. SSE2 only, which every amd64 processor has.
TEXT ·shrinkDotSSE2(SB), NOSPLIT, $0-64
	MOVQ  w+0(FP), DI
	MOVQ  dir+8(FP), SI
	MOVQ  next+16(FP), DX
	MOVQ  n+24(FP), CX
	MOVSD a+32(FP), X14
	UNPCKLPD X14, X14
	MOVSD c+40(FP), X13
	UNPCKLPD X13, X13
	MOVSD thr+48(FP), X12
	UNPCKLPD X12, X12
	XORPD X8, X8 // s0, s1
	XORPD X9, X9 // s2, s3
	XORQ  AX, AX
	MOVQ  CX, BX
	ANDQ  $-4, BX

loop4:
	CMPQ AX, BX
	JGE  tail
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
	MAXPD  X0, X4 // 0 > u-thr ? 0 : u-thr (NaN: u-thr)
	MAXPD  X1, X5
	MINPD  X2, X6 // 0 < u+thr ? 0 : u+thr (NaN: u+thr)
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
	JMP    loop4

tail:
	CMPQ  AX, CX
	JGE   done
	MOVSD (DI)(AX*8), X0
	MULSD X14, X0
	MOVSD (SI)(AX*8), X2
	MULSD X13, X2
	SUBSD X2, X0
	MOVSD X0, X2
	SUBSD X12, X0
	ADDSD X12, X2
	XORPD X4, X4
	XORPD X6, X6
	MAXSD X0, X4
	MINSD X2, X6
	ADDSD X6, X4
	MOVSD X4, (DI)(AX*8)
	MOVSD (DX)(AX*8), X0
	MULSD X0, X4
	ADDSD X4, X8 // s0; s1 in the high lane is kept
	INCQ  AX
	JMP   tail

done:
	MOVAPD   X8, X0
	UNPCKHPD X0, X0
	ADDSD    X0, X8 // s0 + s1
	MOVAPD   X9, X1
	UNPCKHPD X1, X1
	ADDSD    X1, X9 // s2 + s3
	ADDSD    X9, X8
	MOVSD    X8, ret+56(FP)
	RET
