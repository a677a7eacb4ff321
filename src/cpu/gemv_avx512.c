/* gemv_avx512.c — the avx512 set's decoder rows: matmul and matmul_f16 below
 * SOTTO__GEMM_MIN_M rows of A (the beams' layers, their vocabulary projection, the
 * cross-attention's scores), compiled with AVX-512 F/BW/VL for this file only.
 *
 * kernels_avx2.c's chains, bit for bit (test_row_chains states them in plain C): rows of A
 * in blocks of 4 (the last of 5 where one row would be left) against pairs of B rows,
 * each output one 8-lane chain in steps of 8 of K, ended by hsum's tree ((l0 + l4) + (l2 +
 * l6)) + ((l1 + l5) + (l3 + l7)), then the bias; rows past the blocks and B's unpaired
 * last row go alone through kernels_avx2.c, as there. Here one 512-bit register holds the
 * lanes of two outputs side by side (B rows n and n + 1 in lanes 0-7 and 8-15, row m of
 * A's 8 values broadcast to both halves), so one FMA does two 256-bit FMAs' work and one
 * conversion widens 16 halves. A block takes 4 rows of B (2 registers a row of A: 10
 * accumulators for 5 rows; 8 rows ran out of general registers for the row pointers) and
 * ends its sums in the tree on whole registers, four outputs at a time. The next block
 * but one is prefetched a line a step, spread over the block (a burst of lines at each
 * block's start waited on the fill buffers). One core, the tiny vocabulary's 5 x 51864 x
 * 384 in f16 from L3: 2.4 ms on the AVX2 kernel, 1.65 here; in L2 (5 x 512 x 384) 87 ->
 * 120 GFLOP/s. */
#include <immintrin.h>
#include <stdbool.h>

#include "kernels.h"
#include "simd_avx2.h"

#define INLINE static inline __attribute__((always_inline))

enum { PAIRS = 2 }; /* pairs of B rows a block takes */

/* 8 values of B rows n and n + 1 from element I of row n, in lanes 0-7 and 8-15; with
 * TAIL only the first lanes of M (the rest 0, as kernels_avx2.c's masked tail). */
INLINE __m512 ld_pair(const void *B, bool f16, size_t i, size_t ldb, __mmask8 m, const bool tail)
{
    if (f16) {
        const uint16_t *h = (const uint16_t *)B + i;
        __m128i lo = tail ? _mm_maskz_loadu_epi16(m, h) : _mm_loadu_si128((const __m128i *)h);
        __m128i hi = tail ? _mm_maskz_loadu_epi16(m, h + ldb) : _mm_loadu_si128((const __m128i *)(h + ldb));
        return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
    }
    const float *f = (const float *)B + i;
    __m256 lo = tail ? _mm256_maskz_loadu_ps(m, f) : _mm256_loadu_ps(f);
    __m256 hi = tail ? _mm256_maskz_loadu_ps(m, f + ldb) : _mm256_loadu_ps(f + ldb);
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
}

/* 8 values of a row of A in both halves (with TAIL the first lanes of M, the rest 0). */
INLINE __m512 ld_a(const float *a, __mmask8 m, const bool tail)
{
    __m256 v = tail ? _mm256_maskz_loadu_ps(m, a) : _mm256_loadu_ps(a);
    return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(v)));
}

/* C[i][j] (+ bias[j]) for the outputs of two registers X and Y (B rows j = 0-1 and 2-3;
 * COUNT 4, or 2 with Y unused): hsum's tree on whole registers. */
INLINE void tree_store(__m512 x, __m512 y, const float *bias, float *c, const int count)
{
    /* quarters of x: row 0's lanes 0-3, its lanes 4-7, row 1's 0-3, 4-7 (y: rows 2, 3) */
    __m512 e = _mm512_add_ps(_mm512_shuffle_f32x4(x, y, 0x88), _mm512_shuffle_f32x4(x, y, 0xDD));
    __m512 f = _mm512_add_ps(e, _mm512_permute_ps(e, 0x4E)); /* lane 0: e0 + e2, lane 1: e1 + e3 */
    __m512 g = _mm512_add_ps(f, _mm512_permute_ps(f, 0xB1)); /* lane 0 of each quarter */
    const __m512i lane0s = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    __m128 v = _mm512_castps512_ps128(_mm512_permutexvar_ps(lane0s, g));
    const __mmask8 m = count == 4 ? 0xF : 0x3;
    if (bias) v = _mm_add_ps(v, _mm_maskz_loadu_ps(m, bias));
    _mm_mask_storeu_ps(c, m, v);
}

/* C rows 0..ROWS-1 (4 or 5) x B rows 0..2 NP - 1 (NP pairs, 1..PAIRS). */
INLINE void block(const float *A, size_t lda, const void *B, bool f16, size_t ldb, const float *bias, float *C,
                  size_t ldc, int K, const char *pf, size_t back, const int rows, const int np)
{
    __m512 c[5][PAIRS];
#pragma GCC unroll 5
    for (int i = 0; i < rows; i++)
#pragma GCC unroll 4
        for (int p = 0; p < np; p++) c[i][p] = _mm512_setzero_ps();
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        if (pf) { /* the next block's rows, a line (f16) or two (f32) a step: as many as it reads */
            sotto__prefetch_2(pf, back);
            if (!f16) sotto__prefetch_2(pf + 64, back);
            pf += f16 ? 64 : 128;
        }
        __m512 b[PAIRS];
#pragma GCC unroll 4
        for (int p = 0; p < np; p++) b[p] = ld_pair(B, f16, 2 * (size_t)p * ldb + (size_t)k, ldb, 0, false);
#pragma GCC unroll 5
        for (int i = 0; i < rows; i++) {
            __m512 a = ld_a(A + i * lda + k, 0, false);
#pragma GCC unroll 4
            for (int p = 0; p < np; p++) c[i][p] = _mm512_fmadd_ps(a, b[p], c[i][p]);
        }
    }
    if (k < K) {
        const __mmask8 m = (__mmask8)((1u << (K - k)) - 1);
        __m512 b[PAIRS];
#pragma GCC unroll 4
        for (int p = 0; p < np; p++) b[p] = ld_pair(B, f16, 2 * (size_t)p * ldb + (size_t)k, ldb, m, true);
#pragma GCC unroll 5
        for (int i = 0; i < rows; i++) {
            __m512 a = ld_a(A + i * lda + k, m, true);
#pragma GCC unroll 4
            for (int p = 0; p < np; p++) c[i][p] = _mm512_fmadd_ps(a, b[p], c[i][p]);
        }
    }
#pragma GCC unroll 5
    for (int i = 0; i < rows; i++)
#pragma GCC unroll 2
        for (int p = 0; p < np; p += 2) {
            const float *bs = bias ? bias + 2 * p : NULL;
            if (p + 1 < np) tree_store(c[i][p], c[i][p + 1], bs, C + i * ldc + 2 * p, 4);
            else tree_store(c[i][p], c[i][p], bs, C + i * ldc + 2 * p, 2);
        }
}

static void block_any(const float *A, size_t lda, const void *B, bool f16, size_t ldb, const float *bias, float *C,
                      size_t ldc, int K, const char *pf, size_t back, int rows, int np)
{
#define CASE(F, R, P)                                                                                 \
    if (f16 == F && rows == R && np == P) {                                                           \
        block(A, lda, B, F, ldb, bias, C, ldc, K, pf, back, R, P);                                    \
        return;                                                                                       \
    }
    CASE(true, 5, 2) CASE(true, 4, 2) CASE(true, 5, 1) CASE(true, 4, 1)
    CASE(false, 5, 2) CASE(false, 4, 2) CASE(false, 5, 1) CASE(false, 4, 1)
#undef CASE
}

void sotto__gemv_avx512(const float *A, size_t lda, const void *B, bool f16, size_t ldb, const float *bias, float *C,
                        size_t ldc, int M, int N, int K)
{
    const int in_blocks = M < 4 ? 0 : M % 4 == 1 ? M : M & ~3;
    if (!in_blocks) { /* every row alone, as the avx2 set does it (one pass over B) */
        if (f16) sotto__matmul_f16_avx2(A, lda, (const uint16_t *)B, ldb, bias, C, ldc, M, N, K);
        else sotto__matmul_avx2(A, lda, (const float *)B, ldb, bias, C, ldc, M, N, K);
        return;
    }
    const size_t row_bytes = ldb * (f16 ? sizeof(uint16_t) : sizeof(float)), step = 2 * PAIRS * row_bytes;
    const size_t near = 2 * step, far = 2 * near, back = far - near, total = (size_t)N * row_bytes;
    const int paired = N & ~1;
    for (int n = 0; n < paired; n += 2 * PAIRS) {
        const int np = (paired - n) / 2 < PAIRS ? (paired - n) / 2 : PAIRS;
        const size_t at = (size_t)n * row_bytes;
        const char *b = (const char *)B + at;
        /* the hardware's stream prefetch leaves these rows undone: the block after next
         * into L1, the one two further on into L2 (sotto__prefetch_2) */
        const char *pf = at + far + step <= total ? b + far : NULL;
        for (int m = 0, r; m < in_blocks; m += r, pf = NULL) {
            r = in_blocks - m == 5 ? 5 : 4;
            block_any(A + m * lda, lda, b, f16, ldb, bias ? bias + n : NULL, C + m * ldc + n, ldc, K, pf, back, r, np);
        }
        if (in_blocks < M)
            sotto__gemv_alone_avx2(A + in_blocks * lda, lda, B, f16, ldb, bias, C + in_blocks * ldc, ldc,
                                   M - in_blocks, n, n + 2 * np, K);
    }
    if (N & 1) sotto__gemv_alone_avx2(A, lda, B, f16, ldb, bias, C, ldc, M, N - 1, N, K);
}
