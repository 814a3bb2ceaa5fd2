//go:build amd64

#include "textflag.h"
#include "cols_amd64.h"

// The AVX-512 micro-kernel, reading A by rows or by columns. It computes every element of C
// with exactly the operations of the AVX2 kernels in kernel_amd64.s, in the same order: acc = 0, then one fused multiply-add
// acc = a[i,p]·b[p,j] + acc for p = 0, 1, …, k−1, then C = acc or C = C + acc. A 512-bit
// FMA lane rounds exactly as a 256-bit one does; only the number of lanes per instruction
// differs, so the results are the AVX2 kernels' bit for bit.
//
// It is a 6×32 tile over two adjacent packed B panels (the second k·16 values after
// the first): rows in Z0–Z11 (row i: Z(2i) columns 0–15, Z(2i+1) columns 16–31), B's row p
// of each panel loaded once (Z12, Z13), each A value broadcast once into Z14/Z15 and used
// by two FMAs. Twelve independent accumulators hide the FMA latency; a 6×16 zmm tile has only
// six and ran at about 72% of the AVX2 kernel's speed here (docs/avx512.md). The A value is
// broadcast into a register rather than by the FMA's embedded broadcast (.BCST), whose memory
// operand must be the last source: that would swap the multiplicands' places, and when both
// are NaNs the FMA returns the first one's payload. The AVX2 kernel's operand order (B, then
// A, in Go's operand order) is kept, so even NaN payloads match.

// ZERO6 clears Z0–Z5 (rows 0–2 of the tile).
#define ZERO6 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5

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

// ROWS32_STEP is one step of kernel6x32AVX512Rows, ao bytes into A's rows (SI: rows 0–2,
// R11: rows 3–5, R9 bytes apart) and bo bytes into B's panels (DI, BX).
#define ROWS32_STEP(ao, bo) \
	VMOVUPS bo(DI), Z12; \
	VMOVUPS bo(BX), Z13; \
	FMA32(ao(SI), Z14, Z0, Z1); \
	FMA32(ao(SI)(R9*1), Z15, Z2, Z3); \
	FMA32(ao(SI)(R9*2), Z14, Z4, Z5); \
	FMA32(ao(R11), Z15, Z6, Z7); \
	FMA32(ao(R11)(R9*1), Z14, Z8, Z9); \
	FMA32(ao(R11)(R9*2), Z15, Z10, Z11)

// COLS32_STEPB is COLS32_STEP reading B's row bo bytes past DI and BX and leaving DI and BX
// where they are (the unrolled loops move them once per four steps).
#define COLS32_STEPB(bo) \
	VMOVUPS bo(DI), Z12; \
	VMOVUPS bo(BX), Z13; \
	FMA32(0(SI), Z14, Z0, Z1); \
	FMA32(4(SI), Z15, Z2, Z3); \
	FMA32(8(SI), Z14, Z4, Z5); \
	FMA32(12(SI), Z15, Z6, Z7); \
	FMA32(16(SI), Z14, Z8, Z9); \
	FMA32(20(SI), Z15, Z10, Z11); \
	ADDQ R9, SI

// COLS32_STEP is one step p of kernel6x32AVX512Cols: rows 0–5 of A's column p (at SI) times
// B's row p of both panels (DI, BX), then SI, DI and BX move to step p+1.
#define COLS32_STEP \
	COLS32_STEPB(0); \
	ADDQ $64, DI; \
	ADDQ $64, BX

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

	CMPQ CX, $4
	JL r32loop

r32loop4: // four steps, the pointers moved once: the loop's bookkeeping had filled the issue width
	ROWS32_STEP(0, 0)
	ROWS32_STEP(4, 64)
	ROWS32_STEP(8, 128)
	ROWS32_STEP(12, 192)
	ADDQ $16, SI
	ADDQ $16, R11
	ADDQ $256, DI
	ADDQ $256, BX
	SUBQ $4, CX
	CMPQ CX, $4
	JGE r32loop4
	TESTQ CX, CX
	JLE r32done

r32loop:
	ROWS32_STEP(0, 0)
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
	COLS_PREFETCH            // R10, R11: see cols_amd64.h
	CMPQ R11, $4
	JL c32four

c32loop: // four steps that prefetch, B's pointers moved once (the last R11%4 do not prefetch)
	COLS_PREFETCH_NEXT
	COLS32_STEPB(0)
	COLS_PREFETCH_NEXT
	COLS32_STEPB(64)
	COLS_PREFETCH_NEXT
	COLS32_STEPB(128)
	COLS_PREFETCH_NEXT
	COLS32_STEPB(192)
	ADDQ $256, DI
	ADDQ $256, BX
	SUBQ $4, CX
	SUBQ $4, R11
	CMPQ R11, $4
	JGE c32loop

c32four:
	CMPQ CX, $4
	JL c32tail

c32loop4: // four steps, B's pointers moved once
	COLS32_STEPB(0)
	COLS32_STEPB(64)
	COLS32_STEPB(128)
	COLS32_STEPB(192)
	ADDQ $256, DI
	ADDQ $256, BX
	SUBQ $4, CX
	CMPQ CX, $4
	JGE c32loop4

c32tail:
	TESTQ CX, CX
	JLE c32done

c32tailloop:
	COLS32_STEP
	DECQ CX
	JNZ c32tailloop

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

