//go:build amd64

#include "textflag.h"

// The AVX-512 "tall" kernels: a 24×16 or 25×16 tile of C = A·B for A read by columns in
// place (A[i, p] at a[p*lda + i]) and B read by rows in place (B[p, j] at b[p*ldb + j]), for
// weight gradients (C = Xᵀ·dZ), whose A (the layer input, transposed) has few rows and a
// long reduction axis. Row i of the tile is one zmm accumulator (Z0–Z24), B's row p is loaded
// once (Z25) and each A value is broadcast into one of six rotating registers (Z26–Z31), so a
// step p is one load of B, 24 or 25 broadcasts and as many fused multiply-adds: no packed
// copy of either operand, and the accumulators cover the FMA latency many times over. Each
// step prefetches A's column (both cache lines it may span) and B's row 32 steps ahead: a
// weight gradient's columns of A lie a whole im2col row apart (3,200 bytes for cnn4's conv2),
// further than the hardware prefetchers follow.
//
// Every element is computed with the operations of the kernels in kernel_amd64.s and
// kernel512_amd64.s, in their order: acc = 0, then acc = a[i,p]·b[p,j] + acc for p = 0, 1, …,
// k−1 (the A value in the FMA's first multiplicand, B's in the second, as theirs, so even NaN
// payloads match), then C = acc or C = C + acc (the accumulator the addition's first operand,
// except in the row other paths compute as a ragged edge: TALL_ADD_EDGE_ROW).

// TALL_FMA broadcasts A's value at addr into t and adds its product with B's row (Z25) to acc.
#define TALL_FMA(addr, t, acc) \
	VBROADCASTSS addr, t; \
	VFMADD231PS Z25, t, acc

// TALL_STEP24 is one step p over rows 0–23: A's column p at SI, B's row p at DI.
#define TALL_STEP24 \
	VMOVUPS (DI), Z25; \
	TALL_FMA(0(SI), Z26, Z0); \
	TALL_FMA(4(SI), Z27, Z1); \
	TALL_FMA(8(SI), Z28, Z2); \
	TALL_FMA(12(SI), Z29, Z3); \
	TALL_FMA(16(SI), Z30, Z4); \
	TALL_FMA(20(SI), Z31, Z5); \
	TALL_FMA(24(SI), Z26, Z6); \
	TALL_FMA(28(SI), Z27, Z7); \
	TALL_FMA(32(SI), Z28, Z8); \
	TALL_FMA(36(SI), Z29, Z9); \
	TALL_FMA(40(SI), Z30, Z10); \
	TALL_FMA(44(SI), Z31, Z11); \
	TALL_FMA(48(SI), Z26, Z12); \
	TALL_FMA(52(SI), Z27, Z13); \
	TALL_FMA(56(SI), Z28, Z14); \
	TALL_FMA(60(SI), Z29, Z15); \
	TALL_FMA(64(SI), Z30, Z16); \
	TALL_FMA(68(SI), Z31, Z17); \
	TALL_FMA(72(SI), Z26, Z18); \
	TALL_FMA(76(SI), Z27, Z19); \
	TALL_FMA(80(SI), Z28, Z20); \
	TALL_FMA(84(SI), Z29, Z21); \
	TALL_FMA(88(SI), Z30, Z22); \
	TALL_FMA(92(SI), Z31, Z23)

// TALL_ZERO24 clears the accumulators of rows 0–23.
#define TALL_ZERO24 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23

// TALL_ADD_ROW writes C's 16-value row (DX) = C + acc, then moves DX to the next row.
#define TALL_ADD_ROW(acc) \
	VADDPS (DX), acc, acc; \
	VMOVUPS acc, (DX); \
	ADDQ R8, DX

// TALL_ADD_EDGE_ROW is TALL_ADD_ROW with C the addition's first operand, as the other paths
// add the ragged last rows of a product (see edge.go), so that a NaN in both C and acc gives
// the same payload there.
#define TALL_ADD_EDGE_ROW(acc) \
	VMOVUPS (DX), Z25; \
	VADDPS acc, Z25, Z25; \
	VMOVUPS Z25, (DX); \
	ADDQ R8, DX

// TALL_STORE_ROW writes C's 16-value row (DX) = acc, then moves DX to the next row.
#define TALL_STORE_ROW(acc) \
	VMOVUPS acc, (DX); \
	ADDQ R8, DX

// TALL_ROWS24(op) applies op to the accumulators of rows 0–23 in order.
#define TALL_ROWS24(op) \
	op(Z0); op(Z1); op(Z2); op(Z3); op(Z4); op(Z5); op(Z6); op(Z7); \
	op(Z8); op(Z9); op(Z10); op(Z11); op(Z12); op(Z13); op(Z14); op(Z15); \
	op(Z16); op(Z17); op(Z18); op(Z19); op(Z20); op(Z21); op(Z22); op(Z23)

// TALL_ARGS loads the arguments: CX = k, SI = a, R9 = lda in bytes, DI = b, R10 = ldb in
// bytes, DX = c, R8 = ldc in bytes; R11 and R12 = 32 steps of A and of B in bytes (how far
// ahead the loops prefetch).
#define TALL_ARGS \
	MOVQ k+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ lda+16(FP), R9; \
	SHLQ $2, R9; \
	MOVQ b+24(FP), DI; \
	MOVQ ldb+32(FP), R10; \
	SHLQ $2, R10; \
	MOVQ c+40(FP), DX; \
	MOVQ ldc+48(FP), R8; \
	SHLQ $2, R8; \
	MOVQ R9, R11; \
	SHLQ $5, R11; \
	MOVQ R10, R12; \
	SHLQ $5, R12

// func kernel24x16AVX512Tall(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, accumulate bool)
TEXT ·kernel24x16AVX512Tall(SB), NOSPLIT, $0-57
	TALL_ARGS
	TALL_ZERO24
	TESTQ CX, CX
	JLE t24done

t24loop:
	PREFETCHT0 (SI)(R11*1)
	PREFETCHT0 64(SI)(R11*1)
	PREFETCHT0 (DI)(R12*1)
	TALL_STEP24
	ADDQ R9, SI
	ADDQ R10, DI
	DECQ CX
	JNZ t24loop

t24done:
	MOVBLZX accumulate+56(FP), AX
	TESTQ AX, AX
	JZ t24over
	TALL_ROWS24(TALL_ADD_ROW)
	VZEROUPPER
	RET

t24over:
	TALL_ROWS24(TALL_STORE_ROW)
	VZEROUPPER
	RET

// func kernel25x16AVX512Tall(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, accumulate bool)
//
// kernel24x16AVX512Tall with a 25th row (Z24): a convolution over one channel with a 5×5
// kernel has 25 weights per output channel. The 25th row is the ragged last row of the
// product's 6-row panels elsewhere (25 = 4·6 + 1), so it is added into C as they add it.
TEXT ·kernel25x16AVX512Tall(SB), NOSPLIT, $0-57
	TALL_ARGS
	TALL_ZERO24
	VPXORD Z24, Z24, Z24
	TESTQ CX, CX
	JLE t25done

t25loop:
	PREFETCHT0 (SI)(R11*1)
	PREFETCHT0 64(SI)(R11*1)
	PREFETCHT0 (DI)(R12*1)
	TALL_STEP24
	TALL_FMA(96(SI), Z26, Z24)
	ADDQ R9, SI
	ADDQ R10, DI
	DECQ CX
	JNZ t25loop

t25done:
	MOVBLZX accumulate+56(FP), AX
	TESTQ AX, AX
	JZ t25over
	TALL_ROWS24(TALL_ADD_ROW)
	TALL_ADD_EDGE_ROW(Z24)
	VZEROUPPER
	RET

t25over:
	TALL_ROWS24(TALL_STORE_ROW)
	TALL_STORE_ROW(Z24)
	VZEROUPPER
	RET

// The AVX2 tall kernels: a 12×8 or 13×8 tile (rows in Y0–Y12, one ymm accumulator each; B's
// row p in Y13; A values broadcast into Y14/Y15 in turn), with the operations of the AVX-512
// tall kernels above, for CPUs without AVX-512 (kernelTall runs two or four of them per 24- or
// 25-row, 16-column tile). The 13-row kernel's last row is the ragged edge of the 6-row path
// (25 = 4·6 + 1) and is added into C with C first, as that path adds it.

// TALL8_FMA broadcasts A's value at addr into t and adds its product with B's row (Y13) to acc.
#define TALL8_FMA(addr, t, acc) \
	VBROADCASTSS addr, t; \
	VFMADD231PS Y13, t, acc

// TALL8_STEP12 is one step p over rows 0–11: A's column p at SI, B's row p at DI.
#define TALL8_STEP12 \
	VMOVUPS (DI), Y13; \
	TALL8_FMA(0(SI), Y14, Y0); \
	TALL8_FMA(4(SI), Y15, Y1); \
	TALL8_FMA(8(SI), Y14, Y2); \
	TALL8_FMA(12(SI), Y15, Y3); \
	TALL8_FMA(16(SI), Y14, Y4); \
	TALL8_FMA(20(SI), Y15, Y5); \
	TALL8_FMA(24(SI), Y14, Y6); \
	TALL8_FMA(28(SI), Y15, Y7); \
	TALL8_FMA(32(SI), Y14, Y8); \
	TALL8_FMA(36(SI), Y15, Y9); \
	TALL8_FMA(40(SI), Y14, Y10); \
	TALL8_FMA(44(SI), Y15, Y11)

// TALL8_ZERO12 clears the accumulators of rows 0–11.
#define TALL8_ZERO12 \
	VXORPS Y0, Y0, Y0; VXORPS Y1, Y1, Y1; VXORPS Y2, Y2, Y2; VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; VXORPS Y5, Y5, Y5; VXORPS Y6, Y6, Y6; VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; VXORPS Y9, Y9, Y9; VXORPS Y10, Y10, Y10; VXORPS Y11, Y11, Y11

// TALL8_ROWS12(op) applies op to the accumulators of rows 0–11 in order.
#define TALL8_ROWS12(op) \
	op(Y0); op(Y1); op(Y2); op(Y3); op(Y4); op(Y5); \
	op(Y6); op(Y7); op(Y8); op(Y9); op(Y10); op(Y11)

// TALL8_ADD_ROW writes C's 8-value row (DX) = C + acc (acc the first operand), then moves DX on.
#define TALL8_ADD_ROW(acc) \
	VADDPS (DX), acc, acc; \
	VMOVUPS acc, (DX); \
	ADDQ R8, DX

// TALL8_ADD_EDGE_ROW is TALL8_ADD_ROW with C the first operand (see TALL_ADD_EDGE_ROW).
#define TALL8_ADD_EDGE_ROW(acc) \
	VMOVUPS (DX), Y13; \
	VADDPS acc, Y13, Y13; \
	VMOVUPS Y13, (DX); \
	ADDQ R8, DX

// TALL8_STORE_ROW writes C's 8-value row (DX) = acc, then moves DX on.
#define TALL8_STORE_ROW(acc) \
	VMOVUPS acc, (DX); \
	ADDQ R8, DX

// func kernel12x8AVX2Tall(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, accumulate bool)
TEXT ·kernel12x8AVX2Tall(SB), NOSPLIT, $0-57
	TALL_ARGS
	TALL8_ZERO12
	TESTQ CX, CX
	JLE a12done

a12loop:
	PREFETCHT0 (SI)(R11*1)
	PREFETCHT0 (DI)(R12*1)
	TALL8_STEP12
	ADDQ R9, SI
	ADDQ R10, DI
	DECQ CX
	JNZ a12loop

a12done:
	MOVBLZX accumulate+56(FP), AX
	TESTQ AX, AX
	JZ a12over
	TALL8_ROWS12(TALL8_ADD_ROW)
	VZEROUPPER
	RET

a12over:
	TALL8_ROWS12(TALL8_STORE_ROW)
	VZEROUPPER
	RET

// func kernel13x8AVX2Tall(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, accumulate bool)
TEXT ·kernel13x8AVX2Tall(SB), NOSPLIT, $0-57
	TALL_ARGS
	TALL8_ZERO12
	VXORPS Y12, Y12, Y12
	TESTQ CX, CX
	JLE a13done

a13loop:
	PREFETCHT0 (SI)(R11*1)
	PREFETCHT0 (DI)(R12*1)
	TALL8_STEP12
	TALL8_FMA(48(SI), Y14, Y12)
	ADDQ R9, SI
	ADDQ R10, DI
	DECQ CX
	JNZ a13loop

a13done:
	MOVBLZX accumulate+56(FP), AX
	TESTQ AX, AX
	JZ a13over
	TALL8_ROWS12(TALL8_ADD_ROW)
	TALL8_ADD_EDGE_ROW(Y12)
	VZEROUPPER
	RET

a13over:
	TALL8_ROWS12(TALL8_STORE_ROW)
	TALL8_STORE_ROW(Y12)
	VZEROUPPER
	RET
