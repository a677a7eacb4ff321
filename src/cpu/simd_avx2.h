/* simd_avx2.h — small AVX2 helpers shared by the kernel files compiled with -mavx2 -mfma
 * -mf16c (gemm_avx2.c, gemm_avx512.c, gemv_avx512.c, kernels_avx2.c, gemm_q8_*.c). */
#ifndef SOTTO_SIMD_AVX2_H
#define SOTTO_SIMD_AVX2_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels.h"

/* Transposes the 8x8 block of 32-bit lanes in R (rows become columns). */
static inline __attribute__((always_inline)) void sotto__transpose8(__m256 r[8])
{
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xee);
    __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xee);
    __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xee);
    __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xee);
    r[0] = _mm256_permute2f128_ps(s0, s4, 0x20), r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    r[2] = _mm256_permute2f128_ps(s2, s6, 0x20), r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    r[4] = _mm256_permute2f128_ps(s0, s4, 0x31), r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    r[6] = _mm256_permute2f128_ps(s2, s6, 0x31), r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/* The packed panel of the f32 GEMMs (gemm_avx2.c, gemm_avx512.c): P[k][j] = B[j][k0 + k]
 * for j < ROWS and 0 for ROWS <= j < NR (a multiple of 8), k < KC; B rows of stride LDB
 * in f32, or f16 when F16 (widened: exact). 8 rows at a time, transposed in registers. */
static inline __attribute__((always_inline)) void sotto__pack_bt(const void *B, bool f16, size_t ldb, int rows,
                                                                 int k0, int kc, float *P, const int nr)
{
    for (int g = 0; g < nr; g += 8) {
        int real = rows - g < 0 ? 0 : rows - g < 8 ? rows - g : 8;
        int k = 0;
        for (; k + 8 <= kc; k += 8) {
            __m256 r[8];
            for (int i = 0; i < 8; i++) {
                size_t at = (size_t)(g + i) * ldb + (size_t)(k0 + k);
                r[i] = i >= real ? _mm256_setzero_ps()
                       : f16     ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)B + at)))
                                 : _mm256_loadu_ps((const float *)B + at);
            }
            sotto__transpose8(r);
            for (int i = 0; i < 8; i++) _mm256_store_ps(P + (size_t)(k + i) * nr + g, r[i]);
        }
        for (; k < kc; k++)
            for (int i = 0; i < 8; i++) {
                size_t at = (size_t)(g + i) * ldb + (size_t)(k0 + k);
                P[(size_t)k * nr + g + i] = i >= real ? 0.0f
                                            : f16     ? _cvtsh_ss(((const uint16_t *)B)[at])
                                                      : ((const float *)B)[at];
            }
    }
}

/* The packed panel from f16 panels (kernels.h sotto__f16_panels: SOTTO__PANEL_W rows of
 * B a panel, [K][SOTTO__PANEL_W] halves, zero-padded): P[k][j] = SRC[(k0 + k) W + j] for
 * j < NR, k < KC, SRC the panel's first column of these NR. A widening in order: no
 * transpose. */
static inline __attribute__((always_inline)) void sotto__widen_panel(const uint16_t *src, int k0, int kc, float *P,
                                                                     const int nr)
{
    for (int k = 0; k < kc; k++) {
        const uint16_t *s = src + (size_t)(k0 + k) * SOTTO__PANEL_W;
        for (int g = 0; g < nr; g += 8)
            _mm256_store_ps(P + (size_t)k * nr + g, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + g))));
    }
}

/* Prefetches the line at P into L2 and the line BACK bytes before it into L1: the few-row
 * GEMVs (kernels_avx2.c, gemv_avx512.c) ask for each line of B twice, far ahead (a
 * distance the fill buffers alone could not cover: a line asked for into L1 holds one of
 * them until it comes from memory) and again near, from L2. Two threads, 5 x 51864 x 512
 * f16 from memory on an Intel Xeon: 2.53 -> 2.25 ms; the greedy row 1.96 -> 1.55 ms
 * (docs/BENCHMARKS.md). */
static inline __attribute__((always_inline)) void sotto__prefetch_2(const char *p, size_t back)
{
    _mm_prefetch(p, _MM_HINT_T2);
    _mm_prefetch(p - back, _MM_HINT_T0);
}

/* Share C of CALLS of ROWS rows of SPAN bytes each, STRIDE bytes apart from BASE, into L2.
 * The GEMMs fetch the next panel of B this way, a share before each micro-kernel call:
 * a product of few rows of A (the batched decoder's 40) over many rows of B (the
 * vocabulary) otherwise waits on memory in every pack (40 x 51864 x 384 in f16, one core
 * of an Intel Xeon: 64 GFLOP/s without, 96-124 with; docs/BENCHMARKS.md). */
static inline __attribute__((always_inline)) void sotto__prefetch_share(const char *base, size_t stride, int rows,
                                                                        size_t span, int c, int calls)
{
    for (int r = rows * c / calls; r < rows * (c + 1) / calls; r++) {
        const char *row = base + (size_t)r * stride;
        for (size_t o = 0; o < span; o += 64) _mm_prefetch(row + o, _MM_HINT_T1);
        _mm_prefetch(row + span - 1, _MM_HINT_T1);
    }
}

/* A micro-kernel of the packed GEMM: C[ROWS, COLS] (+)= A[ROWS, K] P[K, NR] (P packed by
 * sotto__pack_bt), from C (ACC), from the bias row INIT, or from 0. */
typedef void (*sotto__gemm_micro_fn)(const float *A, size_t lda, const float *P, float *C, size_t ldc, int rows,
                                     int cols, int K, const float *init, bool acc);

/* The row stride of a GEMM's copy of A's block (sotto__gemm_panels): KC floats and one
 * line more, so that the rows a micro-kernel reads fall in different sets of L1. A
 * constant expression: the GEMMs compile their micro-kernel for it. */
#define SOTTO__GEMM_AB_LD(kcmax) ((kcmax) + 16)

/* Bytes of that copy for a GEMM of M rows in blocks of MC rows and KC steps of K. */
static inline size_t sotto__gemm_ab_bytes(int M, int mc, int kcmax)
{
    return (size_t)(M < mc ? M : mc) * (size_t)SOTTO__GEMM_AB_LD(kcmax) * sizeof(float);
}

/* Copies ROWS rows of KC floats from A (LDA apart) to AB (LDAB apart). */
static inline __attribute__((always_inline)) void sotto__copy_rows(const float *A, size_t lda, int rows, int kc,
                                                                   float *Ab, size_t ldab)
{
    for (int i = 0; i < rows; i++) {
        const float *s = A + (size_t)i * lda;
        float *d = Ab + (size_t)i * ldab;
        int k = 0;
        for (; k + 8 <= kc; k += 8) _mm256_storeu_ps(d + k, _mm256_loadu_ps(s + k));
        for (; k < kc; k++) d[k] = s[k];
    }
}

/* C = A B^T + bias, B [N, K] in f32 or f16 (F16): blocks of MC rows of A and KC steps of K;
 * in each, panels of NR rows of B packed into P (KC x NR floats, aligned) and MICRO run on
 * MR rows at a time. An output's chain runs on through C from one block of K to the next.
 * With PANELS (B in f16 panels, sotto__f16_panels; B and LDB unused) P is widened from
 * them in order instead of transposed from B's rows: the same P, so the same bits.
 * With AB (sotto__gemm_ab_bytes bytes, or NULL) the first panel of each block reads A in
 * place and copies the rows it read there, SOTTO__GEMM_AB_LD apart, for the block's other
 * panels: base's encoder rows lie 2 or 8 KB apart (d_model 512, fc2's 2048 inputs), so the
 * 12 rows the avx512 micro-kernel reads at each step of K share two sets of L1 and evict
 * each other and the panel (one core, 12x32 tiles over 756 rows in place: 137-141 GFLOP/s
 * with rows 2 or 8 KB apart, 164-169 with 1 or 1.06 KB; docs/BENCHMARKS.md). The same
 * values, so the same bits. Inlined into each GEMM, whose constants and micro-kernel it
 * takes. */
static inline __attribute__((always_inline)) void sotto__gemm_panels(const float *A, size_t lda, const void *B,
                                                                     bool f16, size_t ldb, const uint16_t *panels,
                                                                     const float *bias, float *C, size_t ldc, int M,
                                                                     int N, int K, float *P, float *Ab, const int mr,
                                                                     const int nr, const int mc, const int kcmax,
                                                                     sotto__gemm_micro_fn micro)
{
    const size_t ldab = (size_t)SOTTO__GEMM_AB_LD(kcmax);
    for (int m0 = 0; m0 < M; m0 += mc) {
        int m1 = m0 + mc < M ? m0 + mc : M;
        for (int k0 = 0; k0 < K; k0 += kcmax) {
            int kc = K - k0 < kcmax ? K - k0 : kcmax;
            for (int n0 = 0; n0 < N; n0 += nr) {
                int cols = N - n0 < nr ? N - n0 : nr;
                const int next = N - n0 - nr <= 0 ? 0 : N - n0 - nr < nr ? N - n0 - nr : nr;
                const int calls = (m1 - m0 + mr - 1) / mr;
                const size_t esz = f16 ? 2 : 4;
                /* the next panel of B, a share before each micro-kernel call
                 * (sotto__prefetch_share): NEXT rows of B, or KC rows of the next f16 panel */
                const char *Bnext;
                size_t stride, span;
                int pf_rows;
                if (panels) {
                    const uint16_t *src = sotto__panel_at(panels, K, n0);
                    sotto__widen_panel(src, k0, kc, P, nr);
                    Bnext = next ? (const char *)(sotto__panel_at(panels, K, n0 + nr) + (size_t)k0 * SOTTO__PANEL_W)
                                 : NULL;
                    stride = SOTTO__PANEL_W * sizeof(uint16_t), span = (size_t)nr * sizeof(uint16_t), pf_rows = kc;
                } else {
                    const void *Bn = f16 ? (const void *)((const uint16_t *)B + (size_t)n0 * ldb)
                                         : (const void *)((const float *)B + (size_t)n0 * ldb);
                    sotto__pack_bt(Bn, f16, ldb, cols, k0, kc, P, nr);
                    Bnext = next ? (const char *)B + ((size_t)(n0 + nr) * ldb + (size_t)k0) * esz : NULL;
                    stride = ldb * esz, span = (size_t)kc * esz, pf_rows = next;
                }
                const float *init = k0 == 0 && bias ? bias + n0 : NULL;
                for (int m = m0, c = 0; m < m1; m += mr, c++) {
                    sotto__prefetch_share(Bnext, stride, pf_rows, span, c, calls);
                    const int rows = m1 - m < mr ? m1 - m : mr;
                    const float *a = A + (size_t)m * lda + k0;
                    float *ab = Ab ? Ab + (size_t)(m - m0) * ldab : NULL;
                    float *c_m = C + (size_t)m * ldc + n0;
                    if (ab && n0 > 0) micro(ab, ldab, P, c_m, ldc, rows, cols, kc, init, k0 > 0);
                    else micro(a, lda, P, c_m, ldc, rows, cols, kc, init, k0 > 0);
                    /* the first panel reads A in place and leaves these rows in L1 for the copy */
                    if (ab && n0 == 0) sotto__copy_rows(a, lda, rows, kc, ab, ldab);
                }
            }
        }
    }
}

#endif
