//go:build amd64 && !purego

#include "textflag.h"

// func prefetchRange(p *float64, n int)
// Issues PREFETCHT0 for every 64-byte cache line of the n float64s at p.
TEXT ·prefetchRange(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ (AX)(CX*8), BX
loop:
	CMPQ AX, BX
	JAE  done
	PREFETCHT0 (AX)
	ADDQ $64, AX
	JMP  loop
done:
	RET

// func prefetchExample(x *float64, n int, norm, y *float64)
// Issues PREFETCHT0 for the lines of *norm and *y, then jumps to
// prefetchRange, whose arguments (x, n) sit where its own do: one call for
// all that an example reads.
TEXT ·prefetchExample(SB), NOSPLIT, $0-32
	MOVQ norm+16(FP), DX
	MOVQ y+24(FP), SI
	PREFETCHT0 (DX)
	PREFETCHT0 (SI)
	JMP  ·prefetchRange(SB)
