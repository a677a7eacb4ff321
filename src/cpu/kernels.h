/* kernels.h — the single-threaded compute kernels and their run-time dispatch. Each
 * SIMD kernel has a plain scalar `_ref` twin with the same contract, which the tests
 * compare it against on odd sizes.
 *
 *   matmul:  C[m,n] = bias[n] + sum_k A[m,k] * B[n,k]      A[M,K], B[N,K], C[M,N]
 *            (row strides lda, ldb, ldc in floats; bias may be NULL): one fused
 *            multiply-add chain in k order starting from bias[n] (or 0); the x86 sets'
 *            GEMM (M >= SOTTO__GEMM_MIN_M: the encoder) gives these bits, their row
 *            kernels for fewer rows sum 8 lanes (within rounding of the reference)
 *   matmul_nn: C[m,n] = sum_k A[m,k] * B[k,n]               A[M,K], B[K,N], C[M,N]
 *               (B not transposed; no bias; used by attention on keys stored transposed
 *               [d, S] and values stored as rows [S, d]); the sum is one fused
 *               multiply-add chain in k order from 0 (fmaf), in every x86 set
 *   matmul_nn_acc: C[m,n] += sum_k A[m,k] * B[k,n], the chain continuing from C's value:
 *               matmul_nn over K1 values of k, then matmul_nn_acc over the next K2,
 *               gives the bits of one matmul_nn over K1 + K2 (the decoder's rows over a
 *               shared prefix's values, then their own)
 *   softmax: one attention row: with m = max x[0..visible), x[i] = exp(scale (x[i] - m))
 *            normalised to sum 1 over i < visible, x[i] = 0 for visible <= i < n; exp is
 *            the Cephes degree-6 polynomial of kernels_ref.c (relative error ~1e-7), the
 *            sum runs in 8 lanes (i mod 8) added ((0+4)+(2+6))+((1+5)+(3+7)), and x[i] is
 *            multiplied by 1 / sum: every x86 set gives the reference's bits
 *   to_f16:  n floats to IEEE halves, rounded to nearest even (as sotto__f32_to_f16)
 *   from_f16: n IEEE halves to floats (exact)
 *   scores_p5: u[n] = sum_b s[n][b] * (d[b] * sum_{i in b} a[i] v[n][i] + g[b]) over the
 *               K / 32 blocks b of N records of a 5-bit proxy (model.h: v in 0..31, f16
 *               scales s), int8 activations a[K], K a multiple of 128 and at most
 *               SOTTO__PROXY_MAX_K; the sums over a block are exact integers
 *   quantize_p5: one row of K values to a proxy record, with *err >= |x - p| and
 *               *len >= |p| (f32 partial sums rounded up by 0.1 %). Per block s is the f16
 *               nearest max|x| / 15, raised where rounding left it below max|x| / 15.5,
 *               and v = x / s rounded (halves up) + 16, clamped to 0..31
 *   gelu:    x[i] = 0.5 x (1 + erf(x / sqrt 2)) over N values, erf by Abramowitz & Stegun
 *            7.1.26 (absolute error <= 1.5e-7) on that exp, the reference's bits on x86
 *   quantize_q8: one row of K floats (K a multiple of 32) to q8_0 blocks, exactly as
 *               sotto__quantize (d = max|x| / 127 rounded to f16, q = round(x / d))
 *   matmul_f16: the same with B stored as IEEE half floats [N, K] (ldb in halves); in
 *               every set the bits of the set's matmul on B widened to floats (the same
 *               chains), so an f16 model computes what its f32 copy does
 *   matmul_nn_f16: matmul_nn with B in halves (the same fused chain; likewise matmul_nn's bits)
 *   matmul_q8:  the same with A and B in q8_0 blocks (K a multiple of 32; lda, ldb in
 *               blocks; A's int8 values in -127..127, as quantize_q8 writes them, B's any):
 *               per block pair an exact int32 dot product of the int8 values, then
 *               s = s + (d_a * d_b) * dot in block order from 0 (each product and sum
 *               rounded to f32, no FMA), and s + bias last. Every set gives these bits.
 *
 * Row kernels with one row of A (the decoder) give every output the same value wherever
 * the row falls in the kernel's grouping of B rows (a single row of B included), so the
 * exact logits of a few tokens equal those of the full projection, bit for bit.
 */
#ifndef SOTTO_KERNELS_H
#define SOTTO_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../quant.h"

typedef void (*sotto__matmul_fn)(const float *A, size_t lda, const float *B, size_t ldb, const float *bias,
                                 float *C, size_t ldc, int M, int N, int K);

typedef void (*sotto__matmul_f16_fn)(const float *A, size_t lda, const uint16_t *B, size_t ldb,
                                     const float *bias, float *C, size_t ldc, int M, int N, int K);
/* f16 panels (sotto__f16_panels): B [N, K] in halves as ceil(N / SOTTO__PANEL_W) panels of
 * SOTTO__PANEL_W rows, each [K][SOTTO__PANEL_W] (row n's k-th value at panel n / W, offset
 * k W + n % W), the last zero-padded: B as the x86 GEMMs read it, widened in order where
 * its rows would be transposed at every call (the batched decoder's few rows of A over
 * the whole vocabulary, a step at a time). */
enum { SOTTO__PANEL_W = 32 };
static inline const uint16_t *sotto__panel_at(const uint16_t *P, int K, int n)
{
    return P + (size_t)(n / SOTTO__PANEL_W) * (size_t)K * SOTTO__PANEL_W + n % SOTTO__PANEL_W;
}
size_t sotto__f16_panels_bytes(int N, int K);
/* P (sotto__f16_panels_bytes(N, K) bytes) = B [N, K] (row stride LDB halves) in panels */
void sotto__f16_panels(const uint16_t *B, size_t ldb, int N, int K, uint16_t *P);
typedef void (*sotto__gemm_f16p_fn)(const float *A, size_t lda, const uint16_t *P, const float *bias, float *C,
                                    size_t ldc, int M, int N, int K);
typedef void (*sotto__matmul_q8_fn)(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B,
                                    size_t ldb, const float *bias, float *C, size_t ldc, int M, int N, int K);

typedef void (*sotto__matmul_nn_fn)(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc,
                                    int M, int N, int K);
typedef void (*sotto__matmul_nn_f16_fn)(const float *A, size_t lda, const uint16_t *B, size_t ldb, float *C,
                                        size_t ldc, int M, int N, int K);
typedef void (*sotto__softmax_fn)(float *x, int n, int visible, float scale);
typedef void (*sotto__to_f16_fn)(const float *x, uint16_t *out, size_t n);
typedef void (*sotto__from_f16_fn)(const uint16_t *h, float *out, size_t n);
enum { SOTTO__PROXY_MAX_K = 4096 };
typedef void (*sotto__quantize_p5_fn)(const float *x, int K, uint8_t *row, float *err, float *len);
typedef void (*sotto__scores_p5_fn)(const int8_t *a, const float *d, const float *g, const uint8_t *rows, float *u,
                                    int N, int K);
typedef void (*sotto__quantize_q8_fn)(const float *x, sotto__block_q8_0 *out, int k);
typedef void (*sotto__gelu_fn)(float *x, size_t n);
/* the op table's row_max and row_exp_sum (backend.h) on a row of host logits */
typedef float (*sotto__row_max_fn)(const float *x, int n);
typedef double (*sotto__row_exp_sum_fn)(const float *x, int n, float m, float scale, float *w);

/* A kernel set: its name, then SOTTO__N_KERNEL_SLOTS function pointers and nothing
 * else (test_kernels walks the slots to check none is empty). */
enum { SOTTO__N_KERNEL_SLOTS = 18 };
typedef struct sotto__kernels {
    const char *name; /* "scalar", "avx2", "avx_vnni" (avx2 + VEX vpdpbusd q8_0), "avx512" (avx2 + AVX-512 VNNI
                       * q8_0, zmm GEMM and attention), "neon", "neon_dot" (neon + sdot int8), "neon_i8mm"
                       * (neon_dot + smmla q8_0 GEMM) */
    sotto__matmul_fn matmul;
    sotto__matmul_nn_fn matmul_nn;
    sotto__matmul_nn_fn matmul_nn_acc;
    sotto__matmul_nn_f16_fn matmul_nn_f16; /* B in f16: the resident cross K/V of reduced-precision decoders */
    sotto__softmax_fn softmax;
    sotto__gelu_fn gelu;
    sotto__quantize_q8_fn quantize_q8;
    sotto__matmul_f16_fn matmul_f16;
    sotto__matmul_q8_fn matmul_q8;
    sotto__to_f16_fn to_f16;
    sotto__from_f16_fn from_f16;
    sotto__scores_p5_fn scores_p5;
    sotto__quantize_p5_fn quantize_p5;
    sotto__row_max_fn row_max;
    sotto__row_exp_sum_fn row_exp_sum;
    /* matmul and matmul_f16 with the bits a call of SOTTO__GEMM_MIN_M rows or more gives
     * each row, at any M (the batched decoder's few rows, unpadded) */
    sotto__matmul_fn gemm;
    sotto__matmul_f16_fn gemm_f16;
    /* gemm_f16 with B in f16 panels P (sotto__f16_panels, from its column 0), the same
     * bits; NULL in the neon sets, whose gemm keeps chains of its own (the one slot that
     * may be empty: the CPU backend then reads B in place) */
    sotto__gemm_f16p_fn gemm_f16p;
} sotto__kernels;
_Static_assert(sizeof(sotto__kernels) == sizeof(const char *) + SOTTO__N_KERNEL_SLOTS * sizeof(void (*)(void)),
               "a kernel set is its name and SOTTO__N_KERNEL_SLOTS function pointers");

void sotto__matmul_ref(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                       size_t ldc, int M, int N, int K);
void sotto__gemm_f16p_ref(const float *A, size_t lda, const uint16_t *P, const float *bias, float *C, size_t ldc,
                          int M, int N, int K);
void sotto__matmul_nn_ref(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                          int N, int K);
void sotto__matmul_nn_acc_ref(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                              int N, int K);
void sotto__matmul_nn_f16_ref(const float *A, size_t lda, const uint16_t *B, size_t ldb, float *C, size_t ldc,
                              int M, int N, int K);
void sotto__matmul_nn_f16_avx2(const float *A, size_t lda, const uint16_t *B, size_t ldb, float *C, size_t ldc,
                               int M, int N, int K);
void sotto__softmax_ref(float *x, int n, int visible, float scale);
void sotto__to_f16_ref(const float *x, uint16_t *out, size_t n);
void sotto__from_f16_ref(const uint16_t *h, float *out, size_t n);
void sotto__quantize_p5_ref(const float *x, int K, uint8_t *row, float *err, float *len);
void sotto__quantize_p5_avx2(const float *x, int K, uint8_t *row, float *err, float *len);
void sotto__scores_p5_ref(const int8_t *a, const float *d, const float *g, const uint8_t *rows, float *u, int N,
                          int K);
void sotto__scores_p5_avx2(const int8_t *a, const float *d, const float *g, const uint8_t *rows, float *u, int N,
                           int K);
void sotto__scores_p5_avx512(const int8_t *a, const float *d, const float *g, const uint8_t *rows, float *u, int N,
                             int K);
void sotto__from_f16_avx2(const uint16_t *h, float *out, size_t n);
void sotto__gelu_ref(float *x, size_t n);
void sotto__quantize_q8_ref(const float *x, sotto__block_q8_0 *out, int k);
void sotto__quantize_q8_avx2(const float *x, sotto__block_q8_0 *out, int k);
void sotto__matmul_nn_avx2(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                           int N, int K);
void sotto__matmul_nn_acc_avx2(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                               int N, int K);
void sotto__softmax_avx2(float *x, int n, int visible, float scale);
void sotto__to_f16_avx2(const float *x, uint16_t *out, size_t n);
void sotto__gelu_avx2(float *x, size_t n);
void sotto__matmul_f16_ref(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                           size_t ldc, int M, int N, int K);
void sotto__matmul_q8_ref(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                          const float *bias, float *C, size_t ldc, int M, int N, int K);
void sotto__matmul_f16_avx2(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                            size_t ldc, int M, int N, int K);
void sotto__matmul_q8_avx2(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                           const float *bias, float *C, size_t ldc, int M, int N, int K);
void sotto__matmul_avx2(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                        size_t ldc, int M, int N, int K);

/* Rows of A each alone (kernels_avx2.c's chains for a row alone: four 8-lane chains over
 * steps of 32) against B rows [n0, n1), f32 or f16 (F16); the avx512 set's decoder rows
 * take it for the rows past their blocks (gemv_avx512.c). */
void sotto__gemv_alone_avx2(const float *A, size_t lda, const void *B, bool f16, size_t ldb, const float *bias,
                            float *C, size_t ldc, int M, int n0, int n1, int K);
/* The avx512 set's decoder rows (M < SOTTO__GEMM_MIN_M, gemv_avx512.c): kernels_avx2.c's
 * chains, two B rows to a 512-bit register. */
void sotto__gemv_avx512(const float *A, size_t lda, const void *B, bool f16, size_t ldb, const float *bias, float *C,
                        size_t ldc, int M, int N, int K);

/* Register-blocked GEMM on packed B^T panels (gemm_avx2.c), the matmul/matmul_f16 of the
 * avx2 set for M >= SOTTO__GEMM_MIN_M rows (the row-dot kernels below that). */
enum { SOTTO__GEMM_MIN_M = 24 };
void sotto__gemm_f32_avx2(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                          size_t ldc, int M, int N, int K);
void sotto__gemm_f16_avx2(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                          size_t ldc, int M, int N, int K);
void sotto__gemm_f16p_avx2(const float *A, size_t lda, const uint16_t *P, const float *bias, float *C, size_t ldc,
                           int M, int N, int K);
/* c[n] = sum_k a[k] B[k][n] for one row a over N >= 256 columns of f16 B (gemm_avx2.c). */
void sotto__row_stream_f16_avx2(const float *a, const uint16_t *B, size_t ldb, float *c, int N, int K);
/* c[0..64) = sum_k a[k] B[k][0..64) for one row a of f16 B (gemm_avx2.c). */
void sotto__row_1x64_f16_avx2(const float *a, const uint16_t *B, size_t ldb, float *c, int K);
/* The matmul and matmul_f16 of the avx512 set (gemm_avx512.c): a 12x32 packed GEMM on
 * 512-bit registers for M >= SOTTO__GEMM_MIN_M (the reference's bits, as the AVX2 GEMM),
 * sotto__gemv_avx512 (the avx2 row kernels' bits) below that. */
void sotto__matmul_avx512(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                          size_t ldc, int M, int N, int K);
void sotto__matmul_f16_avx512(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                              size_t ldc, int M, int N, int K);
/* that GEMM at any M (the set's gemm and gemm_f16) */
void sotto__gemm_f32_avx512(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                            size_t ldc, int M, int N, int K);
void sotto__gemm_f16_avx512(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                            size_t ldc, int M, int N, int K);
void sotto__gemm_f16p_avx512(const float *A, size_t lda, const uint16_t *P, const float *bias, float *C, size_t ldc,
                             int M, int N, int K);
/* matmul_nn and softmax of the avx512 set (attn_avx512.c): 12x32 tiles on 512-bit
 * registers, the same sums as the AVX2 kernel (which takes fewer rows than a tile). */
void sotto__softmax_avx512(float *x, int n, int visible, float scale);
void sotto__matmul_nn_avx512(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                             int N, int K);
void sotto__matmul_nn_acc_avx512(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                             int N, int K);
/* The q8_0 kernels on ymm (gemm_q8_body.h): GEMM on packed panels of B for many rows,
 * GEMV on B in place for few; matmul_q8 picks one by M. avx2: vpmaddubsw (gemm_q8_avx2.c),
 * avxvnni: VEX vpdpbusd (gemm_q8_avxvnni.c), avx512vl: EVEX vpdpbusd (gemm_q8_avx512.c). */
void sotto__gemm_q8_avx2(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                         const float *bias, float *C, size_t ldc, int M, int N, int K);
void sotto__gemv_q8_avx2(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                         const float *bias, float *C, size_t ldc, int M, int N, int K);
void sotto__gemm_q8_avxvnni(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                            const float *bias, float *C, size_t ldc, int M, int N, int K);
void sotto__gemv_q8_avxvnni(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                            const float *bias, float *C, size_t ldc, int M, int N, int K);
void sotto__matmul_q8_avxvnni(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                              const float *bias, float *C, size_t ldc, int M, int N, int K);
void sotto__gemm_q8_avx512vl(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                             const float *bias, float *C, size_t ldc, int M, int N, int K);
void sotto__gemv_q8_avx512vl(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                             const float *bias, float *C, size_t ldc, int M, int N, int K);
void sotto__matmul_q8_avx512vl(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                               const float *bias, float *C, size_t ldc, int M, int N, int K);
/* q8_0 GEMM with AVX-512 VNNI on zmm (gemm_q8_avx512.c), and the matmul_q8 of the
 * avx512 set (the GEMM for many rows, sotto__gemv_q8_avx512vl for few). */
void sotto__gemm_q8_avx512(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                           const float *bias, float *C, size_t ldc, int M, int N, int K);
void sotto__matmul_q8_avx512(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                             const float *bias, float *C, size_t ldc, int M, int N, int K);

/* The row math of backend_row.h: the 4-lane groups (kernels_ref.c, every set but avx512)
 * and 16 lanes then the 4-lane groups (row_avx512.c), the same bits. */
float sotto__row_max_ref(const float *x, int n);
double sotto__row_exp_sum_ref(const float *x, int n, float m, float scale, float *w);
float sotto__row_max_avx2(const float *x, int n);
double sotto__row_exp_sum_avx2(const float *x, int n, float m, float scale, float *w);
float sotto__row_max_avx512(const float *x, int n);
double sotto__row_exp_sum_avx512(const float *x, int n, float m, float scale, float *w);

/* The AArch64 set (kernels_neon.c; quantize_p5 is the reference's). */
void sotto__matmul_neon(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C,
                        size_t ldc, int M, int N, int K);
void sotto__matmul_f16_neon(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                            size_t ldc, int M, int N, int K);
/* their 4x4 tiles at any M (the set's gemm and gemm_f16) */
void sotto__gemm_neon(const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C, size_t ldc,
                      int M, int N, int K);
void sotto__gemm_f16_neon(const float *A, size_t lda, const uint16_t *B, size_t ldb, const float *bias, float *C,
                          size_t ldc, int M, int N, int K);
void sotto__matmul_q8_neon(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                           const float *bias, float *C, size_t ldc, int M, int N, int K);
void sotto__matmul_nn_neon(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                           int N, int K);
void sotto__matmul_nn_acc_neon(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                           int N, int K);
void sotto__matmul_nn_f16_neon(const float *A, size_t lda, const uint16_t *B, size_t ldb, float *C, size_t ldc,
                               int M, int N, int K);
void sotto__softmax_neon(float *x, int n, int visible, float scale);
void sotto__gelu_neon(float *x, size_t n);
void sotto__quantize_q8_neon(const float *x, sotto__block_q8_0 *out, int k);
void sotto__to_f16_neon(const float *x, uint16_t *out, size_t n);
void sotto__from_f16_neon(const uint16_t *h, float *out, size_t n);
void sotto__scores_p5_neon(const int8_t *a, const float *d, const float *g, const uint8_t *rows, float *u, int N,
                           int K);
/* The int8 kernels of the neon_dot set (kernels_neon_dot.c: sdot) and the q8_0 GEMM of the
 * neon_i8mm set (kernels_neon_i8mm.c: smmla); the rest of both sets is neon's. */
void sotto__matmul_q8_neon_dot(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                               const float *bias, float *C, size_t ldc, int M, int N, int K);
void sotto__scores_p5_neon_dot(const int8_t *a, const float *d, const float *g, const uint8_t *rows, float *u, int N,
                               int K);
void sotto__matmul_q8_neon_i8mm(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                                const float *bias, float *C, size_t ldc, int M, int N, int K);

/* The AArch64 sets that Linux's hwcaps allow (getauxval(AT_HWCAP), AT_HWCAP2): SOTTO__ARM_DOT
 * with HWCAP_ASIMDDP, SOTTO__ARM_I8MM with HWCAP2_I8MM and HWCAP_ASIMDDP (the set's odd rows
 * take sdot). Pure, on every architecture, for the tests. */
enum { SOTTO__HWCAP_ASIMDDP = 1 << 20, SOTTO__HWCAP2_I8MM = 1 << 13 };
enum { SOTTO__ARM_DOT = 1, SOTTO__ARM_I8MM = 2 };
int sotto__arm_sets(unsigned long hwcap, unsigned long hwcap2);

/* The kernels this process uses: the set SOTTO_KERNELS names in the environment if this
 * CPU runs it, else the best it supports. */
const sotto__kernels *sotto__kernels_get(void);
/* The best set this CPU supports, whatever SOTTO_KERNELS says. */
const sotto__kernels *sotto__kernels_best(void);
/* The names of every set of every architecture (x86-64's and AArch64's), NULL-terminated:
 * sotto__kernels_by_name gives NULL for those this CPU or build does not run. */
extern const char *const sotto__kernel_sets[];
/* The kernel set named NAME if this CPU can run it, else NULL (for tests). */
const sotto__kernels *sotto__kernels_by_name(const char *name);

#endif
