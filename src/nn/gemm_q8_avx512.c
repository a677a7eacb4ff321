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

enum { GEMV_MAX_BLOCKS = 512 }; /* K <= 16384 */

/* C[MA rows][0..N) for MA (1..4) rows of A of NB blocks each: per row of B and block,
 * vpdpbusd of (b + 128) and a, started from -128 sum a in lane 0, so every int8 value
 * (-128 included) is exact. The rows of B stream one after the other (a single
 * sequential stream: interleaving a few rows of B per pass ran well under half as fast
 * from memory), and the MA rows of A share the loads of B (a short prefill streams the
 * weights once). Every output takes the same operations whatever MA and its place. */
INLINE void gemv_q8(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                    const float *bias, float *C, size_t ldc, int N, int nb, const int MA)
{
    _Alignas(32) int32_t corr[4][GEMV_MAX_BLOCKS][8];
    float da[4][GEMV_MAX_BLOCKS];
    const __m256i ones = _mm256_set1_epi8(1), flip = _mm256_set1_epi8((char)0x80);
    for (int m = 0; m < MA; m++)
        for (int j = 0; j < nb; j++) {
            const sotto__block_q8_0 *a = A + (size_t)m * lda + j;
            __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(ones, _mm256_loadu_si256((const __m256i *)a->qs)),
                                          _mm256_set1_epi16(1));
            __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
            h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
            h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
            _mm256_store_si256((__m256i *)corr[m][j],
                               _mm256_setr_epi32(-128 * _mm_cvtsi128_si32(h), 0, 0, 0, 0, 0, 0, 0));
            da[m][j] = _cvtsh_ss(a->d);
        }
#define GEMV_BLOCK(b, j, s)                                                                                     \
    {                                                                                                           \
        __m256i q = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(b)[j].qs), flip);                     \
        __m256 db = _mm256_cvtph_ps(_mm_set1_epi16((short)(b)[j].d));                                           \
        for (int m = 0; m < MA; m++) {                                                                          \
            __m256i qa = _mm256_loadu_si256((const __m256i *)A[(size_t)m * lda + (j)].qs);                      \
            __m256i c0 = _mm256_load_si256((const __m256i *)corr[m][j]);                                        \
            __m256 d = _mm256_mul_ps(_mm256_broadcast_ss(&da[m][j]), db);                                       \
            s[m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_dpbusd_epi32(c0, q, qa)), d, s[m]);                \
        }                                                                                                       \
    }
    for (int n = 0; n < N; n++) {
        const sotto__block_q8_0 *b = B + (size_t)n * ldb;
        __m256 s[4], t[4];
        for (int m = 0; m < MA; m++) s[m] = t[m] = _mm256_setzero_ps();
        int j = 0;
        for (; j + 2 <= nb; j += 2) {
            GEMV_BLOCK(b, j, s) GEMV_BLOCK(b, j + 1, t)
        }
        if (j < nb) GEMV_BLOCK(b, j, s)
        for (int m = 0; m < MA; m++) {
            __m256 r = _mm256_add_ps(s[m], t[m]);
            __m128 h = _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps(r, 1));
            h = _mm_add_ps(h, _mm_movehl_ps(h, h));
            h = _mm_add_ss(h, _mm_movehdup_ps(h));
            C[(size_t)m * ldc + n] = _mm_cvtss_f32(h) + (bias ? bias[n] : 0.0f);
        }
    }
#undef GEMV_BLOCK
}

void sotto__matmul_q8_avx512(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                             const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    if (M >= SOTTO__GEMM_MIN_M) sotto__gemm_q8_avx512(A, lda, B, ldb, bias, C, ldc, M, N, K);
    else if (K / QK > GEMV_MAX_BLOCKS) sotto__matmul_q8_avx2(A, lda, B, ldb, bias, C, ldc, M, N, K);
    else
        for (int m = 0; m < M; m += 4) {
            const sotto__block_q8_0 *a = A + (size_t)m * lda;
            float *c = C + (size_t)m * ldc;
            switch (M - m < 4 ? M - m : 4) {
            case 1: gemv_q8(a, lda, B, ldb, bias, c, ldc, N, K / QK, 1); break;
            case 2: gemv_q8(a, lda, B, ldb, bias, c, ldc, N, K / QK, 2); break;
            case 3: gemv_q8(a, lda, B, ldb, bias, c, ldc, N, K / QK, 3); break;
            default: gemv_q8(a, lda, B, ldb, bias, c, ldc, N, K / QK, 4); break;
            }
        }
}
