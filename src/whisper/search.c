/* search.c — the token-level runner's greedy decoding (sotto_greedy; openai/whisper
 * decoding.py with temperature 0, beam 1, no timestamps): prefill the forced prefix in
 * one pass, then argmax -> append -> advance the cache position, through the backend's
 * argmax (no logit is computed that cannot win). Suppression mirrors SuppressBlank (the
 * model's begin list at the first step) and SuppressTokens (the model's list at every
 * step). Long-form transcription with every rule of the reference: transcribe.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"

sotto_greedy_params sotto_greedy_params_default(void)
{
    return (sotto_greedy_params){.prefix = NULL, .n_prefix = 0, .eos = NULL, .n_eos = 0, .max_new_tokens = 32,
                                 .suppress = 1};
}

/* The model's start sequence: [sot] for English-only models, [sot, language, task]
 * for multilingual ones, then <|notimestamps|>. Returns its length (<= 4). */
static int default_prefix(const sotto_model *m, int32_t lang, bool translate, int32_t *out)
{
    const sotto_model_info *h = &m->info;
    int n = 0;
    out[n++] = h->token_sot;
    if (h->multilingual) {
        out[n++] = lang >= 0 ? lang : h->token_lang_first;
        out[n++] = translate ? h->token_translate : h->token_transcribe;
    }
    out[n++] = h->token_notimestamps;
    return n;
}

/* The next token: the argmax of the last decode's logits with the suppressed ids out
 * (through the backend's shortcut where it has one: the same token either way). */
static int32_t next_token(sotto_context *ctx, bool suppress, bool first)
{
    const sotto_model *m = ctx->model;
    sotto__i32list lists[2];
    int n_lists = 0;
    if (suppress) {
        lists[n_lists++] = m->suppress;
        if (first) lists[n_lists++] = m->suppress_begin;
    }
    int32_t tok = 0;
    sotto__decoder_argmax(&ctx->dec, lists, n_lists, &tok);
    ctx->have_logits = false; /* the logits buffer was scratch */
    return tok;
}

sotto_status sotto_greedy(sotto_context *ctx, const sotto_greedy_params *params, int32_t *out, int *n_out,
                          sotto_decode_stats *stats)
{
    if (!ctx || !out || !n_out) return SOTTO_ERR_INVALID_ARG;
    const sotto_model_info *h = &ctx->model->info;
    sotto_greedy_params p = params ? *params : sotto_greedy_params_default();
    sotto_decode_stats s = {0};
    int32_t def[4];
    if (!p.prefix) {
        p.n_prefix = default_prefix(ctx->model, -1, false, def);
        p.prefix = def;
    }
    int32_t eot = h->token_eot;
    if (!p.eos) {
        p.eos = &eot;
        p.n_eos = 1;
    }
    if (p.n_prefix < 1 || p.n_prefix > h->n_text_ctx || p.max_new_tokens < 0 || p.n_eos < 1)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG,
                               "greedy: prefix of %d tokens (1..%d allowed), budget %d, %d eos ids", p.n_prefix,
                               h->n_text_ctx, p.max_new_tokens, p.n_eos);
    if (!ctx->encoded) return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "greedy: no window was encoded");
    memcpy(out, p.prefix, (size_t)p.n_prefix * sizeof *out);
    int n = p.n_prefix;
    int budget = p.max_new_tokens < h->n_text_ctx - n ? p.max_new_tokens : h->n_text_ctx - n;
    sotto_status st = SOTTO_OK;
    if (budget <= 0) {
        *n_out = n;
        if (stats) *stats = s;
        return SOTTO_OK;
    }
    /* each timed pass is a forward pass and the argmax of its logits */
    double t0 = sotto__now_ms();
    st = sotto__decode_state(ctx, p.prefix, p.n_prefix, 0);
    int32_t tok = st ? 0 : next_token(ctx, p.suppress, true);
    s.prefill_ms = sotto__now_ms() - t0;
    s.n_prefill = 1;
    for (int g = 0; !st && g < budget; g++) {
        out[n++] = tok;
        bool stop = false;
        for (int e = 0; e < p.n_eos; e++) stop |= tok == p.eos[e];
        if (stop || g == budget - 1) break; /* no forward pass for a token that won't be emitted */
        t0 = sotto__now_ms();
        st = sotto__decode_state(ctx, &tok, 1, n - 1);
        if (!st) tok = next_token(ctx, p.suppress, false);
        s.steps_ms += sotto__now_ms() - t0;
        s.n_steps++;
    }
    *n_out = n;
    if (stats) *stats = s;
    return st;
}
