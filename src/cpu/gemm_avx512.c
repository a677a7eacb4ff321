/* gemm_avx512.c — the linear layers' GEMM on 512-bit registers, compiled with AVX-512 F
 * (+ AVX2, FMA, F16C for the packing) for this file only: the matmul and matmul_f16 of the
 * avx512 set for M >= SOTTO__GEMM_MIN_M rows (fewer rows go to kernels_avx2.c's row
 * kernels).
 *
 * gemm_avx2.c's packed GEMM with a 12x32 micro-kernel: 24 accumulators in registers; per
 * step of K it loads 32 values of the packed panel and broadcasts 12 of A (24 FMAs for 14
 * loads). Panels hold 32 rows of B transposed and widened to f32, [kc][32], KC = 256 steps
 * at a time (32 KB, within L1), once per block of MC rows of A. Every output is the
 * reference's chain: bias (or 0), then one FMA per k in order, carried across blocks of
 * K through C, so the bits are those of sotto__matmul_ref and of the AVX2 GEMM.
 *
 * Where 512-bit FMAs run at twice the 256-bit rate (Intel server cores: two 512-bit FMA
 * units) this is up to twice the AVX2 GEMM; on Zen 4, which splits them in two, a 12x32
 * GEMM measured the same as the AVX2 one (docs/BENCHMARKS.md). */
#include <immintrin.h>
#include <stdbool.h>

#include "kernels.h"
#include "simd_avx2.h"

#define INLINE static inline __attribute__((always_inline))

enum { MR = 12, NR = 32, MC = 120, KC = 256 };

/* Mask of the first r lanes (none for r <= 0, all 16 for r >= 16). */
INLINE __mmask16 lanes(int r)
{
    return r <= 0 ? (__mmask16)0 : r >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << r) - 1);
}

/* C[ROWS, 32] (+)= A[ROWS, K] P[K, 32] on a packed panel P. CFULL: 32 columns of C are
 * read and written (else COLS). The start is C itself when ACC, else the values at INIT
 * (bias) or zero. ROWS and CFULL are constants at every call, so the row loop unrolls and
 * the accumulators stay in registers. */
INLINE void micro(const float *A, size_t lda, const float *P, float *C, size_t ldc, const int rows, const bool cfull,
                  int cols, int K, const float *init, bool acc)
{
    const __mmask16 m0 = cfull ? (__mmask16)0xffff : lanes(cols), m1 = cfull ? (__mmask16)0xffff : lanes(cols - 16);
    __m512 c[MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) {
        const float *s = acc ? C + i * ldc : init;
        if (!s) {
            c[i][0] = c[i][1] = _mm512_setzero_ps();
        } else if (cfull) {
            c[i][0] = _mm512_loadu_ps(s), c[i][1] = _mm512_loadu_ps(s + 16);
        } else {
            c[i][0] = _mm512_maskz_loadu_ps(m0, s), c[i][1] = _mm512_maskz_loadu_ps(m1, s + 16);
        }
    }
    for (int k = 0; k < K; k++) {
        const __m512 b0 = _mm512_load_ps(P + (size_t)k * NR), b1 = _mm512_load_ps(P + (size_t)k * NR + 16);
#pragma GCC unroll 12
        for (int i = 0; i < rows; i++) {
            const __m512 a = _mm512_set1_ps(A[i * lda + k]);
            c[i][0] = _mm512_fmadd_ps(a, b0, c[i][0]);
            c[i][1] = _mm512_fmadd_ps(a, b1, c[i][1]);
        }
    }
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) {
        if (cfull) {
            _mm512_storeu_ps(C + i * ldc, c[i][0]);
            _mm512_storeu_ps(C + i * ldc + 16, c[i][1]);
        } else {
            _mm512_mask_storeu_ps(C + i * ldc, m0, c[i][0]);
            _mm512_mask_storeu_ps(C + i * ldc + 16, m1, c[i][1]);
        }
    }
}

/* The micro-kernel for any ROWS (1..12) and COLS (1..32). */
static void micro_packed(const float *A, size_t lda, const float *P, float *C, size_t ldc, int rows, int cols, int K,
                         const float *init, bool acc)
{
#define CASE(R)                                                                                       \
    case R:                                                                                           \
        if (cols == NR) micro(A, lda, P, C, ldc, R, true, NR, K, init, acc);                          \
        else micro(A, lda, P, C, ldc, R, false, cols, K, init, acc);                                  \
        break;
    switch (rows) {
        CASE(12) CASE(11) CASE(10) CASE(9) CASE(8) CASE(7) CASE(6) CASE(5) CASE(4) CASE(3) CASE(2) CASE(1)
    }
#undef CASE
}

static const float zero_f32[KC];
static const uint16_t zero_f16[KC];

/* P[k][j] = B[j][k0 + k] for j < ROWS (0 beyond), k < KC_; B rows of stride LDB, f32 or
 * f16 (F16), transposed 8 rows at a time. */
static void pack(const void *B, bool f16, size_t ldb, int rows, int k0, int kc, float *P)
{
    for (int g = 0; g < NR; g += 8) {
        const float *rf[8];
        const uint16_t *rh[8];
        for (int i = 0; i < 8; i++) {
            bool real = g + i < rows;
            rf[i] = real ? (const float *)B + (size_t)(g + i) * ldb + k0 : zero_f32;
            rh[i] = real ? (const uint16_t *)B + (size_t)(g + i) * ldb + k0 : zero_f16;
        }
        int k = 0;
        for (; k + 8 <= kc; k += 8) {
            __m256 r[8];
            for (int i = 0; i < 8; i++)
                r[i] = f16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(rh[i] + k))) : _mm256_loadu_ps(rf[i] + k);
            sotto__transpose8(r);
            for (int i = 0; i < 8; i++) _mm256_store_ps(P + (size_t)(k + i) * NR + g, r[i]);
        }
        for (; k < kc; k++)
            for (int i = 0; i < 8; i++) P[(size_t)k * NR + g + i] = f16 ? _cvtsh_ss(rh[i][k]) : rf[i][k];
    }
}

static void gemm_packed(const float *A, size_t lda, const void *B, bool f16, size_t ldb, const float *bias, float *C,
                        size_t ldc, int M, int N, int K)
{
    _Alignas(64) float P[KC * NR];
    for (int m0 = 0; m0 < M; m0 += MC) {
        int m1 = m0 + MC < M ? m0 + MC : M;
        for (int k0 = 0; k0 < K; k0 += KC) {
            int kc = K - k0 < KC ? K - k0 : KC;
            for (int n0 = 0; n0 < N; n0 += NR) {
                int cols = N - n0 < NR ? N - n0 : NR;
                const void *Bn = f16 ? (const void *)((const uint16_t *)B + (size_t)n0 * ldb)
                                     : (const void *)((const float *)B + (size_t)n0 * ldb);
                pack(Bn, f16, ldb, cols, k0, kc, P);
                const float *init = k0 == 0 && bias ? bias + n0 : NULL;
                for (int m = m0; m < m1; m += MR)
                    micro_packed(A + (size_t)m * lda + k0, lda, P, C + (size_t)m * ldc + n0, ldc,
                                 m1 - m < MR ? m1 - m : MR, cols, kc, init, k0 > 0);
            }
        }
    }
}

void sotto__matmul_avx512(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                          size_t ldc, int M, int N, int K)
{
    if (M >= SOTTO__GEMM_MIN_M) gemm_packed(A, lda, B, false, ldb, bias, C, ldc, M, N, K);
    else sotto__matmul_avx2(A, lda, B, ldb, bias, C, ldc, M, N, K);
}

void sotto__matmul_f16_avx512(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                              size_t ldc, int M, int N, int K)
{
    if (M >= SOTTO__GEMM_MIN_M) gemm_packed(A, lda, B, true, ldb, bias, C, ldc, M, N, K);
    else sotto__matmul_f16_avx2(A, lda, B, ldb, bias, C, ldc, M, N, K);
}
