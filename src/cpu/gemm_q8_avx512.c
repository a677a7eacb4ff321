/* gemm_q8_avx512.c — q8_0 x q8_0 GEMM with AVX-512 VNNI (vpdpbusd: 64 int8 products
 * summed into 16 int32 lanes per instruction), compiled with those flags for this file
 * only and selected at run time. Used for M >= SOTTO__GEMM_MIN_M rows (the encoder);
 * fewer rows keep the AVX2 row kernels.
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
 * then per row one convert and one FMA by d_a * d_b. */
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

/* C[ROWS, 16] (+)= A[ROWS, kcb blocks] B-panel; start from C (ACC), INIT (bias) or 0. */
INLINE void micro(const sotto__block_q8_0 *A, size_t lda, int i0, const arows *ar, const panel *p, int kcb,
                  float *C, size_t ldc, const int rows, __mmask16 cols, const float *init, bool acc)
{
    __m512 c[MR];
#pragma GCC unroll 8
    for (int i = 0; i < rows; i++)
        c[i] = acc ? _mm512_maskz_loadu_ps(cols, C + i * ldc) : init ? _mm512_maskz_loadu_ps(cols, init)
                                                                       : _mm512_setzero_ps();
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
            c[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[i]), _mm512_mul_ps(db, _mm512_set1_ps(ar->d[i0 + i][jb])), c[i]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < rows; i++) _mm512_mask_storeu_ps(C + i * ldc, cols, c[i]);
}

static void micro_any(const sotto__block_q8_0 *A, size_t lda, int i0, const arows *ar, const panel *p, int kcb,
                      float *C, size_t ldc, int rows, __mmask16 cols, const float *init, bool acc)
{
#define Q8_CASE(R)                                                                                    \
    case R: micro(A, lda, i0, ar, p, kcb, C, ldc, R, cols, init, acc); break;
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
                const float *init = j0 == 0 && bias ? bias + n0 : NULL;
                __mmask16 mask = (__mmask16)((1u << cols) - 1);
                for (int i = 0; i < mc; i += MR)
                    micro_any(A + (size_t)(m0 + i) * lda + j0, lda, i, &ar, &p, kcb, C + (size_t)(m0 + i) * ldc + n0,
                              ldc, mc - i < MR ? mc - i : MR, mask, init, j0 > 0);
            }
        }
    }
}

/* ---- few rows: one row of A against many rows of B (the decoder) ------------------------ */

enum { GEMV_MAX_BLOCKS = 512, GEMV_ROWS = 8 }; /* K <= 16384; rows of A per pass over B */

/* A's rows prepared per pair of blocks (2p, 2p + 1), each a 512-bit vector: the bytes of
 * the two blocks, the starting sums (-128 sum a in lanes 0 and 8) and the scales (d_a in
 * lanes 0-7 and 8-15). An odd last block has zeros in its upper half. */
typedef struct gemv_pair {
    _Alignas(64) int8_t q[64];
    _Alignas(64) int32_t corr[16];
    _Alignas(64) float d[16];
} gemv_pair;

static int32_t block_sum(const sotto__block_q8_0 *a)
{
    const __m256i ones = _mm256_set1_epi8(1);
    __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(ones, _mm256_loadu_si256((const __m256i *)a->qs)),
                                  _mm256_set1_epi16(1));
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
    return _mm_cvtsi128_si32(h);
}

static void gemv_prep(const sotto__block_q8_0 *A, size_t lda, int MA, int nb, gemv_pair *pr)
{
    int np = (nb + 1) / 2;
    memset(pr, 0, (size_t)MA * np * sizeof *pr);
    for (int m = 0; m < MA; m++)
        for (int j = 0; j < nb; j++) {
            const sotto__block_q8_0 *a = A + (size_t)m * lda + j;
            gemv_pair *x = &pr[(size_t)m * np + j / 2];
            int h = j % 2;
            memcpy(x->q + 32 * h, a->qs, 32);
            x->corr[8 * h] = -128 * block_sum(a);
            for (int l = 0; l < 8; l++) x->d[8 * h + l] = _cvtsh_ss(a->d);
        }
}

/* C[MA rows][0..N) for MA (1..8) rows of A of NB blocks each: per row of B and pair of
 * blocks, one vpdpbusd of (b + 128) and a over both blocks, started from -128 sum a, so
 * every int8 value (-128 included) is exact; even blocks sum in lanes 0-7, odd ones in
 * 8-15, then the two halves and the lanes are added. The rows of B stream one after the
 * other (a single sequential stream: interleaving a few rows of B per pass ran well under
 * half as fast from memory), and the MA rows of A share the loads of B (a step over 5
 * beams streams the weights once). Every output takes the same operations whatever MA and
 * its place. */
INLINE void gemv_q8(const gemv_pair *pr, const sotto__block_q8_0 *B, size_t ldb, const float *bias, float *C,
                    size_t ldc, int N, int nb, const int MA)
{
    const int np = (nb + 1) / 2, full = nb / 2;
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    for (int n = 0; n < N; n++) {
        const sotto__block_q8_0 *b = B + (size_t)n * ldb;
        __m512 s[GEMV_ROWS];
#pragma GCC unroll 8
        for (int m = 0; m < MA; m++) s[m] = _mm512_setzero_ps();
        for (int p = 0; p < np; p++) {
            const sotto__block_q8_0 *b0 = b + 2 * p;
            __m512i q;
            __m256i hd;
            __mmask16 lanes;
            if (p < full) {
                q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)b0->qs)),
                                       _mm256_loadu_si256((const __m256i *)b0[1].qs), 1);
                hd = _mm256_set_m128i(_mm_set1_epi16((short)b0[1].d), _mm_set1_epi16((short)b0->d));
                lanes = 0xffff;
            } else {
                q = _mm512_zextsi256_si512(_mm256_loadu_si256((const __m256i *)b0->qs));
                hd = _mm256_zextsi128_si256(_mm_set1_epi16((short)b0->d));
                lanes = 0x00ff;
            }
            q = _mm512_xor_si512(q, flip);
            __m512 db = _mm512_cvtph_ps(hd);
#pragma GCC unroll 8
            for (int m = 0; m < MA; m++) {
                const gemv_pair *x = &pr[(size_t)m * np + p];
                __m512i dot = _mm512_dpbusd_epi32(_mm512_load_si512(x->corr), q, _mm512_load_si512(x->q));
                __m512 d = _mm512_mul_ps(_mm512_load_ps(x->d), db);
                s[m] = _mm512_mask3_fmadd_ps(_mm512_cvtepi32_ps(dot), d, s[m], lanes);
            }
        }
#pragma GCC unroll 8
        for (int m = 0; m < MA; m++) {
            __m256 r = _mm256_add_ps(_mm512_castps512_ps256(s[m]), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s[m]), 1)));
            __m128 h = _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps(r, 1));
            h = _mm_add_ps(h, _mm_movehl_ps(h, h));
            h = _mm_add_ss(h, _mm_movehdup_ps(h));
            C[(size_t)m * ldc + n] = _mm_cvtss_f32(h) + (bias ? bias[n] : 0.0f);
        }
    }
}

void sotto__matmul_q8_avx512(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                             const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    const int nb = K / QK;
    if (M >= SOTTO__GEMM_MIN_M) {
        sotto__gemm_q8_avx512(A, lda, B, ldb, bias, C, ldc, M, N, K);
        return;
    }
    gemv_pair *pr = nb <= GEMV_MAX_BLOCKS ? aligned_alloc(64, (size_t)GEMV_ROWS * ((nb + 1) / 2) * sizeof *pr) : NULL;
    if (!pr) { /* too long a row for the prepared copy (or no memory for it) */
        sotto__matmul_q8_avx2(A, lda, B, ldb, bias, C, ldc, M, N, K);
        return;
    }
    for (int m = 0; m < M; m += GEMV_ROWS) {
        int ma = M - m < GEMV_ROWS ? M - m : GEMV_ROWS;
        gemv_prep(A + (size_t)m * lda, lda, ma, nb, pr);
        float *c = C + (size_t)m * ldc;
        switch (ma) {
        case 1: gemv_q8(pr, B, ldb, bias, c, ldc, N, nb, 1); break;
        case 2: gemv_q8(pr, B, ldb, bias, c, ldc, N, nb, 2); break;
        case 3: gemv_q8(pr, B, ldb, bias, c, ldc, N, nb, 3); break;
        case 4: gemv_q8(pr, B, ldb, bias, c, ldc, N, nb, 4); break;
        case 5: gemv_q8(pr, B, ldb, bias, c, ldc, N, nb, 5); break;
        case 6: gemv_q8(pr, B, ldb, bias, c, ldc, N, nb, 6); break;
        case 7: gemv_q8(pr, B, ldb, bias, c, ldc, N, nb, 7); break;
        default: gemv_q8(pr, B, ldb, bias, c, ldc, N, nb, 8); break;
        }
    }
    free(pr);
}
