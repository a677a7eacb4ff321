/* kernels_neon.c — the kernel set for 64-bit ARM: AdvSIMD, which every AArch64 CPU has
 * (no extension is assumed: the int8 products widen through vmull_s8, not the optional
 * dot-product instructions of the neon_dot and neon_i8mm sets). Same contracts as the
 * scalar references (kernels.h), tested against them under qemu-user (`make test-arm`).
 *
 * As on x86: f32/f16 GEMV kernels read the rows of B one after the other (one sequential
 * stream), and many rows of A (M >= SOTTO__GEMM_MIN_M) take 4x4 register tiles over
 * panels of B sized for L2. The int8 kernels are int8_neon.h's, bit for bit the scalar
 * reference's. */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "kernels.h"

enum { PANEL_BYTES = 256 * 1024 }; /* B rows a GEMM keeps in L2 while the rows of A pass */

static inline float32x4_t ld_h4(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }

static inline float32x4_t ld_b4(const void *B, bool f16, size_t i)
{
    return f16 ? ld_h4((const uint16_t *)B + i) : vld1q_f32((const float *)B + i);
}

static inline float h2f(uint16_t h) { return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0); }

static inline float ld_b1(const void *B, bool f16, size_t i)
{
    return f16 ? h2f(((const uint16_t *)B)[i]) : ((const float *)B)[i];
}

static inline float bias_at(const float *bias, int n) { return bias ? bias[n] : 0.0f; }

static int panel_rows(int K, size_t elem)
{
    int p = (int)(PANEL_BYTES / ((size_t)K * elem + 1));
    return p < 4 ? 4 : p & ~3;
}

/* ---- C = A B^T + bias, B in f32 or f16 ----------------------------------------------- */

/* One row of A against B rows [n0, n1), one B row after the other. */
static void row_1(const float *a, const void *B, bool f16, size_t ldb, const float *bias, float *c, int n0, int n1,
                  int K)
{
    for (int n = n0; n < n1; n++) {
        size_t r = (size_t)n * ldb;
        float32x4_t s0 = vdupq_n_f32(0), s1 = s0, s2 = s0, s3 = s0;
        int k = 0;
        for (; k + 16 <= K; k += 16) {
            s0 = vfmaq_f32(s0, vld1q_f32(a + k), ld_b4(B, f16, r + k));
            s1 = vfmaq_f32(s1, vld1q_f32(a + k + 4), ld_b4(B, f16, r + k + 4));
            s2 = vfmaq_f32(s2, vld1q_f32(a + k + 8), ld_b4(B, f16, r + k + 8));
            s3 = vfmaq_f32(s3, vld1q_f32(a + k + 12), ld_b4(B, f16, r + k + 12));
        }
        for (; k + 4 <= K; k += 4) s0 = vfmaq_f32(s0, vld1q_f32(a + k), ld_b4(B, f16, r + k));
        float v = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
        for (; k < K; k++) v += a[k] * ld_b1(B, f16, r + k);
        c[n] = v + bias_at(bias, n);
    }
}

/* C[4][4] = four rows of A against four rows of B (f32 or f16), K in steps of 4. */
static void tile_4x4(const float *A, size_t lda, const void *B, bool f16, size_t ldb, const float *bias, float *C,
                     size_t ldc, int K)
{
    float32x4_t acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = vdupq_n_f32(0);
    int k = 0;
    for (; k + 4 <= K; k += 4) {
        float32x4_t a[4], b[4];
        for (int i = 0; i < 4; i++) a[i] = vld1q_f32(A + i * lda + k);
        for (int j = 0; j < 4; j++)
            b[j] = ld_b4(B, f16, j * ldb + k);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) acc[i][j] = vfmaq_f32(acc[i][j], a[i], b[j]);
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            float r = vaddvq_f32(acc[i][j]);
            for (int kk = k; kk < K; kk++) {
                r += A[i * lda + kk] * ld_b1(B, f16, j * ldb + kk);
            }
            C[i * ldc + j] = r + bias_at(bias, j);
        }
}

/* B's rows from N on (f32 or f16). */
static inline const void *b_rows(const void *B, bool f16, size_t ldb, int n)
{
    return f16 ? (const void *)((const uint16_t *)B + (size_t)n * ldb)
               : (const void *)((const float *)B + (size_t)n * ldb);
}

/* TILES: rows of A by 4 in tiles (matmul from SOTTO__GEMM_MIN_M rows on, gemm always). */
static void matmul_any(const float *A, size_t lda, const void *B, bool f16, size_t ldb, const float *bias, float *C,
                       size_t ldc, int M, int N, int K, bool tiles)
{
    int panel = panel_rows(K, f16 ? 2 : 4);
    for (int n0 = 0; n0 < N; n0 += panel) {
        int n1 = n0 + panel < N ? n0 + panel : N;
        int m = 0;
        if (tiles) {
            for (; m + 4 <= M; m += 4) {
                int n = n0;
                for (; n + 4 <= n1; n += 4)
                    tile_4x4(A + m * lda, lda, b_rows(B, f16, ldb, n), f16, ldb, bias ? bias + n : NULL,
                             C + m * ldc + n, ldc, K);
                for (int i = 0; i < 4; i++) row_1(A + (m + i) * lda, B, f16, ldb, bias, C + (m + i) * ldc, n, n1, K);
            }
            /* the last M % 4 rows in tiles too (the row four times, lda 0), so that a row's
             * bits do not depend on where it falls: the tile's bits, whatever M */
            for (; m < M; m++) {
                int n = n0;
                for (; n + 4 <= n1; n += 4) {
                    float c4[16];
                    tile_4x4(A + m * lda, 0, b_rows(B, f16, ldb, n), f16, ldb, bias ? bias + n : NULL, c4, 4, K);
                    memcpy(C + m * ldc + n, c4, sizeof(float) * 4);
                }
                row_1(A + m * lda, B, f16, ldb, bias, C + m * ldc, n, n1, K);
            }
        }
        for (; m < M; m++) row_1(A + m * lda, B, f16, ldb, bias, C + m * ldc, n0, n1, K);
    }
}

void sotto__matmul_neon(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                        size_t ldc, int M, int N, int K)
{
    matmul_any(A, lda, B, false, ldb, bias, C, ldc, M, N, K, M >= SOTTO__GEMM_MIN_M);
}

void sotto__matmul_f16_neon(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                            size_t ldc, int M, int N, int K)
{
    matmul_any(A, lda, B, true, ldb, bias, C, ldc, M, N, K, M >= SOTTO__GEMM_MIN_M);
}

void sotto__gemm_neon(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C, size_t ldc,
                      int M, int N, int K)
{
    matmul_any(A, lda, B, false, ldb, bias, C, ldc, M, N, K, true);
}

void sotto__gemm_f16_neon(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                          size_t ldc, int M, int N, int K)
{
    matmul_any(A, lda, B, true, ldb, bias, C, ldc, M, N, K, true);
}

/* ---- C = A B, B [K][N] in f32 or f16 ------------------------------------------------- */

/* ROWS (1..4) rows of C over 16 columns n..n+16: the columns in four vectors, A broadcast;
 * from C's values when CACC, else from 0. */
static void tile_nn(const float *A, size_t lda, const void *B, bool f16, size_t ldb, float *C, size_t ldc, int rows,
                    int n, int K, bool cacc)
{
    float32x4_t acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = cacc && i < rows ? vld1q_f32(C + i * ldc + n + 4 * j) : vdupq_n_f32(0);
    for (int k = 0; k < K; k++) {
        size_t r = (size_t)k * ldb + n;
        float32x4_t b0 = ld_b4(B, f16, r), b1 = ld_b4(B, f16, r + 4), b2 = ld_b4(B, f16, r + 8),
                    b3 = ld_b4(B, f16, r + 12);
        for (int i = 0; i < rows; i++) {
            float x = A[i * lda + k];
            acc[i][0] = vfmaq_n_f32(acc[i][0], b0, x), acc[i][1] = vfmaq_n_f32(acc[i][1], b1, x);
            acc[i][2] = vfmaq_n_f32(acc[i][2], b2, x), acc[i][3] = vfmaq_n_f32(acc[i][3], b3, x);
        }
    }
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < 4; j++) vst1q_f32(C + i * ldc + n + 4 * j, acc[i][j]);
}

static void matmul_nn_any(const float *A, size_t lda, const void *B, bool f16, size_t ldb, float *C, size_t ldc,
                          int M, int N, int K, bool acc)
{
    for (int m = 0; m < M; m += 4) {
        int rows = M - m < 4 ? M - m : 4;
        int n = 0;
        for (; n + 16 <= N; n += 16) tile_nn(A + m * lda, lda, B, f16, ldb, C + m * ldc, ldc, rows, n, K, acc);
        for (int i = 0; i < rows; i++)
            for (int nn = n; nn < N; nn++) {
                float s = acc ? C[(m + i) * ldc + nn] : 0.0f; /* the tiles' fused chain */
                for (int k = 0; k < K; k++) s = fmaf(A[(m + i) * lda + k], ld_b1(B, f16, (size_t)k * ldb + nn), s);
                C[(m + i) * ldc + nn] = s;
            }
    }
}

void sotto__matmul_nn_neon(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                           int N, int K)
{
    matmul_nn_any(A, lda, B, false, ldb, C, ldc, M, N, K, false);
}

void sotto__matmul_nn_acc_neon(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                               int N, int K)
{
    matmul_nn_any(A, lda, B, false, ldb, C, ldc, M, N, K, true);
}

void sotto__matmul_nn_f16_neon(const float *A, size_t lda, const uint16_t *B, size_t ldb, float *C, size_t ldc,
                               int M, int N, int K)
{
    matmul_nn_any(A, lda, B, true, ldb, C, ldc, M, N, K, false);
}

/* ---- A and B in q8_0 (int8_neon.h: 4x4 tiles, the reference's bits) ------------------ */

/* Adds the exact products a[i] b[i] to ACC's lanes: int8 products widen to int16 (at most
 * 128 * 128), pairs of them to int32. */
static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b)
{
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_s8(vget_high_s8(a), vget_high_s8(b)));
}

#include "int8_neon.h"

void sotto__matmul_q8_neon(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                           const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    q8_matmul_dot(A, lda, B, ldb, bias, C, ldc, M, N, K);
}

void sotto__scores_p5_neon(const int8_t *a, const float *d, const float *g, const uint8_t *rows, float *u, int N,
                           int K)
{
    p5_scores(a, d, g, rows, u, N, K);
}

/* ---- element-wise --------------------------------------------------------------------- */

/* e^x for x in f32 range (Cephes' polynomial, as the AVX2 kernels; 0 below -87.3). */
static inline float32x4_t exp4(float32x4_t x)
{
    uint32x4_t under = vcltq_f32(x, vdupq_n_f32(-87.3f));
    x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-87.3f)), vdupq_n_f32(88.3f));
    float32x4_t n = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(1.44269504088896341f)));
    float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
    r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
    float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
    p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
    p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
    p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
    int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
    float32x4_t y = vmulq_f32(p, vreinterpretq_f32_s32(e));
    return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(y), under));
}

void sotto__softmax_neon(float *x, int n, int visible, float scale)
{
    float m = -INFINITY;
    int i = 0;
    float32x4_t mx = vdupq_n_f32(-INFINITY);
    for (; i + 4 <= visible; i += 4) mx = vmaxq_f32(mx, vld1q_f32(x + i));
    m = vmaxvq_f32(mx);
    for (; i < visible; i++) m = x[i] > m ? x[i] : m;
    float32x4_t mv = vdupq_n_f32(m), sc = vdupq_n_f32(scale), acc = vdupq_n_f32(0);
    for (i = 0; i + 4 <= visible; i += 4) {
        float32x4_t v = exp4(vmulq_f32(vsubq_f32(vld1q_f32(x + i), mv), sc));
        vst1q_f32(x + i, v);
        acc = vaddq_f32(acc, v);
    }
    float sum = vaddvq_f32(acc);
    if (i < visible) { /* the tail through the same exp4 as the body */
        float t[4] = {m, m, m, m};
        memcpy(t, x + i, (size_t)(visible - i) * sizeof *t);
        float32x4_t v = exp4(vmulq_f32(vsubq_f32(vld1q_f32(t), mv), sc));
        vst1q_f32(t, v);
        for (int j = 0; j < visible - i; j++) x[i + j] = t[j], sum += t[j];
    }
    float inv = 1.0f / sum;
    for (i = 0; i < visible; i++) x[i] *= inv;
    for (i = visible; i < n; i++) x[i] = 0.0f;
}

/* erf(x) = sign(x) (1 - t P(t) e^{-x^2}), t = 1 / (1 + p|x|): Abramowitz & Stegun 7.1.26,
 * absolute error <= 1.5e-7 (as the AVX2 kernels). */
static inline float32x4_t erf4(float32x4_t x)
{
    uint32x4_t sign = vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x80000000u));
    float32x4_t ax = vabsq_f32(x);
    float32x4_t t = vdivq_f32(vdupq_n_f32(1.0f), vfmaq_f32(vdupq_n_f32(1.0f), vdupq_n_f32(0.3275911f), ax));
    float32x4_t p = vdupq_n_f32(1.061405429f);
    p = vfmaq_f32(vdupq_n_f32(-1.453152027f), p, t);
    p = vfmaq_f32(vdupq_n_f32(1.421413741f), p, t);
    p = vfmaq_f32(vdupq_n_f32(-0.284496736f), p, t);
    p = vfmaq_f32(vdupq_n_f32(0.254829592f), p, t);
    p = vmulq_f32(p, t);
    float32x4_t y = vfmsq_f32(vdupq_n_f32(1.0f), p, exp4(vnegq_f32(vmulq_f32(ax, ax))));
    return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(y), sign));
}

void sotto__gelu_neon(float *x, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vld1q_f32(x + i);
        float32x4_t e = erf4(vmulq_f32(v, vdupq_n_f32(0.70710678118654752f)));
        vst1q_f32(x + i, vmulq_f32(vmulq_f32(vdupq_n_f32(0.5f), v), vaddq_f32(vdupq_n_f32(1.0f), e)));
    }
    sotto__gelu_ref(x + i, n - i);
}

/* As sotto__quantize: d = max|x| / 127 (stored as the nearest half), q = x / d rounded to
 * nearest even (vcvtnq, as lrintf). */
void sotto__quantize_q8_neon(const float *x, sotto__block_q8_0 *out, int k)
{
    for (int b = 0; b < k / SOTTO__QK8_0; b++) {
        const float *p = x + b * SOTTO__QK8_0;
        float32x4_t v[8], m = vdupq_n_f32(0);
        for (int i = 0; i < 8; i++) v[i] = vld1q_f32(p + 4 * i), m = vmaxnmq_f32(m, vabsq_f32(v[i]));
        float d = vmaxnmvq_f32(m) / 127.0f, id = d > 0 ? 1.0f / d : 0.0f;
        out[b].d = vget_lane_u16(vreinterpret_u16_f16(vcvt_f16_f32(vdupq_n_f32(d))), 0);
        for (int i = 0; i < 8; i += 2) {
            int16x8_t q16 = vcombine_s16(vqmovn_s32(vcvtnq_s32_f32(vmulq_n_f32(v[i], id))),
                                         vqmovn_s32(vcvtnq_s32_f32(vmulq_n_f32(v[i + 1], id))));
            vst1_s8(out[b].qs + 4 * i, vqmovn_s16(q16));
        }
    }
}

void sotto__to_f16_neon(const float *x, uint16_t *out, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1_u16(out + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    sotto__to_f16_ref(x + i, out + i, n - i);
}

void sotto__from_f16_neon(const uint16_t *h, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(out + i, ld_h4(h + i));
    sotto__from_f16_ref(h + i, out + i, n - i);
}
