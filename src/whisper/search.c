/* search.c — greedy decoding (openai/whisper decoding.py with temperature 0, beam 1):
 * prefill the forced prefix in one pass, then argmax -> append -> advance the cache
 * position. Suppression mirrors SuppressBlank (the model's begin list at the first
 * step) and SuppressTokens (the model's list at every step). */
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
 * (through the backend's shortcut where it has one: the same token either way); 0 and
 * the backend's failure on CTX when it fails. */
static sotto_status next_token(sotto_context *ctx, bool suppress, bool first, int32_t *tok)
{
    const sotto_model *m = ctx->model;
    sotto__i32list lists[2];
    int n_lists = 0;
    if (suppress) {
        lists[n_lists++] = m->suppress;
        if (first) lists[n_lists++] = m->suppress_begin;
    }
    *tok = 0;
    sotto_status st = sotto__decoder_argmax(&ctx->dec, lists, n_lists, tok);
    ctx->have_logits = false; /* the logits buffer was scratch */
    return st ? sotto__ctx_sync(ctx, "greedy") : SOTTO_OK;
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
    int32_t tok = 0;
    if (!st) st = next_token(ctx, p.suppress, true, &tok);
    s.prefill_ms = sotto__now_ms() - t0;
    s.n_prefill = 1;
    for (int g = 0; !st && g < budget; g++) {
        out[n++] = tok;
        bool stop = false;
        for (int e = 0; e < p.n_eos; e++) stop |= tok == p.eos[e];
        if (stop || g == budget - 1) break; /* no forward pass for a token that won't be emitted */
        t0 = sotto__now_ms();
        st = sotto__decode_state(ctx, &tok, 1, n - 1);
        if (!st) st = next_token(ctx, p.suppress, false, &tok);
        s.steps_ms += sotto__now_ms() - t0;
        s.n_steps++;
    }
    *n_out = n;
    if (stats) *stats = s;
    return st;
}

sotto_transcribe_params sotto_transcribe_params_default(void)
{
    return (sotto_transcribe_params){.language = NULL, .translate = 0};
}

sotto_status sotto_detokenize(const sotto_model *m, const int32_t *ids, int n_ids, char **text)
{
    *text = NULL;
    size_t total = 1;
    for (int i = 0; i < n_ids; i++) {
        size_t len = 0;
        if (ids[i] >= 0 && ids[i] < m->info.token_eot && sotto_token_bytes(m, ids[i], &len)) total += len;
    }
    char *s = malloc(total);
    if (!s) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "detokenize: out of memory"});
    size_t o = 0;
    for (int i = 0; i < n_ids; i++) {
        size_t len = 0;
        const char *b = ids[i] >= 0 && ids[i] < m->info.token_eot ? sotto_token_bytes(m, ids[i], &len) : NULL;
        if (b) memcpy(s + o, b, len), o += len;
    }
    s[o] = 0;
    *text = s;
    return SOTTO_OK;
}

/* Appends the text of one window to *ACC (space-joined, surrounding spaces trimmed as
 * the reference's result.text.strip()). */
static bool append_trimmed(char **acc, size_t *len, const char *t)
{
    while (*t == ' ' || *t == '\n') t++;
    size_t n = strlen(t);
    while (n && (t[n - 1] == ' ' || t[n - 1] == '\n')) n--;
    if (!n) return true;
    char *p = realloc(*acc, *len + n + 2);
    if (!p) return false;
    if (*len) p[(*len)++] = ' ';
    memcpy(p + *len, t, n);
    *len += n;
    p[*len] = 0;
    *acc = p;
    return true;
}

sotto_status sotto_transcribe(sotto_context *ctx, const float *samples, int64_t n_samples,
                              const sotto_transcribe_params *params, char **text)
{
    if (!ctx || !text || n_samples < 0 || (n_samples && !samples)) return SOTTO_ERR_INVALID_ARG;
    *text = NULL;
    const sotto_model *m = ctx->model;
    const sotto_model_info *h = &m->info;
    sotto_transcribe_params p = params ? *params : sotto_transcribe_params_default();
    int32_t lang = -1;
    if (h->multilingual) {
        lang = sotto_language_token(m, p.language ? p.language : "en");
        if (lang < 0) return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "unknown language '%s'", p.language);
    } else if ((p.language && strcmp(p.language, "en") != 0) || p.translate) {
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "this model is English-only: no language or translation");
    }
    int32_t prefix[4];
    int n_prefix = default_prefix(m, lang, p.translate, prefix);
    size_t mel_n = (size_t)h->n_mels * SOTTO_N_FRAMES;
    float *mel = malloc(mel_n * sizeof *mel);
    int32_t *ids = malloc((size_t)h->n_text_ctx * sizeof *ids);
    char *acc = calloc(1, 1);
    size_t acc_len = 0;
    sotto_status st = mel && ids && acc ? SOTTO_OK : sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "out of memory");
    int64_t start = 0;
    do {
        int64_t len = n_samples - start < SOTTO_N_SAMPLES ? n_samples - start : SOTTO_N_SAMPLES;
        if (!st && sotto_mel_window(samples + start, len, h->n_mels, mel) != SOTTO_OK)
            st = sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "mel: %s", sotto_last_error());
        if (!st) st = sotto_encode(ctx, mel, (int64_t)mel_n);
        sotto_greedy_params g = {.prefix = prefix, .n_prefix = n_prefix, .max_new_tokens = h->n_text_ctx / 2,
                                 .suppress = 1};
        int n_ids = 0;
        if (!st) st = sotto_greedy(ctx, &g, ids, &n_ids, NULL);
        char *t = NULL;
        if (!st && sotto_detokenize(m, ids + n_prefix, n_ids - n_prefix, &t) != SOTTO_OK)
            st = sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "out of memory");
        if (!st && !append_trimmed(&acc, &acc_len, t)) st = sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "out of memory");
        free(t);
        start += SOTTO_N_SAMPLES;
    } while (!st && start < n_samples);
    free(mel);
    free(ids);
    if (st) {
        free(acc);
        return st;
    }
    *text = acc;
    return SOTTO_OK;
}
