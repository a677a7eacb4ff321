/* vk_ops.h — the ops of the Vulkan backend's table (backend.h contracts), split over
 * vk_matmul.c (the matrix-product ops), vk_eltwise.c (the element-wise and row ops) and
 * backend_vulkan.c (the rest and the table). */
#ifndef SOTTO_GPU_VK_OPS_H
#define SOTTO_GPU_VK_OPS_H

#include "vk.h"

enum {
    SOTTO__VK_GEMV_MAX_M = 8,  /* products of at most this many rows of A run gemv.comp */
    SOTTO__VK_GEMV_ROWS = 16,  /* rows of B per gemv workgroup */
    SOTTO__VK_GEMV_ROWS_Q8 = 32, /* for q8_0 B */
};

/* Words of one row of K values quantised by sotto__vk_quantize. */
#define SOTTO__VK_Q8_ROW(K) ((K) / 4 + (K) / 32)

/* ROWS rows of K floats at X (stride LDX) to q8_0 at Q: per row K / 4 words of packed
 * int8, then the K / 32 scales as f32 (K a multiple of 32). */
void sotto__vk_quantize(sotto__vk *v, sotto__buf X, size_t ldx, size_t K, size_t rows, sotto__buf Q);

/* dst[c * ld_dst + r] = src[r * ld_src + c] for SRC [rows, cols]. */
void sotto__vk_transpose(sotto__vk *v, sotto__buf src, size_t ld_src, int rows, int cols, sotto__buf dst, size_t ld_dst);

void sotto__vk_layernorm(sotto__backend *be, sotto__buf X, int M, int d, const sotto__bnorm *n, sotto__buf Y);
void sotto__vk_gelu(sotto__backend *be, sotto__buf x, size_t n);
void sotto__vk_add(sotto__backend *be, sotto__buf x, sotto__buf y, size_t n);
void sotto__vk_transpose_op(sotto__backend *be, sotto__buf src, int rows, int cols, sotto__buf dst, size_t ld_dst);
void sotto__vk_linear(sotto__backend *be, sotto__buf X, int M, const sotto__blinear *l, sotto__buf Y);
void sotto__vk_conv3(sotto__backend *be, sotto__buf X, size_t sc, size_t st, int c_in, int T_in, int stride,
                     sotto__buf W, sotto__buf B, int c_out, sotto__buf patches, sotto__buf Y);
void sotto__vk_attention(sotto__backend *be, sotto__buf Q, size_t ldq, sotto__buf KT, size_t ldkt, sotto__buf V,
                         size_t ldv, sotto__buf O, size_t ldo, int T, int S, int n_head, int dh, int causal_pos);
void sotto__vk_attention_prefix(sotto__backend *be, sotto__buf Q, size_t ldq, int n, sotto__buf KT0, sotto__buf V0,
                                const sotto__buf *KT, const sotto__buf *V, size_t ldkt, size_t ldv, int P, int S,
                                int n_head, int dh, sotto__buf O, size_t ldo, sotto__buf U);
void sotto__vk_cross_attention(sotto__backend *be, sotto__buf Q, size_t ldq, sotto_type type, sotto__buf K,
                               sotto__buf V, sotto__buf O, size_t ldo, int T, int S, int n_head, int dh);

#endif
