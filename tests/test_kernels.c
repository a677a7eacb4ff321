/* test_kernels.c — every SIMD kernel against its scalar reference on odd sizes and
 * strides, and the thread-pool ops against the single-threaded kernels. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "nn/kernels.h"
#include "nn/ops.h"

static float rnd(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void test_matmul(const sotto__kernels *k)
{
    static const int sizes[] = {1, 2, 3, 5, 7, 8, 9, 16, 17, 31, 33, 64, 65, 130};
    unsigned seed = 1;
    int n_sizes = sizeof sizes / sizeof *sizes;
    for (int a = 0; a < n_sizes; a += 1)
        for (int b = 0; b < n_sizes; b += 2)
            for (int c = 0; c < n_sizes; c += 3) {
                int M = sizes[a], N = sizes[b], K = sizes[c];
                size_t lda = (size_t)K + 3, ldb = (size_t)K + 1, ldc = (size_t)N + 2;
                float *A = malloc(M * lda * sizeof *A), *B = malloc(N * ldb * sizeof *B);
                float *bias = malloc(N * sizeof *bias);
                float *C0 = calloc(M * ldc, sizeof *C0), *C1 = calloc(M * ldc, sizeof *C1);
                for (size_t i = 0; i < M * lda; i++) A[i] = rnd(&seed);
                for (size_t i = 0; i < N * ldb; i++) B[i] = rnd(&seed);
                for (int i = 0; i < N; i++) bias[i] = rnd(&seed);
                const float *bs = (a + b) % 2 ? bias : NULL;
                sotto__matmul_ref(A, lda, B, ldb, bs, C0, ldc, M, N, K);
                k->matmul(A, lda, B, ldb, bs, C1, ldc, M, N, K);
                double worst = 0;
                for (int m = 0; m < M; m++)
                    for (int n = 0; n < N; n++) {
                        double d = fabs(C0[m * ldc + n] - C1[m * ldc + n]) / (1.0 + sqrt((double)K));
                        if (d > worst) worst = d;
                    }
                CHECK(worst < 1e-5, "%s matmul M=%d N=%d K=%d: error %g", k->name, M, N, K, worst);
                /* the padding between rows of C is never written */
                bool pad_ok = true;
                for (int m = 0; m < M; m++)
                    for (size_t n = (size_t)N; n < ldc; n++) pad_ok &= C1[m * ldc + n] == 0;
                CHECK(pad_ok, "%s matmul M=%d N=%d K=%d wrote past N", k->name, M, N, K);
                free(A), free(B), free(bias), free(C0), free(C1);
            }
}

static void test_threaded(void)
{
    const sotto__kernels *k = sotto__kernels_get();
    for (int nt = 1; nt <= 3; nt++) {
        sotto__exec ex = {sotto__pool_create(nt), k, NULL, 0};
        int M = 37, N = 301, K = 67;
        unsigned seed = 7;
        float *A = malloc(M * K * sizeof *A), *B = malloc(N * K * sizeof *B);
        float *C0 = malloc(M * N * sizeof *C0), *C1 = malloc(M * N * sizeof *C1);
        for (int i = 0; i < M * K; i++) A[i] = rnd(&seed);
        for (int i = 0; i < N * K; i++) B[i] = rnd(&seed);
        k->matmul(A, K, B, K, NULL, C0, N, M, N, K);
        sotto__op_matmul(&ex, A, K, B, K, NULL, C1, N, M, N, K);
        bool same = true;
        for (int i = 0; i < M * N; i++) same &= C0[i] == C1[i];
        CHECK(same, "threaded matmul with %d threads differs from one thread", nt);
        /* attention: softmax rows sum to one, causal rows ignore later keys */
        int T = 5, S = 9, H = 2, dh = 4, d = H * dh;
        float Q[5 * 8], Kk[9 * 8], VT[8 * 9], O[5 * 8], O2[5 * 8];
        for (int i = 0; i < T * d; i++) Q[i] = rnd(&seed);
        for (int i = 0; i < S * d; i++) Kk[i] = rnd(&seed);
        for (int i = 0; i < d * S; i++) VT[i] = 1.0f; /* all-ones values: output 1 */
        ex.scratch_per_thread = SOTTO__ATTN_ROWS * S;
        ex.scratch = malloc((size_t)nt * ex.scratch_per_thread * sizeof(float));
        sotto__op_attention(&ex, Q, d, Kk, d, VT, S, O, d, T, S, H, dh, -1);
        bool ones = true;
        for (int i = 0; i < T * d; i++) ones &= fabsf(O[i] - 1.0f) < 1e-5f;
        CHECK(ones, "attention over constant values must return them (threads %d)", nt);
        for (int i = 0; i < d * S; i++) VT[i] = (float)(i % S); /* value = key position */
        sotto__op_attention(&ex, Q, d, Kk, d, VT, S, O, d, 1, S, H, dh, 2); /* query 0 at position 2 */
        sotto__op_attention(&ex, Q, d, Kk, d, VT, S, O2, d, 1, 3, H, dh, -1);
        bool causal = true;
        for (int i = 0; i < d; i++) causal &= fabsf(O[i] - O2[i]) < 1e-5f && O[i] <= 2.0f + 1e-5f;
        CHECK(causal, "causal attention must only see keys 0..position (threads %d)", nt);
        free(ex.scratch);
        free(A), free(B), free(C0), free(C1);
        sotto__pool_free(ex.pool);
    }
}

int main(void)
{
    test_matmul(sotto__kernels_by_name("scalar"));
    const sotto__kernels *avx2 = sotto__kernels_by_name("avx2");
    if (avx2) test_matmul(avx2);
    else printf("note: this CPU has no AVX2+FMA; only the scalar kernels were checked\n");
    test_threaded();
    return check_summary();
}
