//go:build amd64

#include "textflag.h"

// func gather1AVX2(n int, dst, src *float32, idx *int32, last int32)
//
// For m in [0, n) (n a multiple of 8): dst[m] = src[min(max(idx[m], 0), last)], 8 lanes at
// a time with VPGATHERDD: a copy of each value's bits, as execGather's c = 1 loop.
TEXT ·gather1AVX2(SB), NOSPLIT, $0-36
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ idx+24(FP), DX
	MOVL last+32(FP), AX
	MOVD AX, X2
	VPBROADCASTD X2, Y2      // Y2 = last in every lane
	VPXOR Y3, Y3, Y3         // Y3 = 0

loop:
	CMPQ CX, $8
	JL done
	VMOVDQU (DX), Y0
	VPMAXSD Y3, Y0, Y0       // clamp to [0, last]
	VPMINSD Y2, Y0, Y0
	VPCMPEQD Y1, Y1, Y1      // gather every lane (the mask is cleared by the gather)
	VPGATHERDD Y1, (SI)(Y0*4), Y4
	VMOVDQU Y4, (DI)
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP loop

done:
	VZEROUPPER
	RET
