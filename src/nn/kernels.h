/* kernels.h — the single-threaded compute kernels and their run-time dispatch. Each
 * SIMD kernel has a plain scalar `_ref` twin with the same contract, which the tests
 * compare it against on odd sizes.
 *
 *   matmul:  C[m,n] = bias[n] + sum_k A[m,k] * B[n,k]      A[M,K], B[N,K], C[M,N]
 *            (row strides lda, ldb, ldc in floats; bias may be NULL)
 *   dot:     sum_k a[k] * b[k]
 *   axpy:    y[k] += alpha * x[k]
 */
#ifndef SOTTO_KERNELS_H
#define SOTTO_KERNELS_H

#include <stddef.h>

typedef void (*sotto__matmul_fn)(const float *A, size_t lda, const float *B, size_t ldb, const float *bias,
                                 float *C, size_t ldc, int M, int N, int K);

typedef struct sotto__kernels {
    const char *name;          /* "scalar", "avx2" */
    sotto__matmul_fn matmul;
} sotto__kernels;

void sotto__matmul_ref(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                       size_t ldc, int M, int N, int K);
void sotto__matmul_avx2(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                        size_t ldc, int M, int N, int K);

/* The best kernels this CPU supports (detected once). SOTTO_KERNELS=scalar in the
 * environment forces the reference kernels. */
const sotto__kernels *sotto__kernels_get(void);
/* The kernel set named NAME if this CPU can run it, else NULL (for tests). */
const sotto__kernels *sotto__kernels_by_name(const char *name);

#endif
