//go:build amd64

#include "textflag.h"

// func argMaxAVX2(n int, src *float32, stride int, red int, arg *int32)
//
// For j in [0, n) step 8 (n a multiple of 8): the index r in [0, red) of the largest of
// src[r*stride + j .. +8], lane by lane, as argExtreme defines it (r takes over when its
// value is greater, or NaN), written to arg[j .. +8]. stride is in elements; red ≥ 1.
TEXT ·argMaxAVX2(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), R8
	SHLQ $2, R8              // row stride in bytes
	MOVQ red+24(FP), R9
	MOVQ arg+32(FP), DI
	MOVL $1, AX
	MOVD AX, X7
	VPBROADCASTD X7, Y7      // Y7 = 1 in every lane (int32)

col:
	CMPQ CX, $0
	JLE done
	VMOVUPS (SI), Y0         // best = row 0
	VPXOR Y4, Y4, Y4         // arg = 0
	VPXOR Y5, Y5, Y5         // r = 0
	MOVQ SI, DX
	MOVQ R9, BX
	DECQ BX

row:
	CMPQ BX, $0
	JLE store
	ADDQ R8, DX
	VPADDD Y7, Y5, Y5        // r++
	VMOVUPS (DX), Y1         // v
	VCMPPS $0x1E, Y0, Y1, Y2 // v > best (ordered)
	VCMPPS $0x03, Y1, Y1, Y3 // v is NaN
	VORPS Y3, Y2, Y2
	VBLENDVPS Y2, Y1, Y0, Y0 // best = take ? v : best
	VBLENDVPS Y2, Y5, Y4, Y4 // arg = take ? r : arg
	DECQ BX
	JMP row

store:
	VMOVDQU Y4, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP col

done:
	VZEROUPPER
	RET
