//go:build amd64 && !purego

#include "textflag.h"

// The constants of math.Exp (exp_amd64.s), four lanes each: log2(e), ln 2
// in two parts, 1/16, the Taylor coefficients 1/8! .. 1/3!, 1/2, 1 and 2;
// then the sign bit, the exponent bias and -logisticRange.
DATA logisticc<>+0(SB)/8, $0x3FF71547652B82FE
DATA logisticc<>+8(SB)/8, $0x3FF71547652B82FE
DATA logisticc<>+16(SB)/8, $0x3FF71547652B82FE
DATA logisticc<>+24(SB)/8, $0x3FF71547652B82FE
DATA logisticc<>+32(SB)/8, $0x3FE62E42FEFA3000
DATA logisticc<>+40(SB)/8, $0x3FE62E42FEFA3000
DATA logisticc<>+48(SB)/8, $0x3FE62E42FEFA3000
DATA logisticc<>+56(SB)/8, $0x3FE62E42FEFA3000
DATA logisticc<>+64(SB)/8, $0x3D53DE6AF278ECE6
DATA logisticc<>+72(SB)/8, $0x3D53DE6AF278ECE6
DATA logisticc<>+80(SB)/8, $0x3D53DE6AF278ECE6
DATA logisticc<>+88(SB)/8, $0x3D53DE6AF278ECE6
DATA logisticc<>+96(SB)/8, $0x3FB0000000000000
DATA logisticc<>+104(SB)/8, $0x3FB0000000000000
DATA logisticc<>+112(SB)/8, $0x3FB0000000000000
DATA logisticc<>+120(SB)/8, $0x3FB0000000000000
DATA logisticc<>+128(SB)/8, $0x3EFA01A01A01A01A
DATA logisticc<>+136(SB)/8, $0x3EFA01A01A01A01A
DATA logisticc<>+144(SB)/8, $0x3EFA01A01A01A01A
DATA logisticc<>+152(SB)/8, $0x3EFA01A01A01A01A
DATA logisticc<>+160(SB)/8, $0x3F2A01A01A01A01A
DATA logisticc<>+168(SB)/8, $0x3F2A01A01A01A01A
DATA logisticc<>+176(SB)/8, $0x3F2A01A01A01A01A
DATA logisticc<>+184(SB)/8, $0x3F2A01A01A01A01A
DATA logisticc<>+192(SB)/8, $0x3F56C16C16C16C17
DATA logisticc<>+200(SB)/8, $0x3F56C16C16C16C17
DATA logisticc<>+208(SB)/8, $0x3F56C16C16C16C17
DATA logisticc<>+216(SB)/8, $0x3F56C16C16C16C17
DATA logisticc<>+224(SB)/8, $0x3F81111111111111
DATA logisticc<>+232(SB)/8, $0x3F81111111111111
DATA logisticc<>+240(SB)/8, $0x3F81111111111111
DATA logisticc<>+248(SB)/8, $0x3F81111111111111
DATA logisticc<>+256(SB)/8, $0x3FA5555555555555
DATA logisticc<>+264(SB)/8, $0x3FA5555555555555
DATA logisticc<>+272(SB)/8, $0x3FA5555555555555
DATA logisticc<>+280(SB)/8, $0x3FA5555555555555
DATA logisticc<>+288(SB)/8, $0x3FC5555555555555
DATA logisticc<>+296(SB)/8, $0x3FC5555555555555
DATA logisticc<>+304(SB)/8, $0x3FC5555555555555
DATA logisticc<>+312(SB)/8, $0x3FC5555555555555
DATA logisticc<>+320(SB)/8, $0x3FE0000000000000
DATA logisticc<>+328(SB)/8, $0x3FE0000000000000
DATA logisticc<>+336(SB)/8, $0x3FE0000000000000
DATA logisticc<>+344(SB)/8, $0x3FE0000000000000
DATA logisticc<>+352(SB)/8, $0x3FF0000000000000
DATA logisticc<>+360(SB)/8, $0x3FF0000000000000
DATA logisticc<>+368(SB)/8, $0x3FF0000000000000
DATA logisticc<>+376(SB)/8, $0x3FF0000000000000
DATA logisticc<>+384(SB)/8, $0x4000000000000000
DATA logisticc<>+392(SB)/8, $0x4000000000000000
DATA logisticc<>+400(SB)/8, $0x4000000000000000
DATA logisticc<>+408(SB)/8, $0x4000000000000000
DATA logisticc<>+416(SB)/8, $0x8000000000000000
DATA logisticc<>+424(SB)/8, $0x8000000000000000
DATA logisticc<>+432(SB)/8, $0x8000000000000000
DATA logisticc<>+440(SB)/8, $0x8000000000000000
DATA logisticc<>+448(SB)/8, $1023
DATA logisticc<>+456(SB)/8, $1023
DATA logisticc<>+464(SB)/8, $1023
DATA logisticc<>+472(SB)/8, $1023
DATA logisticc<>+480(SB)/8, $-708.0
DATA logisticc<>+488(SB)/8, $-708.0
DATA logisticc<>+496(SB)/8, $-708.0
DATA logisticc<>+504(SB)/8, $-708.0
GLOBL logisticc<>(SB), RODATA, $512
#define LOG2E logisticc<>+0(SB)
#define LN2U logisticc<>+32(SB)
#define LN2L logisticc<>+64(SB)
#define SIXTEENTH logisticc<>+96(SB)
#define C8 logisticc<>+128(SB)
#define C7 logisticc<>+160(SB)
#define C6 logisticc<>+192(SB)
#define C5 logisticc<>+224(SB)
#define C4 logisticc<>+256(SB)
#define C3 logisticc<>+288(SB)
#define HALF logisticc<>+320(SB)
#define ONE logisticc<>+352(SB)
#define TWO logisticc<>+384(SB)
#define SIGN logisticc<>+416(SB)
#define BIAS logisticc<>+448(SB)
#define NRANGE logisticc<>+480(SB)

// func logisticParts4(z, y, plus, e, d1, d2 *float64, groups int) (far int)
// Per four rows: Y0 = z, Y1 = -y, Y2 = m, Y3 = -|m| and then e; math.Exp's
// steps (FMA path) four lanes at a time, with the exponent k in X5 as
// int32 and the final scaling by 2^k built in Y6 (k + 1023 > 0 for
// |m| < 708). AX collects the lanes with -|m| not above -708 (or NaN).
TEXT ·logisticParts4(SB), NOSPLIT, $0-64
	MOVQ    z+0(FP), SI
	MOVQ    y+8(FP), DX
	MOVQ    plus+16(FP), R8
	MOVQ    e+24(FP), R9
	MOVQ    d1+32(FP), R10
	MOVQ    d2+40(FP), R11
	MOVQ    groups+48(FP), CX
	VMOVUPD SIGN, Y8
	VMOVUPD BIAS, Y9
	VMOVUPD ONE, Y10
	VMOVUPD TWO, Y11
	XORQ    AX, AX

lploop:
	VMOVUPD (SI), Y0
	VXORPD  (DX), Y8, Y1 // -y
	VMULPD  Y0, Y1, Y2   // m = (-y)*z
	VORPD   Y8, Y2, Y3   // -|m|

	// the lanes past the range
	VCMPPD    $0x1A, NRANGE, Y3, Y12 // -|m| not > -708 (unordered, quiet)
	VMOVMSKPD Y12, BX
	ORQ       BX, AX

	// e = exp(-|m|): k = round(x log2 e), x - k ln2 (two parts, fused),
	// /16, Taylor series, squared four times, times 2^k
	VMULPD       LOG2E, Y3, Y4
	VCVTPD2DQY   Y4, X5
	VCVTDQ2PD    X5, Y4
	VFNMADD231PD LN2U, Y4, Y3
	VFNMADD231PD LN2L, Y4, Y3
	VMULPD       SIXTEENTH, Y3, Y3
	VMOVUPD      C8, Y4
	VFMADD213PD  C7, Y3, Y4
	VFMADD213PD  C6, Y3, Y4
	VFMADD213PD  C5, Y3, Y4
	VFMADD213PD  C4, Y3, Y4
	VFMADD213PD  C3, Y3, Y4
	VFMADD213PD  HALF, Y3, Y4
	VFMADD213PD  Y10, Y3, Y4
	VMULPD       Y4, Y3, Y3
	VADDPD       Y11, Y3, Y4
	VMULPD       Y4, Y3, Y3
	VADDPD       Y11, Y3, Y4
	VMULPD       Y4, Y3, Y3
	VADDPD       Y11, Y3, Y4
	VMULPD       Y4, Y3, Y3
	VADDPD       Y11, Y3, Y4
	VFMADD213PD  Y10, Y4, Y3
	VPMOVSXDQ    X5, Y6
	VPADDQ       Y9, Y6, Y6
	VPSLLQ       $52, Y6, Y6
	VMULPD       Y6, Y3, Y3
	VMOVUPD      Y3, (R9)

	// q = 1 + e, 1/q, e/q
	VADDPD Y10, Y3, Y4
	VDIVPD Y4, Y10, Y5 // 1/q
	VDIVPD Y4, Y3, Y6  // e/q
	VXORPD Y7, Y7, Y7

	// s = e/q where z < 0, else 1/q; d2 = s*(1 - s)
	VCMPPD    $0x11, Y7, Y0, Y4 // z < 0 (ordered, quiet)
	VBLENDVPD Y4, Y6, Y5, Y0
	VSUBPD    Y0, Y10, Y4
	VMULPD    Y4, Y0, Y0
	VMOVUPD   Y0, (R11)

	// where m >= 0: d1 = (-y)*(1/q), plus = m; else (-y)*(e/q) and 0
	VCMPPD    $0x1D, Y7, Y2, Y4 // m >= 0 (ordered, quiet)
	VBLENDVPD Y4, Y5, Y6, Y0
	VMULPD    Y0, Y1, Y0
	VMOVUPD   Y0, (R10)
	VANDPD    Y4, Y2, Y2
	VMOVUPD   Y2, (R8)

	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	DECQ CX
	JNZ  lploop
	VZEROUPPER
	MOVQ AX, far+56(FP)
	RET
