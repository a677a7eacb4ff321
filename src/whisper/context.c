/* context.c — creating and freeing contexts (one arena for every buffer, sized from the
 * model's dimensions), and the checked public entry points of the engine. */
#define _POSIX_C_SOURCE 200809L
#include "context.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sotto__cross_layer(const sotto_context *ctx, int l, void **k, void **v)
{
    const sotto_model_info *h = &ctx->model->info;
    int64_t n = h->n_audio_ctx, d = h->n_text_state;
    size_t kb = 0, vb = 0; /* one layer's keys and values (q8_0 values: positions padded to 32) */
    sotto__type_bytes(ctx->cross_type, n * d, &kb);
    sotto__type_bytes(ctx->cross_type, (ctx->cross_type == SOTTO_TYPE_Q8_0 ? (n + 31) / 32 * 32 : n) * d, &vb);
    *k = (char *)ctx->cross_k + (size_t)l * kb;
    *v = (char *)ctx->cross_v + (size_t)l * vb;
}

sotto_status sotto__ctx_fail(sotto_context *ctx, sotto_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
    va_end(ap);
    return status;
}

sotto_context_params sotto_context_params_default(void)
{
    return (sotto_context_params){.n_threads = 0};
}

const char *sotto_context_error(const sotto_context *ctx) { return ctx ? ctx->error : ""; }

/* Adds N floats to the layout at *TOTAL (64-byte aligned); false on overflow. */
static bool carve(size_t *total, size_t n, size_t *offset)
{
    size_t bytes;
    if (!sotto__mul_ok(n, sizeof(float), &bytes)) return false;
    bytes = (bytes + 63) & ~(size_t)63;
    *offset = *total;
    return sotto__add_ok(*total, bytes, total);
}

sotto_status sotto_context_init(const sotto_model *model, const sotto_context_params *params, sotto_context **out)
{
    *out = NULL;
    if (!model) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "context: no model"});
    sotto_context_params p = params ? *params : sotto_context_params_default();
    int n_threads = p.n_threads;
    if (n_threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        n_threads = n > 0 ? (int)n : 1;
    }
    if (n_threads > 256) n_threads = 256;
    const sotto_model_info *h = &model->info;
    size_t n = (size_t)h->n_audio_ctx, d = (size_t)h->n_audio_state, dt = (size_t)h->n_text_state;
    size_t L = (size_t)h->n_text_layer, ctxn = (size_t)h->n_text_ctx;
    size_t cols = 3 * (d > (size_t)h->n_mels ? d : (size_t)h->n_mels);
    size_t key_max = ((n > ctxn ? n : ctxn) + 31) / 32 * 32; /* q8_0 attention rows run in blocks of 32 */
    size_t scratch_per_thread = SOTTO__ATTN_ROWS * key_max;
    size_t qbuf_blocks = key_max * (4 * (d > dt ? d : dt) / 32 + 1); /* rows x blocks of the widest linear */

    /* the convolutions' patches and conv1 output are dead once the blocks start: where
     * they fit, they live in the blocks' buffers (enc_h .. enc_ff, 10 n d floats) */
    size_t im2col_n = (2 * n * cols + 15) / 16 * 16;
    bool share = im2col_n + 2 * n * d <= 10 * n * d;

    sotto_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "context: out of memory"});
    struct { float **ptr; size_t n; } parts[] = {
        {&ctx->im2col, share ? 0 : im2col_n}, {&ctx->conv1, share ? 0 : 2 * n * d}, {&ctx->enc_x, n * d},
        {&ctx->enc_out, n * d},
        {&ctx->enc_h, n * d}, {&ctx->enc_q, n * d}, {&ctx->enc_k, n * d}, {&ctx->enc_v, n * d},
        {&ctx->enc_attn, n * d}, {&ctx->enc_kt, n * d}, {&ctx->enc_ff, n * 4 * d},
        {(float **)&ctx->cross_k, L * n * dt}, {(float **)&ctx->cross_v, L * n * dt},
        {&ctx->self_kt, L * ctxn * dt}, {&ctx->self_v, L * ctxn * dt},
        {&ctx->dec_x, ctxn * dt}, {&ctx->dec_h, ctxn * dt}, {&ctx->dec_q, ctxn * dt}, {&ctx->dec_attn, ctxn * dt},
        {&ctx->dec_tmp, ctxn * dt}, {&ctx->dec_k, ctxn * dt}, {&ctx->dec_ff, ctxn * 4 * dt},
        {&ctx->logits, (size_t)h->n_vocab}, {&ctx->ex.scratch, (size_t)n_threads * scratch_per_thread},
        {(float **)&ctx->ex.qbuf, qbuf_blocks * sizeof(sotto__block_q8_0) / sizeof(float) + 1},
    };
    enum { N_PARTS = sizeof parts / sizeof *parts };
    size_t offsets[N_PARTS], total = 0;
    bool ok = true;
    for (int i = 0; i < N_PARTS; i++) ok = ok && carve(&total, parts[i].n, &offsets[i]);
    ctx->arena = ok ? aligned_alloc(64, total) : NULL;
    if (!ctx->arena) {
        free(ctx);
        return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "context: cannot allocate the activation buffers"});
    }
    for (int i = 0; i < N_PARTS; i++) *parts[i].ptr = (float *)((char *)ctx->arena + offsets[i]);
    if (share) ctx->im2col = ctx->enc_h, ctx->conv1 = ctx->enc_h + im2col_n;
    /* the cache's transposed keys span all their pages from the first token on: touch
     * them here, once, so the first decode call does not pay their page faults */
    memset(ctx->self_kt, 0, L * ctxn * dt * sizeof(float));
    ctx->model = model;
    /* cross K/V in the decoder's precision: f32, f16, or q8_0 when the head width is a
     * whole number of blocks (all Whisper sizes: 64) */
    int dh_text = (int)dt / h->n_text_head;
    ctx->cross_type = model->w.tok_emb.type == SOTTO_TYPE_F32 ? SOTTO_TYPE_F32 : SOTTO_TYPE_F16;
    if (model->w.tok_emb.type == SOTTO_TYPE_Q8_0 && dh_text % 32 == 0 && dh_text <= SOTTO__ATTN_MAX_DH_Q8 &&
        n <= SOTTO__ATTN_MAX_S_Q8)
        ctx->cross_type = SOTTO_TYPE_Q8_0;
    ctx->ex.scratch_per_thread = scratch_per_thread;
    ctx->ex.qbuf_blocks = qbuf_blocks;
    ctx->ex.k = sotto__kernels_get();
    const char *proxy = getenv("SOTTO_VOCAB_PROXY");
    ctx->use_proxy = !(proxy && strcmp(proxy, "0") == 0);
    ctx->ex.pool = sotto__pool_create(n_threads);
    if (!ctx->ex.pool) {
        sotto_context_free(ctx);
        return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "context: cannot start worker threads"});
    }
    *out = ctx;
    return SOTTO_OK;
}

void sotto_context_free(sotto_context *ctx)
{
    if (!ctx) return;
    sotto__pool_free(ctx->ex.pool);
    free(ctx->arena);
    free(ctx);
}

sotto_status sotto_encode(sotto_context *ctx, const float *mel, int64_t n_floats)
{
    if (!ctx) return SOTTO_ERR_INVALID_ARG;
    const sotto_model_info *h = &ctx->model->info;
    int64_t want = (int64_t)h->n_mels * SOTTO_N_FRAMES;
    if (!mel || n_floats != want)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "encode: the mel window must hold %d x %d = %lld floats, "
                               "got %lld", h->n_mels, SOTTO_N_FRAMES, (long long)want, (long long)n_floats);
    ctx->error[0] = 0;
    sotto__encoder_forward(ctx, mel);
    ctx->encoded = true;
    ctx->have_state = ctx->have_logits = false;
    return SOTTO_OK;
}

const float *sotto_encoder_output(const sotto_context *ctx)
{
    return ctx && ctx->encoded ? ctx->enc_out : NULL;
}

sotto_status sotto__decode_state(sotto_context *ctx, const int32_t *tokens, int n_tokens, int n_past)
{
    if (!ctx) return SOTTO_ERR_INVALID_ARG;
    const sotto_model_info *h = &ctx->model->info;
    if (!ctx->encoded) return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "decode: no window was encoded");
    if (!tokens || n_tokens < 1 || n_past < 0 || n_tokens > h->n_text_ctx || n_past > h->n_text_ctx - n_tokens)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG,
                               "decode: %d tokens at position %d do not fit the %d-token context", n_tokens, n_past,
                               h->n_text_ctx);
    for (int i = 0; i < n_tokens; i++)
        if (tokens[i] < 0 || tokens[i] >= h->n_vocab)
            return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "decode: token %d is outside the vocabulary (0..%d)",
                                   tokens[i], h->n_vocab - 1);
    ctx->error[0] = 0;
    ctx->have_state = ctx->have_logits = false;
    sotto__decoder_forward(ctx, tokens, n_tokens, n_past);
    ctx->have_state = true;
    return SOTTO_OK;
}

static void project(sotto_context *ctx)
{
    sotto__op_linear(&ctx->ex, ctx->dec_h, 1, &ctx->model->w.tok_emb, ctx->logits);
    ctx->have_logits = true;
}

sotto_status sotto_decode(sotto_context *ctx, const int32_t *tokens, int n_tokens, int n_past)
{
    sotto_status st = sotto__decode_state(ctx, tokens, n_tokens, n_past);
    if (!st) project(ctx);
    return st;
}

const float *sotto_logits(const sotto_context *ctx)
{
    if (!ctx || !ctx->have_state) return NULL;
    /* the greedy search leaves only the state: project it now (the context is the
     * caller's own, allocated mutable; const says the decode state does not change) */
    if (!ctx->have_logits) project((sotto_context *)ctx);
    return ctx->logits;
}
