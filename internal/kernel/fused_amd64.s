//go:build amd64 && !purego

#include "textflag.h"

// VFMADD231PD B, A, D sets D = A*B + D with one rounding; the scalar
// VFMADD231SD keeps bits 64..127 of D and clears bits 128..255.

// REDUCE leaves in the low lane of Xr the sum (p0 + p2) + (p1 + p3) of
// the lanes p0..p3 that Yr held before the tail, Xh holding (p2, p3).
#define REDUCE(Xh, Xr) \
	VADDPD  Xh, Xr, Xr \
	VHADDPD Xr, Xr, Xr

// func fusedDots4FMA(z, w *float64, n int, x *float64, stride, groups int)
TEXT ·fusedDots4FMA(SB), NOSPLIT, $0-48
	MOVQ z+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ x+24(FP), R8
	MOVQ stride+32(FP), BX
	SHLQ $3, BX
	MOVQ groups+40(FP), R12
	MOVQ CX, R13
	ANDQ $-4, R13

fdgroup:
	LEAQ   (R8)(BX*1), R9
	LEAQ   (R9)(BX*1), R10
	LEAQ   (R10)(BX*1), R11
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ   AX, AX

fdcols:
	VMOVUPD     (SI)(AX*8), Y4
	VFMADD231PD (R8)(AX*8), Y4, Y0
	VFMADD231PD (R9)(AX*8), Y4, Y1
	VFMADD231PD (R10)(AX*8), Y4, Y2
	VFMADD231PD (R11)(AX*8), Y4, Y3
	ADDQ        $4, AX
	CMPQ        AX, R13
	JLT         fdcols

	VEXTRACTF128 $1, Y0, X5
	VEXTRACTF128 $1, Y1, X6
	VEXTRACTF128 $1, Y2, X7
	VEXTRACTF128 $1, Y3, X9

fdtail:
	CMPQ        AX, CX
	JGE         fdsum
	VMOVSD      (SI)(AX*8), X4
	VFMADD231SD (R8)(AX*8), X4, X0
	VFMADD231SD (R9)(AX*8), X4, X1
	VFMADD231SD (R10)(AX*8), X4, X2
	VFMADD231SD (R11)(AX*8), X4, X3
	INCQ        AX
	JMP         fdtail

fdsum:
	REDUCE(X5, X0)
	REDUCE(X6, X1)
	REDUCE(X7, X2)
	REDUCE(X9, X3)
	VMOVSD X0, (DI)
	VMOVSD X1, 8(DI)
	VMOVSD X2, 16(DI)
	VMOVSD X3, 24(DI)
	LEAQ   (R11)(BX*1), R8
	ADDQ   $32, DI
	DECQ   R12
	JNZ    fdgroup
	VZEROUPPER
	RET

// func fusedAddRowsFMA(acc *float64, n int, c *float64, rows int, x *float64, stride int)
// The rows four at a time, then one at a time; in each, the first n &^ 3
// elements four to a register, then the rest one by one.
TEXT ·fusedAddRowsFMA(SB), NOSPLIT, $0-48
	MOVQ acc+0(FP), DI
	MOVQ n+8(FP), DX
	MOVQ DX, CX
	ANDQ $-4, CX
	MOVQ c+16(FP), SI
	MOVQ rows+24(FP), R12
	MOVQ x+32(FP), R8
	MOVQ stride+40(FP), BX
	SHLQ $3, BX

fagroup:
	CMPQ         R12, $4
	JLT          faone
	VBROADCASTSD (SI), Y12
	VBROADCASTSD 8(SI), Y13
	VBROADCASTSD 16(SI), Y14
	VBROADCASTSD 24(SI), Y15
	LEAQ         (R8)(BX*1), R9
	LEAQ         (R9)(BX*1), R10
	LEAQ         (R10)(BX*1), R11
	XORQ         AX, AX
	TESTQ        CX, CX
	JZ           fatail

facols:
	VMOVUPD     (DI)(AX*8), Y0
	VFMADD231PD (R8)(AX*8), Y12, Y0
	VFMADD231PD (R9)(AX*8), Y13, Y0
	VFMADD231PD (R10)(AX*8), Y14, Y0
	VFMADD231PD (R11)(AX*8), Y15, Y0
	VMOVUPD     Y0, (DI)(AX*8)
	ADDQ        $4, AX
	CMPQ        AX, CX
	JLT         facols

fatail:
	CMPQ        AX, DX
	JGE         fanext
	VMOVSD      (DI)(AX*8), X0
	VFMADD231SD (R8)(AX*8), X12, X0
	VFMADD231SD (R9)(AX*8), X13, X0
	VFMADD231SD (R10)(AX*8), X14, X0
	VFMADD231SD (R11)(AX*8), X15, X0
	VMOVSD      X0, (DI)(AX*8)
	INCQ        AX
	JMP         fatail

fanext:
	LEAQ (R11)(BX*1), R8
	ADDQ $32, SI
	SUBQ $4, R12
	JMP  fagroup

faone:
	TESTQ        R12, R12
	JZ           fadone
	VBROADCASTSD (SI), Y12
	XORQ         AX, AX
	TESTQ        CX, CX
	JZ           faonetail

faonecols:
	VMOVUPD     (DI)(AX*8), Y0
	VFMADD231PD (R8)(AX*8), Y12, Y0
	VMOVUPD     Y0, (DI)(AX*8)
	ADDQ        $4, AX
	CMPQ        AX, CX
	JLT         faonecols

faonetail:
	CMPQ        AX, DX
	JGE         faonenext
	VMOVSD      (DI)(AX*8), X0
	VFMADD231SD (R8)(AX*8), X12, X0
	VMOVSD      X0, (DI)(AX*8)
	INCQ        AX
	JMP         faonetail

faonenext:
	ADDQ BX, R8
	ADDQ $8, SI
	DECQ R12
	JMP  faone

fadone:
	VZEROUPPER
	RET
