//go:build amd64

#include "textflag.h"

// AVX-512 micro-kernels. Each computes every element of C with exactly the operations of the
// AVX2 kernels in kernel_amd64.s, in the same order: acc = 0, then one fused multiply-add
// acc = a[i,p]·b[p,j] + acc for p = 0, 1, …, k−1, then C = acc or C = C + acc. A 512-bit
// FMA lane rounds exactly as a 256-bit one does; only the number of lanes per instruction
// differs, so the results are the AVX2 kernels' bit for bit.
//
// 6×16: row i of the tile is one zmm (Z0–Z5); B's row p is loaded once (Z6) and each A value
// broadcast into Z7/Z8. Not the FMA's embedded broadcast (.BCST): its memory operand must be
// the last source, which would swap the multiplicands' places, and when both are NaNs the
// FMA returns the first one's payload — the AVX2 kernel's order (B, then A, in Go's operand
// order) is kept so that even NaN payloads match.
// 6×32: the same over two adjacent packed B panels (the second k·16 values after the first),
// rows in Z0–Z11 (row i: Z(2i) columns 0–15, Z(2i+1) columns 16–31); each A value is
// broadcast once into Z14/Z15 and used by two FMAs. Twelve independent accumulators hide
// the FMA latency, which six do not on a core with two full-width FMA pipes.

// ZERO6 clears the 6×16 tile Z0–Z5.
#define ZERO6 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5

// ADD_STORE_ROW16 writes C's row (DX) = C + Zr, then advances DX by the row stride R8.
#define ADD_STORE_ROW16(r) \
	VADDPS (DX), r, r; \
	VMOVUPS r, (DX); \
	ADDQ R8, DX

// STORE_ROW16 writes C's row (DX) = Zr, then advances DX.
#define STORE_ROW16(r) \
	VMOVUPS r, (DX); \
	ADDQ R8, DX

// ADD_STORE_ROW32 writes C's 32-value row (DX) = C + (r0, r1), then advances DX.
#define ADD_STORE_ROW32(r0, r1) \
	VADDPS (DX), r0, r0; \
	VADDPS 64(DX), r1, r1; \
	VMOVUPS r0, (DX); \
	VMOVUPS r1, 64(DX); \
	ADDQ R8, DX

// STORE_ROW32 writes C's 32-value row (DX) = (r0, r1), then advances DX.
#define STORE_ROW32(r0, r1) \
	VMOVUPS r0, (DX); \
	VMOVUPS r1, 64(DX); \
	ADDQ R8, DX

// FMA32 adds row i's products for one p: Zacc0 += a·B0 (Z12), Zacc1 += a·B1 (Z13), with the
// A value a broadcast into t from addr.
#define FMA32(addr, t, acc0, acc1) \
	VBROADCASTSS addr, t; \
	VFMADD231PS Z12, t, acc0; \
	VFMADD231PS Z13, t, acc1

// func kernel6x16AVX512Rows(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
//
// kernel6x16AVX2Rows with zmm rows: A row i at a[i*lda:], k values contiguous.
TEXT ·kernel6x16AVX512Rows(SB), NOSPLIT, $0-49
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R9
	SHLQ $2, R9              // A row stride in bytes
	LEAQ (R9)(R9*2), R10
	LEAQ (SI)(R10*1), R11    // R11 = row 3
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8              // C row stride in bytes
	ZERO6
	TESTQ CX, CX
	JLE r16done

r16loop:
	VMOVUPS (DI), Z6         // B row p
	VBROADCASTSS (SI), Z7
	VFMADD231PS Z6, Z7, Z0
	VBROADCASTSS (SI)(R9*1), Z8
	VFMADD231PS Z6, Z8, Z1
	VBROADCASTSS (SI)(R9*2), Z7
	VFMADD231PS Z6, Z7, Z2
	VBROADCASTSS (R11), Z8
	VFMADD231PS Z6, Z8, Z3
	VBROADCASTSS (R11)(R9*1), Z7
	VFMADD231PS Z6, Z7, Z4
	VBROADCASTSS (R11)(R9*2), Z8
	VFMADD231PS Z6, Z8, Z5
	ADDQ $4, SI
	ADDQ $4, R11
	ADDQ $64, DI
	DECQ CX
	JNZ r16loop

r16done:
	MOVBLZX accumulate+48(FP), AX
	TESTQ AX, AX
	JZ r16over
	ADD_STORE_ROW16(Z0)
	ADD_STORE_ROW16(Z1)
	ADD_STORE_ROW16(Z2)
	ADD_STORE_ROW16(Z3)
	ADD_STORE_ROW16(Z4)
	ADD_STORE_ROW16(Z5)
	VZEROUPPER
	RET

r16over:
	STORE_ROW16(Z0)
	STORE_ROW16(Z1)
	STORE_ROW16(Z2)
	STORE_ROW16(Z3)
	STORE_ROW16(Z4)
	STORE_ROW16(Z5)
	VZEROUPPER
	RET

// func kernel6x16AVX512Cols(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
//
// kernel6x16AVX2Cols with zmm rows: A column p at a[p*lda:] (lda = 6: a packed panel).
TEXT ·kernel6x16AVX512Cols(SB), NOSPLIT, $0-49
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R9
	SHLQ $2, R9              // A column stride in bytes
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	ZERO6
	TESTQ CX, CX
	JLE c16done

c16loop:
	VMOVUPS (DI), Z6
	VBROADCASTSS 0(SI), Z7
	VFMADD231PS Z6, Z7, Z0
	VBROADCASTSS 4(SI), Z8
	VFMADD231PS Z6, Z8, Z1
	VBROADCASTSS 8(SI), Z7
	VFMADD231PS Z6, Z7, Z2
	VBROADCASTSS 12(SI), Z8
	VFMADD231PS Z6, Z8, Z3
	VBROADCASTSS 16(SI), Z7
	VFMADD231PS Z6, Z7, Z4
	VBROADCASTSS 20(SI), Z8
	VFMADD231PS Z6, Z8, Z5
	ADDQ R9, SI
	ADDQ $64, DI
	DECQ CX
	JNZ c16loop

c16done:
	MOVBLZX accumulate+48(FP), AX
	TESTQ AX, AX
	JZ c16over
	ADD_STORE_ROW16(Z0)
	ADD_STORE_ROW16(Z1)
	ADD_STORE_ROW16(Z2)
	ADD_STORE_ROW16(Z3)
	ADD_STORE_ROW16(Z4)
	ADD_STORE_ROW16(Z5)
	VZEROUPPER
	RET

c16over:
	STORE_ROW16(Z0)
	STORE_ROW16(Z1)
	STORE_ROW16(Z2)
	STORE_ROW16(Z3)
	STORE_ROW16(Z4)
	STORE_ROW16(Z5)
	VZEROUPPER
	RET

// ADD_STORE32 writes C += tile over Z0–Z11 (rows R8 bytes apart).
#define ADD_STORE32 \
	ADD_STORE_ROW32(Z0, Z1); \
	ADD_STORE_ROW32(Z2, Z3); \
	ADD_STORE_ROW32(Z4, Z5); \
	ADD_STORE_ROW32(Z6, Z7); \
	ADD_STORE_ROW32(Z8, Z9); \
	ADD_STORE_ROW32(Z10, Z11)

// STORE32 writes C = tile over Z0–Z11.
#define STORE32 \
	STORE_ROW32(Z0, Z1); \
	STORE_ROW32(Z2, Z3); \
	STORE_ROW32(Z4, Z5); \
	STORE_ROW32(Z6, Z7); \
	STORE_ROW32(Z8, Z9); \
	STORE_ROW32(Z10, Z11)

// ZERO12 clears the 6×32 tile Z0–Z11.
#define ZERO12 \
	ZERO6; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11

// func kernel6x32AVX512Rows(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
//
// Two 6×16 tiles side by side: B's packed panels at b and b + k·16 (columns 0–15 and 16–31
// of C), A row i at a[i*lda:]; each column's elements as kernel6x16AVX2Rows computes them.
TEXT ·kernel6x32AVX512Rows(SB), NOSPLIT, $0-49
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R9
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	LEAQ (SI)(R10*1), R11    // R11 = row 3
	MOVQ b+24(FP), DI
	MOVQ CX, BX
	SHLQ $6, BX
	ADDQ DI, BX              // BX = second panel, k·16 values on
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	ZERO12
	TESTQ CX, CX
	JLE r32done

r32loop:
	VMOVUPS (DI), Z12        // B row p, columns 0–15
	VMOVUPS (BX), Z13        // columns 16–31
	FMA32((SI), Z14, Z0, Z1)
	FMA32((SI)(R9*1), Z15, Z2, Z3)
	FMA32((SI)(R9*2), Z14, Z4, Z5)
	FMA32((R11), Z15, Z6, Z7)
	FMA32((R11)(R9*1), Z14, Z8, Z9)
	FMA32((R11)(R9*2), Z15, Z10, Z11)
	ADDQ $4, SI
	ADDQ $4, R11
	ADDQ $64, DI
	ADDQ $64, BX
	DECQ CX
	JNZ r32loop

r32done:
	MOVBLZX accumulate+48(FP), AX
	TESTQ AX, AX
	JZ r32over
	ADD_STORE32
	VZEROUPPER
	RET

r32over:
	STORE32
	VZEROUPPER
	RET

// func kernel6x32AVX512Cols(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
//
// kernel6x32AVX512Rows reading A's column p at a[p*lda:] (lda = 6: a packed panel).
TEXT ·kernel6x32AVX512Cols(SB), NOSPLIT, $0-49
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R9
	SHLQ $2, R9
	MOVQ b+24(FP), DI
	MOVQ CX, BX
	SHLQ $6, BX
	ADDQ DI, BX              // BX = second panel
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	ZERO12
	TESTQ CX, CX
	JLE c32done

c32loop:
	VMOVUPS (DI), Z12
	VMOVUPS (BX), Z13
	FMA32(0(SI), Z14, Z0, Z1)
	FMA32(4(SI), Z15, Z2, Z3)
	FMA32(8(SI), Z14, Z4, Z5)
	FMA32(12(SI), Z15, Z6, Z7)
	FMA32(16(SI), Z14, Z8, Z9)
	FMA32(20(SI), Z15, Z10, Z11)
	ADDQ R9, SI
	ADDQ $64, DI
	ADDQ $64, BX
	DECQ CX
	JNZ c32loop

c32done:
	MOVBLZX accumulate+48(FP), AX
	TESTQ AX, AX
	JZ c32over
	ADD_STORE32
	VZEROUPPER
	RET

c32over:
	STORE32
	VZEROUPPER
	RET

// 6×64: four adjacent packed B panels (at b + q·k·16 values, q = 0…3) into Z24–Z27, rows of
// the tile in Z0–Z23 (row i: Z(4i)…Z(4i+3), columns 16q…16q+15), each A value broadcast once
// into Z28/Z29 and used by four FMAs. Registers Z16–Z31 have no upper-state penalty, so the
// VZEROUPPER at the end is as for the other kernels.

// FMA64 adds row i's products for one p: acc_q += a·B_q for q = 0…3, a broadcast into t.
#define FMA64(addr, t, acc0, acc1, acc2, acc3) \
	VBROADCASTSS addr, t; \
	VFMADD231PS Z24, t, acc0; \
	VFMADD231PS Z25, t, acc1; \
	VFMADD231PS Z26, t, acc2; \
	VFMADD231PS Z27, t, acc3

// LOAD_B64 loads B's row p of the four panels (DI, DI+BX, DI+2·BX, DI+R12 with BX the
// panel size in bytes and R12 = 3·BX) and advances DI to row p+1.
#define LOAD_B64 \
	VMOVUPS (DI), Z24; \
	VMOVUPS (DI)(BX*1), Z25; \
	VMOVUPS (DI)(BX*2), Z26; \
	VMOVUPS (DI)(R12*1), Z27; \
	ADDQ $64, DI

// ADD_STORE_ROW64 writes C's 64-value row (DX) = C + (r0…r3), then advances DX.
#define ADD_STORE_ROW64(r0, r1, r2, r3) \
	VADDPS (DX), r0, r0; \
	VADDPS 64(DX), r1, r1; \
	VADDPS 128(DX), r2, r2; \
	VADDPS 192(DX), r3, r3; \
	VMOVUPS r0, (DX); \
	VMOVUPS r1, 64(DX); \
	VMOVUPS r2, 128(DX); \
	VMOVUPS r3, 192(DX); \
	ADDQ R8, DX

// STORE_ROW64 writes C's 64-value row (DX) = (r0…r3), then advances DX.
#define STORE_ROW64(r0, r1, r2, r3) \
	VMOVUPS r0, (DX); \
	VMOVUPS r1, 64(DX); \
	VMOVUPS r2, 128(DX); \
	VMOVUPS r3, 192(DX); \
	ADDQ R8, DX

// ZERO24 clears the 6×64 tile Z0–Z23.
#define ZERO24 \
	ZERO12; \
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

// ADD_STORE64 writes C += tile over Z0–Z23 (rows R8 bytes apart).
#define ADD_STORE64 \
	ADD_STORE_ROW64(Z0, Z1, Z2, Z3); \
	ADD_STORE_ROW64(Z4, Z5, Z6, Z7); \
	ADD_STORE_ROW64(Z8, Z9, Z10, Z11); \
	ADD_STORE_ROW64(Z12, Z13, Z14, Z15); \
	ADD_STORE_ROW64(Z16, Z17, Z18, Z19); \
	ADD_STORE_ROW64(Z20, Z21, Z22, Z23)

// STORE64 writes C = tile over Z0–Z23.
#define STORE64 \
	STORE_ROW64(Z0, Z1, Z2, Z3); \
	STORE_ROW64(Z4, Z5, Z6, Z7); \
	STORE_ROW64(Z8, Z9, Z10, Z11); \
	STORE_ROW64(Z12, Z13, Z14, Z15); \
	STORE_ROW64(Z16, Z17, Z18, Z19); \
	STORE_ROW64(Z20, Z21, Z22, Z23)

// func kernel6x64AVX512Rows(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
//
// Four 6×16 tiles side by side: B's packed panels at b + q·k·16 (columns 16q…16q+15 of C),
// A row i at a[i*lda:]; each column's elements as kernel6x16AVX2Rows computes them.
TEXT ·kernel6x64AVX512Rows(SB), NOSPLIT, $0-49
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R9
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	LEAQ (SI)(R10*1), R11    // R11 = row 3
	MOVQ b+24(FP), DI
	MOVQ CX, BX
	SHLQ $6, BX              // BX = panel size in bytes (k·16 values)
	LEAQ (BX)(BX*2), R12     // R12 = 3 panels
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	ZERO24
	TESTQ CX, CX
	JLE r64done

r64loop:
	LOAD_B64
	FMA64((SI), Z28, Z0, Z1, Z2, Z3)
	FMA64((SI)(R9*1), Z29, Z4, Z5, Z6, Z7)
	FMA64((SI)(R9*2), Z28, Z8, Z9, Z10, Z11)
	FMA64((R11), Z29, Z12, Z13, Z14, Z15)
	FMA64((R11)(R9*1), Z28, Z16, Z17, Z18, Z19)
	FMA64((R11)(R9*2), Z29, Z20, Z21, Z22, Z23)
	ADDQ $4, SI
	ADDQ $4, R11
	DECQ CX
	JNZ r64loop

r64done:
	MOVBLZX accumulate+48(FP), AX
	TESTQ AX, AX
	JZ r64over
	ADD_STORE64
	VZEROUPPER
	RET

r64over:
	STORE64
	VZEROUPPER
	RET

// func kernel6x64AVX512Cols(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
//
// kernel6x64AVX512Rows reading A's column p at a[p*lda:] (lda = 6: a packed panel).
TEXT ·kernel6x64AVX512Cols(SB), NOSPLIT, $0-49
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R9
	SHLQ $2, R9
	MOVQ b+24(FP), DI
	MOVQ CX, BX
	SHLQ $6, BX
	LEAQ (BX)(BX*2), R12
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	ZERO24
	TESTQ CX, CX
	JLE c64done

c64loop:
	LOAD_B64
	FMA64(0(SI), Z28, Z0, Z1, Z2, Z3)
	FMA64(4(SI), Z29, Z4, Z5, Z6, Z7)
	FMA64(8(SI), Z28, Z8, Z9, Z10, Z11)
	FMA64(12(SI), Z29, Z12, Z13, Z14, Z15)
	FMA64(16(SI), Z28, Z16, Z17, Z18, Z19)
	FMA64(20(SI), Z29, Z20, Z21, Z22, Z23)
	ADDQ R9, SI
	DECQ CX
	JNZ c64loop

c64done:
	MOVBLZX accumulate+48(FP), AX
	TESTQ AX, AX
	JZ c64over
	ADD_STORE64
	VZEROUPPER
	RET

c64over:
	STORE64
	VZEROUPPER
	RET
