/* gemm_avx2.c — register-blocked GEMM for AVX2 + FMA (+ F16C), compiled with those
 * flags for this file only. The 6x16 micro-kernel keeps 12 accumulators in registers;
 * per step of K it loads 16 values of B and broadcasts 6 of A (12 FMAs for 8 loads).
 *
 *   C = A B     (attention: B rows are contiguous) runs the micro-kernel on B directly;
 *   C = A B^T   (linear layers, weights [N, K] in f32 or f16, M >= SOTTO__GEMM_MIN_M rows)
 *               packs 16 rows of B transposed and widened to f32, [kc][16], into a
 *               buffer on the stack, once per block of MC rows of A and KC steps of K,
 *               so one packed panel serves MC / 6 micro-kernel calls from L1. MC = 756
 *               takes one thread's share of the encoder's 1500 rows (2 threads) in one
 *               block: B packed once, not 6.25 times (one core, 750 x 1536 x 384 f16:
 *               99-102 -> 107-111 GFLOP/s against MC = 120; A's rows stream from L2).
 *
 * Every shape works: row tails use the micro-kernel specialised for 1..5 rows, column
 * tails masked stores (packed panels are zero-padded to 16 columns). */
#include <immintrin.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "kernels.h"
#include "simd_avx2.h"

#define INLINE static inline __attribute__((always_inline))

enum { MR = 6, NR = 16, MC = 756, KC = 384 };

/* Mask for the first r (0..8) lanes. */
INLINE __m256i lanes(int r)
{
    static const int bits[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_loadu_si256((const __m256i *)(bits + 8 - r));
}

/* C[ROWS, 16] (+)= A[ROWS, K] B[K, 16]. BFULL: 16 values of each B row may be read (else
 * COLS); CFULL: 16 columns of C are written (else COLS). The start is C itself when ACC,
 * else the 16 values at INIT (bias) or zero. PF: the first PF 64-byte lines of the B row
 * PF_AHEAD rows on are prefetched at each step (0: none). ROWS and the flags are
 * constants at every call, so the row loop unrolls and the accumulators stay in
 * registers. */
enum { PF_AHEAD = 8 };
INLINE void micro_pf(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, const int rows,
                     const bool bfull, const bool cfull, int cols, int K, const float *init, bool acc, int pf)
{
    __m256i m0 = lanes(cols < 8 ? cols : 8), m1 = lanes(cols > 8 ? cols - 8 : 0);
    __m256 c[MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++) {
        if (acc) {
            c[i][0] = cfull ? _mm256_loadu_ps(C + i * ldc) : _mm256_maskload_ps(C + i * ldc, m0);
            c[i][1] = cfull ? _mm256_loadu_ps(C + i * ldc + 8) : _mm256_maskload_ps(C + i * ldc + 8, m1);
        } else if (init) {
            c[i][0] = cfull ? _mm256_loadu_ps(init) : _mm256_maskload_ps(init, m0);
            c[i][1] = cfull ? _mm256_loadu_ps(init + 8) : _mm256_maskload_ps(init + 8, m1);
        } else {
            c[i][0] = c[i][1] = _mm256_setzero_ps();
        }
    }
    for (int k = 0; k < K; k++) {
        const float *b = B + (size_t)k * ldb;
        if (pf && k + PF_AHEAD < K)
            for (int l = 0; l < pf; l++) _mm_prefetch((const char *)(b + PF_AHEAD * ldb + 16 * l), _MM_HINT_T0);
        __m256 b0 = bfull ? _mm256_loadu_ps(b) : _mm256_maskload_ps(b, m0);
        __m256 b1 = bfull ? _mm256_loadu_ps(b + 8) : _mm256_maskload_ps(b + 8, m1);
#pragma GCC unroll 6
        for (int i = 0; i < rows; i++) {
            __m256 a = _mm256_broadcast_ss(A + i * lda + k);
            c[i][0] = _mm256_fmadd_ps(a, b0, c[i][0]);
            c[i][1] = _mm256_fmadd_ps(a, b1, c[i][1]);
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++) {
        if (cfull) {
            _mm256_storeu_ps(C + i * ldc, c[i][0]);
            _mm256_storeu_ps(C + i * ldc + 8, c[i][1]);
        } else {
            _mm256_maskstore_ps(C + i * ldc, m0, c[i][0]);
            _mm256_maskstore_ps(C + i * ldc + 8, m1, c[i][1]);
        }
    }
}

INLINE void micro(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, const int rows,
                  const bool bfull, const bool cfull, int cols, int K, const float *init, bool acc)
{
    micro_pf(A, lda, B, ldb, C, ldc, rows, bfull, cfull, cols, K, init, acc, 0);
}

/* The micro-kernel for any ROWS (1..6) and COLS (1..16) on B used in place, from C (ACC)
 * or from 0; with PF > 0 (the first strip of rows_strips) prefetching PF lines of the B
 * row PF_AHEAD on (micro_pf). The encoder's attention calls it with PF 0, a constant: a
 * test of PF at each step cost its Q K^T and P V 4 % (`sotto bench` avx2 tiny.en f16,
 * encoder medians of four alternations 237 -> 247 ms). */
static void micro_nn(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int rows,
                     int cols, int K, bool acc, int pf)
{
#define NN_CASE(R, PF)                                                                                \
    case R:                                                                                           \
        if (cols == NR) micro_pf(A, lda, B, ldb, C, ldc, R, true, true, NR, K, NULL, acc, PF);        \
        else micro_pf(A, lda, B, ldb, C, ldc, R, false, false, cols, K, NULL, acc, PF);               \
        break;
    if (pf > 0) {
        switch (rows) {
            NN_CASE(6, pf) NN_CASE(5, pf) NN_CASE(4, pf) NN_CASE(3, pf) NN_CASE(2, pf) NN_CASE(1, pf)
        }
        return;
    }
    switch (rows) {
        NN_CASE(6, 0) NN_CASE(5, 0) NN_CASE(4, 0) NN_CASE(3, 0) NN_CASE(2, 0) NN_CASE(1, 0)
    }
#undef NN_CASE
}

/* The micro-kernel for any ROWS and COLS on a packed panel (16 floats per step). */
static void micro_packed(const float *A, size_t lda, const float *P, float *C, size_t ldc, int rows, int cols, int K,
                         const float *init, bool acc)
{
#define PK_CASE(R)                                                                                    \
    case R:                                                                                           \
        if (cols == NR) micro(A, lda, P, NR, C, ldc, R, true, true, NR, K, init, acc);                \
        else micro(A, lda, P, NR, C, ldc, R, true, false, cols, K, init, acc);                        \
        break;
    switch (rows) {
        PK_CASE(6) PK_CASE(5) PK_CASE(4) PK_CASE(3) PK_CASE(2) PK_CASE(1)
    }
#undef PK_CASE
}

/* 8 values of row B at column N, f32 or f16 (F16). */
INLINE __m256 load8(const void *B, bool f16, size_t i)
{
    return f16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)B + i)))
               : _mm256_loadu_ps((const float *)B + i);
}

INLINE float load1(const void *B, bool f16, size_t i)
{
    return f16 ? _cvtsh_ss(((const uint16_t *)B)[i]) : ((const float *)B)[i];
}

/* One row of C, 64 columns of B (f32 or f16): 8 independent accumulators, so a single
 * query row (the decoder's attention) is not bound by the FMA latency of one chain; from
 * C's values when ACC, else from 0. */
INLINE void row_1x64(const float *a, const void *B, bool f16, size_t ldb, float *c, int K, bool acc_c)
{
    __m256 acc[8];
    for (int j = 0; j < 8; j++) acc[j] = acc_c ? _mm256_loadu_ps(c + 8 * j) : _mm256_setzero_ps();
    const size_t row_bytes = f16 ? 128 : 256;
    for (int k = 0; k < K; k++) {
        if (k + PF_AHEAD < K) /* the row PF_AHEAD on (P V over a window's values from memory) */
            for (size_t l = 0; l < row_bytes; l += 64)
                _mm_prefetch((const char *)B + ((size_t)(k + PF_AHEAD) * ldb) * (f16 ? 2 : 4) + l, _MM_HINT_T0);
        __m256 x = _mm256_broadcast_ss(a + k);
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++) acc[j] = _mm256_fmadd_ps(x, load8(B, f16, (size_t)k * ldb + 8 * j), acc[j]);
    }
    for (int j = 0; j < 8; j++) _mm256_storeu_ps(c + 8 * j, acc[j]);
}

void sotto__row_1x64_f16_avx2(const float *a, const uint16_t *B, size_t ldb, float *c, int K)
{
    row_1x64(a, B, true, ldb, c, K, false);
}

/* One row of C over many columns (the decoder's scores against its keys): B (f32 or f16)
 * streams row by row, four rows per pass over C, which stays in L1; from C's values when
 * ACC, else from 0. */
INLINE void row_stream(const float *a, const void *B, bool f16, size_t ldb, float *c, int N, int K, bool acc)
{
    int n8 = N & ~7;
    if (!acc)
        for (int n = 0; n < N; n++) c[n] = 0.0f;
    int k = 0;
    for (; k + 4 <= K; k += 4) {
        size_t r0 = (size_t)k * ldb, r1 = r0 + ldb, r2 = r1 + ldb, r3 = r2 + ldb;
        __m256 x0 = _mm256_broadcast_ss(a + k), x1 = _mm256_broadcast_ss(a + k + 1);
        __m256 x2 = _mm256_broadcast_ss(a + k + 2), x3 = _mm256_broadcast_ss(a + k + 3);
        for (int n = 0; n < n8; n += 8) {
            __m256 s = _mm256_fmadd_ps(x0, load8(B, f16, r0 + n), _mm256_loadu_ps(c + n));
            s = _mm256_fmadd_ps(x1, load8(B, f16, r1 + n), s);
            s = _mm256_fmadd_ps(x2, load8(B, f16, r2 + n), s);
            _mm256_storeu_ps(c + n, _mm256_fmadd_ps(x3, load8(B, f16, r3 + n), s));
        }
        for (int n = n8; n < N; n++) { /* the same fused chain as the lanes */
            float s = fmaf(a[k], load1(B, f16, r0 + n), c[n]);
            s = fmaf(a[k + 1], load1(B, f16, r1 + n), s);
            s = fmaf(a[k + 2], load1(B, f16, r2 + n), s);
            c[n] = fmaf(a[k + 3], load1(B, f16, r3 + n), s);
        }
    }
    for (; k < K; k++) {
        size_t r = (size_t)k * ldb;
        __m256 x = _mm256_broadcast_ss(a + k);
        for (int n = 0; n < n8; n += 8)
            _mm256_storeu_ps(c + n, _mm256_fmadd_ps(x, load8(B, f16, r + n), _mm256_loadu_ps(c + n)));
        for (int n = n8; n < N; n++) c[n] = fmaf(a[k], load1(B, f16, r + n), c[n]);
    }
}

void sotto__row_stream_f16_avx2(const float *a, const uint16_t *B, size_t ldb, float *c, int N, int K)
{
    row_stream(a, B, true, ldb, c, N, K, false);
}

/* C = A B for few rows of A (2 ..< NN_STREAM_M) over a long K and at most 64 columns (the
 * decoder's P V over a window's values: [beams, 1500] x [1500, 64]): groups of up to 6
 * rows, each 16-column strip in one pass down B with its sums in registers; the first
 * strip's pass prefetches the whole B row PF_AHEAD rows on, so the later strips find the
 * head's values in cache. Each output is one fused chain in k order from C or 0, the
 * reference's bits. (One core, 5 x 1500 x 64 f32: in L2 12.5-13.3 -> 10.1-10.4 us, from
 * L3 38-45 -> 24-26 us, against rows of B streamed four at a time through C in L1.) */
enum { NN_STREAM_M = 9, NN_STREAM_K = 128, NN_STREAM_N = 64, NN_KC = 256 };
static void rows_strips(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M, int N,
                        int K, bool acc)
{
    const int lines = (N + NR - 1) / NR;
    for (int m = 0; m < M;) {
        int rows = M - m <= MR ? M - m : (M - m + 1) / 2; /* 7 and 8 rows: two groups */
        for (int n = 0; n < N; n += NR)
            micro_nn(A + (size_t)m * lda, lda, B + n, ldb, C + (size_t)m * ldc + n, ldc, rows,
                     N - n < NR ? N - n : NR, K, acc, n == 0 ? lines : 0);
        m += rows;
    }
}

/* matmul_nn, from C's values when ACC (matmul_nn_acc), else from 0: the same chains. */
static void nn_any(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M, int N, int K,
                   bool acc)
{
    if (M == 1 && N >= 128) {
        row_stream(A, B, false, ldb, C, N, K, acc);
        return;
    }
    if (M > 1 && M < NN_STREAM_M && K >= NN_STREAM_K && N <= NN_STREAM_N) {
        rows_strips(A, lda, B, ldb, C, ldc, M, N, K, acc);
        return;
    }
    int n0 = 0;
    if (M == 1)
        for (; n0 + 64 <= N; n0 += 64) row_1x64(A, B + n0, false, ldb, C + n0, K, acc);
    /* in steps of NN_KC of K, so the B rows of one step of a 16-column strip stay in L1 for
     * every block of 6 rows (the encoder's P V: 1500 rows of V at a stride of d); each
     * output's chain runs on through C, the bits of one pass (K 0: one step, zeros) */
    for (int k0 = 0; k0 == 0 || k0 < K; k0 += NN_KC) {
        int kc = K - k0 < NN_KC ? K - k0 : NN_KC;
        for (int n = n0; n < N; n += NR) {
            int cols = N - n < NR ? N - n : NR;
            for (int m = 0; m < M; m += MR)
                micro_nn(A + m * lda + k0, lda, B + (size_t)k0 * ldb + n, ldb, C + m * ldc + n, ldc,
                         M - m < MR ? M - m : MR, cols, kc, acc || k0 > 0, 0);
        }
    }
}

void sotto__matmul_nn_avx2(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                           int N, int K)
{
    nn_any(A, lda, B, ldb, C, ldc, M, N, K, false);
}

void sotto__matmul_nn_acc_avx2(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                               int N, int K)
{
    nn_any(A, lda, B, ldb, C, ldc, M, N, K, true);
}

/* ---- the packed GEMM ------------------------------------------------------------------ */

static void gemm_packed(const float *A, size_t lda, const void *B, bool f16, size_t ldb, const float *bias, float *C,
                        size_t ldc, int M, int N, int K)
{
    _Alignas(32) float P[KC * NR];
    /* rows of A a multiple of 4 KB apart (base's fc2, medium's every layer) fall in one set
     * of L1, where the micro-kernel's 6 rows evict each other: the block's other panels
     * then read a copy of them (sotto__gemm_panels; the same values, so the same bits) */
    float *Ab = lda * sizeof(float) % 4096 == 0 ? aligned_alloc(32, sotto__gemm_ab_bytes(M, MC, KC)) : NULL;
    sotto__gemm_panels(A, lda, B, f16, ldb, NULL, bias, C, ldc, M, N, K, P, Ab, MR, NR, MC, KC, micro_packed);
    free(Ab);
}

void sotto__gemm_f32_avx2(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                          size_t ldc, int M, int N, int K)
{
    gemm_packed(A, lda, B, false, ldb, bias, C, ldc, M, N, K);
}

void sotto__gemm_f16_avx2(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                          size_t ldc, int M, int N, int K)
{
    gemm_packed(A, lda, B, true, ldb, bias, C, ldc, M, N, K);
}

/* B in f16 panels: each 16 columns half a panel, widened in order (one core, 40 x 51864 x
 * 384: 17.9-18.7 -> 14.3-15.3 ms against packing B's rows at every call) */
void sotto__gemm_f16p_avx2(const float *A, size_t lda, const uint16_t *P, const float *bias, float *C, size_t ldc,
                           int M, int N, int K)
{
    _Alignas(32) float W[KC * NR];
    sotto__gemm_panels(A, lda, NULL, true, 0, P, bias, C, ldc, M, N, K, W, NULL, MR, NR, MC, KC, micro_packed);
}
