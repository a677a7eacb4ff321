/* gemm_q8_avx512.c — q8_0 x q8_0 GEMM with AVX-512 VNNI (vpdpbusd: 64 int8 products
 * summed into 16 int32 lanes per instruction), compiled with those flags for this file
 * only and selected at run time. Used from 8 rows of A (the encoder, the batched
 * decoder); fewer rows (the beams) take the 256-bit GEMV, faster for them (gemm_q8_body.h).
 *
 * vpdpbusd multiplies unsigned by signed bytes. B is packed offset by 128 (b + 128 in
 * 0..255, the sign bit flipped), so a block's int32 sum is sum a (b + 128) and
 * sum a b = that - 128 sum a, exact for any int8 values; the correction -128 sum a is
 * computed once per row and block of A and starts each block's accumulator.
 *
 * Panels of 16 rows of B are packed per block of 32 values as [8 quads][16 rows][4
 * bytes] (one 64-byte vector per quad of K), with their scales widened to f32, once per
 * MC rows of A and KCB blocks of K. The 8x16 micro-kernel keeps 8 int32 and 8 f32
 * accumulators in zmm registers: per block, 8 quads x 8 rows of broadcast + vpdpbusd,
 * then per row one convert, d_a d_b times the dot product and one add (no FMA: the
 * reference's rounding, so the sums are sotto__matmul_q8_ref's bit for bit), the bias
 * last. Fewer rows of A take the 256-bit kernels of gemm_q8_body.h (EVEX vpdpbusd on
 * ymm), the same sums. */
#include <immintrin.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../common.h"
#include "kernels.h"
#include "simd_avx2.h"

#define INLINE static inline __attribute__((always_inline))

enum { MR = 8, NR = 16, MC = 96, KCB = 16, QK = SOTTO__QK8_0 };

typedef struct panel {
    _Alignas(64) uint8_t q[KCB][QK / 4][NR][4]; /* b + 128 */
    _Alignas(64) float d[KCB][NR];
} panel;

typedef struct arows {
    int32_t corr[MC][KCB]; /* -128 sum a */
    float d[MC][KCB];
} arows;

static void pack_b(const sotto__block_q8_0 *B, size_t ldb, int rows, int j0, int kcb, panel *p)
{
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    for (int jb = 0; jb < kcb; jb++) {
        for (int g = 0; g < NR; g += 8) {
            __m256 r[8];
            for (int i = 0; i < 8; i++) {
                if (g + i < rows) {
                    const sotto__block_q8_0 *b = B + (size_t)(g + i) * ldb + j0 + jb;
                    r[i] = _mm256_castsi256_ps(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)b->qs), flip));
                    p->d[jb][g + i] = _cvtsh_ss(b->d);
                } else {
                    r[i] = _mm256_castsi256_ps(flip); /* b = 0, d = 0 */
                    p->d[jb][g + i] = 0.0f;
                }
            }
            sotto__transpose8(r); /* 8 rows x 8 quads (dwords) -> 8 quads x 8 rows */
            for (int s = 0; s < QK / 4; s++) _mm256_store_ps((float *)p->q[jb][s][g], r[s]);
        }
    }
}

static void prep_a(const sotto__block_q8_0 *A, size_t lda, int rows, int j0, int kcb, arows *a)
{
    const __m256i ones = _mm256_set1_epi8(1);
    for (int i = 0; i < rows; i++)
        for (int jb = 0; jb < kcb; jb++) {
            const sotto__block_q8_0 *b = A + (size_t)i * lda + j0 + jb;
            __m256i q = _mm256_loadu_si256((const __m256i *)b->qs);
            /* sum of 32 signed bytes: 1 x q in pairs -> s16, then s16 pairs -> s32 */
            __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(ones, q), _mm256_set1_epi16(1));
            __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
            h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
            h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
            a->corr[i][jb] = -128 * _mm_cvtsi128_si32(h);
            a->d[i][jb] = _cvtsh_ss(b->d);
        }
}

INLINE int32_t quad(const sotto__block_q8_0 *b, int s)
{
    int32_t v;
    memcpy(&v, b->qs + 4 * s, 4);
    return v;
}

/* C[ROWS, 16] (+)= A[ROWS, kcb blocks] B-panel; start from C (ACC) or 0, + BIAS (or + 0)
 * when LAST. */
INLINE void micro(const sotto__block_q8_0 *A, size_t lda, int i0, const arows *ar, const panel *p, int kcb,
                  float *C, size_t ldc, const int rows, __mmask16 cols, const float *bias, bool acc, bool last)
{
    __m512 c[MR];
#pragma GCC unroll 8
    for (int i = 0; i < rows; i++) c[i] = acc ? _mm512_maskz_loadu_ps(cols, C + i * ldc) : _mm512_setzero_ps();
    for (int jb = 0; jb < kcb; jb++) {
        __m512i s[MR];
#pragma GCC unroll 8
        for (int i = 0; i < rows; i++) s[i] = _mm512_set1_epi32(ar->corr[i0 + i][jb]);
#pragma GCC unroll 8
        for (int q = 0; q < QK / 4; q++) {
            __m512i b = _mm512_load_si512((const void *)p->q[jb][q]);
#pragma GCC unroll 8
            for (int i = 0; i < rows; i++)
                s[i] = _mm512_dpbusd_epi32(s[i], b, _mm512_set1_epi32(quad(A + (size_t)i * lda + jb, q)));
        }
        __m512 db = _mm512_load_ps(p->d[jb]);
#pragma GCC unroll 8
        for (int i = 0; i < rows; i++)
            c[i] = _mm512_add_ps(c[i], _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(ar->d[i0 + i][jb]), db),
                                                     _mm512_cvtepi32_ps(s[i])));
    }
    if (last) {
        __m512 z = bias ? _mm512_maskz_loadu_ps(cols, bias) : _mm512_setzero_ps();
#pragma GCC unroll 8
        for (int i = 0; i < rows; i++) c[i] = _mm512_add_ps(c[i], z);
    }
#pragma GCC unroll 8
    for (int i = 0; i < rows; i++) _mm512_mask_storeu_ps(C + i * ldc, cols, c[i]);
}

static void micro_any(const sotto__block_q8_0 *A, size_t lda, int i0, const arows *ar, const panel *p, int kcb,
                      float *C, size_t ldc, int rows, __mmask16 cols, const float *bias, bool acc, bool last)
{
#define Q8_CASE(R)                                                                                    \
    case R: micro(A, lda, i0, ar, p, kcb, C, ldc, R, cols, bias, acc, last); break;
    switch (rows) {
        Q8_CASE(8) Q8_CASE(7) Q8_CASE(6) Q8_CASE(5) Q8_CASE(4) Q8_CASE(3) Q8_CASE(2) Q8_CASE(1)
    }
#undef Q8_CASE
}

void sotto__gemm_q8_avx512(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                           const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    int nb = K / QK;
    panel p;
    arows ar;
    for (int m0 = 0; m0 < M; m0 += MC) {
        int mc = M - m0 < MC ? M - m0 : MC;
        for (int j0 = 0; j0 < nb; j0 += KCB) {
            int kcb = nb - j0 < KCB ? nb - j0 : KCB;
            prep_a(A + (size_t)m0 * lda, lda, mc, j0, kcb, &ar);
            for (int n0 = 0; n0 < N; n0 += NR) {
                int cols = N - n0 < NR ? N - n0 : NR;
                pack_b(B + (size_t)n0 * ldb, ldb, cols, j0, kcb, &p);
                __mmask16 mask = (__mmask16)((1u << cols) - 1);
                const int next = N - n0 - NR <= 0 ? 0 : N - n0 - NR < NR ? N - n0 - NR : NR;
                const int calls = (mc + MR - 1) / MR;
                const char *Bnext = next ? (const char *)(B + (size_t)(n0 + NR) * ldb + j0) : NULL;
                for (int i = 0, c = 0; i < mc; i += MR, c++) {
                    sotto__prefetch_share(Bnext, ldb * sizeof *B, next, (size_t)kcb * sizeof *B, c, calls);
                    micro_any(A + (size_t)(m0 + i) * lda + j0, lda, i, &ar, &p, kcb, C + (size_t)(m0 + i) * ldc + n0,
                              ldc, mc - i < MR ? mc - i : MR, mask, bias ? bias + n0 : NULL, j0 > 0, j0 + kcb == nb);
                }
            }
        }
    }
}

void sotto__matmul_q8_avx512(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                             const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    if (M >= 8) sotto__gemm_q8_avx512(A, lda, B, ldb, bias, C, ldc, M, N, K);
    else sotto__gemv_q8_avx512vl(A, lda, B, ldb, bias, C, ldc, M, N, K);
}

/* The 256-bit kernels with EVEX vpdpbusd (AVX-512 VNNI + VL) for fewer rows. */
#undef INLINE
#define Q8_NAME(x) x##_avx512vl
#define Q8_DPBUSD(acc, u, s) _mm256_dpbusd_epi32(acc, u, s)
#include "gemm_q8_body.h"
