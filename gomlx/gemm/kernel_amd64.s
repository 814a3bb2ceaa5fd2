//go:build amd64

#include "textflag.h"
#include "cols_amd64.h"

// ZERO_TILE clears the 6×16 accumulator tile Y0–Y11.
#define ZERO_TILE \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

// The 6×16 accumulator tile Y0–Y11 written to C (DX, row stride R8 bytes): added to what C
// holds, or stored over it. Each row ends with DX advanced to the next.
#define ADD_STORE_TILE \
	VADDPS (DX), Y0, Y0; \
	VADDPS 32(DX), Y1, Y1; \
	VMOVUPS Y0, (DX); \
	VMOVUPS Y1, 32(DX); \
	ADDQ R8, DX; \
	VADDPS (DX), Y2, Y2; \
	VADDPS 32(DX), Y3, Y3; \
	VMOVUPS Y2, (DX); \
	VMOVUPS Y3, 32(DX); \
	ADDQ R8, DX; \
	VADDPS (DX), Y4, Y4; \
	VADDPS 32(DX), Y5, Y5; \
	VMOVUPS Y4, (DX); \
	VMOVUPS Y5, 32(DX); \
	ADDQ R8, DX; \
	VADDPS (DX), Y6, Y6; \
	VADDPS 32(DX), Y7, Y7; \
	VMOVUPS Y6, (DX); \
	VMOVUPS Y7, 32(DX); \
	ADDQ R8, DX; \
	VADDPS (DX), Y8, Y8; \
	VADDPS 32(DX), Y9, Y9; \
	VMOVUPS Y8, (DX); \
	VMOVUPS Y9, 32(DX); \
	ADDQ R8, DX; \
	VADDPS (DX), Y10, Y10; \
	VADDPS 32(DX), Y11, Y11; \
	VMOVUPS Y10, (DX); \
	VMOVUPS Y11, 32(DX); \
	ADDQ R8, DX

#define STORE_TILE \
	VMOVUPS Y0, (DX); \
	VMOVUPS Y1, 32(DX); \
	ADDQ R8, DX; \
	VMOVUPS Y2, (DX); \
	VMOVUPS Y3, 32(DX); \
	ADDQ R8, DX; \
	VMOVUPS Y4, (DX); \
	VMOVUPS Y5, 32(DX); \
	ADDQ R8, DX; \
	VMOVUPS Y6, (DX); \
	VMOVUPS Y7, 32(DX); \
	ADDQ R8, DX; \
	VMOVUPS Y8, (DX); \
	VMOVUPS Y9, 32(DX); \
	ADDQ R8, DX; \
	VMOVUPS Y10, (DX); \
	VMOVUPS Y11, 32(DX); \
	ADDQ R8, DX

// FMA16 adds row i's products for one p: acc0 += a·B0 (Y12), acc1 += a·B1 (Y13), with the
// A value a broadcast into t from addr.
#define FMA16(addr, t, acc0, acc1) \
	VBROADCASTSS addr, t; \
	VFMADD231PS Y12, t, acc0; \
	VFMADD231PS Y13, t, acc1

// ROWS16_STEP is one step of kernel6x16AVX2Rows, ao bytes into A's rows (SI: rows 0–2,
// R11: rows 3–5, R9 bytes apart) and bo bytes into B's panel (DI).
#define ROWS16_STEP(ao, bo) \
	VMOVUPS bo(DI), Y12; \
	VMOVUPS 32+bo(DI), Y13; \
	FMA16(ao(SI), Y14, Y0, Y1); \
	FMA16(ao(SI)(R9*1), Y15, Y2, Y3); \
	FMA16(ao(SI)(R9*2), Y14, Y4, Y5); \
	FMA16(ao(R11), Y15, Y6, Y7); \
	FMA16(ao(R11)(R9*1), Y14, Y8, Y9); \
	FMA16(ao(R11)(R9*2), Y15, Y10, Y11)

// func kernel6x16AVX2Rows(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
//
// kernel6x16AVX2Cols with A read by rows, a[i*lda+p] instead of a[p*lda+i]: the same FMAs in
// the same order, so the same bits as packing A.
TEXT ·kernel6x16AVX2Rows(SB), NOSPLIT, $0-49
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R9
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	LEAQ (SI)(R10*1), R11
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	ZERO_TILE
	TESTQ CX, CX
	JLE rdone

	CMPQ CX, $4
	JL rloop

rloop4: // four steps, the pointers moved once: less bookkeeping per FMA
	ROWS16_STEP(0, 0)
	ROWS16_STEP(4, 64)
	ROWS16_STEP(8, 128)
	ROWS16_STEP(12, 192)
	ADDQ $16, SI
	ADDQ $16, R11
	ADDQ $256, DI
	SUBQ $4, CX
	CMPQ CX, $4
	JGE rloop4
	TESTQ CX, CX
	JLE rdone

rloop:
	ROWS16_STEP(0, 0)
	ADDQ $4, SI
	ADDQ $4, R11
	ADDQ $64, DI
	DECQ CX
	JNZ rloop

rdone:
	MOVBLZX accumulate+48(FP), AX
	TESTQ AX, AX
	JZ roverwrite
	ADD_STORE_TILE
	VZEROUPPER
	RET

roverwrite:
	STORE_TILE
	VZEROUPPER
	RET

// COLS16_STEPB is COLS16_STEP reading B's row bo bytes past DI and leaving DI where it is
// (the unrolled loops move it once per four steps).
#define COLS16_STEPB(bo) \
	VMOVUPS bo(DI), Y12; \
	VMOVUPS 32+bo(DI), Y13; \
	FMA16(0(SI), Y14, Y0, Y1); \
	FMA16(4(SI), Y15, Y2, Y3); \
	FMA16(8(SI), Y14, Y4, Y5); \
	FMA16(12(SI), Y15, Y6, Y7); \
	FMA16(16(SI), Y14, Y8, Y9); \
	FMA16(20(SI), Y15, Y10, Y11); \
	ADDQ R9, SI

// COLS16_STEP is one step p of kernel6x16AVX2Cols: rows 0–5 of A's column p (at SI) times
// B's row p (DI), then SI and DI move to step p+1.
#define COLS16_STEP \
	COLS16_STEPB(0); \
	ADDQ $64, DI

// func kernel6x16AVX2Cols(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
//
// acc[i][j] = Σ_p a[p*lda+i]·b[p*16+j] with one FMA per term, in order of p from zero; then
// c[i*ldc+j] = acc[i][j], or c[i*ldc+j] += acc[i][j] when accumulate is set. lda = 6 reads a
// packed micro-panel; a larger lda reads column-major A in place.
TEXT ·kernel6x16AVX2Cols(SB), NOSPLIT, $0-49
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R9
	SHLQ $2, R9
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	ZERO_TILE
	COLS_PREFETCH            // R10, R11: see cols_amd64.h
	CMPQ R11, $4
	JL cfour

cloop: // four steps that prefetch, B's pointer moved once (the last R11%4 do not prefetch)
	COLS_PREFETCH_NEXT
	COLS16_STEPB(0)
	COLS_PREFETCH_NEXT
	COLS16_STEPB(64)
	COLS_PREFETCH_NEXT
	COLS16_STEPB(128)
	COLS_PREFETCH_NEXT
	COLS16_STEPB(192)
	ADDQ $256, DI
	SUBQ $4, CX
	SUBQ $4, R11
	CMPQ R11, $4
	JGE cloop

cfour:
	CMPQ CX, $4
	JL ctail

cloop4: // four steps, B's pointer moved once
	COLS16_STEPB(0)
	COLS16_STEPB(64)
	COLS16_STEPB(128)
	COLS16_STEPB(192)
	ADDQ $256, DI
	SUBQ $4, CX
	CMPQ CX, $4
	JGE cloop4

ctail:
	TESTQ CX, CX
	JLE cdone

ctailloop:
	COLS16_STEP
	DECQ CX
	JNZ ctailloop

cdone:
	MOVBLZX accumulate+48(FP), AX
	TESTQ AX, AX
	JZ coverwrite
	ADD_STORE_TILE
	VZEROUPPER
	RET

coverwrite:
	STORE_TILE
	VZEROUPPER
	RET
