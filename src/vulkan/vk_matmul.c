/* vk_matmul.c — the ops of the Vulkan backend built on the matrix-product shaders
 * (mm.comp, gemv.comp): linear (f32, f16, q8_0 weights; q8_0 multiplies activations
 * quantised as the CPU does), conv3 (im2col then a product), attention (scores, softmax,
 * output for a chunk of heads at a time through the scores scratch) and the cross-
 * attention over the resident K/V in every storage type. Tensors above
 * maxStorageBufferRange are bound and computed in pieces. */
#include <math.h>

#include "../quant.h"
#include "vk_ops.h"

/* One product C[z][m][n] = sum_k A[z][m][k] B[z](k, n) (+ bias[n]). Offsets (a0, b0, c0)
 * and strides are in the operand's unit: A f32 floats, or for q8_0 words of packed int8
 * with the scales at word ad0 of the same buffer (quant.comp's rows interleave them); B
 * f32 floats, f16 halves, q8_0 bytes (ldb in blocks); C floats. */
typedef struct mm_call {
    sotto_type bt;
    bool nn;                   /* B is [K][N] (f32, f16) */
    size_t M, N, K, batch;
    sotto__buf a;
    size_t a0, lda, sa, ad0, ldad, sad;
    sotto__buf b;
    size_t b0, ldb, sb;
    sotto__buf c;
    size_t c0, ldc, sc;
    bool ct;                   /* C stored transposed: C[m,n] at c0 + n ldc + m */
    sotto__buf bias;           /* [N] floats at bias, or mem NULL */
} mm_call;

typedef struct pc_mm {
    uint32_t M, N, K, a_off, lda, b_off, ldb, c_off, ldc, bias_off, has_bias, sa, sb, sc, ad_off, ldad, sad, c_trans;
} pc_mm;

/* Extent of ROWS rows of COLS at stride LD, and of BATCH of those STEP apart. */
static size_t ext(size_t rows, size_t ld, size_t cols) { return rows ? (rows - 1) * ld + cols : 0; }
static size_t ext_z(size_t batch, size_t step, size_t one) { return one ? (batch - 1) * step + one : 0; }

/* The words of A that rows [M0, M0 + MC) of batches [Z, Z + ZB) read: [*LO, *LO + span). */
static size_t a_span(const mm_call *c, size_t z, size_t zb, size_t m0, size_t mc, size_t *lo)
{
    const bool q8 = c->bt == SOTTO_TYPE_Q8_0;
    size_t q_lo = c->a0 + z * c->sa + m0 * c->lda, q_hi = q_lo + (zb - 1) * c->sa + ext(mc, c->lda, q8 ? c->K / 4 : c->K);
    *lo = q_lo;
    if (!q8) return q_hi - q_lo;
    size_t d_lo = c->ad0 + z * c->sad + m0 * c->ldad, d_hi = d_lo + (zb - 1) * c->sad + ext(mc, c->ldad, c->K / 32);
    *lo = q_lo < d_lo ? q_lo : d_lo;
    return (q_hi > d_hi ? q_hi : d_hi) - *lo;
}

/* The direct kernels (software devices): A's rows through the uniform buffer, in windows
 * of at most ubo_range bytes (all of z in one where they fit, else one z at a time), B
 * through its block's texel view. False when they cannot take C (no view, a row of A
 * wider than a window): the caller then takes the tiled kernels. */
static bool mm_direct(sotto__vk *v, const mm_call *c, pc_mm pc, const sotto__vk_range *r[SOTTO__VK_BINDINGS])
{
    const size_t win = (size_t)(v->ubo_range - v->ubo_align) / 4, tm = c->M <= SOTTO__VK_GEMV_MAX_M ? 1 : 8;
    const size_t first = tm < c->M ? tm : c->M, unit = c->bt == SOTTO_TYPE_Q8_0 ? 1 : c->bt == SOTTO_TYPE_F16 ? 2 : 4;
    size_t lo, step = c->lda > c->ldad ? c->lda : c->ldad;
    if (!r[1]->view || a_span(c, 0, 1, 0, first, &lo) > win || c->b.off % unit) return false;
    const bool together = a_span(c, 0, c->batch, 0, first, &lo) <= win;
    const size_t zb = together ? c->batch : 1, span1 = a_span(c, 0, zb, 0, 1, &lo);
    size_t rows = c->M < 2 ? c->M : 1 + (win - span1) / (c->bt == SOTTO_TYPE_Q8_0 ? step : c->lda);
    if (rows > c->M) rows = c->M;
    if (tm == 8 && rows >= 8) rows &= ~(size_t)7;
    static const sotto__vk_pipe rows8[2][3] = {{VKP_MMD_F32_NT, VKP_MMD_F16_NT, VKP_MMD_Q8_NT},
                                               {VKP_MMD_F32_NN, VKP_MMD_F16_NN, VKP_MMD_Q8_NT}};
    static const sotto__vk_pipe rows1[2][3] = {{VKP_MVD_F32_NT, VKP_MVD_F16_NT, VKP_MVD_Q8_NT},
                                               {VKP_MVD_F32_NN, VKP_MVD_F16_NN, VKP_MVD_Q8_NT}};
    const int type = c->bt == SOTTO_TYPE_Q8_0 ? 2 : c->bt == SOTTO_TYPE_F16 ? 1 : 0;
    sotto__vk_pipe pipe = (tm == 1 ? rows1 : rows8)[c->nn][type];
    if (pipe == VKP_MVD_Q8_NT && v->d.f64) pipe = VKP_MVD_Q8_NT_F64;
    const uint32_t b_off = (uint32_t)(c->b.off / unit + c->b0), c_off = pc.c_off; /* from the block's start */
    for (size_t z = 0; z < c->batch; z += zb)
        for (size_t m0 = 0; m0 < c->M; m0 += rows) {
            size_t mc = c->M - m0 < rows ? c->M - m0 : rows, span = a_span(c, z, zb, m0, mc, &lo);
            sotto__vk_range ru;
            if (!sotto__vk_bind_uniform(v, c->a, 4 * lo, 4 * span, &ru)) return true;
            const sotto__vk_range *rz[SOTTO__VK_BINDINGS] = {NULL, NULL, r[2], r[3], &ru, r[1], r[1]};
            pc.M = (uint32_t)mc;
            pc.a_off = (uint32_t)(ru.delta / 4 + c->a0 + z * c->sa + m0 * c->lda - lo);
            pc.ad_off = (uint32_t)(ru.delta / 4 + c->ad0 + z * c->sad + m0 * c->ldad - lo);
            pc.b_off = b_off + (uint32_t)(z * c->sb);
            pc.c_off = c_off + (uint32_t)(z * c->sc + (c->ct ? m0 : m0 * c->ldc));
            sotto__vk_dispatch(v, pipe, rz, &pc, sizeof pc, (uint32_t)((c->N + 63) / 64),
                               (uint32_t)(tm == 1 ? mc : (mc + 7) / 8), (uint32_t)zb);
        }
    return true;
}

static void mm(sotto__vk *v, const mm_call *c)
{
    if (!c->M || !c->N || !c->K || !c->batch) return;
    const bool q8 = c->bt == SOTTO_TYPE_Q8_0;
    size_t a_bytes, b_bytes;
    if (q8) {
        size_t qs = ext_z(c->batch, c->sa, c->a0 + ext(c->M, c->lda, c->K / 4));
        size_t sd = ext_z(c->batch, c->sad, c->ad0 + ext(c->M, c->ldad, c->K / 32));
        a_bytes = 4 * (qs > sd ? qs : sd);
        b_bytes = ext_z(c->batch, c->sb, c->b0 + ext(c->N, c->ldb, c->K / 32) * sizeof(sotto__block_q8_0));
    } else {
        a_bytes = 4 * ext_z(c->batch, c->sa, c->a0 + ext(c->M, c->lda, c->K));
        size_t e = ext_z(c->batch, c->sb, c->b0 + (c->nn ? ext(c->K, c->ldb, c->N) : ext(c->N, c->ldb, c->K)));
        b_bytes = e * (c->bt == SOTTO_TYPE_F16 ? 2 : 4);
    }
    size_t c_bytes = 4 * ext_z(c->batch, c->sc, c->c0 + (c->ct ? ext(c->N, c->ldc, c->M) : ext(c->M, c->ldc, c->N)));
    sotto__vk_range ra = {0}, rb, rc, rbias;
    /* the direct kernels bind A and B otherwise: their storage ranges may exceed the limit */
    bool direct = v->direct, ok_a = direct || sotto__vk_bind(v, c->a, 0, a_bytes, &ra);
    bool ok_b = direct ? sotto__vk_bind(v, c->b, 0, 4, &rb) : sotto__vk_bind(v, c->b, 0, b_bytes, &rb);
    if (!ok_a || !ok_b || !sotto__vk_bind(v, c->c, 0, c_bytes, &rc)) return;
    bool has_bias = c->bias.mem != NULL;
    if (has_bias && !sotto__vk_bind(v, c->bias, 0, c->N * 4, &rbias)) return;
    uint32_t b_unit = q8 ? 1 : c->bt == SOTTO_TYPE_F16 ? 2 : 4;
    if (ra.delta % 4 || rb.delta % b_unit || rc.delta % 4 || (has_bias && rbias.delta % 4)) {
        sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: a matrix product's operand is misaligned");
        return;
    }
    pc_mm pc = {(uint32_t)c->M, (uint32_t)c->N, (uint32_t)c->K, (uint32_t)(ra.delta / 4 + c->a0), (uint32_t)c->lda,
                (uint32_t)(rb.delta / b_unit + c->b0), (uint32_t)c->ldb, (uint32_t)(rc.delta / 4 + c->c0),
                (uint32_t)c->ldc, has_bias ? rbias.delta / 4 : 0, has_bias, (uint32_t)c->sa, (uint32_t)c->sb,
                (uint32_t)c->sc, (uint32_t)(ra.delta / 4 + c->ad0), (uint32_t)c->ldad, (uint32_t)c->sad, c->ct};
    const sotto__vk_range *r[SOTTO__VK_BINDINGS] = {&ra, &rb, &rc, has_bias ? &rbias : NULL, NULL, NULL, NULL};
    if (direct && mm_direct(v, c, pc, r)) return;
    if (direct) { /* the tiled kernels after all: bind A and B as they need */
        if (!sotto__vk_bind(v, c->a, 0, a_bytes, &ra) || !sotto__vk_bind(v, c->b, 0, b_bytes, &rb)) return;
        pc.a_off = (uint32_t)(ra.delta / 4 + c->a0), pc.ad_off = (uint32_t)(ra.delta / 4 + c->ad0);
        pc.b_off = (uint32_t)(rb.delta / b_unit + c->b0);
    }
    if (c->M <= SOTTO__VK_GEMV_MAX_M && !c->nn) {
        sotto__vk_pipe p = q8 ? VKP_GEMV_Q8 : c->bt == SOTTO_TYPE_F16 ? VKP_GEMV_F16 : VKP_GEMV_F32;
        uint32_t gx, gy;
        sotto__vk_grid(v, c->N, q8 ? SOTTO__VK_GEMV_ROWS_Q8 : SOTTO__VK_GEMV_ROWS, &gx, &gy);
        sotto__vk_dispatch(v, p, r, &pc, sizeof pc, gx, gy, (uint32_t)c->batch);
    } else {
        sotto__vk_pipe p = q8 ? VKP_MM_Q8_NT
                         : c->bt == SOTTO_TYPE_F16 ? (c->nn ? VKP_MM_F16_NN : VKP_MM_F16_NT)
                                                   : (c->nn ? VKP_MM_F32_NN : VKP_MM_F32_NT);
        sotto__vk_dispatch(v, p, r, &pc, sizeof pc, (uint32_t)((c->N + 63) / 64), (uint32_t)((c->M + 63) / 64),
                           (uint32_t)c->batch);
    }
}

typedef struct pc_quant {
    uint32_t x_off, ldx, K, rows, q_off, ldq, d_off, ldd;
} pc_quant;

void sotto__vk_quantize(sotto__vk *v, sotto__buf X, size_t ldx, size_t K, size_t rows, sotto__buf Q)
{
    if (!rows || !K) return;
    sotto__vk_range rx, rq;
    if (!sotto__vk_bind(v, X, 0, 4 * ext(rows, ldx, K), &rx) || !sotto__vk_bind(v, Q, 0, rows * K * 9 / 8, &rq))
        return;
    const uint32_t row = (uint32_t)(SOTTO__VK_Q8_ROW(K)); /* K / 4 words of int8, then K / 32 scales */
    pc_quant pc = {rx.delta / 4, (uint32_t)ldx, (uint32_t)K, (uint32_t)rows, rq.delta / 4, row,
                   (uint32_t)(rq.delta / 4 + K / 4), row};
    const sotto__vk_range *r[SOTTO__VK_BINDINGS] = {&rx, &rq, NULL, NULL};
    uint32_t gx, gy;
    sotto__vk_grid(v, rows * K / 32, 64, &gx, &gy);
    sotto__vk_dispatch(v, VKP_QUANT, r, &pc, sizeof pc, gx, gy, 1);
}

/* The usable binding size: maxStorageBufferRange less its worst misalignment. */
static size_t room(const sotto__vk *v) { return (size_t)v->max_range - (size_t)v->align; }

void sotto__vk_linear(sotto__backend *be, sotto__buf X, int M, const sotto__blinear *l, sotto__buf Y)
{
    sotto__vk *v = (sotto__vk *)be;
    const size_t K = (size_t)l->n_in, N = (size_t)l->n_out;
    const bool q8 = l->type == SOTTO_TYPE_Q8_0;
    size_t row_bytes = 0;
    sotto__type_bytes(l->type, (int64_t)K, &row_bytes);
    /* rows of W per piece (a multiple of 64, so that q8_0 pieces start 4-aligned), and
     * rows of X (within the binding limit and, for q8_0, the activation scratch) */
    size_t n_piece = room(v) / row_bytes, m_piece = room(v) / (4 * (K > N ? K : N));
    if (n_piece >= 64) n_piece &= ~(size_t)63;
    if (q8 && m_piece > v->qa_bytes / (K * 9 / 8)) m_piece = v->qa_bytes / (K * 9 / 8);
    if (!n_piece || !m_piece) {
        sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: linear %zu x %zu does not fit the device's bindings", N, K);
        return;
    }
    for (size_t m0 = 0; m0 < (size_t)M; m0 += m_piece) {
        size_t mc = (size_t)M - m0 < m_piece ? (size_t)M - m0 : m_piece;
        if (q8) sotto__vk_quantize(v, sotto__buf_f32(X, m0 * K), K, K, mc, v->qa);
        for (size_t n0 = 0; n0 < N; n0 += n_piece) {
            size_t nc = N - n0 < n_piece ? N - n0 : n_piece;
            mm_call c = {.bt = l->type, .M = mc, .N = nc, .K = K, .batch = 1,
                         .a = q8 ? v->qa : sotto__buf_f32(X, m0 * K), .lda = q8 ? SOTTO__VK_Q8_ROW(K) : K,
                         .ad0 = K / 4, .ldad = SOTTO__VK_Q8_ROW(K),
                         .b = sotto__buf_at(l->w, n0 * row_bytes), .ldb = q8 ? K / 32 : K,
                         .c = sotto__buf_f32(Y, m0 * N + n0), .ldc = N,
                         .bias = l->b.mem ? sotto__buf_f32(l->b, n0) : (sotto__buf){0}};
            mm(v, &c);
        }
    }
}

typedef struct pc_im2col {
    uint32_t x_off, sc, st, c_in, T_in, stride, T_out, p_off;
} pc_im2col;

void sotto__vk_conv3(sotto__backend *be, sotto__buf X, size_t sc, size_t st, int c_in, int T_in, int stride,
                     sotto__buf W, sotto__buf B, int c_out, sotto__buf patches, sotto__buf Y)
{
    sotto__vk *v = (sotto__vk *)be;
    const size_t T_out = (size_t)(T_in / stride), K = 3 * (size_t)c_in;
    sotto__vk_range rx, rp;
    size_t x_ext = (size_t)(c_in - 1) * sc + (size_t)(T_in - 1) * st + 1;
    if (!sotto__vk_bind(v, X, 0, 4 * x_ext, &rx) || !sotto__vk_bind(v, patches, 0, 4 * T_out * K, &rp)) return;
    pc_im2col pc = {rx.delta / 4, (uint32_t)sc, (uint32_t)st, (uint32_t)c_in, (uint32_t)T_in, (uint32_t)stride,
                    (uint32_t)T_out, rp.delta / 4};
    const sotto__vk_range *r[SOTTO__VK_BINDINGS] = {&rx, &rp, NULL, NULL};
    uint32_t gx = (uint32_t)((T_out * K + 255) / 256);
    sotto__vk_dispatch(v, VKP_IM2COL, r, &pc, sizeof pc, gx < 4096 ? gx : 4096, 1, 1);
    mm_call c = {.bt = SOTTO_TYPE_F32, .M = T_out, .N = (size_t)c_out, .K = K, .batch = 1, .a = patches, .lda = K,
                 .b = W, .ldb = K, .c = Y, .ldc = (size_t)c_out, .bias = B};
    mm(v, &c);
}

typedef struct pc_softmax {
    uint32_t off, ld, n, n_pad, rows, T;
    int32_t causal_pos;
    float scale;
} pc_softmax;

/* ROWS rows of N scores at P (stride LD) to probabilities, zero up to N_PAD; row r is
 * query t = r % T (causal: sees keys 0 .. causal_pos + t). */
static void softmax(sotto__vk *v, size_t rows, size_t n, size_t ld, size_t n_pad, size_t T, int causal_pos, int dh)
{
    sotto__vk_range rp;
    if (!sotto__vk_bind(v, v->p, 0, 4 * ext(rows, ld, n_pad), &rp)) return;
    pc_softmax pc = {rp.delta / 4, (uint32_t)ld, (uint32_t)n, (uint32_t)n_pad, (uint32_t)rows, (uint32_t)T,
                     causal_pos, 1.0f / sqrtf((float)dh)};
    const sotto__vk_range *r[SOTTO__VK_BINDINGS] = {&rp, NULL, NULL, NULL};
    uint32_t gx, gy;
    sotto__vk_grid(v, rows, v->direct ? 64 : 1, &gx, &gy);
    sotto__vk_dispatch(v, v->direct ? VKP_SOFTMAX_D : VKP_SOFTMAX, r, &pc, sizeof pc, gx, gy, 1);
}

/* How many heads (*HC) and query rows (*TR) of S-wide score rows (LD each) fit the
 * scores scratch (and, with QB, the scratch for their q8_0 copies); false if none. */
static bool chunks(sotto__vk *v, int n_head, int T, size_t ld, bool qb, int *hc, int *tr)
{
    size_t rows = v->p_bytes / (4 * ld);
    if (qb && rows > v->qb_bytes / (ld * 9 / 8)) rows = v->qb_bytes / (ld * 9 / 8);
    *tr = rows >= (size_t)T ? T : (int)rows;
    *hc = *tr == T ? (int)(rows / (size_t)T < (size_t)n_head ? rows / (size_t)T : (size_t)n_head) : 1;
    if (!rows) sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: attention over %zu keys exceeds the scratch", ld);
    return rows > 0;
}

/* The attention of many queries on the direct kernels, whose uniform-buffer windows hold
 * only a few rows of P: the keys back to rows (K [S, d]) and the values transposed
 * (V^T [d, S]), once for all heads; then the scores Q K^T as a product over rows of both,
 * and the output transposed, O^T = V^T P^T, so that V^T's rows are the shared ones (a few
 * dispatches per head, not one per 8 queries). The same sums as the other order. */
static void attention_direct(sotto__vk *v, sotto__buf Q, size_t ldq, sotto__buf KT, size_t ldkt, sotto__buf V,
                             size_t ldv, sotto__buf O, size_t ldo, int T, int S, int n_head, int dh, int causal_pos,
                             int hc, int tr)
{
    const size_t d = (size_t)n_head * dh;
    sotto__vk_transpose(v, KT, ldkt, (int)d, S, v->kr, d);
    sotto__vk_transpose(v, V, ldv, S, (int)d, v->vt, (size_t)S);
    for (int h0 = 0; h0 < n_head; h0 += hc) {
        size_t nh = (size_t)(n_head - h0 < hc ? n_head - h0 : hc);
        for (int t0 = 0; t0 < T; t0 += tr) {
            size_t nt = (size_t)(T - t0 < tr ? T - t0 : tr);
            mm_call s = {.bt = SOTTO_TYPE_F32, .M = nt, .N = (size_t)S, .K = (size_t)dh, .batch = nh, .a = Q,
                         .a0 = (size_t)t0 * ldq + (size_t)h0 * dh, .lda = ldq, .sa = (size_t)dh, .b = v->kr,
                         .b0 = (size_t)h0 * dh, .ldb = d, .sb = (size_t)dh, .c = v->p, .ldc = (size_t)S,
                         .sc = nt * S};
            mm(v, &s);
            softmax(v, nh * nt, (size_t)S, (size_t)S, (size_t)S, nt, causal_pos < 0 ? -1 : causal_pos + t0, dh);
            mm_call o = {.bt = SOTTO_TYPE_F32, .M = (size_t)dh, .N = nt, .K = (size_t)S, .batch = nh, .a = v->vt,
                         .a0 = (size_t)h0 * dh * S, .lda = (size_t)S, .sa = (size_t)dh * S, .b = v->p,
                         .ldb = (size_t)S, .sb = nt * S, .c = O, .c0 = (size_t)t0 * ldo + (size_t)h0 * dh,
                         .ldc = ldo, .sc = (size_t)dh, .ct = true};
            mm(v, &o);
        }
    }
}

void sotto__vk_attention(sotto__backend *be, sotto__buf Q, size_t ldq, sotto__buf KT, size_t ldkt, sotto__buf V,
                         size_t ldv, sotto__buf O, size_t ldo, int T, int S, int n_head, int dh, int causal_pos)
{
    sotto__vk *v = (sotto__vk *)be;
    int hc, tr;
    if (!chunks(v, n_head, T, (size_t)S, false, &hc, &tr)) return;
    if (v->direct && T > SOTTO__VK_GEMV_MAX_M && (size_t)S * n_head * dh <= v->kr_floats) {
        attention_direct(v, Q, ldq, KT, ldkt, V, ldv, O, ldo, T, S, n_head, dh, causal_pos, hc, tr);
        return;
    }
    for (int h0 = 0; h0 < n_head; h0 += hc) {
        int nh = n_head - h0 < hc ? n_head - h0 : hc;
        for (int t0 = 0; t0 < T; t0 += tr) {
            int nt = T - t0 < tr ? T - t0 : tr;
            mm_call s = {.bt = SOTTO_TYPE_F32, .nn = true, .M = (size_t)nt, .N = (size_t)S, .K = (size_t)dh,
                         .batch = (size_t)nh, .a = Q, .a0 = (size_t)t0 * ldq + (size_t)h0 * dh, .lda = ldq,
                         .sa = (size_t)dh, .b = KT, .b0 = (size_t)h0 * dh * ldkt, .ldb = ldkt, .sb = (size_t)dh * ldkt,
                         .c = v->p, .ldc = (size_t)S, .sc = (size_t)nt * S};
            mm(v, &s);
            softmax(v, (size_t)nh * nt, (size_t)S, (size_t)S, (size_t)S, (size_t)nt,
                    causal_pos < 0 ? -1 : causal_pos + t0, dh);
            mm_call o = {.bt = SOTTO_TYPE_F32, .nn = true, .M = (size_t)nt, .N = (size_t)dh, .K = (size_t)S,
                         .batch = (size_t)nh, .a = v->p, .lda = (size_t)S, .sa = (size_t)nt * S, .b = V,
                         .b0 = (size_t)h0 * dh, .ldb = ldv, .sb = (size_t)dh, .c = O,
                         .c0 = (size_t)t0 * ldo + (size_t)h0 * dh, .ldc = ldo, .sc = (size_t)dh};
            mm(v, &o);
        }
    }
}

/* Decoder rows over a shared prefix (backend.h attention_prefix): per chunk of heads, the
 * scores of all N rows against the prefix's keys in one product and each row's against its
 * own, softmax, then the prefix's values for all rows into O and each row's own into U,
 * added to O at the end (on the GPU the two parts are summed apart, then added). */
void sotto__vk_attention_prefix(sotto__backend *be, sotto__buf Q, size_t ldq, int n, sotto__buf KT0, sotto__buf V0,
                                const sotto__buf *KT, const sotto__buf *V, size_t ldkt, size_t ldv, int P, int S,
                                int n_head, int dh, sotto__buf O, size_t ldo, sotto__buf U)
{
    sotto__vk *v = (sotto__vk *)be;
    const size_t d = (size_t)n_head * dh, own = (size_t)(S - P);
    int hc, tr;
    if (!chunks(v, n_head, n, (size_t)S, false, &hc, &tr)) return;
    if (tr < n || ldo != d) {
        sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: prefix attention of %d rows over %d keys exceeds the scratch",
                       n, S);
        return;
    }
    for (int h0 = 0; h0 < n_head; h0 += hc) {
        size_t nh = (size_t)(n_head - h0 < hc ? n_head - h0 : hc), hq = (size_t)h0 * dh, ns = (size_t)n * S;
        if (P > 0) {
            mm_call s = {.bt = SOTTO_TYPE_F32, .nn = true, .M = (size_t)n, .N = (size_t)P, .K = (size_t)dh,
                         .batch = nh, .a = Q, .a0 = hq, .lda = ldq, .sa = (size_t)dh, .b = KT0, .b0 = hq * ldkt,
                         .ldb = ldkt, .sb = (size_t)dh * ldkt, .c = v->p, .ldc = (size_t)S, .sc = ns};
            mm(v, &s);
        }
        for (int r = 0; r < n; r++) {
            mm_call s = {.bt = SOTTO_TYPE_F32, .nn = true, .M = 1, .N = own, .K = (size_t)dh, .batch = nh, .a = Q,
                         .a0 = (size_t)r * ldq + hq, .lda = ldq, .sa = (size_t)dh, .b = KT[r],
                         .b0 = hq * ldkt + (size_t)P, .ldb = ldkt, .sb = (size_t)dh * ldkt, .c = v->p,
                         .c0 = (size_t)r * S + (size_t)P, .ldc = (size_t)S, .sc = ns};
            mm(v, &s);
        }
        softmax(v, nh * n, (size_t)S, (size_t)S, (size_t)S, (size_t)n, -1, dh);
        if (P > 0) {
            mm_call o = {.bt = SOTTO_TYPE_F32, .nn = true, .M = (size_t)n, .N = (size_t)dh, .K = (size_t)P,
                         .batch = nh, .a = v->p, .lda = (size_t)S, .sa = ns, .b = V0, .b0 = hq, .ldb = ldv,
                         .sb = (size_t)dh, .c = O, .c0 = hq, .ldc = ldo, .sc = (size_t)dh};
            mm(v, &o);
        }
        for (int r = 0; r < n; r++) {
            mm_call o = {.bt = SOTTO_TYPE_F32, .nn = true, .M = 1, .N = (size_t)dh, .K = own, .batch = nh, .a = v->p,
                         .a0 = (size_t)r * S + (size_t)P, .lda = (size_t)S, .sa = ns, .b = V[r],
                         .b0 = (size_t)P * ldv + hq, .ldb = ldv, .sb = (size_t)dh, .c = P > 0 ? U : O,
                         .c0 = (size_t)r * d + hq, .ldc = d, .sc = (size_t)dh};
            mm(v, &o);
        }
    }
    if (P > 0) sotto__vk_add(be, O, U, (size_t)n * d);
}

/* q8_0 cross-attention (cross.c head_q8): the queries quantised, scores as q8_0 products
 * over the keys' blocks, softmax over S padded with zeros to Sp, the probabilities
 * quantised, the output as q8_0 products over the transposed values. */
static void cross_q8(sotto__vk *v, sotto__buf Q, size_t ldq, sotto__buf K, sotto__buf Vt, sotto__buf O, size_t ldo,
                     int T, int S, int n_head, int dh)
{
    const size_t d = (size_t)n_head * dh, Sp = (size_t)sotto__cross_padded(S), nbh = (size_t)dh / 32, nbs = Sp / 32;
    const size_t blk = sizeof(sotto__block_q8_0);
    if ((size_t)T * d * 9 / 8 > v->qa_bytes) {
        sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: cross-attention of %d queries exceeds the scratch", T);
        return;
    }
    sotto__vk_quantize(v, Q, ldq, d, (size_t)T, v->qa);
    int hc, tr;
    if (!chunks(v, n_head, T, Sp, true, &hc, &tr)) return;
    for (int h0 = 0; h0 < n_head; h0 += hc) {
        size_t nh = (size_t)(n_head - h0 < hc ? n_head - h0 : hc);
        for (int t0 = 0; t0 < T; t0 += tr) {
            size_t nt = (size_t)(T - t0 < tr ? T - t0 : tr), rows = nh * nt;
            const size_t qrow = SOTTO__VK_Q8_ROW(d), prow = SOTTO__VK_Q8_ROW(Sp);
            mm_call s = {.bt = SOTTO_TYPE_Q8_0, .M = nt, .N = (size_t)S, .K = (size_t)dh, .batch = nh, .a = v->qa,
                         .a0 = (size_t)t0 * qrow + (size_t)h0 * (dh / 4), .lda = qrow, .sa = (size_t)dh / 4,
                         .ad0 = (size_t)t0 * qrow + d / 4 + (size_t)h0 * nbh, .ldad = qrow, .sad = nbh, .b = K,
                         .b0 = (size_t)h0 * S * nbh * blk, .ldb = nbh, .sb = (size_t)S * nbh * blk, .c = v->p,
                         .ldc = Sp, .sc = nt * Sp};
            mm(v, &s);
            softmax(v, rows, (size_t)S, Sp, Sp, nt, -1, dh);
            sotto__vk_quantize(v, v->p, Sp, Sp, rows, v->qb);
            mm_call o = {.bt = SOTTO_TYPE_Q8_0, .M = nt, .N = (size_t)dh, .K = Sp, .batch = nh, .a = v->qb,
                         .lda = prow, .sa = nt * prow, .ad0 = Sp / 4, .ldad = prow, .sad = nt * prow,
                         .b = Vt, .b0 = (size_t)h0 * dh * nbs * blk, .ldb = nbs, .sb = (size_t)dh * nbs * blk,
                         .c = O, .c0 = (size_t)t0 * ldo + (size_t)h0 * dh, .ldc = ldo, .sc = (size_t)dh};
            mm(v, &o);
        }
    }
}

void sotto__vk_cross_attention(sotto__backend *be, sotto__buf Q, size_t ldq, sotto_type type, sotto__buf K,
                               sotto__buf V, sotto__buf O, size_t ldo, int T, int S, int n_head, int dh)
{
    sotto__vk *v = (sotto__vk *)be;
    if (type == SOTTO_TYPE_Q8_0) {
        cross_q8(v, Q, ldq, K, V, O, ldo, T, S, n_head, dh);
        return;
    }
    int hc, tr;
    if (!chunks(v, n_head, T, (size_t)S, false, &hc, &tr)) return;
    const size_t head = (size_t)S * dh; /* elements of one head's keys or values */
    for (int h0 = 0; h0 < n_head; h0 += hc) {
        size_t nh = (size_t)(n_head - h0 < hc ? n_head - h0 : hc);
        for (int t0 = 0; t0 < T; t0 += tr) {
            size_t nt = (size_t)(T - t0 < tr ? T - t0 : tr);
            mm_call s = {.bt = type, .M = nt, .N = (size_t)S, .K = (size_t)dh, .batch = nh, .a = Q,
                         .a0 = (size_t)t0 * ldq + (size_t)h0 * dh, .lda = ldq, .sa = (size_t)dh, .b = K,
                         .b0 = (size_t)h0 * head, .ldb = (size_t)dh, .sb = head, .c = v->p, .ldc = (size_t)S,
                         .sc = nt * S};
            mm(v, &s);
            softmax(v, nh * nt, (size_t)S, (size_t)S, (size_t)S, nt, -1, dh);
            mm_call o = {.bt = type, .nn = true, .M = nt, .N = (size_t)dh, .K = (size_t)S, .batch = nh, .a = v->p,
                         .lda = (size_t)S, .sa = nt * S, .b = V, .b0 = (size_t)h0 * head, .ldb = (size_t)dh,
                         .sb = head, .c = O, .c0 = (size_t)t0 * ldo + (size_t)h0 * dh, .ldc = ldo, .sc = (size_t)dh};
            mm(v, &o);
        }
    }
}
