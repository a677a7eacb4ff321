/* kernels_ref.c — plain scalar reference kernels: the definition every SIMD kernel is
 * tested against, and the path used on CPUs without one. */
#include "kernels.h"

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
