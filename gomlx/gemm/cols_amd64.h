// COLS_PREFETCH sets up the prefetching of the kernels that read A by columns
// (kernel6x16AVX2Cols, kernel6x32AVX512Cols): A's columns lie R9 bytes apart from SI, k is
// in CX. Where the columns are far apart (a transposed activation matrix: thousands of
// bytes) no hardware prefetcher follows them, so the first k-16 steps prefetch the column
// 16 steps ahead and the last 16, whose column p+16 lies past the panel, do not. It sets
// R10 to column 16 and R11 to the number of steps that prefetch: k-16 where k ≥ 64 and the
// columns lie 2 KiB or more apart, else 0 (shorter strides are followed, and a short panel
// is in cache already). It uses AX. Prefetching changes no result.
#define COLS_PREFETCH \
	MOVQ R9, R10; \
	SHLQ $4, R10; \
	ADDQ SI, R10; \
	XORQ R11, R11; \
	LEAQ -16(CX), AX; \
	CMPQ CX, $64; \
	CMOVQLT R11, AX; \
	CMPQ R9, $2048; \
	CMOVQLT R11, AX; \
	MOVQ AX, R11

// COLS_PREFETCH_NEXT prefetches the column at R10 and moves R10 to the next one (R9 bytes on):
// one prefetching step of the loops COLS_PREFETCH sets up.
#define COLS_PREFETCH_NEXT \
	PREFETCHT0 (R10); \
	ADDQ R9, R10
