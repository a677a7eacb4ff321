/* gemm_avx512.c — the linear layers' GEMM on 512-bit registers, compiled with AVX-512 F
 * (+ AVX2, FMA, F16C for the packing) for this file only: the matmul and matmul_f16 of the
 * avx512 set for M >= SOTTO__GEMM_MIN_M rows (fewer rows go to kernels_avx2.c's row
 * kernels).
 *
 * gemm_avx2.c's packed GEMM with the 12x32 micro-kernel of micro_avx512.h (shared with
 * the attention): 24 accumulators in registers; per
 * step of K it loads 32 values of the packed panel and broadcasts 12 of A (24 FMAs for 14
 * loads). Panels hold 32 rows of B transposed and widened to f32, [kc][32], KC = 256 steps
 * at a time (32 KB, within L1), once per block of MC rows of A (756: one thread's share
 * of the encoder's rows in one block; one core, 750 x 1536 x 384 f16, 143-149 -> 157-164
 * GFLOP/s against MC = 120), A's rows copied by its first panel into a block at a
 * stride of KC + 16 for the others (1500 x 512 x 2048 f16, 130 -> 147-156). Every output is the
 * reference's chain: bias (or 0), then one FMA per k in order, carried across blocks of
 * K through C, so the bits are those of sotto__matmul_ref and of the AVX2 GEMM.
 *
 * Where 512-bit FMAs run at twice the 256-bit rate (Intel server cores: two 512-bit FMA
 * units) this is up to twice the AVX2 GEMM; on Zen 4, which splits them in two, a 12x32
 * GEMM measured the same as the AVX2 one (docs/BENCHMARKS.md). */
#include <immintrin.h>
#include <stdbool.h>
#include <stdlib.h>

#include "kernels.h"
#include "micro_avx512.h"
#include "simd_avx2.h"

enum { MR = SOTTO__ZMM_MR, NR = SOTTO__ZMM_NR, MC = 756, KC = 256, AB_LD = SOTTO__GEMM_AB_LD(KC) };

/* The micro-kernel for any ROWS (1..12) and COLS (1..32); on the GEMM's copy of A
 * (sotto__gemm_panels) its rows' stride is a constant, so each broadcast of A addresses
 * its row by a displacement instead of an index register spilled to the stack. */
static void micro_packed(const float *A, size_t lda, const float *P, float *C, size_t ldc, int rows, int cols, int K,
                         const float *init, bool acc)
{
#define CASE(R, LDA)                                                                                   \
    case R:                                                                                            \
        if (cols == NR) sotto__micro_12x32(A, LDA, P, NR, C, ldc, R, true, true, NR, K, init, acc);    \
        else sotto__micro_12x32(A, LDA, P, NR, C, ldc, R, true, false, cols, K, init, acc);            \
        break;
    if (lda == AB_LD) {
        switch (rows) {
            CASE(12, AB_LD) CASE(11, AB_LD) CASE(10, AB_LD) CASE(9, AB_LD) CASE(8, AB_LD) CASE(7, AB_LD)
            CASE(6, AB_LD) CASE(5, AB_LD) CASE(4, AB_LD) CASE(3, AB_LD) CASE(2, AB_LD) CASE(1, AB_LD)
        }
        return;
    }
    switch (rows) {
        CASE(12, lda) CASE(11, lda) CASE(10, lda) CASE(9, lda) CASE(8, lda) CASE(7, lda)
        CASE(6, lda) CASE(5, lda) CASE(4, lda) CASE(3, lda) CASE(2, lda) CASE(1, lda)
    }
#undef CASE
}

static void gemm_packed(const float *A, size_t lda, const void *B, bool f16, size_t ldb, const float *bias, float *C,
                        size_t ldc, int M, int N, int K)
{
    _Alignas(64) float P[KC * NR];
    /* the copy of A's block (sotto__gemm_panels); NULL: A read in place, the same bits */
    float *Ab = aligned_alloc(64, sotto__gemm_ab_bytes(M, MC, KC));
    sotto__gemm_panels(A, lda, B, f16, ldb, NULL, bias, C, ldc, M, N, K, P, Ab, MR, NR, MC, KC, micro_packed);
    free(Ab);
}

void sotto__matmul_avx512(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                          size_t ldc, int M, int N, int K)
{
    if (M >= SOTTO__GEMM_MIN_M) gemm_packed(A, lda, B, false, ldb, bias, C, ldc, M, N, K);
    else sotto__gemv_avx512(A, lda, B, false, ldb, bias, C, ldc, M, N, K);
}

void sotto__matmul_f16_avx512(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                              size_t ldc, int M, int N, int K)
{
    if (M >= SOTTO__GEMM_MIN_M) gemm_packed(A, lda, B, true, ldb, bias, C, ldc, M, N, K);
    else sotto__gemv_avx512(A, lda, B, true, ldb, bias, C, ldc, M, N, K);
}

void sotto__gemm_f32_avx512(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                            size_t ldc, int M, int N, int K)
{
    gemm_packed(A, lda, B, false, ldb, bias, C, ldc, M, N, K);
}

void sotto__gemm_f16_avx512(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                            size_t ldc, int M, int N, int K)
{
    gemm_packed(A, lda, B, true, ldb, bias, C, ldc, M, N, K);
}

/* The micro-kernel on an f16 panel (its halves widened in registers) for any ROWS (1..12)
 * and COLS (1..32), from INIT (a bias row) or 0 over the whole of K, prefetching PF_LINES
 * lines at PF (the next panel's share). */
static void micro_panel(const float *A, size_t lda, const uint16_t *P, float *C, size_t ldc, int rows, int cols, int K,
                        const float *init, const char *pf, int pf_lines)
{
#define CASE(R)                                                                                       \
    case R:                                                                                           \
        if (cols == NR)                                                                               \
            sotto__micro_12x32_any(A, lda, P, SOTTO__PANEL_W, true, C, ldc, R, true, true, NR, K, init, false, pf, \
                                   pf_lines);                                                         \
        else                                                                                          \
            sotto__micro_12x32_any(A, lda, P, SOTTO__PANEL_W, true, C, ldc, R, true, false, cols, K, init, false, pf, \
                                   pf_lines);                                                         \
        break;
    switch (rows) {
        CASE(12) CASE(11) CASE(10) CASE(9) CASE(8) CASE(7) CASE(6) CASE(5) CASE(4) CASE(3) CASE(2) CASE(1)
    }
#undef CASE
}

/* B in f16 panels (NR = SOTTO__PANEL_W: a panel a column block), each panel's halves
 * widened in the micro-kernel's registers over the whole of K, the next panel prefetched
 * a share per call (one core, 40 x 51864 x 384, best of 5 on a quiet machine: 12.85-12.95
 * ms packing B's rows at every call, 11.0-11.25 widening a panel into a block as the avx2
 * set does, 9.2-9.3 this way) */
_Static_assert((int)NR == (int)SOTTO__PANEL_W, "a panel is one column block of the micro-kernel");
void sotto__gemm_f16p_avx512(const float *A, size_t lda, const uint16_t *P, const float *bias, float *C, size_t ldc,
                             int M, int N, int K)
{
    const int lines = (int)(((size_t)K * SOTTO__PANEL_W * sizeof(uint16_t) + 63) / 64); /* a panel's */
    for (int m0 = 0; m0 < M; m0 += MC) {
        const int m1 = m0 + MC < M ? m0 + MC : M, calls = (m1 - m0 + MR - 1) / MR;
        for (int n0 = 0; n0 < N; n0 += NR) {
            const int cols = N - n0 < NR ? N - n0 : NR;
            const uint16_t *p = sotto__panel_at(P, K, n0);
            const char *next = n0 + NR < N ? (const char *)sotto__panel_at(P, K, n0 + NR) : NULL;
            for (int m = m0, c = 0; m < m1; m += MR, c++) {
                const int l0 = lines * c / calls, l1 = lines * (c + 1) / calls;
                micro_panel(A + (size_t)m * lda, lda, p, C + (size_t)m * ldc + n0, ldc, m1 - m < MR ? m1 - m : MR,
                            cols, K, bias ? bias + n0 : NULL, next ? next + (size_t)l0 * 64 : NULL, l1 - l0);
            }
        }
    }
}
