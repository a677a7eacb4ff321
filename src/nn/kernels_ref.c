/* kernels_ref.c — plain scalar reference kernels: the definition every SIMD kernel is
 * tested against, and the path used on CPUs without one. */
#include "kernels.h"

#include "../common.h"

#include <math.h>

void sotto__matmul_ref(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                       size_t ldc, int M, int N, int K)
{
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += A[m * lda + k] * B[n * ldb + k];
            C[m * ldc + n] = s + (bias ? bias[n] : 0.0f);
        }
    }
}

void sotto__matmul_f16_ref(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                           size_t ldc, int M, int N, int K)
{
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += A[m * lda + k] * sotto__f16_to_f32(B[n * ldb + k]);
            C[m * ldc + n] = s + (bias ? bias[n] : 0.0f);
        }
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

void sotto__matmul_nn_ref(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                          int N, int K)
{
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += A[m * lda + k] * B[k * ldb + n];
            C[m * ldc + n] = s;
        }
    }
}

void sotto__softmax_ref(float *x, int n, int visible, float scale)
{
    float max = -INFINITY;
    for (int i = 0; i < visible; i++) max = x[i] > max ? x[i] : max;
    double sum = 0;
    for (int i = 0; i < visible; i++) {
        x[i] = expf((x[i] - max) * scale);
        sum += x[i];
    }
    float inv = (float)(1.0 / sum);
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
    for (size_t i = 0; i < n; i++) x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * (float)M_SQRT1_2));
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
            for (int k = 0; k < K; k++) s += A[m * lda + k] * sotto__f16_to_f32(B[k * ldb + n]);
            C[m * ldc + n] = s;
        }
    }
}
