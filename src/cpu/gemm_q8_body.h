/* gemm_q8_body.h — the q8_0 x q8_0 kernels on 256-bit registers, included once by each
 * file that compiles them for a CPU class: gemm_q8_avx2.c (vpmaddwd, vpmaddubsw),
 * gemm_q8_avxvnni.c (VEX vpdpbusd) and gemm_q8_avx512.c (EVEX vpdpbusd on ymm). The
 * includer defines Q8_NAME(x) (the suffix of the public names) and Q8_DPBUSD(acc, u, s)
 * (vpdpbusd) or leaves it undefined (AVX2).
 *
 * Every output is sotto__matmul_q8_ref's value bit for bit: per block an exact int32 dot
 * product, then s = s + (d_a d_b) dot in block order, one product and one sum rounded
 * at a time (no FMA), and s + bias (or + 0) last. The integer sums are exact in any
 * order, so only the float chain matters, and it runs in lanes, one output per lane.
 *
 *   GEMM (Q8_USE_GEMM: from 8 rows): panels of 16 rows of B packed once per Q8_MC rows of
 *   A and Q8_KCB blocks of K; the 4x16 micro-kernel broadcasts a piece of a row of A
 *   against 16 rows of B per step.
 *   GEMV (fewer rows): groups of 8 rows of B read in place, each block's 8 dot products
 *   reduced across lanes into one vector (lane r = row r), the group kept in L1 while up
 *   to 8 rows of A pass over it and the next group prefetched (8 interleaved rows alone
 *   ran at well under half the speed of one stream from memory).
 *
 * VNNI: (b + 128) (u8) x a (s8) summed into s32, minus 128 sum a, exact for any int8; the
 * panel holds [8 quads][16 rows][4 bytes] a block.
 * AVX2, GEMM: a and b widened to int16 (the panel [16 pairs][16 rows][2], A's rows beside
 * it), vpmaddwd of a broadcast pair of a against 16 rows' pairs, vpaddd into s32: two
 * instructions per 16 products, where vpsignb + vpmaddubsw + vpmaddwd + vpaddd took four
 * per 32 but three of them on the two ports that multiply (an Intel Xeon, 750 x 384 x 384
 * on one core: 111-115 -> 125-130 GFLOP/s; the FMA's f32 GEMM 105-108). Exact for any int8.
 * AVX2, GEMV: |b| (u8) x (a with b's sign) (s8) in pairs to s16, at most 2 * 128 * 127 (no
 * saturation: A's values are -127..127, as sotto's quantiser writes them; B's any int8),
 * then pairs of s16 to s32 (widening B there would cost as much as it saves). */
#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#include "kernels.h"
#include "simd_avx2.h"

#define INLINE static inline __attribute__((always_inline))

#ifdef Q8_DPBUSD
#define Q8_VNNI 1
#else
#define Q8_VNNI 0
#endif

#define Q8_MR 4
enum { Q8_NR = 16, Q8_QK = SOTTO__QK8_0, Q8_GV_ROWS = 8, Q8_GV_MAX_NB = 256 };
/* AVX2 keeps the Q8_MC rows of A widened to int16 (64 bytes a block, on the stack), so
 * it takes 4 blocks of K at a time: 30 KB (8 blocks measured the same). */
enum { Q8_MC = 120, Q8_KCB = Q8_VNNI ? 16 : 4 };
/* The packed GEMM from 8 rows; fewer (the decoder's beams) run faster through the GEMV,
 * whose 8 rows of B are transposed in registers, than through the GEMM's packing (an Intel
 * Xeon, one core, 5 x 1536 x 384 and 5 x 384 x 1536: AVX2 66-68 -> 77-83 GFLOP/s, AVX-VNNI
 * 95-100 -> 121-139, on the 256-bit GEMV of gemm_q8_avx512.c's set 99-112 -> 136-140). */
#define Q8_USE_GEMM(M) ((M) >= 8)

typedef struct q8_panel {
#if Q8_VNNI
    _Alignas(32) int8_t q[Q8_KCB][Q8_QK / 4][Q8_NR][4]; /* b + 128 */
#else
    _Alignas(32) int16_t q[Q8_KCB][Q8_QK / 2][Q8_NR][2]; /* b widened, in pairs */
#endif
    _Alignas(32) float d[Q8_KCB][Q8_NR];
} q8_panel;

typedef struct q8_arows {
#if Q8_VNNI
    int32_t corr[Q8_MC][Q8_KCB]; /* -128 sum a */
#else
    _Alignas(32) int16_t a[Q8_MC][Q8_KCB][Q8_QK]; /* a widened */
#endif
    float d[Q8_MC][Q8_KCB];
} q8_arows;


/* Mask for the first r (0..8) lanes. */
INLINE __m256i q8_lanes(int r)
{
    static const int bits[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_loadu_si256((const __m256i *)(bits + 8 - r));
}

INLINE int32_t q8_block_sum(const sotto__block_q8_0 *a)
{
    __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), _mm256_loadu_si256((const __m256i *)a->qs)),
                                  _mm256_set1_epi16(1));
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
    return _mm_cvtsi128_si32(h);
}

INLINE int32_t q8_quad(const sotto__block_q8_0 *b, int s)
{
    int32_t v;
    memcpy(&v, b->qs + 4 * s, 4);
    return v;
}

/* ACC + the int32 dot products of the 4 bytes in each lane of A (broadcast, signed) and
 * B (the packed or stored bytes: b for AVX2, b + 128 for VNNI); U = |b| (AVX2 only). */
INLINE __m256i q8_dot4(__m256i acc, __m256i b, __m256i u, __m256i a)
{
#if Q8_VNNI
    (void)u;
    return Q8_DPBUSD(acc, b, a);
#else
    __m256i p = _mm256_maddubs_epi16(u, _mm256_sign_epi8(a, b));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
#endif
}

INLINE __m256i q8_u(__m256i b)
{
#if Q8_VNNI
    return b;
#else
    return _mm256_abs_epi8(b);
#endif
}

/* ---- GEMM ------------------------------------------------------------------------------ */

#if Q8_VNNI
static void q8_pack_b(const sotto__block_q8_0 *B, size_t ldb, int rows, int j0, int kcb, q8_panel *p)
{
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    for (int jb = 0; jb < kcb; jb++) {
        for (int g = 0; g < Q8_NR; g += 8) {
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
            sotto__transpose8(r); /* 8 rows x 8 quads -> 8 quads x 8 rows */
            for (int s = 0; s < Q8_QK / 4; s++) _mm256_store_ps((float *)p->q[jb][s][g], r[s]);
        }
    }
}

static void q8_prep_a(const sotto__block_q8_0 *A, size_t lda, int rows, int j0, int kcb, q8_arows *a)
{
    for (int i = 0; i < rows; i++)
        for (int jb = 0; jb < kcb; jb++) {
            const sotto__block_q8_0 *b = A + (size_t)i * lda + j0 + jb;
            a->corr[i][jb] = -128 * q8_block_sum(b);
            a->d[i][jb] = _cvtsh_ss(b->d);
        }
}
#else
/* Each row's block widened to 16 pairs of int16, the 16 rows' pair s side by side. */
static void q8_pack_b(const sotto__block_q8_0 *B, size_t ldb, int rows, int j0, int kcb, q8_panel *p)
{
    for (int jb = 0; jb < kcb; jb++) {
        for (int g = 0; g < Q8_NR; g += 8) {
            __m256 lo[8], hi[8];
            for (int i = 0; i < 8; i++) {
                if (g + i < rows) {
                    const sotto__block_q8_0 *b = B + (size_t)(g + i) * ldb + j0 + jb;
                    __m256i x = _mm256_loadu_si256((const __m256i *)b->qs);
                    lo[i] = _mm256_castsi256_ps(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(x)));
                    hi[i] = _mm256_castsi256_ps(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(x, 1)));
                    p->d[jb][g + i] = _cvtsh_ss(b->d);
                } else {
                    lo[i] = hi[i] = _mm256_setzero_ps(); /* b = 0, d = 0 */
                    p->d[jb][g + i] = 0.0f;
                }
            }
            sotto__transpose8(lo); /* 8 rows x 8 pairs -> 8 pairs x 8 rows */
            sotto__transpose8(hi);
            for (int s = 0; s < 8; s++) {
                _mm256_store_ps((float *)p->q[jb][s][g], lo[s]);
                _mm256_store_ps((float *)p->q[jb][8 + s][g], hi[s]);
            }
        }
    }
}

static void q8_prep_a(const sotto__block_q8_0 *A, size_t lda, int rows, int j0, int kcb, q8_arows *a)
{
    for (int i = 0; i < rows; i++)
        for (int jb = 0; jb < kcb; jb++) {
            const sotto__block_q8_0 *b = A + (size_t)i * lda + j0 + jb;
            __m256i x = _mm256_loadu_si256((const __m256i *)b->qs);
            _mm256_store_si256((__m256i *)a->a[i][jb], _mm256_cvtepi8_epi16(_mm256_castsi256_si128(x)));
            _mm256_store_si256((__m256i *)(a->a[i][jb] + 16), _mm256_cvtepi8_epi16(_mm256_extracti128_si256(x, 1)));
            a->d[i][jb] = _cvtsh_ss(b->d);
        }
}
#endif

/* The micro-kernel's steps over a block: 8 quads of int8 (VNNI) or 16 pairs of int16. */
enum { Q8_STEPS = Q8_VNNI ? Q8_QK / 4 : Q8_QK / 2 };

/* A block's int32 sums start at -128 sum a (VNNI: the offset of b + 128), else at 0. */
INLINE __m256i q8_sum0(const q8_arows *ar, int i, int jb)
{
#if Q8_VNNI
    return _mm256_set1_epi32(ar->corr[i][jb]);
#else
    (void)ar, (void)i, (void)jb;
    return _mm256_setzero_si256();
#endif
}

/* Step Q's piece of row I of A in every lane: the quad of its block A (VNNI), or the pair
 * of its widened copy (AVX2: one 32-bit broadcast load, no shuffle). */
INLINE __m256i q8_piece(const sotto__block_q8_0 *a, const q8_arows *ar, int i, int jb, int q)
{
#if Q8_VNNI
    (void)ar, (void)i, (void)jb;
    return _mm256_set1_epi32(q8_quad(a, q));
#else
    (void)a;
    return _mm256_broadcastd_epi32(_mm_loadu_si32(ar->a[i][jb] + 2 * q));
#endif
}

/* ACC + one step's products of A's piece and the panel's B. */
INLINE __m256i q8_step(__m256i acc, __m256i b, __m256i a)
{
#if Q8_VNNI
    return q8_dot4(acc, b, b, a);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

/* C[ROWS, cols of 16] for blocks [0, kcb) of the panel: from 0 (FIRST) or C, and + bias
 * (or + 0) when LAST. The float sums wait in T (L1) between blocks, so the 16 ymm
 * registers hold the int32 sums, B and A. */
INLINE void q8_micro(const sotto__block_q8_0 *A, size_t lda, const q8_arows *ar, int i0, const q8_panel *p, int kcb,
                     float *C, size_t ldc, const int rows, int cols, const float *bias, bool first, bool last)
{
    __m256i m0 = q8_lanes(cols < 8 ? cols : 8), m1 = q8_lanes(cols > 8 ? cols - 8 : 0);
    _Alignas(32) float t[Q8_MR][Q8_NR];
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++) {
        _mm256_store_ps(t[i], first ? _mm256_setzero_ps() : _mm256_maskload_ps(C + i * ldc, m0));
        _mm256_store_ps(t[i] + 8, first ? _mm256_setzero_ps() : _mm256_maskload_ps(C + i * ldc + 8, m1));
    }
    for (int jb = 0; jb < kcb; jb++) {
        __m256i s[Q8_MR][2];
#pragma GCC unroll 4
        for (int i = 0; i < rows; i++) s[i][0] = s[i][1] = q8_sum0(ar, i0 + i, jb);
#pragma GCC unroll 16
        for (int q = 0; q < Q8_STEPS; q++) {
            __m256i b0 = _mm256_load_si256((const __m256i *)p->q[jb][q][0]);
            __m256i b1 = _mm256_load_si256((const __m256i *)p->q[jb][q][8]);
#pragma GCC unroll 4
            for (int i = 0; i < rows; i++) {
                __m256i a = q8_piece(A + (size_t)i * lda + jb, ar, i0 + i, jb, q);
                s[i][0] = q8_step(s[i][0], b0, a);
                s[i][1] = q8_step(s[i][1], b1, a);
                /* the sums stay in registers: left to itself GCC 12 hoisted the next
                 * steps' broadcasts and spilled one AVX2 sum to the stack, a store and
                 * reload in every step (AVX2, 750 x 384 x 384 on one core: 112-121 ->
                 * 130-135 GFLOP/s; the VNNI steps, which need no temporaries, unchanged) */
                __asm__("" : "+x"(s[i][0]), "+x"(s[i][1]));
            }
        }
        __m256 d0 = _mm256_load_ps(p->d[jb]), d1 = _mm256_load_ps(p->d[jb] + 8);
#pragma GCC unroll 4
        for (int i = 0; i < rows; i++) {
            __m256 da = _mm256_set1_ps(ar->d[i0 + i][jb]);
            _mm256_store_ps(t[i], _mm256_add_ps(_mm256_load_ps(t[i]),
                                                _mm256_mul_ps(_mm256_mul_ps(da, d0), _mm256_cvtepi32_ps(s[i][0]))));
            _mm256_store_ps(t[i] + 8, _mm256_add_ps(_mm256_load_ps(t[i] + 8),
                                                    _mm256_mul_ps(_mm256_mul_ps(da, d1), _mm256_cvtepi32_ps(s[i][1]))));
        }
    }
    __m256 z0 = last && bias ? _mm256_maskload_ps(bias, m0) : _mm256_setzero_ps();
    __m256 z1 = last && bias ? _mm256_maskload_ps(bias + 8, m1) : _mm256_setzero_ps();
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++) {
        __m256 c0 = _mm256_load_ps(t[i]), c1 = _mm256_load_ps(t[i] + 8);
        if (last) c0 = _mm256_add_ps(c0, z0), c1 = _mm256_add_ps(c1, z1);
        if (cols == Q8_NR) {
            _mm256_storeu_ps(C + i * ldc, c0);
            _mm256_storeu_ps(C + i * ldc + 8, c1);
        } else {
            _mm256_maskstore_ps(C + i * ldc, m0, c0);
            _mm256_maskstore_ps(C + i * ldc + 8, m1, c1);
        }
    }
}

static void q8_micro_any(const sotto__block_q8_0 *A, size_t lda, const q8_arows *ar, int i0, const q8_panel *p,
                         int kcb, float *C, size_t ldc, int rows, int cols, const float *bias, bool first, bool last)
{
    switch (rows) {
#if Q8_MR > 3
    case 4: q8_micro(A, lda, ar, i0, p, kcb, C, ldc, 4, cols, bias, first, last); break;
#endif
    case 3: q8_micro(A, lda, ar, i0, p, kcb, C, ldc, 3, cols, bias, first, last); break;
    case 2: q8_micro(A, lda, ar, i0, p, kcb, C, ldc, 2, cols, bias, first, last); break;
    default: q8_micro(A, lda, ar, i0, p, kcb, C, ldc, 1, cols, bias, first, last); break;
    }
}

void Q8_NAME(sotto__gemm_q8)(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                             const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    int nb = K / Q8_QK;
    q8_panel p;
    q8_arows ar;
    for (int m0 = 0; m0 < M; m0 += Q8_MC) {
        int mc = M - m0 < Q8_MC ? M - m0 : Q8_MC;
        for (int j0 = 0; j0 < nb; j0 += Q8_KCB) {
            int kcb = nb - j0 < Q8_KCB ? nb - j0 : Q8_KCB;
            bool first = j0 == 0, last = j0 + kcb == nb;
            q8_prep_a(A + (size_t)m0 * lda, lda, mc, j0, kcb, &ar);
            for (int n0 = 0; n0 < N; n0 += Q8_NR) {
                int cols = N - n0 < Q8_NR ? N - n0 : Q8_NR;
                q8_pack_b(B + (size_t)n0 * ldb, ldb, cols, j0, kcb, &p);
                const int next = N - n0 - Q8_NR <= 0 ? 0 : N - n0 - Q8_NR < Q8_NR ? N - n0 - Q8_NR : Q8_NR;
                const int calls = (mc + Q8_MR - 1) / Q8_MR;
                const char *Bnext = next ? (const char *)(B + (size_t)(n0 + Q8_NR) * ldb + j0) : NULL;
                for (int i = 0, c = 0; i < mc; i += Q8_MR, c++) {
                    sotto__prefetch_share(Bnext, ldb * sizeof *B, next, (size_t)kcb * sizeof *B, c, calls);
                    q8_micro_any(A + (size_t)(m0 + i) * lda + j0, lda, &ar, i, &p, kcb, C + (size_t)(m0 + i) * ldc + n0,
                                 ldc, mc - i < Q8_MR ? mc - i : Q8_MR, cols, bias ? bias + n0 : NULL, first, last);
                }
            }
        }
    }
}

/* ---- GEMV: few rows of A ------------------------------------------------------------------ */

/* Lane r of the result = the sum of the 8 lanes of V[r]. */
INLINE __m256i q8_reduce8(const __m256i v[8])
{
    __m256i h01 = _mm256_hadd_epi32(v[0], v[1]), h23 = _mm256_hadd_epi32(v[2], v[3]);
    __m256i h45 = _mm256_hadd_epi32(v[4], v[5]), h67 = _mm256_hadd_epi32(v[6], v[7]);
    __m256i h0 = _mm256_hadd_epi32(h01, h23), h1 = _mm256_hadd_epi32(h45, h67);
    return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20), _mm256_permute2x128_si256(h0, h1, 0x31));
}

/* 8 lanes of partial sums of one block's dot product (a signed, B as stored). */
INLINE __m256i q8_dot32(__m256i a, __m256i b)
{
#if Q8_VNNI
    return Q8_DPBUSD(_mm256_setzero_si256(), _mm256_xor_si256(b, _mm256_set1_epi8((char)0x80)), a);
#else
    return q8_dot4(_mm256_setzero_si256(), b, _mm256_abs_epi8(b), a);
#endif
}

/* The scales of block J of the 8 rows of B at BR, widened: read as the block is used, not
 * in a pass of their own before the group (that pass took the group's cache misses, one
 * line after the other: 7 % of base q8_0's greedy run on the avx2 set). */
INLINE __m256 q8_scales8(const sotto__block_q8_0 *const br[8], int j)
{
    return _mm256_cvtph_ps(_mm_setr_epi16((short)br[0][j].d, (short)br[1][j].d, (short)br[2][j].d, (short)br[3][j].d,
                                          (short)br[4][j].d, (short)br[5][j].d, (short)br[6][j].d,
                                          (short)br[7][j].d));
}

/* C[0..MA)[n0..n0 + rows) for the group of 8 rows of B at BR (rows past ROWS repeat row
 * 0), with the prepared rows of A; the SPAN bytes at NEXT (the next group) are prefetched
 * on the way. */
static void q8_gemv_group(const sotto__block_q8_0 *A, size_t lda, int MA, const sotto__block_q8_0 *const br[8],
                          const float (*da)[Q8_GV_MAX_NB], const int32_t (*corr)[Q8_GV_MAX_NB],
                          const float *bias, float *C, size_t ldc, int rows, int nb, const char *next, size_t span)
{
    __m256i mask = q8_lanes(rows);
    __m256 z = bias ? _mm256_maskload_ps(bias, mask) : _mm256_setzero_ps();
    for (int m = 0; m < MA; m++) {
        const sotto__block_q8_0 *a = A + (size_t)m * lda;
        __m256 acc = _mm256_setzero_ps();
        for (int j = 0; j < nb; j++) {
            if (m == 0 && next) /* the next group of rows, spread over this one's blocks */
                for (size_t o = span * j / nb; o < span * (j + 1) / nb; o += 64) _mm_prefetch(next + o, _MM_HINT_T0);
            __m256i qa = _mm256_loadu_si256((const __m256i *)a[j].qs), v[8];
#pragma GCC unroll 8
            for (int r = 0; r < 8; r++) v[r] = q8_dot32(qa, _mm256_loadu_si256((const __m256i *)br[r][j].qs));
            __m256i dot = q8_reduce8(v);
            if (Q8_VNNI) dot = _mm256_add_epi32(dot, _mm256_set1_epi32(corr[m][j]));
            __m256 dd = _mm256_mul_ps(_mm256_set1_ps(da[m][j]), q8_scales8(br, j));
            acc = _mm256_add_ps(acc, _mm256_mul_ps(dd, _mm256_cvtepi32_ps(dot)));
        }
        _mm256_maskstore_ps(C + (size_t)m * ldc, mask, _mm256_add_ps(acc, z));
    }
}

/* q8_gemv_group's outputs for MA >= 2 rows of A: each block's 8 rows of B are transposed
 * in registers once, to 8 quads x 8 rows, and every row of A then takes 8 dot4 steps with
 * its quads broadcast, lane r summing row r's product, so no row of A pays the reduction
 * across lanes (on an Intel Xeon the reduction's shuffles bound the beams' vocabulary
 * projection). The integer sums are exact in any order and the float chain is the same. */
static void q8_gemv_group_t(const sotto__block_q8_0 *A, size_t lda, int MA, const sotto__block_q8_0 *const br[8],
                            const float (*da)[Q8_GV_MAX_NB], const int32_t (*corr)[Q8_GV_MAX_NB],
                            const float *bias, float *C, size_t ldc, int rows, int nb, const char *next, size_t span)
{
    const __m256i mask = q8_lanes(rows), flip = _mm256_set1_epi8(Q8_VNNI ? (char)0x80 : 0);
    const __m256 z = bias ? _mm256_maskload_ps(bias, mask) : _mm256_setzero_ps();
    __m256 acc[Q8_GV_ROWS];
    for (int m = 0; m < MA; m++) acc[m] = _mm256_setzero_ps();
    for (int j = 0; j < nb; j++) {
        if (next)
            for (size_t o = span * j / nb; o < span * (j + 1) / nb; o += 64) _mm_prefetch(next + o, _MM_HINT_T0);
        __m256 r[8];
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++)
            r[i] = _mm256_castsi256_ps(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)br[i][j].qs), flip));
        sotto__transpose8(r); /* 8 rows x 8 quads -> 8 quads x 8 rows */
        const __m256 db = q8_scales8(br, j);
        for (int m = 0; m < MA; m++) {
            const sotto__block_q8_0 *a = A + (size_t)m * lda + j;
            __m256i dot = _mm256_setzero_si256();
#pragma GCC unroll 8
            for (int q = 0; q < Q8_QK / 4; q++) {
                __m256i b = _mm256_castps_si256(r[q]);
                dot = q8_dot4(dot, b, q8_u(b), _mm256_set1_epi32(q8_quad(a, q)));
            }
            if (Q8_VNNI) dot = _mm256_add_epi32(dot, _mm256_set1_epi32(corr[m][j]));
            __m256 dd = _mm256_mul_ps(_mm256_set1_ps(da[m][j]), db);
            acc[m] = _mm256_add_ps(acc[m], _mm256_mul_ps(dd, _mm256_cvtepi32_ps(dot)));
        }
    }
    for (int m = 0; m < MA; m++) _mm256_maskstore_ps(C + (size_t)m * ldc, mask, _mm256_add_ps(acc[m], z));
}

void Q8_NAME(sotto__gemv_q8)(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                             const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    const int nb = K / Q8_QK;
    if (nb > Q8_GV_MAX_NB) { /* longer rows than the prepared copies hold: the same sums */
        sotto__matmul_q8_ref(A, lda, B, ldb, bias, C, ldc, M, N, K);
        return;
    }
    float da[Q8_GV_ROWS][Q8_GV_MAX_NB];
    int32_t corr[Q8_GV_ROWS][Q8_GV_MAX_NB];
    for (int m0 = 0; m0 < M; m0 += Q8_GV_ROWS) {
        int ma = M - m0 < Q8_GV_ROWS ? M - m0 : Q8_GV_ROWS;
        const sotto__block_q8_0 *Am = A + (size_t)m0 * lda;
        for (int m = 0; m < ma; m++)
            for (int j = 0; j < nb; j++) {
                da[m][j] = _cvtsh_ss(Am[(size_t)m * lda + j].d);
                corr[m][j] = Q8_VNNI ? -128 * q8_block_sum(Am + (size_t)m * lda + j) : 0;
            }
        for (int n0 = 0; n0 < N; n0 += 8) {
            int rows = N - n0 < 8 ? N - n0 : 8;
            const sotto__block_q8_0 *br[8];
            for (int r = 0; r < 8; r++) br[r] = B + (size_t)(n0 + (r < rows ? r : 0)) * ldb;
            const char *next = n0 + 8 < N ? (const char *)(B + (size_t)(n0 + 8) * ldb) : NULL;
            size_t span = (size_t)(N - n0 - 8 < 8 ? N - n0 - 8 : 8) * ldb * sizeof *B;
            (ma >= 2 ? q8_gemv_group_t : q8_gemv_group)(Am, lda, ma, br, (const float(*)[Q8_GV_MAX_NB])da,
                                                        (const int32_t(*)[Q8_GV_MAX_NB])corr, bias ? bias + n0 : NULL,
                                                        C + (size_t)m0 * ldc + n0, ldc, rows, nb, next, span);
        }
    }
}

void Q8_NAME(sotto__matmul_q8)(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                               const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    if (Q8_USE_GEMM(M)) Q8_NAME(sotto__gemm_q8)(A, lda, B, ldb, bias, C, ldc, M, N, K);
    else Q8_NAME(sotto__gemv_q8)(A, lda, B, ldb, bias, C, ldc, M, N, K);
}

#undef INLINE
#undef Q8_VNNI
