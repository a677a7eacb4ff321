/* decoder.c — the text decoder (openai/whisper model.py TextDecoder) over a static KV
 * cache: N tokens at cache positions n_past.. are embedded, their self-attention K/V
 * written into the cache (keys transposed, [d, n_text_ctx], values as rows, so both
 * attention products read rows), cross-attention reads the window's resident K/V, and the logits
 * of the last token come from the tied token embedding. */
#include <string.h>

#include "context.h"

void sotto__decoder_forward(sotto_context *ctx, const int32_t *tokens, int n_tok, int n_past)
{
    const sotto_model_info *h = &ctx->model->info;
    const sotto__weights *w = &ctx->model->w;
    const int d = h->n_text_state, n_head = h->n_text_head, dh = d / n_head;
    const int n_ctx = h->n_text_ctx, n_audio = h->n_audio_ctx;
    float *x = ctx->dec_x;
    for (int i = 0; i < n_tok; i++) {
        size_t row_off;
        sotto__type_bytes(w->tok_emb.type, (int64_t)tokens[i] * d, &row_off);
        sotto__dequantize(w->tok_emb.type, (const char *)w->tok_emb.w + row_off, x + (size_t)i * d, d);
        for (int j = 0; j < d; j++) x[(size_t)i * d + j] += w->dec_pos[(size_t)(n_past + i) * d + j];
    }
    for (int l = 0; l < h->n_text_layer; l++) {
        const sotto__layer *L = &w->dec[l];
        float *ktc = ctx->self_kt + (size_t)l * n_ctx * d, *vc = ctx->self_v + (size_t)l * n_ctx * d;
        sotto__op_layernorm(&ctx->ex, x, n_tok, d, &L->attn_ln, ctx->dec_h);
        sotto__op_linear(&ctx->ex, ctx->dec_h, n_tok, &L->q, ctx->dec_q);
        sotto__op_linear(&ctx->ex, ctx->dec_h, n_tok, &L->k, ctx->dec_k);
        sotto__op_linear(&ctx->ex, ctx->dec_h, n_tok, &L->v, vc + (size_t)n_past * d);
        for (int i = 0; i < n_tok; i++)
            for (int j = 0; j < d; j++) ktc[(size_t)j * n_ctx + n_past + i] = ctx->dec_k[(size_t)i * d + j];
        sotto__op_attention(&ctx->ex, ctx->dec_q, (size_t)d, ktc, (size_t)n_ctx, vc, (size_t)d, ctx->dec_attn,
                            (size_t)d, n_tok, n_past + n_tok, n_head, dh, n_past);
        sotto__op_linear(&ctx->ex, ctx->dec_attn, n_tok, &L->o, ctx->dec_tmp);
        sotto__op_add(&ctx->ex, x, ctx->dec_tmp, (size_t)n_tok * d);

        sotto__op_layernorm(&ctx->ex, x, n_tok, d, &L->cross_ln, ctx->dec_h);
        sotto__op_linear(&ctx->ex, ctx->dec_h, n_tok, &L->cq, ctx->dec_q);
        void *ck, *cv;
        sotto__cross_layer(ctx, l, &ck, &cv);
        sotto__op_cross_attention(&ctx->ex, ctx->dec_q, (size_t)d, ctx->cross_type, ck, cv, ctx->dec_attn, (size_t)d,
                                  n_tok, n_audio, n_head, dh);
        sotto__op_linear(&ctx->ex, ctx->dec_attn, n_tok, &L->co, ctx->dec_tmp);
        sotto__op_add(&ctx->ex, x, ctx->dec_tmp, (size_t)n_tok * d);

        sotto__op_layernorm(&ctx->ex, x, n_tok, d, &L->mlp_ln, ctx->dec_h);
        sotto__op_linear(&ctx->ex, ctx->dec_h, n_tok, &L->fc1, ctx->dec_ff);
        sotto__op_gelu(&ctx->ex, ctx->dec_ff, (size_t)n_tok * 4 * d);
        sotto__op_linear(&ctx->ex, ctx->dec_ff, n_tok, &L->fc2, ctx->dec_tmp);
        sotto__op_add(&ctx->ex, x, ctx->dec_tmp, (size_t)n_tok * d);
    }
    /* only the last position's logits are needed, prefill and step alike: its final
     * state goes to dec_h row 0, projected by the caller (all logits or just the argmax) */
    sotto__op_layernorm(&ctx->ex, x + (size_t)(n_tok - 1) * d, 1, d, &w->dec_ln, ctx->dec_h);
}
