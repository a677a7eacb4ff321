/* test_lazy.c — greedy windows without their log-probabilities
 * (sotto_transcribe_params.without_logprobs): a step takes the text ids' argmax through
 * the backend and the exact logits of that id, the specials and the timestamps, not every
 * logit (src/whisper/search.c lazy_logits). SOTTO_VOCAB_PROXY=1 (set here) makes the CPU
 * backend take them whatever its cache.
 *
 * For each audio file, with timestamps (with and without an initial prompt) and without:
 * the same segments (tokens, text, start, end, seek, no-speech probability) as with every
 * logit; the lazy run's avg_logprob NaN where the silence check does not read it (so the
 * lazy steps ran) and finite where it does (a window whose no-speech probability is past
 * no_speech_threshold). Beam search and a fallback's temperatures always compute them.
 *
 * usage: test_lazy MODEL [--max-s S] AUDIO...   (each AUDIO's first S seconds, 65 by default;
 *        "silence" is 12 s of zeros) */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sotto.h"

static sotto_result *run(sotto_context *ctx, const float *x, int64_t n, int timestamps, const char *prompt,
                         int lazy, int beam, bool fallback)
{
    sotto_transcribe_params p = sotto_transcribe_params_default();
    p.language = "en";
    p.timestamps = timestamps;
    p.initial_prompt = prompt;
    p.beam_size = beam;
    p.without_logprobs = lazy;
    if (!fallback) sotto_transcribe_params_temperatures(&p, 0, 0);
    sotto_result *r = NULL;
    sotto_status st = sotto_transcribe(ctx, x, n, &p, &r);
    CHECK(st == SOTTO_OK, "transcribe: %s", sotto_context_error(ctx));
    return r;
}

/* Whether A and B have the same segments but for avg_logprob. */
static bool same(const sotto_result *a, const sotto_result *b, const char *what)
{
    bool ok = a && b && a->n_segments == b->n_segments;
    CHECK(ok, "%s: %d segments against %d", what, a ? a->n_segments : -1, b ? b->n_segments : -1);
    for (int i = 0; ok && i < a->n_segments; i++) {
        const sotto_segment *s = &a->segments[i], *t = &b->segments[i];
        bool eq = s->n_tokens == t->n_tokens && memcmp(s->tokens, t->tokens, (size_t)s->n_tokens * sizeof *s->tokens) == 0 &&
                  strcmp(s->text, t->text) == 0 && s->start == t->start && s->end == t->end && s->seek == t->seek &&
                  s->temperature == t->temperature && s->compression_ratio == t->compression_ratio &&
                  (s->no_speech_prob == t->no_speech_prob || (isnan(s->no_speech_prob) && isnan(t->no_speech_prob)));
        CHECK(eq, "%s: segment %d differs: \"%s\" against \"%s\"", what, i, s->text, t->text);
        ok &= eq;
    }
    return ok;
}

int main(int argc, char **argv)
{
    int first = 2;
    double max_s = 65;
    if (argc > 3 && strcmp(argv[2], "--max-s") == 0) max_s = atof(argv[3]), first = 4;
    if (argc <= first || !(max_s > 0)) {
        fprintf(stderr, "usage: test_lazy MODEL [--max-s S] AUDIO...\n");
        return 2;
    }
    setenv("SOTTO_VOCAB_PROXY", "1", 1);
    sotto_model *m = NULL;
    if (sotto_model_load(argv[1], &m)) {
        fprintf(stderr, "test_lazy: %s\n", sotto_last_error());
        return 1;
    }
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = 2;
    cp.max_sequences = 5;
    cp.device = "cpu"; /* the backend whose few_logits SOTTO_VOCAB_PROXY=1 sets */
    sotto_context *ctx = NULL;
    if (sotto_context_init(m, &cp, &ctx)) {
        fprintf(stderr, "test_lazy: %s\n", sotto_last_error());
        return 1;
    }
    const float no_speech = sotto_transcribe_params_default().no_speech_threshold;
    int lazy_segments = 0;
    for (int f = first; f < argc; f++) {
        float *x = NULL;
        int64_t n = 0;
        if (strcmp(argv[f], "silence") == 0) {
            n = 12 * 16000;
            x = calloc((size_t)n, sizeof *x);
        } else if (sotto_audio_load(argv[f], &x, &n)) {
            fprintf(stderr, "test_lazy: %s\n", sotto_last_error());
            return 1;
        }
        if (n > (int64_t)(max_s * 16000)) n = (int64_t)(max_s * 16000);
        for (int ts = 1; ts >= 0; ts--)
            for (int pr = 0; pr < 2 - !ts; pr++) { /* the prompt with timestamps only */
                const char *prompt = pr ? "Mr. Dashwood, Elinor and Marianne." : NULL;
                char what[4200];
                snprintf(what, sizeof what, "%s, timestamps %d, prompt %d", argv[f], ts, pr);
                sotto_result *full = run(ctx, x, n, ts, prompt, 0, 1, false);
                sotto_result *lazy = run(ctx, x, n, ts, prompt, 1, 1, false);
                if (same(full, lazy, what))
                    for (int i = 0; i < lazy->n_segments; i++) {
                        const sotto_segment *s = &lazy->segments[i];
                        bool read = s->no_speech_prob > no_speech; /* the silence check reads it there */
                        CHECK(read ? isfinite(s->avg_logprob) : isnan(s->avg_logprob),
                              "%s: segment %d, no-speech probability %g: avg_logprob %g", what, i,
                              s->no_speech_prob, s->avg_logprob);
                        CHECK(isfinite(full->segments[i].avg_logprob), "%s: segment %d: every logit, avg_logprob %g",
                              what, i, full->segments[i].avg_logprob);
                        lazy_segments += !read;
                    }
                sotto_result_free(full);
                sotto_result_free(lazy);
            }
        /* beam search, and greedy with the fallback's temperatures: always the log-probabilities
         * (on the first 30 s) */
        for (int beam = 1; beam <= 5; beam += 4) {
            sotto_result *r = run(ctx, x, n < 30 * 16000 ? n : 30 * 16000, 1, NULL, 1, beam, beam == 1);
            for (int i = 0; r && i < r->n_segments; i++)
                CHECK(isfinite(r->segments[i].avg_logprob), "%s, beam %d%s: segment %d avg_logprob %g", argv[f],
                      beam, beam == 1 ? " with fallback" : "", i, r->segments[i].avg_logprob);
            sotto_result_free(r);
        }
        free(x);
    }
    CHECK(lazy_segments > 0, "no segment was decoded without its log-probabilities");
    printf("%d segments decoded without log-probabilities\n", lazy_segments);
    sotto_context_free(ctx);
    sotto_model_free(m);
    return check_summary();
}
