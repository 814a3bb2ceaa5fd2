//go:build amd64

#include "textflag.h"

// Elementwise float32 arithmetic, 8 lanes at a time, over n values (n a multiple of 8):
// the same IEEE single-precision operations as the Go loops of binary.go, so the same
// results bit for bit. Names: v = two vectors, s = vector op scalar, r = scalar op vector.
// The nine loops share one shape, written out: a #define cannot give each its own labels.

// func vaddAVX2(n int, dst, x, y *float32)
TEXT ·vaddAVX2(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DX
vaddAVX2_loop:
	CMPQ CX, $8
	JL vaddAVX2_done
	VMOVUPS (SI), Y0
	VADDPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP vaddAVX2_loop
vaddAVX2_done:
	VZEROUPPER
	RET

// func vsubAVX2(n int, dst, x, y *float32)
TEXT ·vsubAVX2(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DX
vsubAVX2_loop:
	CMPQ CX, $8
	JL vsubAVX2_done
	VMOVUPS (SI), Y0
	VSUBPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP vsubAVX2_loop
vsubAVX2_done:
	VZEROUPPER
	RET

// func vmulAVX2(n int, dst, x, y *float32)
TEXT ·vmulAVX2(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DX
vmulAVX2_loop:
	CMPQ CX, $8
	JL vmulAVX2_done
	VMOVUPS (SI), Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP vmulAVX2_loop
vmulAVX2_done:
	VZEROUPPER
	RET

// func saddAVX2(n int, dst, x *float32, v float32)
TEXT ·saddAVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	VBROADCASTSS v+24(FP), Y1
saddAVX2_loop:
	CMPQ CX, $8
	JL saddAVX2_done
	VMOVUPS (SI), Y0
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP saddAVX2_loop
saddAVX2_done:
	VZEROUPPER
	RET

// func ssubAVX2(n int, dst, x *float32, v float32)
TEXT ·ssubAVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	VBROADCASTSS v+24(FP), Y1
ssubAVX2_loop:
	CMPQ CX, $8
	JL ssubAVX2_done
	VMOVUPS (SI), Y0
	VSUBPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP ssubAVX2_loop
ssubAVX2_done:
	VZEROUPPER
	RET

// func smulAVX2(n int, dst, x *float32, v float32)
TEXT ·smulAVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	VBROADCASTSS v+24(FP), Y1
smulAVX2_loop:
	CMPQ CX, $8
	JL smulAVX2_done
	VMOVUPS (SI), Y0
	VMULPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP smulAVX2_loop
smulAVX2_done:
	VZEROUPPER
	RET

// func raddAVX2(n int, dst, x *float32, v float32)
TEXT ·raddAVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	VBROADCASTSS v+24(FP), Y1
raddAVX2_loop:
	CMPQ CX, $8
	JL raddAVX2_done
	VMOVUPS (SI), Y0
	VADDPS Y0, Y1, Y2
	VMOVUPS Y2, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP raddAVX2_loop
raddAVX2_done:
	VZEROUPPER
	RET

// func rsubAVX2(n int, dst, x *float32, v float32)
TEXT ·rsubAVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	VBROADCASTSS v+24(FP), Y1
rsubAVX2_loop:
	CMPQ CX, $8
	JL rsubAVX2_done
	VMOVUPS (SI), Y0
	VSUBPS Y0, Y1, Y2
	VMOVUPS Y2, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP rsubAVX2_loop
rsubAVX2_done:
	VZEROUPPER
	RET

// func rmulAVX2(n int, dst, x *float32, v float32)
TEXT ·rmulAVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	VBROADCASTSS v+24(FP), Y1
rmulAVX2_loop:
	CMPQ CX, $8
	JL rmulAVX2_done
	VMOVUPS (SI), Y0
	VMULPS Y0, Y1, Y2
	VMOVUPS Y2, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP rmulAVX2_loop
rmulAVX2_done:
	VZEROUPPER
	RET

// func sumRowsAVX2(rows, n int, dst, src *float32, stride int)
//
// For r in [0, rows) in order, j in [0, n) (n a multiple of 8): dst[j] = src[r*stride+j] +
// dst[j], each sum with the row's value as the first operand, as accumulate's. Columns go
// in blocks of 32 (then 8) held in registers across all the rows: the same additions in
// the same order as adding the rows one by one, without storing the partial sums. stride
// is in elements; rows ≥ 1.
TEXT ·sumRowsAVX2(SB), NOSPLIT, $0-40
	MOVQ rows+0(FP), R8
	MOVQ n+8(FP), CX
	MOVQ dst+16(FP), DI
	MOVQ src+24(FP), SI
	MOVQ stride+32(FP), R9
	SHLQ $2, R9              // row stride in bytes

sumRows_block32:
	CMPQ CX, $32
	JL sumRows_block8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	MOVQ SI, DX
	MOVQ R8, BX
sumRows_loop32:
	VMOVUPS (DX), Y4
	VADDPS Y0, Y4, Y0
	VMOVUPS 32(DX), Y5
	VADDPS Y1, Y5, Y1
	VMOVUPS 64(DX), Y6
	VADDPS Y2, Y6, Y2
	VMOVUPS 96(DX), Y7
	VADDPS Y3, Y7, Y3
	ADDQ R9, DX
	DECQ BX
	JNZ sumRows_loop32
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, SI
	SUBQ $32, CX
	JMP sumRows_block32

sumRows_block8:
	CMPQ CX, $8
	JL sumRows_done
	VMOVUPS (DI), Y0
	MOVQ SI, DX
	MOVQ R8, BX
sumRows_loop8:
	VMOVUPS (DX), Y4
	VADDPS Y0, Y4, Y0
	ADDQ R9, DX
	DECQ BX
	JNZ sumRows_loop8
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $8, CX
	JMP sumRows_block8

sumRows_done:
	VZEROUPPER
	RET

// func vmaxAVX2(n int, dst, x, y *float32)
//
// dst[i] = max(x[i], y[i]) (Go's builtin) for i in [0, n), n a multiple of 8: the
// instructions Go compiles max of two float32 values to, 8 lanes at a time, so the same bits
// whatever the operands (NaN payloads and signed zeros included): with a = -x and b = -y,
// m = (a < b ? a : b), r = (m < a ? m : a), result -(m | r).
TEXT ·vmaxAVX2(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DX
	MOVL $0x80000000, AX
	MOVL AX, X7
	VBROADCASTSS X7, Y7
vmaxAVX2_loop:
	CMPQ CX, $8
	JL vmaxAVX2_done
	VXORPS (SI), Y7, Y0
	VXORPS (DX), Y7, Y2
	VMINPS Y2, Y0, Y1
	VMINPS Y0, Y1, Y3
	VORPS Y1, Y3, Y3
	VXORPS Y7, Y3, Y3
	VMOVUPS Y3, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP vmaxAVX2_loop
vmaxAVX2_done:
	VZEROUPPER
	RET

// func smaxAVX2(n int, dst, x *float32, v float32)
//
// dst[i] = max(x[i], v), as vmaxAVX2 with y[i] = v.
TEXT ·smaxAVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVL $0x80000000, AX
	MOVL AX, X7
	VBROADCASTSS X7, Y7
	VBROADCASTSS v+24(FP), Y2
	VXORPS Y7, Y2, Y2
smaxAVX2_loop:
	CMPQ CX, $8
	JL smaxAVX2_done
	VXORPS (SI), Y7, Y0
	VMINPS Y2, Y0, Y1
	VMINPS Y0, Y1, Y3
	VORPS Y1, Y3, Y3
	VXORPS Y7, Y3, Y3
	VMOVUPS Y3, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP smaxAVX2_loop
smaxAVX2_done:
	VZEROUPPER
	RET
