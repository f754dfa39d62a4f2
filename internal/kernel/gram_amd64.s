//go:build amd64 && !purego

#include "textflag.h"

// LOADTILE and STORETILE move the 4 x 8 tile at DI to and from Y0..Y7,
// row a in Y(2a) (columns 0..3) and Y(2a+1) (columns 4..7).
#define LOADTILE \
	VMOVUPD (DI), Y0 \
	VMOVUPD 32(DI), Y1 \
	VMOVUPD 64(DI), Y2 \
	VMOVUPD 96(DI), Y3 \
	VMOVUPD 128(DI), Y4 \
	VMOVUPD 160(DI), Y5 \
	VMOVUPD 192(DI), Y6 \
	VMOVUPD 224(DI), Y7

#define STORETILE \
	VMOVUPD Y0, (DI) \
	VMOVUPD Y1, 32(DI) \
	VMOVUPD Y2, 64(DI) \
	VMOVUPD Y3, 96(DI) \
	VMOVUPD Y4, 128(DI) \
	VMOVUPD Y5, 160(DI) \
	VMOVUPD Y6, 192(DI) \
	VMOVUPD Y7, 224(DI)

// func gramTileFMA(t *[32]float64, s *float64, ss int, x *float64, xs, rows int)
// Y0..Y7 hold the tile, row a in Y(2a) (columns 0..3) and Y(2a+1)
// (columns 4..7); VFMADD231PD B, A, D sets D = A*B + D with one rounding.
TEXT ·gramTileFMA(SB), NOSPLIT, $0-48
	MOVQ    t+0(FP), DI
	MOVQ    s+8(FP), SI
	MOVQ    ss+16(FP), BX
	SHLQ    $3, BX
	MOVQ    x+24(FP), DX
	MOVQ    xs+32(FP), R8
	SHLQ    $3, R8
	MOVQ    rows+40(FP), CX
	LOADTILE

gtloop:
	VMOVUPD      (DX), Y8
	VMOVUPD      32(DX), Y9
	VBROADCASTSD (SI), Y10
	VFMADD231PD  Y8, Y10, Y0
	VFMADD231PD  Y9, Y10, Y1
	VBROADCASTSD 8(SI), Y11
	VFMADD231PD  Y8, Y11, Y2
	VFMADD231PD  Y9, Y11, Y3
	VBROADCASTSD 16(SI), Y12
	VFMADD231PD  Y8, Y12, Y4
	VFMADD231PD  Y9, Y12, Y5
	VBROADCASTSD 24(SI), Y13
	VFMADD231PD  Y8, Y13, Y6
	VFMADD231PD  Y9, Y13, Y7
	ADDQ         BX, SI
	ADDQ         R8, DX
	DECQ         CX
	JNZ          gtloop

	STORETILE
	VZEROUPPER
	RET

// func gramTileScaledFMA(t *[32]float64, h, s *float64, ss int, x *float64, xs, rows int)
// As gramTileFMA, with Y14 = h[r] * s[r, 0..3] and its lanes broadcast by
// VPERMPD.
TEXT ·gramTileScaledFMA(SB), NOSPLIT, $0-56
	MOVQ    t+0(FP), DI
	MOVQ    h+8(FP), AX
	MOVQ    s+16(FP), SI
	MOVQ    ss+24(FP), BX
	SHLQ    $3, BX
	MOVQ    x+32(FP), DX
	MOVQ    xs+40(FP), R8
	SHLQ    $3, R8
	MOVQ    rows+48(FP), CX
	LOADTILE

gsloop:
	VBROADCASTSD (AX), Y15
	VMULPD       (SI), Y15, Y14
	VMOVUPD      (DX), Y8
	VMOVUPD      32(DX), Y9
	VPERMPD      $0x00, Y14, Y10
	VFMADD231PD  Y8, Y10, Y0
	VFMADD231PD  Y9, Y10, Y1
	VPERMPD      $0x55, Y14, Y11
	VFMADD231PD  Y8, Y11, Y2
	VFMADD231PD  Y9, Y11, Y3
	VPERMPD      $0xAA, Y14, Y12
	VFMADD231PD  Y8, Y12, Y4
	VFMADD231PD  Y9, Y12, Y5
	VPERMPD      $0xFF, Y14, Y13
	VFMADD231PD  Y8, Y13, Y6
	VFMADD231PD  Y9, Y13, Y7
	ADDQ         $8, AX
	ADDQ         BX, SI
	ADDQ         R8, DX
	DECQ         CX
	JNZ          gsloop

	STORETILE
	VZEROUPPER
	RET
