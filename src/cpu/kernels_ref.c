/* kernels_ref.c — plain scalar reference kernels: the definition every SIMD kernel is
 * tested against, and the path used on CPUs without one. */
#include "kernels.h"

#include "../backend_row.h"
#include "../common.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

void sotto__matmul_ref(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                       size_t ldc, int M, int N, int K)
{
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) {
            float s = bias ? bias[n] : 0.0f; /* one fused chain in k order from the bias */
            for (int k = 0; k < K; k++) s = fmaf(A[m * lda + k], B[n * ldb + k], s);
            C[m * ldc + n] = s;
        }
    }
}

void sotto__matmul_f16_ref(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                           size_t ldc, int M, int N, int K)
{
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) {
            float s = bias ? bias[n] : 0.0f;
            for (int k = 0; k < K; k++) s = fmaf(A[m * lda + k], sotto__f16_to_f32(B[n * ldb + k]), s);
            C[m * ldc + n] = s;
        }
    }
}

void sotto__gemm_f16p_ref(const float *A, size_t lda, const uint16_t *P, const float *bias, float *C, size_t ldc,
                          int M, int N, int K)
{
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) {
            const uint16_t *b = sotto__panel_at(P, K, n);
            float s = bias ? bias[n] : 0.0f; /* matmul_ref's chain */
            for (int k = 0; k < K; k++) s = fmaf(A[m * lda + k], sotto__f16_to_f32(b[(size_t)k * SOTTO__PANEL_W]), s);
            C[m * ldc + n] = s;
        }
    }
}

size_t sotto__f16_panels_bytes(int N, int K)
{
    return (size_t)(N + SOTTO__PANEL_W - 1) / SOTTO__PANEL_W * SOTTO__PANEL_W * (size_t)K * sizeof(uint16_t);
}

void sotto__f16_panels(const uint16_t *B, size_t ldb, int N, int K, uint16_t *P)
{
    for (int n0 = 0; n0 < N; n0 += SOTTO__PANEL_W) {
        uint16_t *p = P + (size_t)n0 * K;
        for (int k = 0; k < K; k++)
            for (int j = 0; j < SOTTO__PANEL_W; j++)
                p[(size_t)k * SOTTO__PANEL_W + j] = n0 + j < N ? B[(size_t)(n0 + j) * ldb + k] : 0;
    }
}

void sotto__matmul_q8_ref(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                          const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    int nb = K / SOTTO__QK8_0;
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) {
            const sotto__block_q8_0 *a = A + m * lda, *b = B + n * ldb;
            float s = 0;
            for (int j = 0; j < nb; j++) {
                int32_t dot = 0;
                for (int i = 0; i < SOTTO__QK8_0; i++) dot += (int32_t)a[j].qs[i] * b[j].qs[i];
                s += sotto__f16_to_f32(a[j].d) * sotto__f16_to_f32(b[j].d) * (float)dot;
            }
            C[m * ldc + n] = s + (bias ? bias[n] : 0.0f);
        }
    }
}

static void nn_ref(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M, int N, int K,
                   bool acc)
{
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) {
            float s = acc ? C[m * ldc + n] : 0.0f;
            for (int k = 0; k < K; k++) s = fmaf(A[m * lda + k], B[k * ldb + n], s);
            C[m * ldc + n] = s;
        }
    }
}

void sotto__matmul_nn_ref(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                          int N, int K)
{
    nn_ref(A, lda, B, ldb, C, ldc, M, N, K, false);
}

void sotto__matmul_nn_acc_ref(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                              int N, int K)
{
    nn_ref(A, lda, B, ldb, C, ldc, M, N, K, true);
}

/* e^x as the SIMD sets compute it (kernels.h). */
static float exp_ref(float x)
{
    bool under = x < -87.3f;
    x = x > -87.3f ? x : -87.3f; /* as maxps / minps: the second operand when x is NaN */
    x = x < 88.3f ? x : 88.3f;
    float n = rintf(x * 1.44269504088896341f);
    float r = fmaf(-n, 0.693359375f, x);
    r = fmaf(-n, -2.12194440e-4f, r);
    float p = 1.9875691500e-4f;
    p = fmaf(p, r, 1.3981999507e-3f);
    p = fmaf(p, r, 8.3334519073e-3f);
    p = fmaf(p, r, 4.1665795894e-2f);
    p = fmaf(p, r, 1.6666665459e-1f);
    p = fmaf(p, r, 5.0000001201e-1f);
    p = fmaf(p, r * r, r + 1.0f);
    uint32_t e = (uint32_t)((int32_t)n + 127) << 23;
    float two_n;
    memcpy(&two_n, &e, 4);
    return under ? 0.0f : p * two_n;
}

/* erf(x) as the SIMD sets compute it (kernels.h). */
static float erf_ref(float x)
{
    uint32_t sign, yb;
    memcpy(&sign, &x, 4);
    sign &= 0x80000000u;
    float ax = fabsf(x);
    float t = 1.0f / fmaf(0.3275911f, ax, 1.0f);
    float p = 1.061405429f;
    p = fmaf(p, t, -1.453152027f);
    p = fmaf(p, t, 1.421413741f);
    p = fmaf(p, t, -0.284496736f);
    p = fmaf(p, t, 0.254829592f);
    p = p * t;
    float y = fmaf(-p, exp_ref(0.0f - ax * ax), 1.0f);
    memcpy(&yb, &y, 4);
    yb |= sign;
    memcpy(&y, &yb, 4);
    return y;
}

void sotto__softmax_ref(float *x, int n, int visible, float scale)
{
    float max = -INFINITY;
    for (int i = 0; i < visible; i++) max = x[i] > max ? x[i] : max;
    float lane[8] = {0};
    for (int i = 0; i < visible; i++) {
        x[i] = exp_ref((x[i] - max) * scale);
        lane[i % 8] += x[i];
    }
    float sum = ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
    float inv = 1.0f / sum;
    for (int i = 0; i < visible; i++) x[i] *= inv;
    for (int i = visible; i < n; i++) x[i] = 0.0f;
}

void sotto__from_f16_ref(const uint16_t *h, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = sotto__f16_to_f32(h[i]);
}

void sotto__to_f16_ref(const float *x, uint16_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = sotto__f32_to_f16(x[i]);
}

void sotto__gelu_ref(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = 0.5f * x[i] * (1.0f + erf_ref(x[i] * 0.70710678118654752f));
}

void sotto__quantize_q8_ref(const float *x, sotto__block_q8_0 *out, int k)
{
    sotto__quantize(SOTTO_TYPE_Q8_0, x, out, k);
}

void sotto__matmul_nn_f16_ref(const float *A, size_t lda, const uint16_t *B, size_t ldb, float *C, size_t ldc,
                              int M, int N, int K)
{
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) {
            float s = 0;
            for (int k = 0; k < K; k++) s = fmaf(A[m * lda + k], sotto__f16_to_f32(B[k * ldb + n]), s);
            C[m * ldc + n] = s;
        }
    }
}

/* Value i (0..31) of a 5-bit proxy record of K values (model.h). */
static int p5_value(const uint8_t *row, int K, int i)
{
    int c = i / 128, j = i % 128;
    int lo = row[c * 64 + (j & 63)] >> (j < 64 ? 0 : 4) & 15;
    int hi = row[K / 2 + c * 16 + j / 8] >> (j % 8) & 1;
    return lo + 16 * hi;
}

void sotto__scores_p5_ref(const int8_t *a, const float *d, const float *g, const uint8_t *rows, float *u, int N,
                          int K)
{
    const int nb = K / 32;
    for (int n = 0; n < N; n++) {
        const uint8_t *row = rows + (size_t)n * (K / 2 + K / 8 + K / 16);
        const uint8_t *s = row + K / 2 + K / 8;
        float acc = 0;
        for (int b = 0; b < nb; b++) {
            int32_t dot = 0;
            for (int i = 32 * b; i < 32 * b + 32; i++) dot += a[i] * p5_value(row, K, i);
            acc += sotto__f16_to_f32((uint16_t)(s[2 * b] | s[2 * b + 1] << 8)) * (d[b] * (float)dot + g[b]);
        }
        u[n] = acc;
    }
}

void sotto__quantize_p5_ref(const float *x, int K, uint8_t *row, float *err, float *len)
{
    uint8_t *bits = row + K / 2, *scales = bits + K / 8;
    memset(row, 0, (size_t)K / 2 + K / 8);
    float e2[8] = {0}, n2[8] = {0};
    for (int b = 0; b < K / 32; b++) {
        const float *xb = x + 32 * b;
        float amax = 0;
        for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(xb[i]));
        uint16_t h = sotto__f32_to_f16(amax / 15.0f);
        while (sotto__f16_to_f32(h) < amax / 15.5f) h++;
        scales[2 * b] = (uint8_t)h, scales[2 * b + 1] = (uint8_t)(h >> 8);
        float s = sotto__f16_to_f32(h), inv = s > 0 ? 1.0f / s : 0.0f;
        int v[32];
        for (int i = 0; i < 32; i++) { /* nearest, halves up; ERR measures what it gives */
            float r = xb[i] * inv + 16.5f;
            v[i] = r < 0.0f ? 0 : r >= 31.0f ? 31 : (int)r;
        }
        for (int i = 0; i < 32; i++) {
            float p = s * (float)(v[i] - 16), diff = xb[i] - p;
            e2[i % 8] += diff * diff, n2[i % 8] += p * p;
        }
        int c = b / 4, j0 = 32 * (b % 4); /* this block's place in its chunk of 128 */
        uint32_t hb = 0;
        for (int i = 0; i < 32; i++) {
            int j = j0 + i;
            row[c * 64 + (j & 63)] |= (uint8_t)((v[i] & 15) << (j < 64 ? 0 : 4));
            hb |= (uint32_t)(v[i] >> 4) << i;
        }
        memcpy(bits + c * 16 + j0 / 8, &hb, 4);
    }
    double de = 0, dn = 0;
    for (int t = 0; t < 8; t++) de += e2[t], dn += n2[t];
    /* f32 partial sums of K / 8 <= 512 squares each: relative error below 2^-14 */
    *err = (float)(sqrt(de) * 1.001), *len = (float)(sqrt(dn) * 1.001);
}

float sotto__row_max_ref(const float *x, int n) { return sotto__row_max(NULL, x, n); }

double sotto__row_exp_sum_ref(const float *x, int n, float m, float scale, float *w)
{
    return sotto__row_exp_sum(NULL, x, n, m, scale, w);
}
