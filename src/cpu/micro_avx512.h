/* micro_avx512.h — the 12x32 micro-kernel on 512-bit registers shared by the avx512 set's
 * attention (attn_avx512.c: B in place) and linear-layer GEMM (gemm_avx512.c: B packed),
 * for files compiled with AVX-512 F. 24 accumulators in registers; per step of K it loads
 * 32 values of B and broadcasts 12 of A (24 FMAs for 14 loads). Every output is one chain:
 * its start, then one FMA per k in order. */
#ifndef SOTTO_MICRO_AVX512_H
#define SOTTO_MICRO_AVX512_H

#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { SOTTO__ZMM_MR = 12, SOTTO__ZMM_NR = 32 };

/* Mask of the first r lanes (none for r <= 0, all 16 for r >= 16). */
static inline __attribute__((always_inline)) __mmask16 sotto__zmm_lanes(int r)
{
    return r <= 0 ? (__mmask16)0 : r >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << r) - 1);
}

/* C[ROWS, 32] (+)= A[ROWS, K] B[K, 32]: BFULL reads 32 values of each B row (else COLS),
 * CFULL reads and writes 32 columns of C (else COLS). B holds floats, or halves when HALF
 * (an f16 panel, gemm_avx512.c: widened in registers, exact). The start is C itself when
 * ACC, else the values at INIT (a bias row) or zero. PF, when not NULL, is prefetched a line
 * every other step of K for PF_LINES lines (the next panel of B). ROWS, HALF and the flags
 * are constants at every call, so the row loop unrolls and the accumulators stay in
 * registers. */
static inline __attribute__((always_inline)) void sotto__micro_12x32_any(const float *A, size_t lda, const void *B,
                                                                         size_t ldb, const bool half, float *C,
                                                                         size_t ldc, const int rows, const bool bfull,
                                                                         const bool cfull, int cols, int K,
                                                                         const float *init, const bool acc,
                                                                         const char *pf, int pf_lines)
{
    const __mmask16 m0 = sotto__zmm_lanes(cols), m1 = sotto__zmm_lanes(cols - 16);
    __m512 c[SOTTO__ZMM_MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) {
        const float *s = acc ? C + i * ldc : init;
        if (!s) c[i][0] = c[i][1] = _mm512_setzero_ps();
        else if (cfull) c[i][0] = _mm512_loadu_ps(s), c[i][1] = _mm512_loadu_ps(s + 16);
        else c[i][0] = _mm512_maskz_loadu_ps(m0, s), c[i][1] = _mm512_maskz_loadu_ps(m1, s + 16);
    }
    for (int k = 0; k < K; k++) {
        if (pf && !(k & 1) && k / 2 < pf_lines) _mm_prefetch(pf + (size_t)(k / 2) * 64, _MM_HINT_T0);
        __m512 b0, b1;
        if (half) { /* a panel's halves: full rows, zero-padded past COLS */
            const uint16_t *b = (const uint16_t *)B + (size_t)k * ldb;
            b0 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)b));
            b1 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(b + 16)));
        } else {
            const float *b = (const float *)B + (size_t)k * ldb;
            b0 = bfull ? _mm512_loadu_ps(b) : _mm512_maskz_loadu_ps(m0, b);
            b1 = bfull ? _mm512_loadu_ps(b + 16) : _mm512_maskz_loadu_ps(m1, b + 16);
        }
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

/* The micro-kernel on B in floats (the attention's B in place, the GEMM's packed block). */
static inline __attribute__((always_inline)) void sotto__micro_12x32(const float *A, size_t lda, const float *B,
                                                                     size_t ldb, float *C, size_t ldc, const int rows,
                                                                     const bool bfull, const bool cfull, int cols,
                                                                     int K, const float *init, const bool acc)
{
    sotto__micro_12x32_any(A, lda, B, ldb, false, C, ldc, rows, bfull, cfull, cols, K, init, acc, NULL, 0);
}

#endif
