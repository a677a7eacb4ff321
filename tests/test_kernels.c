/* test_kernels.c — every SIMD kernel against its scalar reference on odd sizes and
 * strides, and the thread-pool ops against the single-threaded kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "cpu/backend_cpu.h"
#include "cpu/kernels.h"
#include "cpu/ops.h"
#include "cpu/panels.h"
#include "quant.h"

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

/* Weights holding -128 (a file may; sotto's quantiser never writes it) against activations
 * of +-127: the VNNI kernels must stay exact, for one row and for many. */
static void test_q8_extremes(const sotto__kernels *k)
{
    static const int sizes[][3] = {{1, 9, 64}, {3, 4, 96}, {30, 20, 544}};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        int M = sizes[t][0], N = sizes[t][1], nb = sizes[t][2] / 32;
        sotto__block_q8_0 *A = malloc((size_t)M * nb * sizeof *A), *B = malloc((size_t)N * nb * sizeof *B);
        float *C0 = malloc((size_t)M * N * 4), *C1 = malloc((size_t)M * N * 4);
        for (int i = 0; i < M * nb; i++) {
            A[i].d = sotto__f32_to_f16(0.01f * (1 + i % 3));
            for (int q = 0; q < 32; q++) A[i].qs[q] = (int8_t)((i + q) % 3 ? -127 : 127);
        }
        for (int i = 0; i < N * nb; i++) {
            B[i].d = sotto__f32_to_f16(0.02f);
            for (int q = 0; q < 32; q++) B[i].qs[q] = (int8_t)((i * 7 + q) % 5 ? -128 : 127);
        }
        sotto__matmul_q8_ref(A, nb, B, nb, NULL, C0, N, M, N, nb * 32);
        k->matmul_q8(A, nb, B, nb, NULL, C1, N, M, N, nb * 32);
        double worst = 0;
        for (int i = 0; i < M * N; i++) worst = fmax(worst, fabs(C0[i] - C1[i]) / (1 + fabs(C0[i])));
        CHECK(worst < 1e-5, "%s matmul_q8 with -128 weights M=%d N=%d: relative error %g", k->name, M, N, worst);
        free(A), free(B), free(C0), free(C1);
    }
}

/* The packed GEMM behind matmul for many rows: blocks of rows and of K, every tail. */
static void test_matmul_large(const sotto__kernels *k)
{
    static const int sizes[][3] = {{24, 1, 1},      {25, 17, 7},    {121, 33, 385},
                                   {300, 64, 1000}, {37, 130, 769}, {800, 40, 70}};
    unsigned seed = 5;
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        int M = sizes[t][0], N = sizes[t][1], K = sizes[t][2];
        size_t lda = (size_t)K + 5, ldb = (size_t)K + 3, ldc = (size_t)N + 1;
        float *A = malloc(M * lda * sizeof *A), *B = malloc(N * ldb * sizeof *B), *bias = malloc(N * sizeof *bias);
        float *C0 = calloc(M * ldc, sizeof *C0), *C1 = calloc(M * ldc, sizeof *C1);
        for (size_t i = 0; i < M * lda; i++) A[i] = rnd(&seed);
        for (size_t i = 0; i < N * ldb; i++) B[i] = rnd(&seed);
        for (int i = 0; i < N; i++) bias[i] = rnd(&seed);
        const float *bs = t % 2 ? NULL : bias;
        sotto__matmul_ref(A, lda, B, ldb, bs, C0, ldc, M, N, K);
        k->matmul(A, lda, B, ldb, bs, C1, ldc, M, N, K);
        double worst = 0;
        bool pad_ok = true;
        for (int m = 0; m < M; m++) {
            for (int n = 0; n < N; n++)
                worst = fmax(worst, fabs(C0[m * ldc + n] - C1[m * ldc + n]) / (1.0 + sqrt((double)K)));
            pad_ok &= C1[m * ldc + N] == 0;
        }
        CHECK(worst < 1e-5, "%s matmul M=%d N=%d K=%d: error %g", k->name, M, N, K, worst);
        CHECK(pad_ok, "%s matmul M=%d N=%d K=%d wrote past N", k->name, M, N, K);
        free(A), free(B), free(bias), free(C0), free(C1);
    }
}

/* f16 and q8_0 kernels against their scalar references (the same stored values). */
static void test_typed(const sotto__kernels *k)
{
    /* M >= SOTTO__GEMM_MIN_M takes the packed GEMM: more than one block of 120 rows and
     * of 384 steps of K, row and column tails */
    static const int sizes[][3] = {{1, 1, 32},     {1, 7, 64},    {3, 5, 96},      {4, 2, 32},
                                   {5, 9, 160},    {9, 13, 384},  {17, 33, 1536},  {1, 301, 384},
                                   {24, 16, 32},   {29, 21, 800}, {127, 37, 416},  {250, 50, 1536}};
    unsigned seed = 3;
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        int M = sizes[t][0], N = sizes[t][1], K = sizes[t][2] + (t % 2) * 0;
        float *A = malloc((size_t)M * K * sizeof *A), *Bf = malloc((size_t)N * K * sizeof *Bf);
        float *bias = malloc(N * sizeof *bias), *C0 = malloc((size_t)M * N * sizeof *C0),
              *C1 = malloc((size_t)M * N * sizeof *C1);
        uint16_t *Bh = malloc((size_t)N * K * sizeof *Bh);
        sotto__block_q8_0 *Aq = malloc((size_t)M * K / 32 * sizeof *Aq), *Bq = malloc((size_t)N * K / 32 * sizeof *Bq);
        for (int i = 0; i < M * K; i++) A[i] = rnd(&seed);
        for (int i = 0; i < N * K; i++) Bf[i] = rnd(&seed);
        for (int i = 0; i < N; i++) bias[i] = rnd(&seed);
        sotto__quantize(SOTTO_TYPE_F16, Bf, Bh, (int64_t)N * K);
        sotto__quantize(SOTTO_TYPE_Q8_0, A, Aq, (int64_t)M * K);
        sotto__quantize(SOTTO_TYPE_Q8_0, Bf, Bq, (int64_t)N * K);
        double worst = 0;
        sotto__matmul_f16_ref(A, K, Bh, K, bias, C0, N, M, N, K);
        k->matmul_f16(A, K, Bh, K, bias, C1, N, M, N, K);
        for (int i = 0; i < M * N; i++) worst = fmax(worst, fabs(C0[i] - C1[i]) / (1 + sqrt((double)K)));
        CHECK(worst < 1e-5, "%s matmul_f16 M=%d N=%d K=%d: error %g", k->name, M, N, K, worst);
        worst = 0;
        sotto__matmul_q8_ref(Aq, K / 32, Bq, K / 32, bias, C0, N, M, N, K);
        k->matmul_q8(Aq, K / 32, Bq, K / 32, bias, C1, N, M, N, K);
        for (int i = 0; i < M * N; i++) worst = fmax(worst, fabs(C0[i] - C1[i]) / (1 + sqrt((double)K)));
        CHECK(worst < 1e-5, "%s matmul_q8 M=%d N=%d K=%d: error %g", k->name, M, N, K, worst);
        /* activation quantisation: bit-identical to the reference */
        sotto__block_q8_0 *Aq2 = malloc((size_t)M * K / 32 * sizeof *Aq2);
        for (int m = 0; m < M; m++) k->quantize_q8(A + (size_t)m * K, Aq2 + (size_t)m * K / 32, K);
        CHECK(memcmp(Aq, Aq2, (size_t)M * K / 32 * sizeof *Aq2) == 0, "%s quantize_q8 K=%d differs", k->name, K);
        free(Aq2);
        /* q8_0 against the exact f32 product: the quantisation error stays small */
        sotto__matmul_ref(A, K, Bf, K, bias, C0, N, M, N, K);
        worst = 0;
        for (int i = 0; i < M * N; i++) worst = fmax(worst, fabs(C0[i] - C1[i]) / sqrt((double)K));
        CHECK(worst < 0.02, "%s matmul_q8 M=%d N=%d K=%d is far from f32: %g", k->name, M, N, K, worst);
        free(A), free(Bf), free(bias), free(C0), free(C1), free(Bh), free(Aq), free(Bq);
    }
}

/* matmul_nn, softmax, to_f16 and gelu against their references. */
static void test_nn_and_elementwise(const sotto__kernels *k)
{
    static const int sizes[] = {1, 3, 4, 5, 8, 15, 16, 17, 33, 64, 100};
    unsigned seed = 11;
    for (int a = 0; a < 11; a++)
        for (int b = 0; b < 11; b += 2)
            for (int c = 0; c < 11; c += 3) {
                int M = sizes[a], N = sizes[b], K = sizes[c];
                size_t lda = K + 1, ldb = N + 3, ldc = N + 2;
                float *A = malloc(M * lda * 4), *B = malloc(K * ldb * 4), *C0 = calloc(M * ldc, 4), *C1 = calloc(M * ldc, 4);
                for (size_t i = 0; i < M * lda; i++) A[i] = rnd(&seed);
                for (size_t i = 0; i < K * ldb; i++) B[i] = rnd(&seed);
                sotto__matmul_nn_ref(A, lda, B, ldb, C0, ldc, M, N, K);
                k->matmul_nn(A, lda, B, ldb, C1, ldc, M, N, K);
                double worst = 0;
                for (size_t i = 0; i < M * ldc; i++) worst = fmax(worst, fabs(C0[i] - C1[i]));
                CHECK(worst < 1e-5 * (1 + K), "%s matmul_nn M=%d N=%d K=%d: error %g (padding untouched)", k->name, M,
                      N, K, worst);
                uint16_t *Bh = malloc(K * ldb * sizeof *Bh);
                sotto__quantize(SOTTO_TYPE_F16, B, Bh, (int64_t)(K * ldb));
                memset(C0, 0, M * ldc * 4), memset(C1, 0, M * ldc * 4);
                sotto__matmul_nn_f16_ref(A, lda, Bh, ldb, C0, ldc, M, N, K);
                k->matmul_nn_f16(A, lda, Bh, ldb, C1, ldc, M, N, K);
                worst = 0;
                for (size_t i = 0; i < M * ldc; i++) worst = fmax(worst, fabs(C0[i] - C1[i]));
                CHECK(worst < 1e-5 * (1 + K), "%s matmul_nn_f16 M=%d N=%d K=%d: error %g", k->name, M, N, K, worst);
                free(Bh);
                free(A), free(B), free(C0), free(C1);
            }
    /* one query row against many keys: the streaming kernels (N >= 128 / 256) */
    static const int wide[][2] = {{128, 64}, {300, 5}, {1500, 64}, {1501, 7}, {449, 1}};
    for (size_t t = 0; t < sizeof wide / sizeof *wide; t++) {
        int N = wide[t][0], K = wide[t][1];
        size_t ldb = (size_t)N + 5;
        float *A = malloc(K * 4), *B = malloc(K * ldb * 4), *C0 = malloc(N * 4), *C1 = malloc(N * 4);
        uint16_t *Bh = malloc(K * ldb * 2);
        for (int i = 0; i < K; i++) A[i] = rnd(&seed);
        for (size_t i = 0; i < K * ldb; i++) B[i] = rnd(&seed);
        sotto__quantize(SOTTO_TYPE_F16, B, Bh, (int64_t)(K * ldb));
        double worst = 0;
        sotto__matmul_nn_ref(A, K, B, ldb, C0, N, 1, N, K);
        k->matmul_nn(A, K, B, ldb, C1, N, 1, N, K);
        for (int i = 0; i < N; i++) worst = fmax(worst, fabs(C0[i] - C1[i]));
        CHECK(worst < 1e-5 * (1 + K), "%s matmul_nn M=1 N=%d K=%d: error %g", k->name, N, K, worst);
        worst = 0;
        sotto__matmul_nn_f16_ref(A, K, Bh, ldb, C0, N, 1, N, K);
        k->matmul_nn_f16(A, K, Bh, ldb, C1, N, 1, N, K);
        for (int i = 0; i < N; i++) worst = fmax(worst, fabs(C0[i] - C1[i]));
        CHECK(worst < 1e-5 * (1 + K), "%s matmul_nn_f16 M=1 N=%d K=%d: error %g", k->name, N, K, worst);
        free(A), free(B), free(C0), free(C1), free(Bh);
    }
    /* attention's shapes (24 query rows and a tail, Q K^T over keys past a multiple of 32,
     * P V over 64 value columns), into C filled with a canary: every tile, column tail and
     * row tail of the 12x32 / 6x16 kernels writes its own columns and nothing else */
    static const int att[][3] = {{24, 101, 64}, {30, 64, 101}, {13, 1500, 64}, {12, 37, 5}};
    for (size_t t = 0; t < sizeof att / sizeof *att; t++) {
        int M = att[t][0], N = att[t][1], K = att[t][2];
        size_t lda = (size_t)K + 7, ldb = (size_t)N + 35, ldc = (size_t)N + 33;
        float *A = malloc(M * lda * 4), *B = malloc(K * ldb * 4), *C0 = malloc(M * ldc * 4), *C1 = malloc(M * ldc * 4);
        for (size_t i = 0; i < M * lda; i++) A[i] = rnd(&seed);
        for (size_t i = 0; i < K * ldb; i++) B[i] = rnd(&seed);
        for (size_t i = 0; i < M * ldc; i++) C0[i] = C1[i] = 7.0f;
        sotto__matmul_nn_ref(A, lda, B, ldb, C0, ldc, M, N, K);
        k->matmul_nn(A, lda, B, ldb, C1, ldc, M, N, K);
        double worst = 0;
        for (size_t i = 0; i < M * ldc; i++) worst = fmax(worst, fabs(C0[i] - C1[i]));
        CHECK(worst < 1e-5 * (1 + K), "%s matmul_nn M=%d N=%d K=%d: error %g (canary kept)", k->name, M, N, K, worst);
        free(A), free(B), free(C0), free(C1);
    }
    float x0[1001], x1[1001];
    static const int vis[] = {1001, 1000, 999, 993, 8, 7, 1};
    for (size_t v = 0; v < sizeof vis / sizeof *vis; v++) {
        for (int i = 0; i < 1001; i++) x0[i] = x1[i] = -30.0f + 60.0f * ((i * 37) % 1001) / 1000.0f;
        sotto__softmax_ref(x0, 1001, vis[v], 0.37f);
        k->softmax(x1, 1001, vis[v], 0.37f);
        double worst = 0, sum = 0;
        for (int i = 0; i < 1001; i++) worst = fmax(worst, fabs(x0[i] - x1[i]) / fmax(x0[i], 1e-30)), sum += x1[i];
        bool tail0 = true;
        for (int i = vis[v]; i < 1001; i++) tail0 &= x1[i] == 0.0f;
        CHECK(worst < 2e-6 && fabs(sum - 1) < 1e-5 && tail0, "%s softmax visible %d: relative error %g, sum %g",
              k->name, vis[v], worst, sum);
    }
    /* halves: bit-identical to the scalar conversion on normals, subnormals, overflow */
    for (int i = 0; i < 1001; i++) x0[i] = (i % 2 ? -1.0f : 1.0f) * ldexpf(1.0f + (float)i / 1001.0f, i % 50 - 30);
    x0[0] = 65519.0f, x0[1] = 65520.0f, x0[2] = 1e9f, x0[3] = -0.0f, x0[4] = 0.0f, x0[5] = 2.9802322e-8f;
    uint16_t h0[1001], h1[1001];
    sotto__to_f16_ref(x0, h0, 1001);
    k->to_f16(x0, h1, 1001);
    CHECK(memcmp(h0, h1, sizeof h0) == 0, "%s to_f16 differs from sotto__f32_to_f16", k->name);
    for (int i = 0; i < 1001; i++) x0[i] = x1[i] = -10.0f + 20.0f * i / 1000.0f;
    sotto__gelu_ref(x0, 1001);
    k->gelu(x1, 1001);
    double worst = 0;
    for (int i = 0; i < 1001; i++) worst = fmax(worst, fabs(x0[i] - x1[i]));
    CHECK(worst < 1e-6 * 10, "%s gelu: absolute error %g", k->name, worst);
}

/* One row of A: each output equals the kernel's value for that B row alone (vocab.c
 * recomputes single logits and relies on it), whatever the row's place in the range. */
static void test_row_independent(const sotto__kernels *k)
{
    static const int sizes[][2] = {{37, 384}, {13, 96}, {9, 200}, {70, 64}};
    unsigned seed = 11;
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        int N = sizes[t][0], K = sizes[t][1];
        float *A = malloc(K * sizeof *A), *Bf = malloc((size_t)N * K * sizeof *Bf);
        float *C = malloc(N * sizeof *C), *C2 = malloc(N * sizeof *C2);
        uint16_t *Bh = malloc((size_t)N * K * sizeof *Bh);
        sotto__block_q8_0 *Aq = malloc(K / 32 * sizeof *Aq), *Bq = malloc((size_t)N * (K / 32) * sizeof *Bq);
        for (int i = 0; i < K; i++) A[i] = 8 * rnd(&seed);
        for (int i = 0; i < N * K; i++) Bf[i] = rnd(&seed);
        sotto__quantize(SOTTO_TYPE_F16, Bf, Bh, (int64_t)N * K);
        bool q8 = K % 32 == 0;
        if (q8) {
            k->quantize_q8(A, Aq, K);
            sotto__quantize(SOTTO_TYPE_Q8_0, Bf, Bq, (int64_t)N * K);
        }
        for (int type = 0; type < 3; type++) {
            if (type == 2 && !q8) continue;
            bool same = true;
            for (int n0 = 0; n0 < 4; n0++) { /* the range starting at row n0 */
                if (type == 0) k->matmul(A, K, Bf + (size_t)n0 * K, K, NULL, C, N, 1, N - n0, K);
                if (type == 1) k->matmul_f16(A, K, Bh + (size_t)n0 * K, K, NULL, C, N, 1, N - n0, K);
                if (type == 2) k->matmul_q8(Aq, K / 32, Bq + (size_t)n0 * (K / 32), K / 32, NULL, C, N, 1, N - n0, K);
                for (int n = n0; n < N; n++) {
                    if (type == 0) k->matmul(A, K, Bf + (size_t)n * K, K, NULL, C2, 1, 1, 1, K);
                    if (type == 1) k->matmul_f16(A, K, Bh + (size_t)n * K, K, NULL, C2, 1, 1, 1, K);
                    if (type == 2) k->matmul_q8(Aq, K / 32, Bq + (size_t)n * (K / 32), K / 32, NULL, C2, 1, 1, 1, K);
                    same &= C[n - n0] == C2[0];
                }
            }
            CHECK(same, "%s %s row kernel N=%d K=%d: a row's value depends on its place", k->name,
                  type == 0 ? "f32" : type == 1 ? "f16" : "q8_0", N, K);
        }
        free(A), free(Bf), free(C), free(C2), free(Bh), free(Aq), free(Bq);
    }
}

/* Rows of A batched (the beams of a decoder step): each row's outputs equal those of
 * the same row alone, bit for bit, for every count of rows below the GEMM's, an odd and
 * an even number of blocks, and a bias. */
static void test_rows_batched(const sotto__kernels *k)
{
    static const int sizes[][2] = {{37, 384}, {21, 96}, {19, 1504}};
    unsigned seed = 17;
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        int N = sizes[t][0], K = sizes[t][1], nb = K / 32, MM = SOTTO__GEMM_MIN_M - 1;
        float *A = malloc((size_t)MM * K * sizeof *A), *Bf = malloc((size_t)N * K * sizeof *Bf);
        float *bias = malloc(N * sizeof *bias), *C = malloc((size_t)MM * N * sizeof *C), *C1 = malloc(N * sizeof *C1);
        sotto__block_q8_0 *Aq = malloc((size_t)MM * nb * sizeof *Aq), *Bq = malloc((size_t)N * nb * sizeof *Bq);
        for (int i = 0; i < MM * K; i++) A[i] = 4 * rnd(&seed);
        for (int i = 0; i < N * K; i++) Bf[i] = rnd(&seed);
        for (int i = 0; i < N; i++) bias[i] = rnd(&seed);
        sotto__quantize(SOTTO_TYPE_Q8_0, A, Aq, (int64_t)MM * K);
        sotto__quantize(SOTTO_TYPE_Q8_0, Bf, Bq, (int64_t)N * K);
        bool same = true;
        for (int M = 1; M <= MM; M++) {
            k->matmul_q8(Aq, nb, Bq, nb, bias, C, N, M, N, K);
            for (int m = 0; m < M; m++) {
                k->matmul_q8(Aq + (size_t)m * nb, nb, Bq, nb, bias, C1, N, 1, N, K);
                same &= memcmp(C + (size_t)m * N, C1, N * sizeof *C1) == 0;
            }
        }
        CHECK(same, "%s matmul_q8 N=%d K=%d: a row's values depend on the rows beside it", k->name, N, K);
        free(A), free(Bf), free(bias), free(C), free(C1), free(Aq), free(Bq);
    }
}

/* gemm and gemm_f16 give each of M rows, for every M, the bits that matmul and matmul_f16
 * give it in a product of SOTTO__GEMM_MIN_M rows or more (the batched decoder's unpadded
 * rows), with and without bias, and write nothing past N. */
static void test_gemm_rows(const sotto__kernels *k)
{
    static const int sizes[][2] = {{37, 96}, {21, 389}, {40, 384}};
    enum { MM = SOTTO__GEMM_MIN_M + 6 };
    unsigned seed = 23;
    bool same = true, inside = true, panels_ok = true;
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        int N = sizes[t][0], K = sizes[t][1], ldc = N + 3;
        float *A = malloc((size_t)MM * K * sizeof *A), *B = malloc((size_t)N * K * sizeof *B);
        float *bias = malloc(N * sizeof *bias), *C = malloc((size_t)MM * ldc * sizeof *C);
        float *R = malloc((size_t)MM * ldc * sizeof *R);
        uint16_t *Bh = malloc((size_t)N * K * sizeof *Bh), *P = malloc(sotto__f16_panels_bytes(N, K));
        for (int i = 0; i < MM * K; i++) A[i] = 4 * rnd(&seed);
        for (int i = 0; i < N * K; i++) Bh[i] = sotto__f32_to_f16(rnd(&seed));
        for (int i = 0; i < N * K; i++) B[i] = sotto__f16_to_f32(Bh[i]);
        for (int i = 0; i < N; i++) bias[i] = rnd(&seed);
        sotto__f16_panels(Bh, K, N, K, P);
        for (int n = 0; n < N; n++) /* the layout kernels.h states */
            for (int kk = 0; kk < K; kk += 7) panels_ok &= sotto__panel_at(P, K, n)[(size_t)kk * SOTTO__PANEL_W] == Bh[n * K + kk];
        for (int f16 = 0; f16 < 2; f16++)
            for (int b = 0; b < 2; b++) {
                const float *bi = b ? bias : NULL;
                if (f16) k->matmul_f16(A, K, Bh, K, bi, R, ldc, MM, N, K);
                else k->matmul(A, K, B, K, bi, R, ldc, MM, N, K);
                for (int M = 1; M <= MM; M++) {
                    /* the product, then (f16) from panels: the whole of B, and from its second panel on */
                    for (int pass = 0; pass < (f16 && k->gemm_f16p ? 3 : 1); pass++) {
                        int n0 = pass == 2 ? SOTTO__PANEL_W : 0;
                        if (n0 >= N) continue;
                        for (int i = 0; i < MM * ldc; i++) C[i] = -7.0f;
                        if (pass) k->gemm_f16p(A, K, sotto__panel_at(P, K, n0), bi ? bi + n0 : NULL, C + n0, ldc, M, N - n0, K);
                        else if (f16) k->gemm_f16(A, K, Bh, K, bi, C, ldc, M, N, K);
                        else k->gemm(A, K, B, K, bi, C, ldc, M, N, K);
                        bool *ok = pass ? &panels_ok : &same;
                        for (int m = 0; m < M; m++) {
                            *ok &= memcmp(C + (size_t)m * ldc + n0, R + (size_t)m * ldc + n0, (N - n0) * sizeof *C) == 0;
                            for (int n = 0; n < ldc; n++) inside &= (n >= n0 && n < N) || C[(size_t)m * ldc + n] == -7.0f;
                        }
                        for (int i = M * ldc; i < MM * ldc; i++) inside &= C[i] == -7.0f;
                    }
                }
            }
        free(A), free(B), free(bias), free(C), free(R), free(Bh), free(P);
    }
    CHECK(panels_ok, "%s gemm_f16p: a row from f16 panels differs from the product of %d rows", k->name, MM);
    CHECK(same, "%s gemm: a row of fewer than %d differs from that row in a product of %d", k->name,
          SOTTO__GEMM_MIN_M, MM);
    CHECK(inside, "%s gemm writes past its M rows or N columns", k->name);
}

/* gemm and gemm_f16 give the same bits whatever A's row stride: rows a multiple of 4 KB
 * apart (the x86 GEMMs then read a copy of A's block, sotto__gemm_panels) against rows
 * K + 3 floats apart, over two blocks of rows and of K and several panels of B. */
static void test_gemm_strides(const sotto__kernels *k)
{
    enum { M = 800, N = 40, K = 700, LDA = 1024 };
    unsigned seed = 31;
    float *A = malloc((size_t)M * LDA * sizeof *A), *A2 = malloc((size_t)M * (K + 3) * sizeof *A2);
    float *B = malloc((size_t)N * K * sizeof *B), *bias = malloc(N * sizeof *bias);
    float *C = malloc((size_t)M * N * sizeof *C), *C2 = malloc((size_t)M * N * sizeof *C2);
    uint16_t *Bh = malloc((size_t)N * K * sizeof *Bh);
    for (int m = 0; m < M; m++)
        for (int i = 0; i < K; i++) A[(size_t)m * LDA + i] = A2[(size_t)m * (K + 3) + i] = 4 * rnd(&seed);
    for (int i = 0; i < N * K; i++) Bh[i] = sotto__f32_to_f16(rnd(&seed)), B[i] = sotto__f16_to_f32(Bh[i]);
    for (int i = 0; i < N; i++) bias[i] = rnd(&seed);
    for (int f16 = 0; f16 < 2; f16++) {
        if (f16) k->gemm_f16(A, LDA, Bh, K, bias, C, N, M, N, K), k->gemm_f16(A2, K + 3, Bh, K, bias, C2, N, M, N, K);
        else k->gemm(A, LDA, B, K, bias, C, N, M, N, K), k->gemm(A2, K + 3, B, K, bias, C2, N, M, N, K);
        CHECK(memcmp(C, C2, (size_t)M * N * sizeof *C) == 0, "%s gemm%s: rows of A %d floats apart differ from %d",
              k->name, f16 ? "_f16" : "", LDA, K + 3);
    }
    free(A), free(A2), free(B), free(bias), free(C), free(C2), free(Bh);
}

/* The 5-bit proxy: every kernel's records decode within their own bounds, and the scores
 * kernels agree with the reference. */
static void test_proxy_kernels(const sotto__kernels *k)
{
    enum { N = 37, K = 384 };
    unsigned seed = 9;
    size_t rb = SOTTO__PROXY_ROW(K);
    float *x = malloc((size_t)N * K * sizeof *x), err[N], len[N], u0[N], u1[N], d[K / 32], g[K / 32];
    uint8_t *rows = malloc(N * rb), *rows_ref = malloc(N * rb);
    int8_t a[K];
    for (int i = 0; i < N * K; i++) x[i] = (i % 97 == 0 ? 3.0f : 0.05f) * rnd(&seed);
    for (int i = 0; i < 32; i++) x[5 * K + i] = 0; /* an all-zero block */
    for (int n = 0; n < N; n++) {
        k->quantize_p5(x + (size_t)n * K, K, rows + n * rb, err + n, len + n);
        float e_ref, l_ref;
        sotto__quantize_p5_ref(x + (size_t)n * K, K, rows_ref + n * rb, &e_ref, &l_ref);
        /* decode: value i = s (v - 16) with v = nibble + 16 bit */
        const uint8_t *row = rows + n * rb, *bits = row + K / 2, *sc = bits + K / 8;
        double e2 = 0, n2 = 0;
        for (int i = 0; i < K; i++) {
            int c = i / 128, j = i % 128;
            int v = (row[c * 64 + (j & 63)] >> (j < 64 ? 0 : 4) & 15) + 16 * (bits[c * 16 + j / 8] >> (j % 8) & 1);
            double p = sotto__f16_to_f32((uint16_t)(sc[2 * (i / 32)] | sc[2 * (i / 32) + 1] << 8)) * (v - 16);
            e2 += (x[(size_t)n * K + i] - p) * (x[(size_t)n * K + i] - p), n2 += p * p;
        }
        CHECK(err[n] >= sqrt(e2) && err[n] <= sqrt(e2) * 1.01 + 1e-30, "%s quantize_p5 row %d: err %g, measured %g",
              k->name, n, err[n], sqrt(e2));
        CHECK(len[n] >= sqrt(n2) && len[n] <= sqrt(n2) * 1.01 + 1e-30, "%s quantize_p5 row %d: len %g, measured %g",
              k->name, n, len[n], sqrt(n2));
        CHECK(fabs(err[n] - e_ref) <= 1e-3 * (e_ref + 1e-9), "%s quantize_p5 row %d: err %g, reference %g", k->name,
              n, err[n], e_ref);
    }
    for (int i = 0; i < K; i++) a[i] = (int8_t)(i % 7 == 0 ? -128 : (int)(127 * rnd(&seed)));
    for (int b = 0; b < K / 32; b++) d[b] = 0.01f + 0.001f * b, g[b] = rnd(&seed);
    sotto__scores_p5_ref(a, d, g, rows, u0, N, K);
    k->scores_p5(a, d, g, rows, u1, N, K);
    double worst = 0;
    for (int n = 0; n < N; n++) worst = fmax(worst, fabs(u0[n] - u1[n]) / (1 + fabs(u0[n])));
    CHECK(worst < 1e-5, "%s scores_p5: relative error %g", k->name, worst);
    free(x), free(rows), free(rows_ref);
}

/* The proxy argmax against the argmax of every logit, on random rows, exact and near ties,
 * exclusions and non-finite input, for f32, f16 and q8_0 rows (from FIRST_TYPE on: 0 f32,
 * 1 f16, 2 q8_0). */
static void test_argmax_proxy_from(const sotto__kernels *k, int n_threads, int first_type)
{
    enum { N = 3000, K = 384 };
    unsigned seed = 5;
    sotto__exec ex;
    CHECK(sotto__exec_init(&ex, k, n_threads, sotto__op_argmax_scratch(K)), "exec_init");
    float *W = malloc((size_t)N * K * sizeof *W), *X = malloc(K * sizeof *X), *U = malloc(N * sizeof *U);
    uint16_t *Wh = malloc((size_t)N * K * sizeof *Wh);
    sotto__block_q8_0 *Wq = malloc((size_t)N * (K / 32) * sizeof *Wq);
    uint8_t *rows = malloc(N * SOTTO__PROXY_ROW(K));
    float *dist = malloc(N * sizeof *dist), *len = malloc(N * sizeof *len);
    int32_t none[1], all[N], ties[2] = {1000, 2500};
    for (int i = 0; i < N; i++) all[i] = i;
    sotto__i32list lists[][1] = {{{none, 0}}, {{ties, 1}}, {{ties, 2}}, {{all, N}}};
    for (int type = first_type; type < 3; type++) {
        const char *tn = type == 0 ? "f32" : type == 1 ? "f16" : "q8_0";
        for (int i = 0; i < N * K; i++) W[i] = 0.1f * rnd(&seed);
        for (int trial = 0; trial < 24; trial++) {
            if (trial == 0) {
                /* rows 1000 and 2000 equal and aligned with X (the maximum, tied), 2500 a hair apart */
                for (int i = 0; i < K; i++) X[i] = 25 * rnd(&seed);
                for (int i = 0; i < K; i++) W[1000 * K + i] = W[2000 * K + i] = W[2500 * K + i] = 0.004f * X[i];
                W[2500 * K + 7] += 1e-6f;
            } else if (trial >= 4) {
                for (int i = 0; i < K; i++) X[i] = (trial % 3 + 1) * 20 * rnd(&seed);
                if (trial >= 14) /* a cluster of 100 rows near X whose logits differ by about the
                                  * proxy's error: the proxy alone would often pick the wrong one */
                    for (int r = 100; r < 200; r++)
                        for (int i = 0; i < K; i++)
                            W[r * K + i] = 0.004f * X[i] / (trial % 3 + 1) + 0.0005f * rnd(&seed);
            }
            if (trial == 22) /* every row within the proxy's error of every other: more than n/8
                              * in reach (the full pass), the exact maximum a hair above the rest */
                for (int r = 0; r < N; r++)
                    for (int i = 0; i < K; i++) W[r * K + i] = 0.004f * X[i] + 1e-6f * rnd(&seed);
            if (trial == 23) X[5] = NAN;
            sotto__quantize(SOTTO_TYPE_F16, W, Wh, (int64_t)N * K);
            sotto__quantize(SOTTO_TYPE_Q8_0, W, Wq, (int64_t)N * K);
            sotto__linear lin = {type == 0 ? SOTTO_TYPE_F32 : type == 1 ? SOTTO_TYPE_F16 : SOTTO_TYPE_Q8_0,
                                 type == 0 ? (const void *)W : type == 1 ? (const void *)Wh : (const void *)Wq, NULL, N,
                                 K};
            CHECK(sotto__proxy_make(&ex, &lin, rows, dist, len), "proxy_make failed");
            sotto__proxy p = {rows, dist, len, N, K};
            const sotto__i32list *ex_list = lists[trial < 4 ? trial : 0];
            int n_exact = -1, n_full = -1;
            int32_t got = sotto__op_argmax_logits(&ex, X, &lin, &p, ex_list, 1, U, &n_exact);
            int32_t want = sotto__op_argmax_logits(&ex, X, &lin, NULL, ex_list, 1, U, &n_full);
            CHECK(got == want, "%s %s proxy argmax trial %d: %d, every logit says %d", k->name, tn, trial, got, want);
            CHECK(n_full == N, "the full argmax computes every row");
            if (trial == 0) CHECK(want == 1000, "of two equal maxima the first wins (got %d)", want);
            if (trial == 3) CHECK(want == 0, "everything excluded gives id 0 (got %d)", want);
            if (trial >= 4 && trial < 14)
                CHECK(n_exact < N / 32, "%s %s proxy trial %d computed %d of %d rows exactly", k->name, tn, trial,
                      n_exact, N);
        }
    }
    free(W), free(X), free(U), free(Wh), free(Wq), free(rows), free(dist), free(len);
    sotto__exec_free(&ex);
}

static void test_argmax_proxy(const sotto__kernels *k, int n_threads) { test_argmax_proxy_from(k, n_threads, 0); }

/* Cross-attention over per-head keys and values in f32, f16 and q8_0 (made by
 * op_cross_kv from rows) against the f32 attention on the transposed keys: equal within
 * the storage type's rounding, for one and several blocks of query rows, on every thread
 * count. */
static void test_cross_attention(void)
{
    const sotto__kernels *k = sotto__kernels_get();
    enum { H = 2, DH = 64, D = H * DH, S = 101, SP = 128, T = 30 };
    unsigned seed = 13;
    float *Q = malloc(T * D * sizeof *Q), *Kr = malloc(S * D * sizeof *Kr), *KT = malloc(D * S * sizeof *KT);
    float *V = malloc(S * D * sizeof *V);
    float *O = malloc(T * D * sizeof *O), *O2 = malloc(T * D * sizeof *O2);
    void *Kc = malloc(S * D * sizeof(float)), *Vc = malloc(SP * D * sizeof(float));
    for (int i = 0; i < T * D; i++) Q[i] = 2 * rnd(&seed);
    for (int i = 0; i < S * D; i++) Kr[i] = rnd(&seed), V[i] = rnd(&seed);
    for (int s = 0; s < S; s++)
        for (int c = 0; c < D; c++) KT[c * S + s] = Kr[s * D + c];
    const sotto_type types[] = {SOTTO_TYPE_F32, SOTTO_TYPE_F16, SOTTO_TYPE_Q8_0};
    const double tol[] = {1e-5, 2e-3, 0.02};
    for (int nt = 1; nt <= 3; nt++) {
        size_t scratch = sotto__op_attention_scratch(nt, S, DH);
        for (int ti = 0; ti < 3; ti++) {
            size_t a = sotto__op_cross_kv_scratch(S, H, DH, types[ti]);
            size_t b = sotto__op_cross_attention_scratch(nt, S, DH, types[ti]);
            scratch = scratch > a ? scratch : a;
            scratch = scratch > b ? scratch : b;
        }
        CHECK(sotto__op_cross_kv_scratch(S, H, DH, SOTTO_TYPE_Q8_0) == (size_t)D * SP * sizeof(float),
              "q8_0 cross_kv scratch holds the transposed values over Sp");
        sotto__exec ex;
        CHECK(sotto__exec_init(&ex, k, nt, scratch), "exec_init");
        for (int ti = 0; ti < 3; ti++) {
            sotto__op_cross_kv(&ex, Kr, V, S, H, DH, types[ti], Kc, Vc);
            for (int rows = 1; rows <= T; rows += T - 1) {
                sotto__op_attention(&ex, Q, D, KT, S, V, D, O, D, rows, S, H, DH, -1);
                sotto__op_cross_attention(&ex, Q, D, types[ti], Kc, Vc, O2, D, rows, S, H, DH);
                double worst = 0;
                for (int i = 0; i < rows * D; i++) worst = fmax(worst, fabs(O[i] - O2[i]));
                CHECK(worst < tol[ti], "%s cross-attention, %d rows, %d threads: max error %g",
                      sotto__type_name(types[ti]), rows, nt, worst);
            }
        }
        sotto__exec_free(&ex);
    }
    free(Q), free(Kr), free(KT), free(V), free(O), free(O2), free(Kc), free(Vc);
}

/* The decoder's rows over a shared prefix (prefix_attn.c) against sotto__op_attention of
 * each row over one cache holding the prefix and its own positions: the same bits, for 1
 * to 3 threads, every kernel set, prefixes of 0 to past the streaming kernels' 128 rows. */
static void test_attention_prefix(const sotto__kernels *k)
{
    enum { H = 3, DH = 64, D = H * DH, CTX = 448, N = 5 };
    static const int shapes[][2] = {{0, 1}, {1, 1}, {3, 40}, {130, 7}, {226, 1}, {226, 90}, {300, 148}};
    unsigned seed = 29;
    float *Q = malloc(N * D * sizeof *Q), *O = malloc(N * D * sizeof *O), *O2 = malloc(N * D * sizeof *O2);
    float *KT[N], *V[N];
    for (int r = 0; r < N; r++) {
        KT[r] = malloc((size_t)D * CTX * sizeof(float)), V[r] = malloc((size_t)CTX * D * sizeof(float));
        for (int i = 0; i < D * CTX; i++) KT[r][i] = rnd(&seed), V[r][i] = rnd(&seed);
    }
    for (int i = 0; i < N * D; i++) Q[i] = 2 * rnd(&seed);
    for (int nt = 1; nt <= 3; nt++) {
        sotto__exec ex;
        CHECK(sotto__exec_init(&ex, k, nt, sotto__op_attention_scratch(nt, CTX, DH)), "exec_init");
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            int P = shapes[s][0], S = P + shapes[s][1], bad = 0;
            for (int r = 1; r < N; r++) /* row r's cache: the prefix of row 0's, then its own */
                for (int c = 0; c < D; c++)
                    for (int p = 0; p < P; p++) KT[r][c * CTX + p] = KT[0][c * CTX + p], V[r][p * D + c] = V[0][p * D + c];
            for (int n = 1; n <= N; n += 2) {
                const float *kt[N], *v[N];
                for (int r = 0; r < n; r++) kt[r] = KT[r], v[r] = V[r];
                sotto__op_attention_prefix(&ex, Q, D, n, KT[0], V[0], kt, v, CTX, D, P, S, H, DH, O, D);
                for (int r = 0; r < n; r++)
                    sotto__op_attention(&ex, Q + r * D, D, KT[r], CTX, V[r], D, O2 + r * D, D, 1, S, H, DH, S - 1);
                bad += memcmp(O, O2, (size_t)n * D * sizeof *O) != 0;
            }
            CHECK(bad == 0, "%s attention_prefix P=%d S=%d, %d threads: other bits than attention over one cache",
                  k->name, P, S, nt);
        }
        sotto__exec_free(&ex);
    }
    for (int r = 0; r < N; r++) free(KT[r]), free(V[r]);
    free(Q), free(O), free(O2);
}

/* sotto__op_attention, whose threads copy a head's values side by side when they take
 * several blocks of its rows (ops.c), against the same products on the values in place,
 * block by block: the same bits, with and without the copy (1-3 threads over 2 and 4
 * blocks), every visible-key rule (all keys, causal from position 0 and from 5). */
static void test_attention_blocks(const sotto__kernels *k)
{
    enum { H = 3, DH = 64, D = H * DH, S = 101, R = SOTTO__ATTN_ROWS };
    static const int shapes[][2] = {{30, -1}, {75, -1}, {75, 0}, {70, 5}}; /* T, causal_pos */
    unsigned seed = 31;
    float *Q = malloc(S * D * sizeof *Q), *KT = malloc(D * S * sizeof *KT), *V = malloc(S * D * sizeof *V);
    float *O = malloc(S * D * sizeof *O), *O2 = malloc(S * D * sizeof *O2), *P = malloc(R * S * sizeof *P);
    for (int i = 0; i < S * D; i++) Q[i] = 2 * rnd(&seed), KT[i] = rnd(&seed), V[i] = rnd(&seed);
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const int T = shapes[si][0], cp = shapes[si][1], n_keys = cp < 0 ? S : cp + T;
        for (int h = 0; h < H; h++)
            for (int t0 = 0; t0 < T; t0 += R) {
                int rows = T - t0 < R ? T - t0 : R, n = n_keys;
                if (cp >= 0 && cp + t0 + rows < n) n = cp + t0 + rows;
                k->matmul_nn(Q + (size_t)t0 * D + h * DH, D, KT + (size_t)h * DH * S, S, P, (size_t)n, rows, n, DH);
                for (int r = 0; r < rows; r++) {
                    int visible = cp >= 0 ? cp + t0 + r + 1 : n;
                    k->softmax(P + (size_t)r * n, n, visible < n ? visible : n, 1.0f / sqrtf((float)DH));
                }
                k->matmul_nn(P, (size_t)n, V + h * DH, D, O2 + (size_t)t0 * D + h * DH, D, rows, DH, n);
            }
        for (int nt = 1; nt <= 3; nt++) {
            sotto__exec ex;
            CHECK(sotto__exec_init(&ex, k, nt, sotto__op_attention_scratch(nt, n_keys, DH)), "exec_init");
            sotto__op_attention(&ex, Q, D, KT, S, V, D, O, D, T, n_keys, H, DH, cp);
            CHECK(memcmp(O, O2, (size_t)T * D * sizeof *O) == 0,
                  "%s attention T=%d causal_pos=%d, %d threads: other bits than the products block by block",
                  k->name, T, cp, nt);
            sotto__exec_free(&ex);
        }
    }
    free(Q), free(KT), free(V), free(O), free(O2), free(P);
}

static void test_threaded(void)
{
    const sotto__kernels *k = sotto__kernels_get();
    for (int nt = 1; nt <= 3; nt++) {
        sotto__exec ex;
        /* S and dh of the attention below */
        CHECK(sotto__exec_init(&ex, k, nt, sotto__op_attention_scratch(nt, 9, 4)), "exec_init");
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
        float Q[5 * 8], KT[8 * 9], V[9 * 8], O[5 * 8], O2[5 * 8];
        for (int i = 0; i < T * d; i++) Q[i] = rnd(&seed);
        for (int i = 0; i < d * S; i++) KT[i] = rnd(&seed);
        for (int i = 0; i < S * d; i++) V[i] = 1.0f; /* all-ones values: output 1 */
        sotto__op_attention(&ex, Q, d, KT, S, V, d, O, d, T, S, H, dh, -1);
        bool ones = true;
        for (int i = 0; i < T * d; i++) ones &= fabsf(O[i] - 1.0f) < 1e-5f;
        CHECK(ones, "attention over constant values must return them (threads %d)", nt);
        for (int i = 0; i < S * d; i++) V[i] = (float)(i / d); /* value = key position */
        sotto__op_attention(&ex, Q, d, KT, S, V, d, O, d, 1, S, H, dh, 2); /* query 0 at position 2 */
        float KT3[8 * 3];
        for (int r = 0; r < d; r++)
            for (int c = 0; c < 3; c++) KT3[r * 3 + c] = KT[r * S + c];
        sotto__op_attention(&ex, Q, d, KT3, 3, V, d, O2, d, 1, 3, H, dh, -1);
        bool causal = true;
        for (int i = 0; i < d; i++) causal &= fabsf(O[i] - O2[i]) < 1e-5f && O[i] <= 2.0f + 1e-5f;
        CHECK(causal, "causal attention must only see keys 0..position (threads %d)", nt);
        free(A), free(B), free(C0), free(C1);
        sotto__exec_free(&ex);
    }
}

/* The avx512 set's attention kernels give the AVX2 kernels' bits (the same sums in the
 * same order), so the encoder's f32/f16 output does not depend on which of the two runs. */
static void test_same_bits(const sotto__kernels *a, const sotto__kernels *b)
{
    unsigned seed = 29;
    static const int nn[][3] = {{24, 1500, 64}, {24, 64, 1500}, {13, 101, 64}, {30, 37, 101}};
    for (size_t t = 0; t < sizeof nn / sizeof *nn; t++) {
        int M = nn[t][0], N = nn[t][1], K = nn[t][2];
        size_t lda = (size_t)K + 3, ldb = (size_t)N + 9, ldc = (size_t)N;
        float *A = malloc(M * lda * 4), *B = malloc(K * ldb * 4), *C0 = malloc(M * ldc * 4), *C1 = malloc(M * ldc * 4);
        for (size_t i = 0; i < M * lda; i++) A[i] = rnd(&seed);
        for (size_t i = 0; i < K * ldb; i++) B[i] = rnd(&seed);
        a->matmul_nn(A, lda, B, ldb, C0, ldc, M, N, K);
        b->matmul_nn(A, lda, B, ldb, C1, ldc, M, N, K);
        CHECK(memcmp(C0, C1, M * ldc * 4) == 0, "%s and %s matmul_nn M=%d N=%d K=%d differ", a->name, b->name, M, N, K);
        free(A), free(B), free(C0), free(C1);
    }
    static const int vis[][2] = {{1500, 1500}, {1500, 1493}, {1001, 999}, {40, 24}, {40, 8}, {9, 1}};
    for (size_t t = 0; t < sizeof vis / sizeof *vis; t++) {
        int n = vis[t][0], v = vis[t][1];
        float *x0 = malloc(n * 4), *x1 = malloc(n * 4);
        for (int i = 0; i < n; i++) x0[i] = x1[i] = 40 * rnd(&seed);
        a->softmax(x0, n, v, 0.125f);
        b->softmax(x1, n, v, 0.125f);
        CHECK(memcmp(x0, x1, n * 4) == 0, "%s and %s softmax n=%d visible=%d differ", a->name, b->name, n, v);
        free(x0), free(x1);
    }
}

/* q8_0 random blocks: A's values in -127..127 (the quantiser's range), B's any int8 when
 * EXTREME (-128 included, and +-127 in A), scales of varied size. */
static void fill_q8(sotto__block_q8_0 *x, size_t n, bool is_a, bool extreme, unsigned *seed)
{
    for (size_t i = 0; i < n; i++) {
        x[i].d = sotto__f32_to_f16(0.001f + 0.05f * fabsf(rnd(seed)));
        for (int q = 0; q < 32; q++) {
            int v = (int)(128 * rnd(seed));
            if (extreme) v = is_a ? ((i + q) % 3 ? -127 : 127) : ((i * 7 + q) % 5 ? -128 : 127);
            x[i].qs[q] = (int8_t)(is_a && v < -127 ? -127 : v);
        }
    }
}

/* One shape of test_q8_same_bits: false (and a line on the first 5 of *BAD) when set K's
 * matmul_q8 is not sotto__matmul_q8_ref's bits. */
static bool q8_same_bits_at(const sotto__kernels *k, int M, int N, int nb, bool extreme, bool with_bias,
                            unsigned *seed, int *bad)
{
    size_t lda = (size_t)nb + 1, ldb = (size_t)nb + 2, ldc = (size_t)N + 3;
    sotto__block_q8_0 *A = malloc(M * lda * sizeof *A), *B = malloc(N * ldb * sizeof *B);
    float *bias = malloc(N * sizeof *bias), *C0 = calloc(M * ldc, 4), *C1 = calloc(M * ldc, 4);
    fill_q8(A, M * lda, true, extreme, seed);
    fill_q8(B, N * ldb, false, extreme, seed);
    for (int i = 0; i < N; i++) bias[i] = rnd(seed);
    const float *bs = with_bias ? bias : NULL;
    sotto__matmul_q8_ref(A, lda, B, ldb, bs, C0, ldc, M, N, nb * 32);
    k->matmul_q8(A, lda, B, ldb, bs, C1, ldc, M, N, nb * 32);
    bool same = memcmp(C0, C1, M * ldc * 4) == 0;
    if (!same && (*bad)++ < 5) {
        size_t i = 0;
        while (C0[i] == C1[i] || (C0[i] != C0[i] && C1[i] != C1[i])) i++;
        printf("  %s matmul_q8 M=%d N=%d K=%d%s: C[%zu][%zu] %.9g, reference %.9g\n", k->name, M, N, nb * 32,
               bs ? " bias" : "", i / ldc, i % ldc, C1[i], C0[i]);
    }
    free(A), free(B), free(bias), free(C0), free(C1);
    return same;
}

/* matmul_q8 of set K gives sotto__matmul_q8_ref's bits on odd sizes and strides, every
 * path (GEMV and GEMM, row and column tails, blocks of K, rows longer than the GEMV's
 * prepared copies; the GEMV of 2-7 rows that the beams' vocabulary projection takes, from
 * 8192 rows of B), with and without bias, and writes nothing past N. */
static void test_q8_same_bits(const sotto__kernels *k)
{
    static const int ms[] = {1, 2, 3, 5, 7, 8, 9, 23, 24, 25, 121, 130};
    static const int ns[] = {1, 7, 8, 9, 16, 17, 33, 301};
    static const int nbs[] = {1, 2, 3, 13, 17, 33, 257};
    static const int wide[][3] = {{5, 8195, 3}, {4, 8197, 2}, {7, 8193, 13}, {6, 8200, 1}, {2, 8199, 12}};
    unsigned seed = 41;
    int bad = 0, runs = 0;
    for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
        for (size_t b = 0; b < sizeof ns / sizeof *ns; b++)
            for (size_t c = (a + b) % 2; c < sizeof nbs / sizeof *nbs; c += 2) {
                int M = ms[a], N = ns[b], nb = nbs[c];
                if (nb == 257 && M * N > 300) continue;
                q8_same_bits_at(k, M, N, nb, (a + b + c) % 5 == 0, (a + c) % 2, &seed, &bad);
                runs++;
            }
    for (size_t w = 0; w < sizeof wide / sizeof *wide; w++, runs++)
        q8_same_bits_at(k, wide[w][0], wide[w][1], wide[w][2], w % 2, w % 3 != 1, &seed, &bad);
    CHECK(bad == 0, "%s matmul_q8 differs from the reference's bits in %d of %d shapes", k->name, bad, runs);
}

/* The x86 sets' attention and elementwise kernels give the reference's bits (kernels.h:
 * the fused k-order sums of matmul_nn, the polynomial e^x and erf): matmul_nn and
 * matmul_nn_f16 on odd sizes, strides and every tile and streaming path, softmax over odd
 * visible lengths, gelu over odd lengths and the whole range of its input. */
/* matmul_nn_acc continues each output's chain: matmul_nn over the first K1 values of k and
 * matmul_nn_acc over the next K2 give one matmul_nn's bits over K1 + K2 (the decoder's rows
 * over a shared prefix, then their own positions), on every path of the set (one row, the
 * few-row stream from K2 = 128, tiles and their tails); C's padding untouched. */
static void test_nn_acc(const sotto__kernels *k)
{
    static const int ms[] = {1, 2, 3, 5, 6, 7, 12, 13, 24};
    static const int ns[] = {1, 7, 16, 33, 64, 65, 128, 300};
    static const int ks[][2] = {{0, 1}, {1, 1}, {5, 3}, {64, 64}, {3, 128}, {200, 130}, {226, 1}, {1, 226}};
    unsigned seed = 71;
    int bad = 0, runs = 0;
    for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
        for (size_t b = 0; b < sizeof ns / sizeof *ns; b++)
            for (size_t c = (a + b) % 2; c < sizeof ks / sizeof *ks; c += 2) {
                int M = ms[a], N = ns[b], K1 = ks[c][0], K2 = ks[c][1], K = K1 + K2;
                size_t lda = (size_t)K + 3, ldb = (size_t)N + 5, ldc = (size_t)N + 2;
                float *A = malloc(M * lda * 4), *B = malloc(K * ldb * 4), *C0 = malloc(M * ldc * 4),
                      *C1 = malloc(M * ldc * 4);
                for (size_t i = 0; i < M * lda; i++) A[i] = rnd(&seed);
                for (size_t i = 0; i < K * ldb; i++) B[i] = rnd(&seed);
                for (size_t i = 0; i < M * ldc; i++) C0[i] = C1[i] = 7.0f;
                k->matmul_nn(A, lda, B, ldb, C0, ldc, M, N, K);
                k->matmul_nn(A, lda, B, ldb, C1, ldc, M, N, K1);
                k->matmul_nn_acc(A + K1, lda, B + (size_t)K1 * ldb, ldb, C1, ldc, M, N, K2);
                bad += memcmp(C0, C1, M * ldc * 4) != 0;
                runs++;
                free(A), free(B), free(C0), free(C1);
            }
    CHECK(bad == 0, "%s matmul_nn then matmul_nn_acc differ from one matmul_nn in %d of %d shapes", k->name, bad,
          runs);
}

static void test_ref_bits(const sotto__kernels *k)
{
    static const int ms[] = {1, 2, 3, 5, 7, 12, 13, 24, 30};
    static const int ns[] = {1, 7, 8, 9, 17, 33, 64, 65, 127, 128, 130, 255, 256, 301, 1500};
    static const int ks[] = {1, 3, 5, 64, 101};
    unsigned seed = 43;
    int bad_nn = 0, bad_h = 0, runs = 0;
    for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
        for (size_t b = 0; b < sizeof ns / sizeof *ns; b++)
            for (size_t c = (a + b) % 2; c < sizeof ks / sizeof *ks; c += 2) {
                int M = ms[a], N = ns[b], K = ks[c];
                size_t lda = (size_t)K + 3, ldb = (size_t)N + 5, ldc = (size_t)N + 2;
                float *A = malloc(M * lda * 4), *B = malloc(K * ldb * 4), *C0 = malloc(M * ldc * 4),
                      *C1 = malloc(M * ldc * 4);
                uint16_t *Bh = malloc(K * ldb * 2);
                for (size_t i = 0; i < M * lda; i++) A[i] = rnd(&seed);
                for (size_t i = 0; i < K * ldb; i++) B[i] = rnd(&seed);
                sotto__quantize(SOTTO_TYPE_F16, B, Bh, (int64_t)(K * ldb));
                for (size_t i = 0; i < M * ldc; i++) C0[i] = C1[i] = 7.0f;
                sotto__matmul_nn_ref(A, lda, B, ldb, C0, ldc, M, N, K);
                k->matmul_nn(A, lda, B, ldb, C1, ldc, M, N, K);
                bad_nn += memcmp(C0, C1, M * ldc * 4) != 0;
                sotto__matmul_nn_f16_ref(A, lda, Bh, ldb, C0, ldc, M, N, K);
                k->matmul_nn_f16(A, lda, Bh, ldb, C1, ldc, M, N, K);
                bad_h += memcmp(C0, C1, M * ldc * 4) != 0;
                runs++;
                free(A), free(B), free(C0), free(C1), free(Bh);
            }
    /* few rows over a long K (the decoder's P V: B streamed row after row), column tails */
    static const int fm[] = {2, 3, 5, 6, 7, 8, 9}, fn[] = {7, 16, 24, 33, 64, 65}, fk[] = {128, 131, 1500};
    for (size_t a = 0; a < sizeof fm / sizeof *fm; a++)
        for (size_t b = 0; b < sizeof fn / sizeof *fn; b++)
            for (size_t c = 0; c < sizeof fk / sizeof *fk; c++) {
                int M = fm[a], N = fn[b], K = fk[c];
                size_t lda = (size_t)K + 1, ldb = (size_t)N + 3, ldc = (size_t)N + 2;
                float *A = malloc(M * lda * 4), *B = malloc(K * ldb * 4), *C0 = malloc(M * ldc * 4),
                      *C1 = malloc(M * ldc * 4);
                for (size_t i = 0; i < M * lda; i++) A[i] = rnd(&seed);
                for (size_t i = 0; i < K * ldb; i++) B[i] = rnd(&seed);
                for (size_t i = 0; i < M * ldc; i++) C0[i] = C1[i] = 7.0f;
                sotto__matmul_nn_ref(A, lda, B, ldb, C0, ldc, M, N, K);
                k->matmul_nn(A, lda, B, ldb, C1, ldc, M, N, K);
                bad_nn += memcmp(C0, C1, M * ldc * 4) != 0;
                runs++;
                free(A), free(B), free(C0), free(C1);
            }
    CHECK(bad_nn == 0, "%s matmul_nn differs from the reference's bits in %d of %d shapes", k->name, bad_nn, runs);
    /* the linear layers' GEMM (f32 and f16 B^T, from SOTTO__GEMM_MIN_M rows): blocks of rows
     * and of K, row and column tails, with and without bias */
    static const int mm[][3] = {{24, 1, 1}, {25, 17, 7}, {121, 33, 385}, {130, 64, 1000}, {37, 130, 769}, {240, 16, 80}};
    for (size_t t = 0; t < sizeof mm / sizeof *mm; t++) {
        int M = mm[t][0], N = mm[t][1], K = mm[t][2];
        size_t lda = (size_t)K + 5, ldb = (size_t)K + 3, ldc = (size_t)N + 1;
        float *A = malloc(M * lda * 4), *B = malloc(N * ldb * 4), *bias = malloc(N * 4), *C0 = calloc(M * ldc, 4),
              *C1 = calloc(M * ldc, 4);
        uint16_t *Bh = malloc(N * ldb * 2);
        for (size_t i = 0; i < M * lda; i++) A[i] = rnd(&seed);
        for (size_t i = 0; i < N * ldb; i++) B[i] = rnd(&seed);
        for (int i = 0; i < N; i++) bias[i] = rnd(&seed);
        sotto__quantize(SOTTO_TYPE_F16, B, Bh, (int64_t)(N * ldb));
        const float *bs = t % 2 ? NULL : bias;
        sotto__matmul_ref(A, lda, B, ldb, bs, C0, ldc, M, N, K);
        k->matmul(A, lda, B, ldb, bs, C1, ldc, M, N, K);
        CHECK(memcmp(C0, C1, M * ldc * 4) == 0, "%s matmul M=%d N=%d K=%d differs from the reference's bits", k->name,
              M, N, K);
        sotto__matmul_f16_ref(A, lda, Bh, ldb, bs, C0, ldc, M, N, K);
        k->matmul_f16(A, lda, Bh, ldb, bs, C1, ldc, M, N, K);
        CHECK(memcmp(C0, C1, M * ldc * 4) == 0, "%s matmul_f16 M=%d N=%d K=%d differs from the reference's bits",
              k->name, M, N, K);
        free(A), free(B), free(bias), free(C0), free(C1), free(Bh);
    }
    CHECK(bad_h == 0, "%s matmul_nn_f16 differs from the reference's bits in %d of %d shapes", k->name, bad_h, runs);
    static const int vis[][2] = {{1500, 1500}, {1500, 1493}, {1001, 999}, {448, 9}, {40, 24}, {40, 8}, {9, 1}, {3, 2}};
    for (size_t t = 0; t < sizeof vis / sizeof *vis; t++) {
        int n = vis[t][0], v = vis[t][1];
        float *x0 = malloc(n * 4), *x1 = malloc(n * 4);
        for (int i = 0; i < n; i++) x0[i] = x1[i] = 60 * rnd(&seed) - (i % 11 == 0 ? 200 : 0);
        sotto__softmax_ref(x0, n, v, 0.125f);
        k->softmax(x1, n, v, 0.125f);
        CHECK(memcmp(x0, x1, n * 4) == 0, "%s softmax n=%d visible=%d differs from the reference's bits", k->name, n, v);
        free(x0), free(x1);
    }
    enum { G = 4003 };
    float *g0 = malloc(G * 4), *g1 = malloc(G * 4);
    for (int i = 0; i < G; i++) g0[i] = g1[i] = i % 7 == 0 ? ldexpf(rnd(&seed), -(i % 40)) : -12.0f + 24.0f * i / G;
    sotto__gelu_ref(g0, G);
    k->gelu(g1, G);
    CHECK(memcmp(g0, g1, G * 4) == 0, "%s gelu differs from the reference's bits", k->name);
    free(g0), free(g1);
}

/* The f16 kernels give the f32 kernels' bits on weights that halves hold exactly (both
 * widen B to floats and run one chain per output; the order may be the set's own, but it
 * is the same for both types): so a model stored in f16 computes what its f32 copy
 * computes when its checkpoint is f16 (the default model, from CTranslate2 halves). Every
 * row count of the decoder (1, beams, batches) and the encoder's GEMM. */
/* The x86 sets' decoder rows (matmul below SOTTO__GEMM_MIN_M rows, kernels_avx2.c) in
 * plain C: a 4x2 or 5x2 block's output is one 8-lane chain per lane in steps of 8 of K,
 * a row alone's is four such chains over steps of 32 (the steps of 8 past them into the
 * first, the masked tail into the second) added pairwise; both end in hsum's tree
 * ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)), then the bias. */
static float lanes_sum(const float l[8])
{
    float e0 = l[0] + l[4], e1 = l[1] + l[5], e2 = l[2] + l[6], e3 = l[3] + l[7];
    return (e0 + e2) + (e1 + e3);
}

static float chain_block(const float *a, const float *b, int K)
{
    float l[8] = {0};
    for (int k = 0; k < K; k++) l[k % 8] = fmaf(a[k], b[k], l[k % 8]);
    return lanes_sum(l);
}

static float chain_alone(const float *a, const float *b, int K)
{
    float s[4][8] = {{0}};
    int k = 0;
    for (; k + 32 <= K; k += 32)
        for (int i = 0; i < 32; i++) s[i / 8][i % 8] = fmaf(a[k + i], b[k + i], s[i / 8][i % 8]);
    for (; k + 8 <= K; k += 8)
        for (int i = 0; i < 8; i++) s[0][i] = fmaf(a[k + i], b[k + i], s[0][i]);
    for (int i = 0; k + i < K; i++) s[1][i] = fmaf(a[k + i], b[k + i], s[1][i]);
    float l[8];
    for (int i = 0; i < 8; i++) l[i] = (s[0][i] + s[1][i]) + (s[2][i] + s[3][i]);
    return lanes_sum(l);
}

static void test_row_chains(const sotto__kernels *k)
{
    static const int ks[] = {8, 13, 64, 96, 389};
    /* the avx512 set's blocks of 4 B rows: none, one, several, a pair left */
    static const int ns[] = {1, 3, 5, 6, 13};
    unsigned seed = 57;
    int bad = 0, runs = 0;
    for (int M = 1; M < SOTTO__GEMM_MIN_M; M++)
        for (size_t t = 0; t < sizeof ns / sizeof *ns; t++)
            for (size_t c = 0; c < sizeof ks / sizeof *ks; c++, runs++) {
                int N = ns[t], K = ks[c];
                size_t lda = (size_t)K + 1, ldb = (size_t)K + 3, ldc = (size_t)N + 1;
                float *A = malloc(M * lda * 4), *B = malloc(N * ldb * 4), *bias = malloc(N * 4), *C = malloc(M * ldc * 4);
                uint16_t *Bh = malloc(N * ldb * 2);
                for (size_t i = 0; i < M * lda; i++) A[i] = rnd(&seed);
                for (size_t i = 0; i < N * ldb; i++) Bh[i] = sotto__f32_to_f16(rnd(&seed));
                sotto__dequantize(SOTTO_TYPE_F16, Bh, B, (int64_t)(N * ldb));
                for (int i = 0; i < N; i++) bias[i] = rnd(&seed);
                const float *bs = (M + N) % 2 ? bias : NULL;
                for (int f16 = 0; f16 < 2; f16++) {
                    if (f16) k->matmul_f16(A, lda, Bh, ldb, bs, C, ldc, M, N, K);
                    else k->matmul(A, lda, B, ldb, bs, C, ldc, M, N, K);
                    /* rows in blocks: groups of 4, the last one of 5 where one row would be left */
                    int in_blocks = M < 4 ? 0 : M % 4 == 1 ? M : M & ~3;
                    for (int m = 0; m < M; m++)
                        for (int n = 0; n < N; n++) {
                            bool block = m < in_blocks && n < (N & ~1);
                            const float *a = A + m * lda, *b = B + n * ldb;
                            float want = (block ? chain_block(a, b, K) : chain_alone(a, b, K)) + (bs ? bs[n] : 0.0f);
                            bad += memcmp(&want, C + m * ldc + n, 4) != 0;
                        }
                }
                free(A), free(B), free(bias), free(C), free(Bh);
            }
    CHECK(bad == 0, "%s matmul rows: %d outputs of %d shapes differ from the chains of kernels_avx2.c", k->name, bad,
          runs);
}

static void test_f16_is_f32(const sotto__kernels *k)
{
    static const int ms[] = {1, 2, 3, 4, 5, 6, 8, 9, 12, 24, 25, 130};
    static const int ns[] = {1, 7, 8, 9, 17, 64, 65, 300, 1536};
    static const int ks[] = {1, 31, 64, 384, 385};
    unsigned seed = 91;
    int bad = 0, bad_nn = 0, runs = 0;
    for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
        for (size_t b = 0; b < sizeof ns / sizeof *ns; b++)
            for (size_t c = (a + b) % 2; c < sizeof ks / sizeof *ks; c += 2) {
                int M = ms[a], N = ns[b], K = ks[c];
                size_t lda = (size_t)K + 3, ldb = (size_t)K + 1, ldc = (size_t)N + 2, nb = (size_t)N * ldb;
                float *A = malloc(M * lda * 4), *B = malloc(nb * 4), *bias = malloc(N * 4), *C0 = malloc(M * ldc * 4),
                      *C1 = malloc(M * ldc * 4);
                uint16_t *Bh = malloc(nb * 2);
                for (size_t i = 0; i < M * lda; i++) A[i] = rnd(&seed);
                for (size_t i = 0; i < nb; i++) B[i] = rnd(&seed);
                for (int i = 0; i < N; i++) bias[i] = rnd(&seed);
                sotto__quantize(SOTTO_TYPE_F16, B, Bh, (int64_t)nb);
                sotto__dequantize(SOTTO_TYPE_F16, Bh, B, (int64_t)nb);
                const float *bs = (a + c) % 2 ? bias : NULL;
                for (size_t i = 0; i < M * ldc; i++) C0[i] = C1[i] = 3.0f;
                k->matmul(A, lda, B, ldb, bs, C0, ldc, M, N, K);
                k->matmul_f16(A, lda, Bh, ldb, bs, C1, ldc, M, N, K);
                bad += memcmp(C0, C1, M * ldc * 4) != 0;
                if (bad == 1 && memcmp(C0, C1, M * ldc * 4) != 0)
                    printf("%s: first f16/f32 difference at M=%d N=%d K=%d\n", k->name, M, N, K);
                /* B as [K][N] rows: the attention products' layout */
                if ((size_t)K * N <= nb) {
                    k->matmul_nn(A, lda, B, (size_t)N, C0, ldc, M, N, K);
                    k->matmul_nn_f16(A, lda, Bh, (size_t)N, C1, ldc, M, N, K);
                    bad_nn += memcmp(C0, C1, M * ldc * 4) != 0;
                }
                runs++;
                free(A), free(B), free(bias), free(C0), free(C1), free(Bh);
            }
    CHECK(bad == 0, "%s matmul_f16 differs from matmul on f16-exact weights in %d of %d shapes", k->name, bad, runs);
    CHECK(bad_nn == 0, "%s matmul_nn_f16 differs from matmul_nn on f16-exact values in %d of %d shapes", k->name,
          bad_nn, runs);
}

/* The kernel sets offered are those the CPU's flags (Linux /proc/cpuinfo) allow. */
static void test_cpu_detection(void)
{
#if defined(__x86_64__) && defined(__linux__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) {
        printf("note: no /proc/cpuinfo; CPU detection not cross-checked\n");
        return;
    }
    char line[8192];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) found = strncmp(line, "flags", 5) == 0;
    fclose(f);
    CHECK(found, "/proc/cpuinfo has a flags line");
    if (!found) return;
    char *nl = strchr(line, '\n');
    if (nl) *nl = ' ';
    const char *flags[] = {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx_vnni"};
    bool has[8];
    for (int i = 0; i < 8; i++) {
        char w[32];
        snprintf(w, sizeof w, " %s ", flags[i]);
        has[i] = strstr(line, w) != NULL;
    }
    bool avx2 = has[0] && has[1] && has[2];
    bool avx512 = avx2 && has[3] && has[4] && has[5] && has[6];
    bool vnni = avx2 && has[7];
    CHECK(!!sotto__kernels_by_name("avx2") == avx2, "avx2 set offered: %d, cpuinfo says %d",
          !!sotto__kernels_by_name("avx2"), avx2);
    CHECK(!!sotto__kernels_by_name("avx512") == avx512, "avx512 set offered: %d, cpuinfo says %d",
          !!sotto__kernels_by_name("avx512"), avx512);
    CHECK(!!sotto__kernels_by_name("avx_vnni") == vnni, "avx_vnni set offered: %d, cpuinfo says %d",
          !!sotto__kernels_by_name("avx_vnni"), vnni);
    const char *best = avx512 ? "avx512" : vnni ? "avx_vnni" : avx2 ? "avx2" : "scalar";
    CHECK(strcmp(sotto__kernels_best()->name, best) == 0, "best set %s, cpuinfo says %s", sotto__kernels_best()->name,
          best);
    printf("cpu: avx2 %d, avx_vnni %d, avx512 %d; best set %s\n", avx2, vnni, avx512, best);
#endif
}

/* The NEON sets' int8 kernels give the scalar reference's bits (kernels.h; int8_neon.h):
 * q8_0 products for M = 1..23 rows and beyond (every tile of 8, 4, 2 and 1 rows), column
 * tails, one to 48 blocks, strides, with and without a bias, the padding of C untouched;
 * the proxy scores likewise. */
static void test_int8_ref_bits(const sotto__kernels *k)
{
    static const int ns[] = {1, 2, 3, 4, 5, 7, 9, 13, 37};
    static const int nbs[] = {1, 2, 3, 5, 12, 48};
    unsigned seed = 31;
    bool same = true;
    int n_calls = 0;
    for (int M = 1; M <= 30; M += M < 23 ? 1 : 7)
        for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
            for (size_t ib = 0; ib < sizeof nbs / sizeof *nbs; ib++) {
                int N = ns[in], nb = nbs[ib];
                if (nb == 48 && M % 3) continue; /* the longest sums on every third row count */
                size_t lda = (size_t)nb + M % 2, ldb = (size_t)nb + N % 3, ldc = (size_t)N + 1;
                sotto__block_q8_0 *A = malloc(M * lda * sizeof *A), *B = malloc(N * ldb * sizeof *B);
                float *bias = malloc(N * sizeof *bias), *C0 = calloc(M * ldc, 4), *C1 = calloc(M * ldc, 4);
                for (size_t i = 0; i < M * lda; i++) {
                    A[i].d = sotto__f32_to_f16(0.001f + 0.05f * fabsf(rnd(&seed)));
                    for (int q = 0; q < 32; q++) A[i].qs[q] = (int8_t)(127 * rnd(&seed));
                }
                for (size_t i = 0; i < N * ldb; i++) {
                    B[i].d = sotto__f32_to_f16(0.001f + 0.05f * fabsf(rnd(&seed)));
                    for (int q = 0; q < 32; q++) B[i].qs[q] = (int8_t)(i % 7 == 3 && q % 5 == 0 ? -128 : 127 * rnd(&seed));
                }
                for (int i = 0; i < N; i++) bias[i] = rnd(&seed);
                const float *bs = (M + N) % 2 ? bias : NULL;
                sotto__matmul_q8_ref(A, lda, B, ldb, bs, C0, ldc, M, N, nb * 32);
                k->matmul_q8(A, lda, B, ldb, bs, C1, ldc, M, N, nb * 32);
                bool ok = memcmp(C0, C1, M * ldc * 4) == 0;
                if (!ok) printf("  %s matmul_q8 M=%d N=%d K=%d%s: not the reference's bits\n", k->name, M, N, nb * 32,
                                bs ? " (bias)" : "");
                same &= ok, n_calls++;
                free(A), free(B), free(bias), free(C0), free(C1);
            }
    CHECK(same, "%s matmul_q8 differs from the scalar reference in some of %d shapes", k->name, n_calls);
    enum { N = 29, K = 512 };
    uint8_t *rows = malloc(N * SOTTO__PROXY_ROW(K));
    float x[K], d[K / 32], g[K / 32], u0[N], u1[N], e, l;
    int8_t a[K];
    for (int n = 0; n < N; n++) {
        for (int i = 0; i < K; i++) x[i] = rnd(&seed);
        sotto__quantize_p5_ref(x, K, rows + n * SOTTO__PROXY_ROW(K), &e, &l);
    }
    for (int i = 0; i < K; i++) a[i] = (int8_t)(i % 11 == 0 ? -128 : 127 * rnd(&seed));
    for (int b = 0; b < K / 32; b++) d[b] = 0.01f * (1 + rnd(&seed)), g[b] = rnd(&seed);
    sotto__scores_p5_ref(a, d, g, rows, u0, N, K);
    k->scores_p5(a, d, g, rows, u1, N, K);
    CHECK(memcmp(u0, u1, sizeof u0) == 0, "%s scores_p5 differs from the scalar reference", k->name);
    free(rows);
}

/* The AArch64 sets the hwcap bits allow: dot products need HWCAP_ASIMDDP, the int8 matrix
 * set needs HWCAP2_I8MM and dot products both; other bits change nothing. */
static void test_arm_sets(void)
{
    const unsigned long dp = SOTTO__HWCAP_ASIMDDP, mm = SOTTO__HWCAP2_I8MM;
    CHECK(sotto__arm_sets(0, 0) == 0, "no hwcaps: plain neon");
    CHECK(sotto__arm_sets(~dp, ~0ul) == 0, "every bit but ASIMDDP: plain neon");
    CHECK(sotto__arm_sets(dp, 0) == SOTTO__ARM_DOT, "ASIMDDP: neon_dot");
    CHECK(sotto__arm_sets(dp | 0xfful, ~mm) == SOTTO__ARM_DOT, "ASIMDDP without I8MM: neon_dot");
    CHECK(sotto__arm_sets(0, mm) == 0, "I8MM without ASIMDDP: plain neon");
    CHECK(sotto__arm_sets(dp, mm) == (SOTTO__ARM_DOT | SOTTO__ARM_I8MM), "ASIMDDP and I8MM: neon_i8mm");
}

/* The NEON sets this CPU runs (or the one SOTTO_KERNELS names, which must run here):
 * neon through every test of a kernel set, neon_dot and neon_i8mm through those of their
 * own (int8) kernels, and each set's int8 kernels against the reference's bits.
 * `make test-arm` runs each set on the qemu CPU model that has just its extensions. */
static void test_neon_sets(void)
{
    static const char *const sets[] = {"neon", "neon_dot", "neon_i8mm"};
    const char *only = getenv("SOTTO_KERNELS");
    for (int i = 0; i < 3; i++) {
        if (only && strcmp(only, sets[i]) != 0) continue;
        const sotto__kernels *k = sotto__kernels_by_name(sets[i]);
        if (only) CHECK(k, "SOTTO_KERNELS=%s, but this CPU does not run it", only);
        if (!k) continue;
        test_int8_ref_bits(k);
        test_typed(k), test_q8_extremes(k), test_row_independent(k), test_rows_batched(k), test_proxy_kernels(k);
        if (i > 0) { /* the f32 and f16 kernels are neon's, checked with it */
            test_argmax_proxy_from(k, 2, 2);
            continue;
        }
        test_matmul(k), test_matmul_large(k), test_nn_and_elementwise(k), test_argmax_proxy(k, 2);
    }
}

/* N_SLOTS function pointers after the name at TABLE: how many are NULL. */
static int empty_slots(const void *table, int n_slots)
{
    int empty = 0;
    for (int i = 0; i < n_slots; i++) {
        void (*fn)(void);
        memcpy(&fn, (const char *)table + sizeof(const char *) + (size_t)i * sizeof fn, sizeof fn);
        empty += fn == NULL;
    }
    return empty;
}

/* Every kernel set this CPU runs, and the CPU backend's op table, fill every slot. */
static void test_tables(void)
{
    int n_sets = 0;
    for (int i = 0; sotto__kernel_sets[i]; i++) {
        const sotto__kernels *k = sotto__kernels_by_name(sotto__kernel_sets[i]);
        if (!k) continue;
        n_sets++;
        CHECK(strcmp(k->name, sotto__kernel_sets[i]) == 0, "set %s is named %s", sotto__kernel_sets[i], k->name);
        /* gemm_f16p may be empty where the set's gemm keeps chains of its own (neon) */
        int may = !k->gemm_f16p && strncmp(k->name, "neon", 4) == 0;
        CHECK(empty_slots(k, SOTTO__N_KERNEL_SLOTS) == may, "kernel set %s leaves %d slots empty", k->name,
              empty_slots(k, SOTTO__N_KERNEL_SLOTS));
    }
    CHECK(n_sets >= 1, "no kernel set runs here");
    CHECK(sotto__kernels_by_name("bogus") == NULL, "an unknown set name is refused");
    CHECK(sotto__kernels_by_name("SCALAR") == sotto__kernels_by_name("scalar") &&
              sotto__kernels_by_name("Avx2") == sotto__kernels_by_name("avx2"),
          "a set's name in capitals names the set");
    sotto__limits lim = {.max_rows = 8, .max_in = 64, .max_keys = 8, .max_heads = 1, .max_dh = 32,
                         .cross_type = SOTTO_TYPE_F32, .cross_keys = 8, .vocab_in = 32};
    sotto__backend *be = NULL;
    sotto__err err = {0};
    CHECK(sotto__cpu_backend_create(2, &lim, &be, &err) == SOTTO_OK, "cpu backend: %s", err.msg);
    if (be) {
        CHECK(empty_slots(be->ops, SOTTO__N_BACKEND_SLOTS) == 0, "the cpu backend leaves %d op slots empty",
              empty_slots(be->ops, SOTTO__N_BACKEND_SLOTS));
        be->ops->free(be);
    }
    for (int i = 0; sotto__backend_reg_at(i); i++) { /* every registered backend's table, no device needed */
        const sotto__backend_reg *reg = sotto__backend_reg_at(i);
        if (!reg->ops) {
            printf("  backend %s: not built in (no op table to check)\n", reg->name);
            continue;
        }
        CHECK(empty_slots(reg->ops, SOTTO__N_BACKEND_SLOTS) == 0, "the %s backend's table leaves %d op slots empty",
              reg->name, empty_slots(reg->ops, SOTTO__N_BACKEND_SLOTS));
        CHECK(reg->ops->name && !strcmp(reg->ops->name, reg->name), "the %s backend's table is named %s", reg->name,
              reg->ops->name ? reg->ops->name : "(null)");
    }
    fflush(stdout); /* an empty slot crashes a later test: its message must be out first */
}

/* The panel store: each matrix in panels once (the same pointer on every call, the layout
 * of sotto__f16_panels), past the table's first growth; linear_rows from the panels on 1
 * to 3 threads gives the bits it gives reading the weights in place, at every M. */
static void test_panel_store(const sotto__kernels *k)
{
    enum { MATS = 70, MM = 30 };
    unsigned seed = 41;
    sotto__panel_store *s = sotto__panel_store_make(NULL);
    CHECK(s != NULL, "panel store");
    if (!s) return;
    enum { N = 905, K = 72 };
    uint16_t *W[MATS], *w = malloc((size_t)N * K * sizeof *w);
    for (int j = 0; j < N * K; j++) w[j] = sotto__f32_to_f16(rnd(&seed));
    const uint16_t *got[MATS];
    bool layout = true, again = true;
    for (int nt = 1; nt <= 3; nt++) {
        sotto__exec ex;
        CHECK(sotto__exec_init(&ex, k, nt, 0), "exec_init");
        for (int i = 0; i < MATS; i++) {
            int n_out = 1 + 13 * i, n_in = 32 + 8 * (i % 5);
            if (nt == 1) {
                W[i] = malloc((size_t)n_out * n_in * sizeof **W);
                for (int j = 0; j < n_out * n_in; j++) W[i][j] = sotto__f32_to_f16(rnd(&seed));
            }
            const uint16_t *p = sotto__panels_of(s, &ex, W[i], n_out, n_in);
            if (nt == 1) {
                got[i] = p;
                for (int n = 0; p && n < n_out; n++)
                    for (int kk = 0; kk < n_in; kk++)
                        layout &= sotto__panel_at(p, n_in, n)[(size_t)kk * SOTTO__PANEL_W] == W[i][n * n_in + kk];
            } else again &= p == got[i];
        }
        /* the op: a 905 x 72 f16 linear (panels split between threads at multiples of 32);
         * the store knows a matrix by its address, which lives as long as the store (the
         * model's weights), so W is the same on every round */
        float *X = malloc((size_t)MM * K * sizeof *X), *b = malloc(N * sizeof *b);
        float *Y = malloc((size_t)MM * N * sizeof *Y), *R = malloc((size_t)MM * N * sizeof *R);
        for (int j = 0; j < MM * K; j++) X[j] = rnd(&seed);
        for (int j = 0; j < N; j++) b[j] = rnd(&seed);
        sotto__linear l = {SOTTO_TYPE_F16, w, b, N, K};
        const uint16_t *p = sotto__panels_of(s, &ex, w, N, K);
        bool same = p != NULL;
        for (int M = 1; M <= MM; M += 7) {
            sotto__op_linear_rows(&ex, X, M, &l, NULL, R);
            sotto__op_linear_rows(&ex, X, M, &l, p, Y);
            same &= memcmp(Y, R, (size_t)M * N * sizeof *Y) == 0;
        }
        CHECK(same, "%s linear_rows from panels on %d threads differs from the weights in place", k->name, nt);
        free(X), free(b), free(Y), free(R);
        sotto__exec_free(&ex);
    }
    CHECK(layout, "the store's panels hold the matrices as sotto__f16_panels lays them out");
    CHECK(again, "the store makes a matrix's panels once");
    for (int i = 0; i < MATS; i++) free(W[i]);
    free(w);
    sotto__panel_store_free(s);
}

/* The threaded products cut into pieces the threads take in turn (ops.c mm_plan): on 2 and
 * 3 threads every output has the bits of the one-thread product (one kernel call), for
 * each weight type and both cuts: many rows of A (row parts, in groups of columns; q8_0 in
 * parts of rows) and few rows (columns only), with and without the rows' GEMM bits. Sizes
 * kept small: the check runs for every set, the scalar one too, under qemu in CI. */
static void test_linear_pieces(const sotto__kernels *k)
{
    enum { MAXM = 400, MAXN = 3000, K = 64, ROUNDS = 2 };
    static const int shapes[][2] = {{400, 264}, {301, 97}, {5, 1000}, {40, 3000}, {1, 2900}};
    static const sotto_type types[] = {SOTTO_TYPE_F32, SOTTO_TYPE_F16, SOTTO_TYPE_Q8_0};
    unsigned seed = 53;
    float *X = malloc((size_t)MAXM * K * sizeof *X), *wf = malloc((size_t)MAXN * K * sizeof *wf);
    float *bias = malloc(MAXN * sizeof *bias);
    uint16_t *wh = malloc((size_t)MAXN * K * sizeof *wh);
    sotto__block_q8_0 *wq = malloc((size_t)MAXN * (K / SOTTO__QK8_0) * sizeof *wq);
    float *R = malloc((size_t)MAXM * MAXN * sizeof *R), *Y = malloc((size_t)MAXM * MAXN * sizeof *Y);
    for (int i = 0; i < MAXM * K; i++) X[i] = rnd(&seed);
    for (int i = 0; i < MAXN * K; i++) wh[i] = sotto__f32_to_f16(rnd(&seed)), wf[i] = sotto__f16_to_f32(wh[i]);
    for (int i = 0; i < MAXN; i++) bias[i] = rnd(&seed), k->quantize_q8(wf + (size_t)i * K, wq + i * (K / 32), K);
    size_t scratch = sotto__op_linear_scratch(MAXM, K, SOTTO_TYPE_Q8_0);
    sotto__exec ex[3]; /* 1, 2 and 3 threads */
    for (int t = 0; t < 3; t++) CHECK(sotto__exec_init(&ex[t], k, t + 1, scratch), "exec_init");
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
        for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++)
            for (int rows = 0; rows <= (types[ti] != SOTTO_TYPE_Q8_0); rows++) { /* q8_0 rows: the same op */
                int M = shapes[si][0], N = shapes[si][1];
                const void *w = types[ti] == SOTTO_TYPE_F32   ? (const void *)wf
                                : types[ti] == SOTTO_TYPE_F16 ? (const void *)wh
                                                              : (const void *)wq;
                sotto__linear l = {types[ti], w, bias, N, K};
                for (int t = 0; t < 3; t++)
                    for (int round = 0; round < (t ? ROUNDS : 1); round++) { /* the pieces fall differently */
                        float *out = t ? Y : R;
                        if (rows) sotto__op_linear_rows(&ex[t], X, M, &l, NULL, out);
                        else sotto__op_linear(&ex[t], X, M, &l, out);
                        if (!t) continue;
                        bool same = memcmp(R, Y, (size_t)M * N * sizeof *Y) == 0;
                        CHECK(same, "%s %s linear%s %d x %d on %d threads differs from one thread", k->name,
                              sotto__type_name(types[ti]), rows ? "_rows" : "", M, N, t + 1);
                    }
            }
    for (int t = 0; t < 3; t++) sotto__exec_free(&ex[t]);
    free(X), free(wf), free(bias), free(wh), free(wq), free(R), free(Y);
}

/* host_for runs each item exactly once, on 1 to 5 threads, for 0 to 9 items. */
static void count_item(void *arg, int i) { __atomic_fetch_add((int *)arg + i, 1, __ATOMIC_RELAXED); }

static void test_host_for(void)
{
    sotto__limits lim = {.max_rows = 8, .max_in = 64, .max_keys = 8, .max_heads = 1, .max_dh = 32,
                         .cross_type = SOTTO_TYPE_F32, .cross_keys = 8, .vocab_in = 32};
    for (int nt = 1; nt <= 5; nt++) {
        sotto__backend *be = NULL;
        sotto__err err = {0};
        CHECK(sotto__cpu_backend_create(nt, &lim, &be, &err) == SOTTO_OK, "cpu backend: %s", err.msg);
        if (!be) continue;
        for (int n = 0; n < 10; n++)
            for (int round = 0; round < 50; round++) {
                int seen[10] = {0};
                be->ops->host_for(be, count_item, seen, n);
                bool once = true;
                for (int i = 0; i < 10; i++) once &= seen[i] == (i < n);
                CHECK(once, "host_for on %d threads, %d items: an item run other than once", nt, n);
                if (!once) break;
            }
        be->ops->free(be);
    }
}

/* test_kernels [--best SET]: SET is the set this CPU must choose (test-arm.sh, per qemu
 * CPU model). SOTTO_KERNELS=NAME checks that set without the scalar reference's tests. */
int main(int argc, char **argv)
{
    const char *best = argc == 3 && strcmp(argv[1], "--best") == 0 ? argv[2] : NULL;
    if (argc != 1 && !best) {
        fprintf(stderr, "usage: test_kernels [--best SET]\n");
        return 1;
    }
    /* SOTTO_KERNELS naming another set: the reference's own checks are skipped (test-arm.sh
     * runs each NEON set so under emulation; `make test` runs them natively) */
    const char *only = getenv("SOTTO_KERNELS");
    const sotto__kernels *ref = only && strcasecmp(only, "scalar") != 0 ? NULL : sotto__kernels_by_name("scalar");
    test_tables();
    test_host_for();
    test_cpu_detection();
    for (int i = 0; sotto__kernel_sets[i]; i++) { /* every set this CPU runs, the scalar one included */
        const sotto__kernels *k = sotto__kernels_by_name(sotto__kernel_sets[i]);
        if (k) test_q8_same_bits(k);
    }
    for (int i = 0; sotto__kernel_sets[i]; i++) { /* every set: gemm at any M = matmul of many rows */
        const sotto__kernels *k = sotto__kernels_by_name(sotto__kernel_sets[i]);
        if (k) test_gemm_rows(k), test_gemm_strides(k);
        if (k && k->gemm_f16p) test_panel_store(k);
        if (k) test_linear_pieces(k);
    }
    for (int i = 0; sotto__kernel_sets[i]; i++) { /* every set: f16 weights compute f32's bits */
        const sotto__kernels *k = sotto__kernels_by_name(sotto__kernel_sets[i]);
        if (k) test_f16_is_f32(k), test_nn_acc(k), test_attention_prefix(k), test_attention_blocks(k);
    }
    for (int i = 0; sotto__kernel_sets[i]; i++) { /* the x86 sets (NEON keeps its own sums) */
        const sotto__kernels *k = sotto__kernels_by_name(sotto__kernel_sets[i]);
        if (k && strncmp(k->name, "avx", 3) == 0) test_ref_bits(k), test_row_chains(k);
    }
    const sotto__kernels *vnni = sotto__kernels_by_name("avx_vnni");
    if (vnni) test_typed(vnni), test_q8_extremes(vnni), test_row_independent(vnni), test_rows_batched(vnni),
        test_argmax_proxy(vnni, 2);
    else printf("note: this CPU has no AVX-VNNI; the avx_vnni kernels were not checked\n");
    if (ref) test_matmul(ref), test_typed(ref);
    const sotto__kernels *avx2 = sotto__kernels_by_name("avx2");
    if (ref) test_nn_and_elementwise(ref);
    if (avx2) test_matmul(avx2), test_matmul_large(avx2), test_typed(avx2), test_nn_and_elementwise(avx2),
        test_q8_extremes(avx2);
    else printf("note: this CPU has no AVX2+FMA; only the scalar kernels were checked\n");
    const sotto__kernels *avx512 = sotto__kernels_by_name("avx512");
    if (avx512) test_typed(avx512), test_q8_extremes(avx512), test_nn_and_elementwise(avx512), test_same_bits(avx2, avx512);
    else printf("note: this CPU has no AVX-512 VNNI; the avx512 kernels were not checked\n");
    test_arm_sets();
    if (best) CHECK(strcmp(sotto__kernels_best()->name, best) == 0, "the best set here is %s, not %s",
                    sotto__kernels_best()->name, best);
    test_neon_sets();
    test_threaded();
    test_cross_attention();
    if (ref) test_row_independent(ref), test_proxy_kernels(ref), test_argmax_proxy(ref, 1), test_rows_batched(ref);
    if (avx2) test_row_independent(avx2), test_rows_batched(avx2), test_proxy_kernels(avx2), test_argmax_proxy(avx2, 2);
    if (avx512) test_row_independent(avx512), test_rows_batched(avx512), test_proxy_kernels(avx512), test_argmax_proxy(avx512, 3);
    return check_summary();
}
