/* ops.h — the transformer operations of the engine, spread over the context's thread
 * pool on top of the dispatched kernels. Shapes are row-major; ld* are row strides. */
#ifndef SOTTO_OPS_H
#define SOTTO_OPS_H

#include <stddef.h>

#include "../model/model.h"
#include "kernels.h"
#include "threadpool.h"

#define SOTTO__ATTN_ROWS 24    /* query rows per attention work item (4 tiles of 6) */
#define SOTTO__ATTN_MAX_DH_Q8 128 /* widest head for q8_0 keys and values */
#define SOTTO__ATTN_MAX_S_Q8 4096 /* most keys for q8_0 keys and values */

typedef struct sotto__exec {
    sotto__pool *pool;
    const sotto__kernels *k;
    float *scratch;            /* n_threads * scratch_per_thread floats */
    size_t scratch_per_thread; /* >= SOTTO__ATTN_ROWS * max key length */
    sotto__block_q8_0 *qbuf;   /* activations quantised for q8_0 weights: [max rows, max K / 32] */
    size_t qbuf_blocks;
} sotto__exec;

/* C[M,N] = A[M,K] B[N,K]^T + bias, split over threads by rows of B or of A. */
void sotto__op_matmul(const sotto__exec *ex, const float *A, size_t lda, const float *B, size_t ldb,
                      const float *bias, float *C, size_t ldc, int M, int N, int K);

/* Y[M, n_out] = X[M, n_in] W^T + b, with W in f32, f16 or q8_0 (then X is quantised to
 * q8_0 blocks first and the products are integer). */
void sotto__op_linear(const sotto__exec *ex, const float *X, int M, const sotto__linear *l, float *Y);

/* OUT[m] = X[m] (M rows of K values, K a multiple of 32) in q8_0 blocks, split by rows. */
void sotto__op_quantize_rows(const sotto__exec *ex, const float *X, int M, int K, sotto__block_q8_0 *out);

/* Y[M,d] = LayerNorm(X[M,d]) * g + b, eps 1e-5 (Y may equal X), split by rows. */
void sotto__op_layernorm(const sotto__exec *ex, const float *X, int M, int d, const sotto__norm *n, float *Y);

/* dst[c * ld_dst + r] = src[r * cols + c]: SRC [rows, cols] transposed, split by rows. */
void sotto__op_transpose(const sotto__exec *ex, const float *src, int rows, int cols, float *dst, size_t ld_dst);

/* x = x * 0.5 * (1 + erf(x / sqrt 2)) over N values (exact GELU, as torch.nn.GELU). */
void sotto__op_gelu(const sotto__exec *ex, float *x, size_t n);
/* x[i] += y[i] for i < N (the residual adds), split by ranges. */
void sotto__op_add(const sotto__exec *ex, float *x, const float *y, size_t n);

/* Multi-head scaled dot-product attention in f32. Q [T, n_head*dh] (ldq), KT the keys
 * transposed: [n_head*dh, S] (ldkt), V [S, n_head*dh] (ldv), O [T, n_head*dh] (ldo).
 * CAUSAL_POS < 0: every query sees all S keys; else query t sees keys 0..causal_pos+t. */
void sotto__op_attention(const sotto__exec *ex, const float *Q, size_t ldq, const float *KT, size_t ldkt,
                         const float *V, size_t ldv, float *O, size_t ldo, int T, int S, int n_head, int dh,
                         int causal_pos);

/* The window's cross-attention keys K and values V (cross.c) in TYPE from the projected
 * rows KX and VX [S, n_head*dh]: f32 or f16: both per head, [n_head][S][dh]; q8_0 (dh a
 * multiple of 32, at most SOTTO__ATTN_MAX_DH_Q8; S at most SOTTO__ATTN_MAX_S_Q8): keys per
 * head as rows of blocks [n_head][S][dh / 32], values transposed [n_head*dh][Sp / 32]
 * blocks over S padded to Sp, a multiple of 32, with zeros (TMP: n_head*dh*Sp floats of
 * scratch, q8_0 only). */
void sotto__op_cross_kv(const sotto__exec *ex, const float *Kx, const float *Vx, int S, int n_head, int dh,
                        sotto_type type, void *K, void *V, float *tmp);

/* Attention of Q [T, n_head*dh] (ldq) over all S keys and values made by
 * sotto__op_cross_kv in TYPE into O [T, n_head*dh] (ldo); for q8_0 the queries and
 * probabilities are quantised and both products are integer block dot products. */
void sotto__op_cross_attention(const sotto__exec *ex, const float *Q, size_t ldq, sotto_type type, const void *K,
                               const void *V, float *O, size_t ldo, int T, int S, int n_head, int dh);

/* The proxy of E (n_in a multiple of 128) into ROWS [n_out][SOTTO__PROXY_ROW(n_in)],
 * ERR [n_out] and LEN [n_out] (model.h sotto__proxy). False when out of memory. */
bool sotto__proxy_make(const sotto__kernels *k, const sotto__linear *e, uint8_t *rows, float *err, float *len);

/* The argmax over n of the logits z[n] = X W[n]^T of one row X (as sotto__op_linear
 * computes them, bit for bit), with the ids in the N_EXCL lists EXCL taken as -inf: the
 * first of equal maxima, 0 when every id is excluded. With a proxy P of W (P->n > 0)
 * every row is scored from P plus an upper bound on its error, and only the rows whose
 * bound reaches the exact logit of the best-scored one are computed exactly (vocab.c);
 * without one, all logits. U [n_out] is scratch; *N_EXACT (if not NULL) gets the count of
 * exact rows. */
int32_t sotto__op_argmax_logits(const sotto__exec *ex, const float *X, const sotto__linear *l,
                                const sotto__proxy *p, const sotto__i32list *excl, int n_excl, float *U,
                                int *n_exact);

#endif
