/* decoder.c — the text decoder (openai/whisper model.py TextDecoder) over a static KV
 * cache: N tokens at cache positions n_past.. are embedded, their self-attention K/V
 * written into the cache (keys transposed, [d, n_text_ctx], values as rows, so both
 * attention products read rows), cross-attention reads the window's resident K/V, and
 * the logits of the last token come from the tied token embedding. */
#include "decoder.h"

#include <stdlib.h>

sotto_type sotto__decoder_cross_type(const sotto_model *m)
{
    const sotto_model_info *h = &m->info;
    sotto_type t = m->w.tok_emb.type;
    if (t == SOTTO_TYPE_Q8_0 && !sotto__cross_q8_ok(h->n_audio_ctx, h->n_text_state / h->n_text_head))
        t = SOTTO_TYPE_F16;
    return t;
}

sotto_status sotto__decoder_init(sotto__decoder *dec, sotto__backend *be, const sotto_model *m, sotto__arena *a,
                                 sotto__err *err)
{
    const sotto_model_info *h = &m->info;
    const sotto__weights *w = &m->w;
    *dec = (sotto__decoder){.be = be, .n_vocab = h->n_vocab, .n_ctx = h->n_text_ctx, .d = h->n_text_state,
                            .n_head = h->n_text_head, .n_layer = h->n_text_layer, .n_audio = h->n_audio_ctx};
    dec->layers = calloc((size_t)dec->n_layer, sizeof *dec->layers);
    if (!dec->layers) return sotto__fail(err, SOTTO_ERR_NOMEM, "decoder: out of memory");
    sotto_status st = sotto__import_linear(be, &w->tok_emb, &dec->emb, err);
    if (!st) st = sotto__import_f32(be, w->dec_pos, (size_t)dec->n_ctx * dec->d, &dec->pos, err);
    for (int l = 0; l < dec->n_layer && !st; l++)
        st = sotto__import_layer(be, &w->dec[l], dec->d, true, &dec->layers[l], err);
    if (!st) st = sotto__import_norm(be, &w->dec_ln, dec->d, &dec->ln, err);
    if (st) return st;

    dec->cross_type = sotto__decoder_cross_type(m);
    sotto__cross_layout(dec->cross_type, dec->n_audio, dec->n_head, dec->d / dec->n_head, &dec->cross_k_bytes, &dec->cross_v_bytes);
    const size_t L = (size_t)dec->n_layer, c = (size_t)dec->n_ctx, d = (size_t)dec->d, f = sizeof(float);
    sotto__arena_add(a, &dec->cross_k, L * dec->cross_k_bytes);
    sotto__arena_add(a, &dec->cross_v, L * dec->cross_v_bytes);
    sotto__arena_add(a, &dec->self_kt, L * c * d * f);
    sotto__arena_add(a, &dec->self_v, L * c * d * f);
    sotto__buf *rows[] = {&dec->x, &dec->h, &dec->q, &dec->attn, &dec->tmp, &dec->k};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) sotto__arena_add(a, rows[i], c * d * f);
    sotto__arena_add(a, &dec->ff, c * 4 * d * f);
    sotto__arena_add(a, &dec->logits, (size_t)dec->n_vocab * f);
    return SOTTO_OK;
}

void sotto__decoder_ready(sotto__decoder *dec)
{
    dec->be->ops->zero(dec->be, dec->self_kt, (size_t)dec->n_layer * dec->n_ctx * dec->d * sizeof(float));
}

void sotto__decoder_free(sotto__decoder *dec)
{
    free(dec->layers);
    dec->layers = NULL;
}

void sotto__decoder_cross(sotto__decoder *dec, sotto__buf audio, sotto__buf kx, sotto__buf vx)
{
    sotto__backend *be = dec->be;
    for (int l = 0; l < dec->n_layer; l++) {
        const sotto__blayer *L = &dec->layers[l];
        be->ops->linear(be, audio, dec->n_audio, &L->ck, kx);
        be->ops->linear(be, audio, dec->n_audio, &L->cv, vx);
        be->ops->cross_kv(be, kx, vx, dec->n_audio, dec->n_head, dec->d / dec->n_head, dec->cross_type,
                          sotto__buf_at(dec->cross_k, (size_t)l * dec->cross_k_bytes),
                          sotto__buf_at(dec->cross_v, (size_t)l * dec->cross_v_bytes));
    }
}

void sotto__decoder_forward(sotto__decoder *dec, const int32_t *tokens, int n_tok, int n_past)
{
    sotto__backend *be = dec->be;
    const sotto__backend_ops *o = be->ops;
    const int d = dec->d, n_head = dec->n_head, dh = d / n_head, n_ctx = dec->n_ctx;
    const size_t nd = (size_t)n_tok * d;
    sotto__buf x = dec->x;
    o->embed(be, tokens, n_tok, &dec->emb, sotto__buf_f32(dec->pos, (size_t)n_past * d), x);
    for (int l = 0; l < dec->n_layer; l++) {
        const sotto__blayer *L = &dec->layers[l];
        sotto__buf ktc = sotto__buf_f32(dec->self_kt, (size_t)l * n_ctx * d);
        sotto__buf vc = sotto__buf_f32(dec->self_v, (size_t)l * n_ctx * d);
        o->layernorm(be, x, n_tok, d, &L->attn_ln, dec->h);
        o->linear(be, dec->h, n_tok, &L->q, dec->q);
        o->linear(be, dec->h, n_tok, &L->k, dec->k);
        o->linear(be, dec->h, n_tok, &L->v, sotto__buf_f32(vc, (size_t)n_past * d));
        o->transpose(be, dec->k, n_tok, d, sotto__buf_f32(ktc, (size_t)n_past), (size_t)n_ctx);
        o->attention(be, dec->q, (size_t)d, ktc, (size_t)n_ctx, vc, (size_t)d, dec->attn, (size_t)d, n_tok,
                     n_past + n_tok, n_head, dh, n_past);
        o->linear(be, dec->attn, n_tok, &L->o, dec->tmp);
        o->add(be, x, dec->tmp, nd);

        o->layernorm(be, x, n_tok, d, &L->cross_ln, dec->h);
        o->linear(be, dec->h, n_tok, &L->cq, dec->q);
        o->cross_attention(be, dec->q, (size_t)d, dec->cross_type,
                           sotto__buf_at(dec->cross_k, (size_t)l * dec->cross_k_bytes),
                           sotto__buf_at(dec->cross_v, (size_t)l * dec->cross_v_bytes), dec->attn, (size_t)d, n_tok,
                           dec->n_audio, n_head, dh);
        o->linear(be, dec->attn, n_tok, &L->co, dec->tmp);
        o->add(be, x, dec->tmp, nd);

        o->layernorm(be, x, n_tok, d, &L->mlp_ln, dec->h);
        o->linear(be, dec->h, n_tok, &L->fc1, dec->ff);
        o->gelu(be, dec->ff, nd * 4);
        o->linear(be, dec->ff, n_tok, &L->fc2, dec->tmp);
        o->add(be, x, dec->tmp, nd);
    }
    /* only the last position's logits are needed, prefill and step alike: its final
     * state goes to h row 0, projected by the caller (all logits or just the argmax) */
    o->layernorm(be, sotto__buf_f32(x, (size_t)(n_tok - 1) * d), 1, d, &dec->ln, dec->h);
}

void sotto__decoder_logits(sotto__decoder *dec) { dec->be->ops->linear(dec->be, dec->h, 1, &dec->emb, dec->logits); }

sotto_status sotto__decoder_argmax(sotto__decoder *dec, const sotto__i32list *excl, int n_excl, int32_t *out)
{
    return dec->be->ops->argmax(dec->be, dec->h, &dec->emb, excl, n_excl, dec->logits, out);
}
