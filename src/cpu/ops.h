/* ops.h — the transformer operations of the CPU backend, spread over its thread pool on
 * top of the dispatched kernels. They take host pointers, shapes and the weight views of
 * tensor.h, never a model or engine struct. Shapes are row-major; ld* are row strides.
 * An op that needs scratch says how much (sotto__op_*_scratch); the ops run one at a
 * time, so one region of the largest request serves them all (sotto__exec). */
#ifndef SOTTO_OPS_H
#define SOTTO_OPS_H

#include <stddef.h>

#include "../backend.h"
#include "../tensor.h"
#include "kernels.h"
#include "threadpool.h"

#define SOTTO__ATTN_ROWS 24    /* query rows per attention work item (4 tiles of 6) */

typedef struct sotto__exec {
    sotto__pool *pool;
    const sotto__kernels *k;
    void *scratch;             /* scratch_bytes, 64-byte aligned, for the op that runs */
    size_t scratch_bytes;
} sotto__exec;

/* Starts a pool of N_THREADS and allocates SCRATCH_BYTES of scratch for kernel set K;
 * false when either fails (then *EX holds nothing to free). */
bool sotto__exec_init(sotto__exec *ex, const sotto__kernels *k, int n_threads, size_t scratch_bytes);
void sotto__exec_free(sotto__exec *ex);

/* Scratch bytes each op needs for the given dimensions and thread count (0: none). */
size_t sotto__op_linear_scratch(int M, int n_in, sotto_type type);
/* attention: per thread the scores of SOTTO__ATTN_ROWS rows, and (DH > 0) one head's S
 * values copied side by side */
size_t sotto__op_attention_scratch(int n_threads, int S, int dh);
size_t sotto__op_cross_kv_scratch(int S, int n_head, int dh, sotto_type type);
size_t sotto__op_cross_attention_scratch(int n_threads, int S, int dh, sotto_type type);
size_t sotto__op_argmax_scratch(int n_in);

/* C[M,N] = A[M,K] B[N,K]^T + bias, split over threads by rows of B or of A. */
void sotto__op_matmul(const sotto__exec *ex, const float *A, size_t lda, const float *B, size_t ldb,
                      const float *bias, float *C, size_t ldc, int M, int N, int K);

/* Y[M, n_out] = X[M, n_in] W^T + b, with W in f32, f16 or q8_0 (then X is quantised to
 * q8_0 blocks first and the products are integer). */
void sotto__op_linear(const sotto__exec *ex, const float *X, int M, const sotto__linear *l, float *Y);
/* The same with each row's bits those of a product of SOTTO__GEMM_MIN_M rows or more, at
 * any M (the backend's linear_rows); PANELS, when not NULL, are L's f16 weights in panels
 * (kernels.h sotto__f16_panels), read through the set's gemm_f16p: the same bits. */
void sotto__op_linear_rows(const sotto__exec *ex, const float *X, int M, const sotto__linear *l,
                           const uint16_t *panels, float *Y);

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

/* The self-attention of N (<= SOTTO__ATTN_ROWS) decoder rows at position S - 1 each
 * (prefix_attn.c): row r's query Q[r], its keys and values those of positions 0..P-1 in
 * KT0 / V0 (one shared prefix) and P..S-1 in KT[r] / V[r], laid out as for
 * sotto__op_attention (ldkt, ldv); every row sees all S. The bits of sotto__op_attention
 * over one cache that holds both parts. */
void sotto__op_attention_prefix(const sotto__exec *ex, const float *Q, size_t ldq, int n, const float *KT0,
                                const float *V0, const float *const *KT, const float *const *V, size_t ldkt,
                                size_t ldv, int P, int S, int n_head, int dh, float *O, size_t ldo);

/* The window's cross-attention keys K and values V (cross.c) in TYPE from the projected
 * rows KX and VX [S, n_head*dh], laid out as backend.h sotto__cross_layout states (q8_0
 * only where sotto__cross_q8_ok: values transposed over S padded with zeros). */
void sotto__op_cross_kv(const sotto__exec *ex, const float *Kx, const float *Vx, int S, int n_head, int dh,
                        sotto_type type, void *K, void *V);

/* Attention of Q [T, n_head*dh] (ldq) over all S keys and values made by
 * sotto__op_cross_kv in TYPE into O [T, n_head*dh] (ldo); for q8_0 the queries and
 * probabilities are quantised and both products are integer block dot products. */
void sotto__op_cross_attention(const sotto__exec *ex, const float *Q, size_t ldq, sotto_type type, const void *K,
                               const void *V, float *O, size_t ldo, int T, int S, int n_head, int dh);

/* The proxy of E (n_in a multiple of 128, at most SOTTO__PROXY_MAX_K) into ROWS
 * [n_out][SOTTO__PROXY_ROW(n_in)], ERR [n_out] and LEN [n_out] (tensor.h sotto__proxy),
 * on EX's threads. False when out of memory. */
bool sotto__proxy_make(const sotto__exec *ex, const sotto__linear *e, uint8_t *rows, float *err, float *len);

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
