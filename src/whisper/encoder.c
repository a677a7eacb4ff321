/* encoder.c — the audio encoder (openai/whisper model.py AudioEncoder): two 1-D
 * convolutions with GELU (as im2col matmuls), sinusoidal positions, pre-LN transformer
 * blocks, ln_post; then the cross-attention K/V of every decoder layer, projected once
 * per window. Input: mel [n_mels, 3000]; output: ctx->enc_out [1500, d] and the
 * resident ctx->cross_k / ctx->cross_v, stored per head (ops.h sotto__op_cross_kv). */
#include <string.h>

#include "../quant.h"
#include "context.h"

/* Convolutions: conv1 (n_mels -> d, kernel 3, pad 1) over 3000 frames, conv2 (d -> d,
 * kernel 3, stride 2, pad 1) to 1500 positions; weights [d, c_in, 3] are already the
 * B[N, K] layout of the im2col matmul with K = c_in * 3. */
static void convs(sotto_context *ctx, const float *mel)
{
    const sotto_model_info *h = &ctx->model->info;
    const sotto__weights *w = &ctx->model->w;
    int n_mels = h->n_mels, d = h->n_audio_state, T = SOTTO_N_FRAMES, n = h->n_audio_ctx;
    float *A = ctx->im2col;
    for (int t = 0; t < T; t++) {
        float *row = A + (size_t)t * n_mels * 3;
        for (int i = 0; i < n_mels; i++)
            for (int k = 0; k < 3; k++) {
                int s = t + k - 1;
                row[i * 3 + k] = s >= 0 && s < T ? mel[(size_t)i * T + s] : 0.0f;
            }
    }
    sotto__op_matmul(&ctx->ex, A, (size_t)n_mels * 3, w->conv1_w, (size_t)n_mels * 3, w->conv1_b, ctx->conv1,
                     (size_t)d, T, d, n_mels * 3);
    sotto__op_gelu(&ctx->ex, ctx->conv1, (size_t)T * d);
    for (int t = 0; t < n; t++) {
        float *row = A + (size_t)t * d * 3;
        for (int k = 0; k < 3; k++) {
            int s = 2 * t + k - 1;
            const float *src = s >= 0 && s < T ? ctx->conv1 + (size_t)s * d : NULL;
            for (int i = 0; i < d; i++) row[i * 3 + k] = src ? src[i] : 0.0f;
        }
    }
    sotto__op_matmul(&ctx->ex, A, (size_t)d * 3, w->conv2_w, (size_t)d * 3, w->conv2_b, ctx->enc_x, (size_t)d, n, d,
                     d * 3);
    sotto__op_gelu(&ctx->ex, ctx->enc_x, (size_t)n * d);
    sotto__op_add(&ctx->ex, ctx->enc_x, w->enc_pos, (size_t)n * d);
}

static void block(sotto_context *ctx, const sotto__layer *L)
{
    const sotto_model_info *h = &ctx->model->info;
    int n = h->n_audio_ctx, d = h->n_audio_state, n_head = h->n_audio_head;
    sotto__op_layernorm(&ctx->ex, ctx->enc_x, n, d, &L->attn_ln, ctx->enc_h);
    sotto__op_linear(&ctx->ex, ctx->enc_h, n, &L->q, ctx->enc_q);
    sotto__op_linear(&ctx->ex, ctx->enc_h, n, &L->k, ctx->enc_k);
    sotto__op_linear(&ctx->ex, ctx->enc_h, n, &L->v, ctx->enc_v);
    sotto__op_transpose(&ctx->ex, ctx->enc_k, n, d, ctx->enc_kt, (size_t)n);
    sotto__op_attention(&ctx->ex, ctx->enc_q, (size_t)d, ctx->enc_kt, (size_t)n, ctx->enc_v, (size_t)d, ctx->enc_attn,
                        (size_t)d, n, n, n_head, d / n_head, -1);
    sotto__op_linear(&ctx->ex, ctx->enc_attn, n, &L->o, ctx->enc_h);
    sotto__op_add(&ctx->ex, ctx->enc_x, ctx->enc_h, (size_t)n * d);
    sotto__op_layernorm(&ctx->ex, ctx->enc_x, n, d, &L->mlp_ln, ctx->enc_h);
    sotto__op_linear(&ctx->ex, ctx->enc_h, n, &L->fc1, ctx->enc_ff);
    sotto__op_gelu(&ctx->ex, ctx->enc_ff, (size_t)n * 4 * d);
    sotto__op_linear(&ctx->ex, ctx->enc_ff, n, &L->fc2, ctx->enc_h);
    sotto__op_add(&ctx->ex, ctx->enc_x, ctx->enc_h, (size_t)n * d);
}

void sotto__encoder_forward(sotto_context *ctx, const float *mel)
{
    const sotto_model_info *h = &ctx->model->info;
    const sotto__weights *w = &ctx->model->w;
    int n = h->n_audio_ctx, d = h->n_audio_state, dt = h->n_text_state;
    convs(ctx, mel);
    for (int l = 0; l < h->n_audio_layer; l++) block(ctx, &w->enc[l]);
    sotto__op_layernorm(&ctx->ex, ctx->enc_x, n, d, &w->enc_ln, ctx->enc_out);
    /* cross-attention keys and values of every decoder layer, once per window */
    for (int l = 0; l < h->n_text_layer; l++) {
        const sotto__layer *L = &w->dec[l];
        sotto__op_linear(&ctx->ex, ctx->enc_out, n, &L->ck, ctx->enc_k);
        sotto__op_linear(&ctx->ex, ctx->enc_out, n, &L->cv, ctx->enc_v);
        void *ck, *cv;
        sotto__cross_layer(ctx, l, &ck, &cv);
        sotto__op_cross_kv(&ctx->ex, ctx->enc_k, ctx->enc_v, n, h->n_text_head, dt / h->n_text_head, ctx->cross_type,
                           ck, cv, ctx->enc_ff /* [dt, Sp]: n * 4 d floats hold it */);
    }
}
