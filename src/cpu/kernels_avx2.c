/* kernels_avx2.c — AVX2 + FMA + F16C kernels (compiled with -mavx2 -mfma -mf16c for this
 * file only, selected at run time). matmul with few rows of A (the decoder) makes one
 * pass over B, a pair of rows at a time, computing 4x2 (5x2) blocks of C as 8-wide dot products
 * and prefetching the rows ahead; many rows go to the packed GEMM of gemm_avx2.c. The f16
 * variant reads B in its stored type (halves widened in registers; q8_0 is in
 * gemm_q8_avx2.c). Also softmax, GELU, the q8_0 quantiser and f16 conversion. */
#include <immintrin.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "kernels.h"
#include "simd_avx2.h"

static inline float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* out[i] = hsum(v_i) for 8 vectors at once, each with hsum's additions (the same bits):
 * the halves of pairs, then the pairs of lanes, then one horizontal add. */
static inline void hsum8(__m256 v0, __m256 v1, __m256 v2, __m256 v3, __m256 v4, __m256 v5, __m256 v6, __m256 v7,
                         float *out)
{
    __m256 e01 = _mm256_add_ps(_mm256_permute2f128_ps(v0, v1, 0x20), _mm256_permute2f128_ps(v0, v1, 0x31));
    __m256 e23 = _mm256_add_ps(_mm256_permute2f128_ps(v2, v3, 0x20), _mm256_permute2f128_ps(v2, v3, 0x31));
    __m256 e45 = _mm256_add_ps(_mm256_permute2f128_ps(v4, v5, 0x20), _mm256_permute2f128_ps(v4, v5, 0x31));
    __m256 e67 = _mm256_add_ps(_mm256_permute2f128_ps(v6, v7, 0x20), _mm256_permute2f128_ps(v6, v7, 0x31));
    /* lanes of e01: v0's four sums, then v1's; f0: v0 (lane 0) and v1 (lane 1), then v2, v3 */
    __m256 f0 = _mm256_add_ps(_mm256_shuffle_ps(e01, e23, 0x44), _mm256_shuffle_ps(e01, e23, 0xEE));
    __m256 f1 = _mm256_add_ps(_mm256_shuffle_ps(e45, e67, 0x44), _mm256_shuffle_ps(e45, e67, 0xEE));
    __m256 r = _mm256_hadd_ps(f0, f1); /* v0 v2 v4 v6 | v1 v3 v5 v7 */
    __m128 lo = _mm256_castps256_ps128(r), hi = _mm256_extractf128_ps(r, 1);
    _mm_storeu_ps(out, _mm_unpacklo_ps(lo, hi));
    _mm_storeu_ps(out + 4, _mm_unpackhi_ps(lo, hi));
}

/* Mask loading the first r (< 8) lanes. */
static inline __m256i tail_mask(int r)
{
    static const int lanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_loadu_si256((const __m256i *)(lanes + 8 - r));
}

static inline __m256 ld_h8(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* Keeps V in a register: GCC folds a load that two FMAs use into both of them, two loads
 * where one does. The 5x2 block then issued 12 loads for its 10 FMAs and ran on the load
 * ports (5 x 51864 x 384 in f16 on one Zen 3 core: 3.30 -> 2.72 ms with it, the same
 * instructions otherwise; docs/BENCHMARKS.md). */
#define IN_REGISTER(v) __asm__("" : "+x"(v))

/* 8 values of B (f32, or f16 when F16) from element I. */
ALWAYS_INLINE __m256 ld_b8(const void *B, bool f16, size_t i)
{
    return f16 ? ld_h8((const uint16_t *)B + i) : _mm256_loadu_ps((const float *)B + i);
}

/* The first R (< 8) values of B from element I, the other lanes 0 (as the f32 mask load
 * gives them: so f32 and f16 B of the same values give the same sums). */
ALWAYS_INLINE __m256 ld_b_tail(const void *B, bool f16, size_t i, int r)
{
    if (!f16) return _mm256_maskload_ps((const float *)B + i, tail_mask(r));
    uint16_t t[8] = {0};
    memcpy(t, (const uint16_t *)B + i, (size_t)r * sizeof *t);
    return ld_h8(t);
}

/* out[2i + j] = row i of A (ROWS rows, 4 or 5: a constant at each call, so the loops
 * unroll and the 2 ROWS accumulators stay in registers) . row j of B (2 rows), 8-wide
 * chains, the K tail masked into the same chains. */
ALWAYS_INLINE void block_rx2(const float *A, size_t lda, const void *B, bool f16, size_t ldb, float *out, int K,
                             const char *pf, size_t back, const int rows)
{
    __m256 c[5][2];
#pragma GCC unroll 5
    for (int i = 0; i < rows; i++) c[i][0] = c[i][1] = _mm256_setzero_ps();
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        if (pf && (!f16 || (k & 8))) { /* as many lines ahead as the pair reads: f32 one a step, f16 one in two */
            sotto__prefetch_2(pf, back);
            pf += 64;
        }
        __m256 x0 = ld_b8(B, f16, (size_t)k), x1 = ld_b8(B, f16, ldb + k);
#pragma GCC unroll 5
        for (int i = 0; i < rows; i++) {
            __m256 a = _mm256_loadu_ps(A + i * lda + k);
            IN_REGISTER(a);
            c[i][0] = _mm256_fmadd_ps(a, x0, c[i][0]), c[i][1] = _mm256_fmadd_ps(a, x1, c[i][1]);
        }
    }
    if (k < K) {
        __m256i mk = tail_mask(K - k);
        __m256 x0 = ld_b_tail(B, f16, (size_t)k, K - k), x1 = ld_b_tail(B, f16, ldb + k, K - k);
#pragma GCC unroll 5
        for (int i = 0; i < rows; i++) {
            __m256 a = _mm256_maskload_ps(A + i * lda + k, mk);
            c[i][0] = _mm256_fmadd_ps(a, x0, c[i][0]), c[i][1] = _mm256_fmadd_ps(a, x1, c[i][1]);
        }
    }
    hsum8(c[0][0], c[0][1], c[1][0], c[1][1], c[2][0], c[2][1], c[3][0], c[3][1], out);
    if (rows == 5) out[8] = hsum(c[4][0]), out[9] = hsum(c[4][1]);
}

/* One row of A against B rows [n0, n1) (f32, or f16 when F16), one row of B after the
 * other: a single sequential stream through B (interleaving rows of B, each pass reading
 * a few rows at once, ran the stream from memory at well under half the speed:
 * docs/BENCHMARKS.md). */
ALWAYS_INLINE void row_1_any(const float *a, const void *B, bool f16, size_t ldb, const float *bias, float *c, int n0,
                             int n1, int K, const char *pf, size_t back)
{
    for (int n = n0; n < n1; n++) {
        size_t r = (size_t)n * ldb;
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        int k = 0;
        for (; k + 32 <= K; k += 32) {
            if (pf) { /* as many lines ahead as the step reads: f16 one, f32 two */
                sotto__prefetch_2(pf, back);
                if (!f16) sotto__prefetch_2(pf + 64, back);
                pf += f16 ? 64 : 128;
            }
            s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + k), ld_b8(B, f16, r + k), s0);
            s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + k + 8), ld_b8(B, f16, r + k + 8), s1);
            s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + k + 16), ld_b8(B, f16, r + k + 16), s2);
            s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + k + 24), ld_b8(B, f16, r + k + 24), s3);
        }
        for (; k + 8 <= K; k += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + k), ld_b8(B, f16, r + k), s0);
        if (k < K)
            s1 = _mm256_fmadd_ps(_mm256_maskload_ps(a + k, tail_mask(K - k)), ld_b_tail(B, f16, r + k, K - k), s1);
        float v = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
        c[n] = v + (bias ? bias[n] : 0.0f);
    }
}

/* C = A B^T + bias for few rows of A, one pass over B: for each pair of B rows, every
 * group of 4 rows of A as a 4x2 block (the last group a 5x2 block when one row would be
 * left: the 5 beams convert each pair of halves once), then the rows past those one at a
 * time, while the pair stays in L1; an unpaired last row of B one row of A at a time. The
 * blocks' 8 sums go through hsum8 together. Short rows of B (a pair within 4 KB:
 * Whisper's d_model of 384-1024 in f16) are prefetched 4 KB ahead (and 8 KB ahead into
 * L2: sotto__prefetch_2), which the hardware's stream prefetch leaves undone across so many
 * short rows (5 x 51864 x 384 in f16 on one core: 7.5 ms with panels kept in L2 and no
 * prefetch, 4.7 ms), longer rows two pairs ahead (and four into L2; the MLP's second layer, 5 x
 * 384 x 1536 f16 from memory: 59-72 -> 99-102 GFLOP/s; a burst of lines per pair had
 * gained nothing: docs/BENCHMARKS.md). f32 and f16 B run the same chains. */
ALWAYS_INLINE void gemv_any(const float *A, size_t lda, const void *B, bool f16, size_t ldb, const float *bias,
                            float *C, size_t ldc, int M, int N, int K)
{
    const size_t eb = f16 ? sizeof(uint16_t) : sizeof(float), row_bytes = ldb * eb;
    const size_t near = 2 * row_bytes <= 4096 ? 4096 : 4 * row_bytes, far = 2 * near, back = far - near;
    const size_t total = (size_t)N * row_bytes;
    int n = 0;
    for (; n + 2 <= N; n += 2) {
        const size_t at = (size_t)n * row_bytes;
        const char *b = (const char *)B + at;
        /* the pair 4 KB on (into L1) and 8 KB on (into L2), a line at a time through the
         * first block's (or row's) steps: a burst of 24 prefetches before each pair had
         * waited on full fill buffers (one core, f16 x 51864 x 384: 5 rows 2.41-2.45 ->
         * 2.21-2.30 ms, one row from memory 2.75-3.61 -> 2.41-2.44) */
        const char *pf = at + far + 2 * row_bytes <= total ? b + far : NULL;
        int m = 0;
        for (int r; m + 4 <= M; m += r, pf = NULL) {
            float o[10];
            r = M - m == 5 ? 5 : 4; /* 5 beams: one block, each pair of B converted once */
            if (r == 5) block_rx2(A + m * lda, lda, b, f16, ldb, o, K, pf, back, 5);
            else block_rx2(A + m * lda, lda, b, f16, ldb, o, K, pf, back, 4);
            for (int i = 0; i < r; i++) {
                C[(m + i) * ldc + n] = o[2 * i] + (bias ? bias[n] : 0.0f);
                C[(m + i) * ldc + n + 1] = o[2 * i + 1] + (bias ? bias[n + 1] : 0.0f);
            }
        }
        for (; m < M; m++, pf = NULL) row_1_any(A + m * lda, B, f16, ldb, bias, C + m * ldc, n, n + 2, K, pf, back);
    }
    if (n < N)
        for (int m = 0; m < M; m++) row_1_any(A + m * lda, B, f16, ldb, bias, C + m * ldc, n, N, K, NULL, 0);
}

void sotto__matmul_avx2(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                        size_t ldc, int M, int N, int K)
{
    if (M >= SOTTO__GEMM_MIN_M) sotto__gemm_f32_avx2(A, lda, B, ldb, bias, C, ldc, M, N, K);
    else gemv_any(A, lda, B, false, ldb, bias, C, ldc, M, N, K);
}

void sotto__gemv_alone_avx2(const float *A, size_t lda, const void *B, bool f16, size_t ldb, const float *bias,
                            float *C, size_t ldc, int M, int n0, int n1, int K)
{
    for (int m = 0; m < M; m++) row_1_any(A + m * lda, B, f16, ldb, bias, C + m * ldc, n0, n1, K, NULL, 0);
}

/* ---- B in f16 --------------------------------------------------------------------- */

void sotto__matmul_f16_avx2(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                            size_t ldc, int M, int N, int K)
{
    if (M >= SOTTO__GEMM_MIN_M) sotto__gemm_f16_avx2(A, lda, B, ldb, bias, C, ldc, M, N, K);
    else gemv_any(A, lda, B, true, ldb, bias, C, ldc, M, N, K);
}

/* ---- exp and erf --------------------------------------------------------------------- */

/* e^x for x <= 0 down to the f32 underflow (softmax inputs are x - max): x = n ln2 + r,
 * |r| <= ln2/2, e^r by a degree-6 polynomial (Cephes expf coefficients), relative error
 * ~1e-7; results below 2^-126 flush to 0. */
static inline __m256 exp256(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(-87.3f);
    __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    x = _mm256_max_ps(x, lo);
    x = _mm256_min_ps(x, _mm256_set1_ps(88.3f));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(under, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

void sotto__softmax_avx2(float *x, int n, int visible, float scale)
{
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    /* the maximum in four chains (exact in any order), not one, where each vmaxps waited
     * on the last (24 rows of 1500, one core: 19.2 -> 16.8 us) */
    __m256 mx = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
    int i = 0;
    for (; i + 32 <= visible; i += 32) {
        mx = _mm256_max_ps(mx, _mm256_loadu_ps(x + i)), m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + i + 8));
        m2 = _mm256_max_ps(m2, _mm256_loadu_ps(x + i + 16)), m3 = _mm256_max_ps(m3, _mm256_loadu_ps(x + i + 24));
    }
    mx = _mm256_max_ps(_mm256_max_ps(mx, m1), _mm256_max_ps(m2, m3));
    for (; i + 8 <= visible; i += 8) mx = _mm256_max_ps(mx, _mm256_loadu_ps(x + i));
    __m256i tail = tail_mask(visible - i);
    if (i < visible) mx = _mm256_max_ps(mx, _mm256_blendv_ps(ninf, _mm256_maskload_ps(x + i, tail), _mm256_castsi256_ps(tail)));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    __m256 m = _mm256_set1_ps(_mm_cvtss_f32(h)), sc = _mm256_set1_ps(scale), acc = _mm256_setzero_ps();
    for (i = 0; i + 8 <= visible; i += 8) {
        __m256 v = exp256(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), m), sc));
        _mm256_storeu_ps(x + i, v);
        acc = _mm256_add_ps(acc, v);
    }
    if (i < visible) {
        __m256 v = exp256(_mm256_mul_ps(_mm256_sub_ps(_mm256_maskload_ps(x + i, tail), m), sc));
        v = _mm256_and_ps(v, _mm256_castsi256_ps(tail));
        _mm256_maskstore_ps(x + i, tail, v);
        acc = _mm256_add_ps(acc, v);
    }
    __m256 inv = _mm256_set1_ps(1.0f / hsum(acc));
    for (i = 0; i + 8 <= visible; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
    for (; i < visible; i++) x[i] *= _mm256_cvtss_f32(inv);
    for (i = visible; i < n; i++) x[i] = 0.0f;
}

void sotto__to_f16_avx2(const float *x, uint16_t *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) out[i] = (uint16_t)_cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}

void sotto__from_f16_avx2(const uint16_t *h, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
    for (; i < n; i++) out[i] = _cvtsh_ss(h[i]);
}

/* erf(x) = sign(x) (1 - t P(t) e^{-x^2}), t = 1 / (1 + p|x|): Abramowitz & Stegun 7.1.26,
 * absolute error <= 1.5e-7, with e^{-x^2} from exp256. */
static inline __m256 erf256(__m256 x)
{
    __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
    __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), ax, _mm256_set1_ps(1.0f)));
    __m256 p = _mm256_set1_ps(1.061405429f);
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.453152027f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
    p = _mm256_mul_ps(p, t);
    __m256 e = exp256(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(ax, ax)));
    __m256 y = _mm256_fnmadd_ps(p, e, _mm256_set1_ps(1.0f));
    return _mm256_or_ps(y, sign);
}

void sotto__gelu_avx2(float *x, size_t n)
{
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f), r2 = _mm256_set1_ps(0.70710678118654752f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 g = _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, erf256(_mm256_mul_ps(v, r2))));
        _mm256_storeu_ps(x + i, g);
    }
    sotto__gelu_ref(x + i, n - i);
}

/* ---- activations to q8_0 ------------------------------------------------------------ */

void sotto__quantize_q8_avx2(const float *x, sotto__block_q8_0 *out, int k)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int b = 0; b < k / SOTTO__QK8_0; b++) {
        const float *p = x + b * SOTTO__QK8_0;
        __m256 v0 = _mm256_loadu_ps(p), v1 = _mm256_loadu_ps(p + 8), v2 = _mm256_loadu_ps(p + 16),
               v3 = _mm256_loadu_ps(p + 24);
        __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v0), _mm256_andnot_ps(sign, v1)),
                                 _mm256_max_ps(_mm256_andnot_ps(sign, v2), _mm256_andnot_ps(sign, v3)));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        float d = _mm_cvtss_f32(h) / 127.0f;
        float id = d > 0 ? 1.0f / d : 0.0f;
        out[b].d = (uint16_t)_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
        __m256 s = _mm256_set1_ps(id);
        /* cvtps rounds to nearest even, as lrintf in the reference */
        __m256i i0 = _mm256_cvtps_epi32(_mm256_mul_ps(v0, s)), i1 = _mm256_cvtps_epi32(_mm256_mul_ps(v1, s)),
                i2 = _mm256_cvtps_epi32(_mm256_mul_ps(v2, s)), i3 = _mm256_cvtps_epi32(_mm256_mul_ps(v3, s));
        __m256i p01 = _mm256_packs_epi32(i0, i1), p23 = _mm256_packs_epi32(i2, i3);
        __m256i q = _mm256_packs_epi16(p01, p23); /* lanes interleaved by the 128-bit packs */
        q = _mm256_permutevar8x32_epi32(q, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)out[b].qs, q);
    }
}

/* ---- C = A B with B in f16 ------------------------------------------------------------ */

static inline __attribute__((always_inline)) void tile_nn_f16(const float *A, size_t lda, const uint16_t *B,
                                                               size_t ldb, float *C, size_t ldc, const int rows,
                                                               int cols, int K)
{
    __m256 c[4][2];
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++) c[i][0] = c[i][1] = _mm256_setzero_ps();
    uint16_t pad[16] = {0};
    for (int k = 0; k < K; k++) {
        const uint16_t *b = B + (size_t)k * ldb;
        if (cols < 16) { /* a partial tile: copy the row end so no load passes it */
            for (int j = 0; j < cols; j++) pad[j] = b[j];
            b = pad;
        }
        __m256 b0 = ld_h8(b), b1 = ld_h8(b + 8);
#pragma GCC unroll 4
        for (int i = 0; i < rows; i++) {
            __m256 a = _mm256_broadcast_ss(A + i * lda + k);
            c[i][0] = _mm256_fmadd_ps(a, b0, c[i][0]);
            c[i][1] = _mm256_fmadd_ps(a, b1, c[i][1]);
        }
    }
    __m256i m0 = tail_mask(cols < 8 ? cols : 8), m1 = tail_mask(cols > 8 ? cols - 8 : 0);
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++) {
        _mm256_maskstore_ps(C + i * ldc, m0, c[i][0]);
        _mm256_maskstore_ps(C + i * ldc + 8, m1, c[i][1]);
    }
}

void sotto__matmul_nn_f16_avx2(const float *A, size_t lda, const uint16_t *B, size_t ldb, float *C, size_t ldc,
                               int M, int N, int K)
{
    if (M == 1 && N >= 256) {
        sotto__row_stream_f16_avx2(A, B, ldb, C, N, K);
        return;
    }
    int n0 = 0;
    if (M == 1)
        for (; n0 + 64 <= N; n0 += 64) sotto__row_1x64_f16_avx2(A, B + n0, ldb, C + n0, K);
    for (int n = n0; n < N; n += 16) {
        int cols = N - n < 16 ? N - n : 16;
        int m = 0;
        for (; m + 4 <= M; m += 4) tile_nn_f16(A + m * lda, lda, B + n, ldb, C + m * ldc + n, ldc, 4, cols, K);
        const float *a = A + m * lda;
        float *c = C + m * ldc + n;
        switch (M - m) { /* constant row counts keep the accumulators in registers */
        case 3: tile_nn_f16(a, lda, B + n, ldb, c, ldc, 3, cols, K); break;
        case 2: tile_nn_f16(a, lda, B + n, ldb, c, ldc, 2, cols, K); break;
        case 1: tile_nn_f16(a, lda, B + n, ldb, c, ldc, 1, cols, K); break;
        }
    }
}


/* ---- vocabulary proxy scores ------------------------------------------------------- */

/* 32 five-bit values (nibbles NIB plus 16 where bit j of the 4 bytes at BITS is set, j
 * the value's place) times the 32 int8 activations at A: exact int32 sums in 8 lanes, as
 * floats. */
static inline __m256 dot_p5(__m256i nib, const uint8_t *bits, const int8_t *a)
{
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3,
                                            3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    __m256i b = _mm256_shuffle_epi8(_mm256_broadcastd_epi32(_mm_loadu_si32(bits)), spread);
    __m256i hi = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(b, bit), bit), _mm256_set1_epi8(16));
    __m256i v = _mm256_or_si256(nib, hi); /* 0..31 */
    __m256i p = _mm256_maddubs_epi16(v, _mm256_loadu_si256((const __m256i *)a)); /* |.| <= 2 * 31 * 128 */
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}

/* A record's scales (K / 32 halves, a multiple of 4) times D into SD, and their dot
 * product with G, 8 at a time. */
static inline __m256 p5_scales(const uint16_t *sr, const float *d, const float *g, int nb, float *sd)
{
    __m256 gs = _mm256_setzero_ps();
    for (int b = 0; b < nb; b += 8) {
        __m256 s = nb - b >= 8 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sr + b)))
                               : _mm256_cvtph_ps(_mm_loadl_epi64((const __m128i *)(sr + b))); /* the last 4 */
        __m256 dv = nb - b >= 8 ? _mm256_loadu_ps(d + b) : _mm256_castps128_ps256(_mm_loadu_ps(d + b));
        __m256 gv = nb - b >= 8 ? _mm256_loadu_ps(g + b) : _mm256_castps128_ps256(_mm_loadu_ps(g + b));
        if (nb - b < 8) { /* the upper lanes of the casts are undefined: zero them */
            dv = _mm256_insertf128_ps(_mm256_setzero_ps(), _mm256_castps256_ps128(dv), 0);
            gv = _mm256_insertf128_ps(_mm256_setzero_ps(), _mm256_castps256_ps128(gv), 0);
        }
        _mm256_storeu_ps(sd + b, _mm256_mul_ps(s, dv));
        gs = _mm256_fmadd_ps(s, gv, gs);
    }
    return gs;
}

/* Each record's four blocks of a 128-value chunk go into four sums of their own, so no
 * block waits on the one before it, and the scales are widened 8 at a time (one chain of
 * fused multiply-adds through a record, and a scalar loop over its scales, ran at about
 * 60 % of this speed: docs/BENCHMARKS.md; fetching the records eight ahead, as the
 * avx512 set does, made it slower). */
void sotto__scores_p5_avx2(const int8_t *a, const float *d, const float *g, const uint8_t *rows, float *u, int N,
                           int K)
{
    const int nb = K / 32;
    const size_t rb = (size_t)K / 2 + K / 8 + K / 16;
    const __m256i lo = _mm256_set1_epi8(15);
    float sd[SOTTO__PROXY_MAX_K / 32 + 8];
    for (int n = 0; n < N; n++) {
        const uint8_t *row = rows + (size_t)n * rb, *bits = row + K / 2;
        __m256 gs = p5_scales((const uint16_t *)(bits + K / 8), d, g, nb, sd);
        __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
        for (int c = 0; c < K / 128; c++) {
            __m256i v0 = _mm256_loadu_si256((const __m256i *)(row + 64 * c));
            __m256i v1 = _mm256_loadu_si256((const __m256i *)(row + 64 * c + 32));
            const uint8_t *bc = bits + 16 * c; /* bits of values 0..31, 32..63, 64..95, 96..127 */
            const int8_t *ac = a + 128 * c;
            const float *sc = sd + 4 * c;
            acc0 = _mm256_fmadd_ps(dot_p5(_mm256_and_si256(v0, lo), bc, ac), _mm256_broadcast_ss(sc), acc0);
            acc1 = _mm256_fmadd_ps(dot_p5(_mm256_and_si256(v1, lo), bc + 4, ac + 32), _mm256_broadcast_ss(sc + 1), acc1);
            acc2 = _mm256_fmadd_ps(dot_p5(_mm256_and_si256(_mm256_srli_epi16(v0, 4), lo), bc + 8, ac + 64),
                                   _mm256_broadcast_ss(sc + 2), acc2);
            acc3 = _mm256_fmadd_ps(dot_p5(_mm256_and_si256(_mm256_srli_epi16(v1, 4), lo), bc + 12, ac + 96),
                                   _mm256_broadcast_ss(sc + 3), acc3);
        }
        u[n] = hsum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3))) + hsum(gs);
    }
}

void sotto__quantize_p5_avx2(const float *x, int K, uint8_t *row, float *err, float *len)
{
    uint8_t *bits = row + K / 2, *scales = bits + K / 8;
    memset(row, 0, (size_t)K / 2 + K / 8);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 e2 = _mm256_setzero_ps(), n2 = e2;
    for (int b = 0; b < K / 32; b++) {
        const float *xb = x + 32 * b;
        __m256 v[4];
        for (int i = 0; i < 4; i++) v[i] = _mm256_loadu_ps(xb + 8 * i);
        __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v[0]), _mm256_andnot_ps(sign, v[1])),
                                 _mm256_max_ps(_mm256_andnot_ps(sign, v[2]), _mm256_andnot_ps(sign, v[3])));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        float amax = _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
        uint16_t hs = (uint16_t)_cvtss_sh(amax / 15.0f, _MM_FROUND_TO_NEAREST_INT);
        while (_cvtsh_ss(hs) < amax / 15.5f) hs++;
        scales[2 * b] = (uint8_t)hs, scales[2 * b + 1] = (uint8_t)(hs >> 8);
        float s = _cvtsh_ss(hs), inv = s > 0 ? 1.0f / s : 0.0f;
        __m256i q[4];
        for (int i = 0; i < 4; i++) { /* as the reference: x * inv + 16.5, clamped, truncated */
            __m256 r = _mm256_add_ps(_mm256_mul_ps(v[i], _mm256_set1_ps(inv)), _mm256_set1_ps(16.5f));
            __m256i t = _mm256_cvttps_epi32(_mm256_max_ps(r, _mm256_setzero_ps()));
            q[i] = _mm256_min_epi32(t, _mm256_set1_epi32(31));
            __m256 p = _mm256_mul_ps(_mm256_set1_ps(s), _mm256_cvtepi32_ps(_mm256_sub_epi32(q[i], _mm256_set1_epi32(16))));
            __m256 diff = _mm256_sub_ps(v[i], p);
            e2 = _mm256_fmadd_ps(diff, diff, e2), n2 = _mm256_fmadd_ps(p, p, n2);
        }
        __m256i w = _mm256_packus_epi16(_mm256_packus_epi32(q[0], q[1]), _mm256_packus_epi32(q[2], q[3]));
        w = _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)); /* values 0..31 in order */
        uint32_t hb = (uint32_t)_mm256_movemask_epi8(_mm256_slli_epi16(w, 3)); /* bit 4 of each value */
        __m256i lo = _mm256_and_si256(w, _mm256_set1_epi8(15));
        int c = b / 4, j0 = 32 * (b % 4);
        uint8_t *dst = row + c * 64 + (j0 & 63);
        __m256i old = _mm256_loadu_si256((const __m256i *)dst);
        if (j0 >= 64) lo = _mm256_slli_epi16(lo, 4); /* nibbles 0..15: no carry across bytes */
        _mm256_storeu_si256((__m256i *)dst, _mm256_or_si256(old, lo));
        memcpy(bits + c * 16 + j0 / 8, &hb, 4);
    }
    __m128 se = _mm_add_ps(_mm256_castps256_ps128(e2), _mm256_extractf128_ps(e2, 1));
    __m128 sn = _mm_add_ps(_mm256_castps256_ps128(n2), _mm256_extractf128_ps(n2, 1));
    float fe[4], fn[4];
    _mm_storeu_ps(fe, se), _mm_storeu_ps(fn, sn);
    /* f32 partial sums of K / 8 <= 512 squares each: relative error below 2^-14 */
    *err = (float)(sqrt((double)fe[0] + fe[1] + fe[2] + fe[3]) * 1.001);
    *len = (float)(sqrt((double)fn[0] + fn[1] + fn[2] + fn[3]) * 1.001);
}
