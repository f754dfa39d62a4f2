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
