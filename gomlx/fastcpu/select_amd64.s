//go:build amd64

#include "textflag.h"

// Comparisons and selections for ReLU's gradient mask, 8 lanes at a time over n values (n a
// multiple of 8). An operand pointer advances by its step in bytes per 8 values: 32 for a
// vector, 0 for a scalar held as 8 copies. They compute what the Go loops of
// elementwise.go compute, bit for bit: an ordered comparison is false when either side is
// NaN and +0 equals -0, as Go's > and ==; a selection copies the chosen value's bits.
// gtAVX2 and eqAVX2 differ in VCMPPS's predicate alone, written out: a #define cannot give
// each its own labels.

// func gtAVX2(n int, dst *bool, x *float32, xstep int, y *float32, ystep int)
// dst[i] = x[i] > y[i].
TEXT ·gtAVX2(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ xstep+24(FP), R9
	MOVQ y+32(FP), DX
	MOVQ ystep+40(FP), R10
	MOVQ $0x0101010101010101, R8
gtAVX2_loop:
	CMPQ CX, $8
	JL gtAVX2_done
	VMOVUPS (SI), Y0
	VMOVUPS (DX), Y1
	VCMPPS $0x1e, Y1, Y0, Y2 // GT_OQ: Y0 > Y1, false on NaN
	VMOVMSKPS Y2, AX
	PDEPQ R8, AX, BX // bit i of the mask to byte i (0 or 1)
	MOVQ BX, (DI)
	ADDQ R9, SI
	ADDQ R10, DX
	ADDQ $8, DI
	SUBQ $8, CX
	JMP gtAVX2_loop
gtAVX2_done:
	VZEROUPPER
	RET

// func eqAVX2(n int, dst *bool, x *float32, xstep int, y *float32, ystep int)
// dst[i] = x[i] == y[i].
TEXT ·eqAVX2(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ xstep+24(FP), R9
	MOVQ y+32(FP), DX
	MOVQ ystep+40(FP), R10
	MOVQ $0x0101010101010101, R8
eqAVX2_loop:
	CMPQ CX, $8
	JL eqAVX2_done
	VMOVUPS (SI), Y0
	VMOVUPS (DX), Y1
	VCMPPS $0x00, Y1, Y0, Y2 // EQ_OQ: false on NaN, +0 == -0
	VMOVMSKPS Y2, AX
	PDEPQ R8, AX, BX
	MOVQ BX, (DI)
	ADDQ R9, SI
	ADDQ R10, DX
	ADDQ $8, DI
	SUBQ $8, CX
	JMP eqAVX2_loop
eqAVX2_done:
	VZEROUPPER
	RET

// func selAVX2(n int, dst *float32, cond *bool, t *float32, tstep int, f *float32, fstep int)
// dst[i] = t[i] where cond[i]&1, else f[i]. The condition byte shifted left by 31 puts its
// bit 0 in the sign bit, which VBLENDVPS selects on.
TEXT ·selAVX2(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ cond+16(FP), BX
	MOVQ t+24(FP), SI
	MOVQ tstep+32(FP), R9
	MOVQ f+40(FP), DX
	MOVQ fstep+48(FP), R10
selAVX2_loop:
	CMPQ CX, $8
	JL selAVX2_done
	VPMOVZXBD (BX), Y2
	VPSLLD $31, Y2, Y2
	VMOVUPS (SI), Y0
	VMOVUPS (DX), Y1
	VBLENDVPS Y2, Y0, Y1, Y3 // sign of Y2 set: Y0 (t), else Y1 (f)
	VMOVUPS Y3, (DI)
	ADDQ $8, BX
	ADDQ R9, SI
	ADDQ R10, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP selAVX2_loop
selAVX2_done:
	VZEROUPPER
	RET
