//go:build amd64

#include "textflag.h"

// Elementwise int32 arithmetic, 8 lanes at a time, over n values (n a multiple of 8): the
// wrapping two's-complement results of Go's int32 +, - and * (VPADDD, VPSUBD and VPMULLD
// keep the low 32 bits, as Go does), so the same integers as int32Binary's Go loops.
// Names: v = two vectors, s = vector op scalar.

// func vaddInt32AVX2(n int, dst, x, y *int32)
TEXT ·vaddInt32AVX2(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DX
vaddInt32AVX2_loop:
	CMPQ CX, $8
	JL vaddInt32AVX2_done
	VMOVDQU (SI), Y0
	VMOVDQU (DX), Y1
	VPADDD Y1, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP vaddInt32AVX2_loop
vaddInt32AVX2_done:
	VZEROUPPER
	RET

// func vsubInt32AVX2(n int, dst, x, y *int32)
TEXT ·vsubInt32AVX2(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DX
vsubInt32AVX2_loop:
	CMPQ CX, $8
	JL vsubInt32AVX2_done
	VMOVDQU (SI), Y0
	VMOVDQU (DX), Y1
	VPSUBD Y1, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP vsubInt32AVX2_loop
vsubInt32AVX2_done:
	VZEROUPPER
	RET

// func vmulInt32AVX2(n int, dst, x, y *int32)
TEXT ·vmulInt32AVX2(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DX
vmulInt32AVX2_loop:
	CMPQ CX, $8
	JL vmulInt32AVX2_done
	VMOVDQU (SI), Y0
	VMOVDQU (DX), Y1
	VPMULLD Y1, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP vmulInt32AVX2_loop
vmulInt32AVX2_done:
	VZEROUPPER
	RET

// func saddInt32AVX2(n int, dst, x *int32, v int32)
TEXT ·saddInt32AVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVL v+24(FP), AX
	MOVD AX, X1
	VPBROADCASTD X1, Y1
saddInt32AVX2_loop:
	CMPQ CX, $8
	JL saddInt32AVX2_done
	VMOVDQU (SI), Y0
	VPADDD Y1, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP saddInt32AVX2_loop
saddInt32AVX2_done:
	VZEROUPPER
	RET

// func ssubInt32AVX2(n int, dst, x *int32, v int32)
TEXT ·ssubInt32AVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVL v+24(FP), AX
	MOVD AX, X1
	VPBROADCASTD X1, Y1
ssubInt32AVX2_loop:
	CMPQ CX, $8
	JL ssubInt32AVX2_done
	VMOVDQU (SI), Y0
	VPSUBD Y1, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP ssubInt32AVX2_loop
ssubInt32AVX2_done:
	VZEROUPPER
	RET

// func smulInt32AVX2(n int, dst, x *int32, v int32)
TEXT ·smulInt32AVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVL v+24(FP), AX
	MOVD AX, X1
	VPBROADCASTD X1, Y1
smulInt32AVX2_loop:
	CMPQ CX, $8
	JL smulInt32AVX2_done
	VMOVDQU (SI), Y0
	VPMULLD Y1, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP smulInt32AVX2_loop
smulInt32AVX2_done:
	VZEROUPPER
	RET
