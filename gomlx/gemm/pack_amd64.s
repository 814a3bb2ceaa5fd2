//go:build amd64

#include "textflag.h"

// func copyRows16AVX2(kb int, dst, src *float32, stride int)
//
// For p in [0, kb): dst[p*16 .. p*16+16] = src[p*stride .. p*stride+16], two 32-byte moves
// a row: packB's copy of a 16-column panel, without a memmove call per row. stride is in
// elements.
TEXT ·copyRows16AVX2(SB), NOSPLIT, $0-32
	MOVQ kb+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ stride+24(FP), R8
	SHLQ $2, R8              // row stride in bytes

loop:
	TESTQ CX, CX
	JLE done
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ R8, SI
	ADDQ $64, DI
	DECQ CX
	JMP loop

done:
	VZEROUPPER
	RET
