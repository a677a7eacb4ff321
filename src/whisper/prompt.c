/* prompt.c — faster-whisper's additions to a window's prompt (prompt.h): prompt text to
 * tokens, clip_timestamps to frame ranges, and the token cap CTranslate2 derives from
 * max_length = len(prompt) + max_new_tokens (models/whisper.cc: min(max_length / 2,
 * max_length - start_step), the prefix counted among the decoded tokens). */
#include "prompt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

sotto_status sotto__prompt_tokens(sotto_context *ctx, const char *text, int max, const char *what, int32_t **ids,
                                  int *n)
{
    *ids = NULL, *n = 0;
    size_t a, len;
    sotto__strip(text, strlen(text), &a, &len);
    char *s = malloc(len + 2);
    if (!s) return sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "%s: out of memory", what);
    s[0] = ' ';
    memcpy(s + 1, text + a, len);
    s[len + 1] = 0;
    int need = 0;
    sotto_status st = sotto_tokenize(ctx->model, s, NULL, 0, &need);
    int32_t *t = st ? NULL : malloc((size_t)(need ? need : 1) * sizeof *t);
    if (!st && !t) st = SOTTO_ERR_NOMEM;
    if (!st) st = sotto_tokenize(ctx->model, s, t, need, &need);
    free(s);
    if (st) {
        free(t);
        int unused; /* invalid UTF-8: the message again from TEXT, its byte counted there, not in " " + TEXT */
        if (st != SOTTO_ERR_NOMEM) (void)sotto_tokenize(ctx->model, text, NULL, 0, &unused);
        return sotto__ctx_fail(ctx, st, "%s: %s", what, st == SOTTO_ERR_NOMEM ? "out of memory" : sotto_last_error());
    }
    *ids = t;
    *n = max >= 0 && need > max ? max : need;
    return SOTTO_OK;
}

sotto_status sotto__clips(sotto_context *ctx, const double *ts, int n, int64_t content, sotto__clip **out,
                          int *n_out)
{
    *out = NULL, *n_out = 0;
    if (n < 0 || (n > 0 && !ts)) return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "clip_timestamps: %d times", n);
    int n_clips = n > 0 ? (n + 1) / 2 : 1;
    sotto__clip *c = malloc((size_t)n_clips * sizeof *c);
    if (!c) return sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "clip_timestamps: out of memory");
    c[0] = (sotto__clip){0, content};
    for (int i = 0; i < n; i++) {
        if (!(ts[i] >= 0 && ts[i] < 1e9)) {
            free(c);
            return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "clip_timestamps: time %g (seconds, a number >= 0)",
                                   ts[i]);
        }
        int64_t frame = (int64_t)nearbyint(ts[i] * 100); /* Python's round(): half to even */
        if (i % 2 == 0) c[i / 2] = (sotto__clip){frame, content};
        else c[i / 2].end = frame;
    }
    *out = c, *n_out = n_clips;
    return SOTTO_OK;
}

int sotto__clip_window(const sotto__clip *clips, int n_clips, int *clip, int64_t content, int64_t *seek)
{
    while (*clip < n_clips) {
        int64_t start = clips[*clip].start, end = clips[*clip].end < content ? clips[*clip].end : content;
        if (*seek < start) *seek = start;
        if (*seek >= end) {
            if (++*clip < n_clips) *seek = clips[*clip].start;
            continue;
        }
        return (int)(end - *seek < SOTTO_N_FRAMES ? end - *seek : SOTTO_N_FRAMES);
    }
    return 0;
}

int sotto__sample_len(int sample_len, int max_new_tokens, bool ct2, int n_prefix, int n_before_prefix, int n_ctx)
{
    if (max_new_tokens <= 0 && !ct2) return sample_len;
    int total = max_new_tokens > 0 ? n_before_prefix + n_prefix + max_new_tokens : n_ctx;
    if (total > n_ctx) return -1;
    int cap = total / 2 < total - (n_before_prefix - 1) ? total / 2 : total - (n_before_prefix - 1);
    cap = cap > n_prefix ? cap - n_prefix : 0;
    return max_new_tokens > 0 || cap < sample_len ? cap : sample_len;
}
