/* decoder.c — the text decoder (openai/whisper model.py TextDecoder) over a static KV
 * cache: N tokens at cache positions n_past.. are embedded, their self-attention K/V
 * written into the cache (keys transposed, [d, n_text_ctx], values as rows, so both
 * attention products read rows), cross-attention reads the window's resident K/V, and
 * the logits of the last token come from the tied token embedding. */
#include "decoder.h"

#include "../quant.h"

#include <stdlib.h>

sotto_type sotto__decoder_cross_type(const sotto_model *m)
{
    const sotto_model_info *h = &m->info;
    sotto_type t = m->w.tok_emb.type;
    /* f16 weights keep their K/V in f32: every Whisper checkpoint is stored in halves, so an
     * f16 model then computes its f32 copy's bits (kernels.h: matmul_f16 runs matmul's
     * chains), where halved K/V would round the encoder's output once more */
    if (t == SOTTO_TYPE_F16) return SOTTO_TYPE_F32;
    if (t == SOTTO_TYPE_Q8_0 && !sotto__cross_q8_ok(h->n_audio_ctx, h->n_text_state / h->n_text_head))
        t = SOTTO_TYPE_F16;
    return t;
}

sotto_status sotto__decoder_init(sotto__decoder *dec, sotto__backend *be, const sotto_model *m, int n_slots,
                                 int n_win, sotto__arena *a, sotto__err *err)
{
    const sotto_model_info *h = &m->info;
    const sotto__weights *w = &m->w;
    *dec = (sotto__decoder){.be = be, .n_vocab = h->n_vocab, .n_ctx = h->n_text_ctx, .d = h->n_text_state,
                            .n_head = h->n_text_head, .n_layer = h->n_text_layer, .n_audio = h->n_audio_ctx,
                            .n_slots = n_slots < 1 ? 1 : n_slots, .n_win = n_win < 1 ? 1 : n_win};
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
    sotto__decoder_declare(dec, a);
    return SOTTO_OK;
}

void sotto__decoder_declare(sotto__decoder *dec, sotto__arena *a)
{
    const size_t L = (size_t)dec->n_layer, c = (size_t)dec->n_ctx, d = (size_t)dec->d, f = sizeof(float);
    const size_t S = (size_t)dec->n_slots;
    const size_t W = (size_t)dec->n_win;
    sotto__arena_add(a, &dec->cross_k, W * L * dec->cross_k_bytes);
    sotto__arena_add(a, &dec->cross_v, W * L * dec->cross_v_bytes);
    sotto__arena_add(a, &dec->self_kt, S * L * c * d * f);
    sotto__arena_add(a, &dec->self_v, S * L * c * d * f);
    sotto__buf *rows[] = {&dec->x, &dec->h, &dec->q, &dec->attn, &dec->tmp, &dec->k};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) sotto__arena_add(a, rows[i], c * d * f);
    sotto__arena_add(a, &dec->ff, c * 4 * d * f);
    size_t n_logits = S > 2 ? S : 2;
    sotto__arena_add(a, &dec->logits, n_logits * (size_t)dec->n_vocab * f);
}

void sotto__decoder_ready(sotto__decoder *dec)
{
    dec->be->ops->zero(dec->be, dec->self_kt,
                       (size_t)dec->n_slots * dec->n_layer * dec->n_ctx * dec->d * sizeof(float));
}

void sotto__decoder_free(sotto__decoder *dec)
{
    free(dec->layers);
    dec->layers = NULL;
}

/* Layer L's cross keys and values of window W. */
static sotto__buf cross_k(const sotto__decoder *dec, int w, int l)
{
    return sotto__buf_at(dec->cross_k, ((size_t)w * dec->n_layer + (size_t)l) * dec->cross_k_bytes);
}
static sotto__buf cross_v(const sotto__decoder *dec, int w, int l)
{
    return sotto__buf_at(dec->cross_v, ((size_t)w * dec->n_layer + (size_t)l) * dec->cross_v_bytes);
}

void sotto__decoder_cross(sotto__decoder *dec, sotto__buf audio, sotto__buf kx, sotto__buf vx)
{
    sotto__backend *be = dec->be;
    for (int l = 0; l < dec->n_layer; l++) {
        const sotto__blayer *L = &dec->layers[l];
        be->ops->linear(be, audio, dec->n_audio, &L->ck, kx);
        be->ops->linear(be, audio, dec->n_audio, &L->cv, vx);
        be->ops->cross_kv(be, kx, vx, dec->n_audio, dec->n_head, dec->d / dec->n_head, dec->cross_type,
                          cross_k(dec, dec->win, l), cross_v(dec, dec->win, l));
    }
}

/* Layer L's cache of SLOT: keys transposed [d, n_ctx], values [n_ctx, d]. */
static sotto__buf cache_kt(const sotto__decoder *dec, int slot, int l)
{
    return sotto__buf_f32(dec->self_kt, ((size_t)slot * dec->n_layer + (size_t)l) * dec->n_ctx * dec->d);
}
static sotto__buf cache_v(const sotto__decoder *dec, int slot, int l)
{
    return sotto__buf_f32(dec->self_v, ((size_t)slot * dec->n_layer + (size_t)l) * dec->n_ctx * dec->d);
}

/* Cross-attention and MLP of layer L over the N rows of x (the same for one sequence's
 * tokens and for one token of several sequences: the window's K/V are shared). */
static void cross_and_mlp(sotto__decoder *dec, const sotto__blayer *L, int l, int n, float *q_out)
{
    sotto__backend *be = dec->be;
    const sotto__backend_ops *o = be->ops;
    const int d = dec->d, dh = d / dec->n_head;
    const size_t nd = (size_t)n * d;
    o->layernorm(be, dec->x, n, d, &L->cross_ln, dec->h);
    o->linear(be, dec->h, n, &L->cq, dec->q);
    if (q_out) o->read(be, q_out, dec->q, nd * sizeof(float));
    o->cross_attention(be, dec->q, (size_t)d, dec->cross_type, cross_k(dec, dec->win, l), cross_v(dec, dec->win, l),
                       dec->attn, (size_t)d, n, dec->n_audio, dec->n_head, dh);
    o->linear(be, dec->attn, n, &L->co, dec->tmp);
    o->add(be, dec->x, dec->tmp, nd);

    o->layernorm(be, dec->x, n, d, &L->mlp_ln, dec->h);
    o->linear(be, dec->h, n, &L->fc1, dec->ff);
    o->gelu(be, dec->ff, nd * 4);
    o->linear(be, dec->ff, n, &L->fc2, dec->tmp);
    o->add(be, dec->x, dec->tmp, nd);
}

/* The layers over N_TOK tokens at N_PAST.. of cache SLOT, the results in x; layer l's
 * cross-attention queries read into Q_OUT + l * n_tok * d where Q_OUT and WANT[l]. */
static void layers(sotto__decoder *dec, const int32_t *tokens, int n_tok, int n_past, int slot, const bool *want,
                   float *q_out)
{
    sotto__backend *be = dec->be;
    const sotto__backend_ops *o = be->ops;
    const int d = dec->d, n_head = dec->n_head, dh = d / n_head, n_ctx = dec->n_ctx;
    sotto__buf x = dec->x;
    o->embed(be, tokens, n_tok, &dec->emb, sotto__buf_f32(dec->pos, (size_t)n_past * d), x);
    for (int l = 0; l < dec->n_layer; l++) {
        const sotto__blayer *L = &dec->layers[l];
        sotto__buf ktc = cache_kt(dec, slot, l), vc = cache_v(dec, slot, l);
        o->layernorm(be, x, n_tok, d, &L->attn_ln, dec->h);
        o->linear(be, dec->h, n_tok, &L->q, dec->q);
        o->linear(be, dec->h, n_tok, &L->k, dec->k);
        o->linear(be, dec->h, n_tok, &L->v, sotto__buf_f32(vc, (size_t)n_past * d));
        o->transpose(be, dec->k, n_tok, d, sotto__buf_f32(ktc, (size_t)n_past), (size_t)n_ctx);
        o->attention(be, dec->q, (size_t)d, ktc, (size_t)n_ctx, vc, (size_t)d, dec->attn, (size_t)d, n_tok,
                     n_past + n_tok, n_head, dh, n_past);
        o->linear(be, dec->attn, n_tok, &L->o, dec->tmp);
        o->add(be, x, dec->tmp, (size_t)n_tok * d);
        cross_and_mlp(dec, L, l, n_tok, q_out && want[l] ? q_out + (size_t)l * n_tok * d : NULL);
    }
}

void sotto__decoder_forward(sotto__decoder *dec, const int32_t *tokens, int n_tok, int n_past, int slot, int extra)
{
    const sotto__backend_ops *o = dec->be->ops;
    sotto__backend *be = dec->be;
    const int d = dec->d;
    sotto__buf x = dec->x;
    layers(dec, tokens, n_tok, n_past, slot, NULL, NULL);
    /* only the last position's logits are needed, prefill and step alike: its final
     * state goes to h row 0, projected by the caller (all logits or just the argmax) */
    o->layernorm(be, sotto__buf_f32(x, (size_t)(n_tok - 1) * d), 1, d, &dec->ln, dec->h);
    if (extra >= 0) o->layernorm(be, sotto__buf_f32(x, (size_t)extra * d), 1, d, &dec->ln, sotto__buf_f32(dec->h, d));
}

/* The self-attention of a step's rows R0 .. R0+N-1 in layer L, their K and V rows (dec->k,
 * dec->tmp) written into their caches at N_PAST first: over the prefix of slot PSLOT
 * (N_PREFIX positions) and their own slots SLOTS[r] after it, or, with no prefix to share,
 * each row over its own slot alone. */
static void step_attention(sotto__decoder *dec, int l, const int *slots, int r0, int n, int n_past, int pslot,
                           int n_prefix)
{
    sotto__backend *be = dec->be;
    const sotto__backend_ops *o = be->ops;
    const int d = dec->d, n_head = dec->n_head, dh = d / n_head, n_ctx = dec->n_ctx;
    const size_t row = (size_t)d * sizeof(float);
    sotto__buf kts[SOTTO_MAX_SEQUENCES], vs[SOTTO_MAX_SEQUENCES];
    if (n == 1 && slots[r0] == pslot) n_prefix = 0; /* one row over its own prefix: plain attention */
    for (int i = 0; i < n; i++) {
        int r = r0 + i;
        sotto__buf ktc = cache_kt(dec, slots[r], l), vc = cache_v(dec, slots[r], l);
        o->transpose(be, sotto__buf_f32(dec->k, (size_t)r * d), 1, d, sotto__buf_f32(ktc, (size_t)n_past),
                     (size_t)n_ctx);
        o->copy2d(be, sotto__buf_f32(vc, (size_t)n_past * d), row, sotto__buf_f32(dec->tmp, (size_t)r * d), row, 1,
                  row);
        if (n_prefix <= 0)
            o->attention(be, sotto__buf_f32(dec->q, (size_t)r * d), (size_t)d, ktc, (size_t)n_ctx, vc, (size_t)d,
                         sotto__buf_f32(dec->attn, (size_t)r * d), (size_t)d, 1, n_past + 1, n_head, dh, n_past);
        kts[i] = ktc, vs[i] = vc;
    }
    if (n_prefix > 0) /* dec->k's rows are in the caches: its first N rows are the op's scratch */
        o->attention_prefix(be, sotto__buf_f32(dec->q, (size_t)r0 * d), (size_t)d, n, cache_kt(dec, pslot, l),
                            cache_v(dec, pslot, l), kts, vs, (size_t)n_ctx, (size_t)d, n_prefix, n_past + 1, n_head,
                            dh, sotto__buf_f32(dec->attn, (size_t)r0 * d), (size_t)d, dec->k);
}

void sotto__decoder_step(sotto__decoder *dec, const int32_t *tokens, const int *slots, int n, int n_past, int pslot,
                         int n_prefix)
{
    sotto__backend *be = dec->be;
    const sotto__backend_ops *o = be->ops;
    const int d = dec->d;
    sotto__buf pos = sotto__buf_f32(dec->pos, (size_t)n_past * d);
    for (int r = 0; r < n; r++) o->embed(be, tokens + r, 1, &dec->emb, pos, sotto__buf_f32(dec->x, (size_t)r * d));
    for (int l = 0; l < dec->n_layer; l++) {
        const sotto__blayer *L = &dec->layers[l];
        o->layernorm(be, dec->x, n, d, &L->attn_ln, dec->h);
        o->linear(be, dec->h, n, &L->q, dec->q);
        o->linear(be, dec->h, n, &L->k, dec->k);
        o->linear(be, dec->h, n, &L->v, dec->tmp);
        step_attention(dec, l, slots, 0, n, n_past, pslot, n_prefix);
        o->linear(be, dec->attn, n, &L->o, dec->tmp);
        o->add(be, dec->x, dec->tmp, (size_t)n * d);
        cross_and_mlp(dec, L, l, n, NULL);
    }
    o->layernorm(be, dec->x, n, d, &dec->ln, dec->h);
}

/* linear over N rows with the bits of exact_rows rows or more (see sotto__decoder_step_batch). */
static void linear_exact(sotto__decoder *dec, sotto__buf x, int n, const sotto__blinear *l, sotto__buf y)
{
    dec->be->ops->linear_rows(dec->be, x, n, l, y);
}

/* Batched cross-attention and MLP of layer L over N rows, each run of rows of one window
 * against that window's K/V. */
static void cross_and_mlp_batch(sotto__decoder *dec, const sotto__blayer *L, int l, const int *wins, int n)
{
    sotto__backend *be = dec->be;
    const sotto__backend_ops *o = be->ops;
    const int d = dec->d, dh = d / dec->n_head;
    const size_t nd = (size_t)n * d;
    o->layernorm(be, dec->x, n, d, &L->cross_ln, dec->h);
    linear_exact(dec, dec->h, n, &L->cq, dec->q);
    for (int r0 = 0, r1; r0 < n; r0 = r1) {
        for (r1 = r0 + 1; r1 < n && wins[r1] == wins[r0]; r1++) {}
        o->cross_attention(be, sotto__buf_f32(dec->q, (size_t)r0 * d), (size_t)d, dec->cross_type,
                           cross_k(dec, wins[r0], l), cross_v(dec, wins[r0], l),
                           sotto__buf_f32(dec->attn, (size_t)r0 * d), (size_t)d, r1 - r0, dec->n_audio, dec->n_head, dh);
    }
    linear_exact(dec, dec->attn, n, &L->co, dec->tmp);
    o->add(be, dec->x, dec->tmp, nd);
    o->layernorm(be, dec->x, n, d, &L->mlp_ln, dec->h);
    linear_exact(dec, dec->h, n, &L->fc1, dec->ff);
    o->gelu(be, dec->ff, nd * 4);
    linear_exact(dec, dec->ff, n, &L->fc2, dec->tmp);
    o->add(be, dec->x, dec->tmp, nd);
}

void sotto__decoder_step_batch(sotto__decoder *dec, const int32_t *tokens, const int *slots, const int *wins, int n,
                               const int *past, const int *pslots, const int *n_prefix)
{
    sotto__backend *be = dec->be;
    const sotto__backend_ops *o = be->ops;
    const int d = dec->d;
    for (int r = 0; r < n; r++)
        o->embed(be, tokens + r, 1, &dec->emb, sotto__buf_f32(dec->pos, (size_t)past[r] * d),
                 sotto__buf_f32(dec->x, (size_t)r * d));
    for (int l = 0; l < dec->n_layer; l++) {
        const sotto__blayer *L = &dec->layers[l];
        o->layernorm(be, dec->x, n, d, &L->attn_ln, dec->h);
        linear_exact(dec, dec->h, n, &L->q, dec->q);
        linear_exact(dec, dec->h, n, &L->k, dec->k);
        linear_exact(dec, dec->h, n, &L->v, dec->tmp);
        for (int r0 = 0, r1; r0 < n; r0 = r1) { /* each group's rows over its prefix */
            for (r1 = r0 + 1; r1 < n && pslots[r1] == pslots[r0] && r1 - r0 < SOTTO_MAX_SEQUENCES; r1++) {}
            step_attention(dec, l, slots, r0, r1 - r0, past[r0], pslots[r0], n_prefix[r0]);
        }
        linear_exact(dec, dec->attn, n, &L->o, dec->tmp);
        o->add(be, dec->x, dec->tmp, (size_t)n * d);
        cross_and_mlp_batch(dec, L, l, wins, n);
    }
    o->layernorm(be, dec->x, n, d, &dec->ln, dec->h);
}

void sotto__decoder_logits_batch(sotto__decoder *dec, int n_rows) { linear_exact(dec, dec->h, n_rows, &dec->emb, dec->logits); }

void sotto__decoder_forward_all(sotto__decoder *dec, const int32_t *tokens, int n, int slot, const bool *want,
                                float *q)
{
    layers(dec, tokens, n, 0, slot, want, q);
    dec->be->ops->layernorm(dec->be, dec->x, n, dec->d, &dec->ln, dec->h);
}

void sotto__decoder_logits_rows(sotto__decoder *dec, int row0, int n_rows, sotto__buf out)
{
    dec->be->ops->linear(dec->be, sotto__buf_f32(dec->h, (size_t)row0 * dec->d), n_rows, &dec->emb, out);
}

sotto_status sotto__decoder_cross_keys(sotto__decoder *dec, int l, int h, float *out)
{
    const int dh = dec->d / dec->n_head, S = dec->n_audio;
    size_t head = 0;
    if (!sotto__type_bytes(dec->cross_type, (int64_t)S * dh, &head)) return SOTTO_ERR_UNSUPPORTED;
    sotto__buf src = sotto__buf_at(cross_k(dec, dec->win, l), (size_t)h * head);
    if (dec->cross_type == SOTTO_TYPE_F32) {
        dec->be->ops->read(dec->be, out, src, head);
        return SOTTO_OK;
    }
    void *raw = malloc(head);
    if (!raw) return SOTTO_ERR_NOMEM;
    dec->be->ops->read(dec->be, raw, src, head);
    sotto__dequantize(dec->cross_type, raw, out, (int64_t)S * dh);
    free(raw);
    return SOTTO_OK;
}

void sotto__decoder_copy_slot(sotto__decoder *dec, int dst, int src, int from, int n_pos)
{
    const size_t f = sizeof(float), d = (size_t)dec->d, c = (size_t)dec->n_ctx, n = (size_t)(n_pos - from);
    if (n_pos <= from) return;
    for (int l = 0; l < dec->n_layer; l++) {
        /* keys: d rows of positions from .. n_pos, n_ctx apart; values: those rows, contiguous */
        dec->be->ops->copy2d(dec->be, sotto__buf_f32(cache_kt(dec, dst, l), (size_t)from), c * f,
                             sotto__buf_f32(cache_kt(dec, src, l), (size_t)from), c * f, d, n * f);
        dec->be->ops->copy2d(dec->be, sotto__buf_f32(cache_v(dec, dst, l), (size_t)from * d), d * f,
                             sotto__buf_f32(cache_v(dec, src, l), (size_t)from * d), d * f, n, d * f);
    }
}

void sotto__decoder_logits(sotto__decoder *dec, int n_rows)
{
    dec->be->ops->linear(dec->be, dec->h, n_rows, &dec->emb, dec->logits);
}

void sotto__decoder_logits_at(sotto__decoder *dec, int first, int n)
{
    size_t row;
    if (n <= 0 || !sotto__type_bytes(dec->emb.type, dec->emb.n_in, &row)) return;
    sotto__blinear part = dec->emb;
    part.w = sotto__buf_at(dec->emb.w, (size_t)first * row);
    part.n_out = n;
    dec->be->ops->linear(dec->be, dec->h, 1, &part, sotto__buf_f32(dec->logits, (size_t)first));
}

sotto_status sotto__decoder_argmax(sotto__decoder *dec, const sotto__i32list *excl, int n_excl, int32_t *out)
{
    return dec->be->ops->argmax(dec->be, dec->h, &dec->emb, excl, n_excl, dec->logits, out);
}
