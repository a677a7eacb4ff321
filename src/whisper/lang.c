/* lang.c — language detection as the reference's detect_language: one decoder pass over
 * <|startoftranscript|>, every logit but the language tokens' set to -inf, the argmax and
 * the softmax of what is left. */
#include "lang.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../audio/melfile.h"
#include "logits.h"

/* The language tokens' logits after <|startoftranscript|> on the window last encoded. */
static sotto_status language_logits(sotto_context *ctx, int slot, const float **lang)
{
    const sotto_model_info *h = &ctx->model->info;
    if (!h->multilingual || h->n_languages < 1)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "this model has no language tokens to detect with");
    int32_t sot = h->token_sot;
    sotto_status st = sotto__decode_in(ctx, slot, &sot, 1, 0);
    const float *logits = st ? NULL : sotto_logits(ctx);
    if (!logits) return st ? st : sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "language detection: no logits");
    *lang = logits + h->token_lang_first;
    return SOTTO_OK;
}

sotto_status sotto__language_probs(sotto_context *ctx, float *probs)
{
    const float *lang = NULL;
    sotto_status st = language_logits(ctx, 0, &lang);
    if (st) return st;
    const int n = ctx->model->info.n_languages;
    double lse = sotto__logsumexp(ctx->be, lang, n);
    for (int i = 0; i < n; i++) probs[i] = (float)exp((double)lang[i] - lse);
    return SOTTO_OK;
}

sotto_status sotto__detect_language(sotto_context *ctx, int32_t *token, double *prob)
{
    return sotto__detect_language_in(ctx, 0, token, prob);
}

sotto_status sotto__detect_language_in(sotto_context *ctx, int slot, int32_t *token, double *prob)
{
    const sotto_model_info *h = &ctx->model->info;
    const float *lang = NULL;
    sotto_status st = language_logits(ctx, slot, &lang);
    if (st) return st;
    int best = sotto__argmax(ctx->be, lang, h->n_languages);
    *token = h->token_lang_first + best;
    *prob = sotto__softmax_at(ctx->be, lang, h->n_languages, best);
    return SOTTO_OK;
}

bool sotto__language_code(const sotto_model *m, int32_t token, char *out, size_t cap)
{
    const sotto_model_info *h = &m->info;
    if (!h->multilingual || token < h->token_lang_first || token >= h->token_lang_first + h->n_languages) return false;
    size_t len = 0;
    const char *s = sotto_token_bytes(m, token, &len);
    if (!s || len < 5 || len - 4 >= cap || memcmp(s, "<|", 2) != 0) return false;
    memcpy(out, s + 2, len - 4);
    out[len - 4] = 0;
    return true;
}

/* Encodes the first 30 s of the whole-file log-mel of SAMPLES on CTX: with CONTENT_ONLY
 * its frames of audio alone, zeros after them (faster-whisper's pad_or_trim of the
 * features), else the frames of the padding too (openai's pad_or_trim(mel)). */
static sotto_status encode_first(sotto_context *ctx, const float *samples, int64_t n_samples, bool content_only)
{
    const sotto_model_info *h = &ctx->model->info;
    sotto__melfile *mf = NULL;
    /* the whole file's log-mel, as transcribe() floors it over all of it, then its first 30 s */
    sotto_status st = sotto__melfile_new(h->n_mels, &mf);
    if (!st) st = sotto__melfile_push(mf, samples, n_samples);
    if (!st) st = sotto__melfile_finish(mf);
    if (st) {
        sotto__melfile_free(mf);
        return sotto__ctx_fail(ctx, st, "language detection: %s", sotto_last_error());
    }
    float *mel = malloc((size_t)h->n_mels * SOTTO_N_FRAMES * sizeof *mel);
    if (!mel) {
        sotto__melfile_free(mf);
        return sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "language detection: out of memory");
    }
    int64_t content = sotto__melfile_content_frames(mf);
    sotto__melfile_window(mf, 0, content_only && content < SOTTO_N_FRAMES ? (int)content : SOTTO_N_FRAMES, mel);
    sotto__melfile_free(mf);
    st = sotto_encode(ctx, mel, (int64_t)h->n_mels * SOTTO_N_FRAMES);
    free(mel);
    return st;
}

sotto_status sotto_detect_language_probs(sotto_context *ctx, const float *samples, int64_t n_samples, float *probs,
                                         int cap, int *n_probs)
{
    if (!ctx || !probs || !n_probs || n_samples < 0 || (n_samples && !samples))
        return sotto__ctx_args(ctx, "detect_language_probs: no context, no room for the probabilities, or no samples");
    const sotto_model_info *h = &ctx->model->info;
    if (!h->multilingual || h->n_languages < 1)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "this model has no language tokens to detect with");
    if (cap < h->n_languages)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "language probabilities: room for %d, the model has %d",
                               cap, h->n_languages);
    sotto_status st = encode_first(ctx, samples, n_samples, true);
    if (!st) st = sotto__language_probs(ctx, probs);
    if (st) return st;
    *n_probs = h->n_languages;
    return SOTTO_OK;
}

sotto_status sotto_detect_language_probs_mel(sotto_context *ctx, const float *mel, int64_t n_floats, float *probs,
                                             int cap, int *n_probs)
{
    if (!ctx || !mel || !probs || !n_probs)
        return sotto__ctx_args(ctx, "detect_language_probs_mel: no context, log-mel or room for the probabilities");
    const sotto_model_info *h = &ctx->model->info;
    if (n_floats != (int64_t)h->n_mels * SOTTO_N_FRAMES)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "language probabilities: a log-mel of %lld floats, not "
                               "[%d, %d]", (long long)n_floats, h->n_mels, SOTTO_N_FRAMES);
    if (!h->multilingual || h->n_languages < 1)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "this model has no language tokens to detect with");
    if (cap < h->n_languages)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "language probabilities: room for %d, the model has %d",
                               cap, h->n_languages);
    sotto_status st = sotto_encode(ctx, mel, n_floats);
    if (!st) st = sotto__language_probs(ctx, probs);
    if (st) return st;
    *n_probs = h->n_languages;
    return SOTTO_OK;
}

sotto_status sotto_detect_language(sotto_context *ctx, const float *samples, int64_t n_samples, char *code,
                                   size_t code_cap, float *probability)
{
    if (!ctx || !code || code_cap < 1 || n_samples < 0 || (n_samples && !samples))
        return sotto__ctx_args(ctx, "detect_language: no context, no room for the code, or no samples");
    sotto_status st = encode_first(ctx, samples, n_samples, false);
    int32_t tok = -1;
    double p = 0;
    if (!st) st = sotto__detect_language(ctx, &tok, &p);
    if (st) return st;
    if (!sotto__language_code(ctx->model, tok, code, code_cap))
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "language detection: the code does not fit %zu bytes",
                               code_cap);
    if (probability) *probability = (float)p;
    return SOTTO_OK;
}
