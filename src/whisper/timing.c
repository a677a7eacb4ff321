/* timing.c — word timestamps of a window as openai/whisper 20250625 timing.py makes them:
 * find_alignment (the sequence sot, <|notimestamps|>, text, <|endoftext|> decoded in one
 * pass over the window's resident cross K/V; the alignment heads' scores (q dh^-1/4) .
 * (k dh^-1/4) computed on the host from the queries and keys read back, so every backend
 * serves it; the text tokens' probabilities), then add_word_timestamps. */
#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "words.h"

enum { MEDFILT_WIDTH = 7 };

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

bool sotto__alignment_heads(const sotto_model *m, int **out, int *n)
{
    const int L = m->info.n_text_layer, H = m->info.n_text_head;
    const sotto__i32list *a = &m->alignment_heads;
    bool valid = a->n >= 2 && a->n % 2 == 0; /* in range: the loader checked (model.c) */
    int count = valid ? a->n / 2 : (L - L / 2) * H;
    int *p = malloc((size_t)(count ? count : 1) * 2 * sizeof *p);
    if (!p) return false;
    if (valid) {
        for (int i = 0; i < a->n; i++) p[i] = a->v[i];
    } else {
        for (int l = L / 2, k = 0; l < L; l++)
            for (int h = 0; h < H; h++, k += 2) p[k] = l, p[k + 1] = h;
    }
    qsort(p, (size_t)count, 2 * sizeof *p, cmp_pair); /* as torch's sparse indices() */
    *out = p, *n = count;
    return true;
}

/* PROB[i] = softmax(logits[n_sot + i, :eot])[TEXT[i]] for the N_TEXT text tokens, in
 * float32 as the reference (after sotto__decoder_forward_all). */
static sotto_status text_probs(sotto_context *ctx, int n_sot, const int32_t *text, int n_text, double *prob)
{
    const int V = ctx->dec.n_vocab, eot = ctx->model->info.token_eot;
    sotto__backend *be = ctx->be;
    sotto__err err = {0};
    if (!ctx->have_words_logits) {
        if (be->ops->alloc(be, (size_t)SOTTO__WORDS_ROWS * V * sizeof(float), &ctx->words_logits, &err))
            return sotto__ctx_fail(ctx, err.status, "word timestamps: %s", err.msg);
        ctx->have_words_logits = true;
    }
    float *host = NULL;
    for (int r0 = 0; r0 < n_text; r0 += SOTTO__WORDS_ROWS) {
        int nr = n_text - r0 < SOTTO__WORDS_ROWS ? n_text - r0 : SOTTO__WORDS_ROWS;
        sotto__decoder_logits_rows(&ctx->dec, n_sot + r0, nr, ctx->words_logits);
        const float *lg = be->ops->host(be, ctx->words_logits);
        if (!lg) {
            if (!host && !(host = malloc((size_t)SOTTO__WORDS_ROWS * V * sizeof *host)))
                return sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "word timestamps: out of memory");
            be->ops->read(be, host, ctx->words_logits, (size_t)nr * V * sizeof *host);
            lg = host;
        }
        for (int r = 0; r < nr; r++) {
            const float *z = lg + (size_t)r * V;
            float mx = -INFINITY;
            double sum = 0; /* in double: a float sum of 50k terms drops the small ones */
            for (int v = 0; v < eot; v++) mx = z[v] > mx ? z[v] : mx;
            for (int v = 0; v < eot; v++) sum += expf(z[v] - mx);
            prob[r0 + r] = (double)(expf(z[text[r0 + r]] - mx) * (float)(1.0 / sum));
        }
    }
    free(host);
    return SOTTO_OK;
}

/* QK [H, T, M]: the scores of the H alignment heads HEADS for the T tokens, frames
 * [0, M), from the queries Q ([n_layer][T][d], the wanted layers filled). */
static sotto_status head_scores(sotto_context *ctx, const int *heads, int H, const float *q, int T, int M, float *qk)
{
    const int d = ctx->dec.d, dh = d / ctx->dec.n_head, S = ctx->dec.n_audio;
    const float scale = (float)pow((double)dh, -0.25);
    float *k = malloc((size_t)S * dh * sizeof *k), *qs = malloc((size_t)dh * sizeof *qs);
    sotto_status st = k && qs ? SOTTO_OK : SOTTO_ERR_NOMEM;
    for (int a = 0; a < H && !st; a++) {
        const int l = heads[2 * a], h = heads[2 * a + 1];
        if ((st = sotto__decoder_cross_keys(&ctx->dec, l, h, k))) break;
        for (size_t i = 0; i < (size_t)M * dh; i++) k[i] *= scale;
        for (int t = 0; t < T; t++) {
            const float *qt = q + ((size_t)l * T + t) * d + (size_t)h * dh;
            for (int i = 0; i < dh; i++) qs[i] = qt[i] * scale;
            float *row = qk + ((size_t)a * T + t) * M;
            for (int s = 0; s < M; s++) {
                const float *ks = k + (size_t)s * dh;
                double acc = 0;
                for (int i = 0; i < dh; i++) acc += (double)qs[i] * ks[i];
                row[s] = (float)acc;
            }
        }
    }
    free(k), free(qs);
    return st ? sotto__ctx_fail(ctx, st, "word timestamps: %s", st == SOTTO_ERR_NOMEM ? "out of memory"
                                                                                      : "no host copy of these keys")
              : SOTTO_OK;
}

/* find_alignment: the words of TEXT [N_TEXT] with their times in the window (seconds)
 * and probabilities into *W (*N_W; none for no text). */
static sotto_status find_alignment(sotto_context *ctx, const sotto__timing_opts *o, const int32_t *text, int n_text,
                                   sotto__wtime **w, int *n_w)
{
    const sotto_model_info *h = &ctx->model->info;
    *w = NULL, *n_w = 0;
    if (n_text == 0) return SOTTO_OK;
    const int T = o->n_sot + 2 + n_text, M = o->num_frames / 2, L = h->n_text_layer;
    if (T > h->n_text_ctx)
        return sotto__ctx_fail(ctx, SOTTO_ERR_UNSUPPORTED, "word timestamps: %d tokens exceed the %d-token context", T,
                               h->n_text_ctx);
    int32_t *seq = malloc((size_t)(T + 1) * sizeof *seq);
    int *heads = NULL, H = 0;
    bool *want = calloc((size_t)L, sizeof *want);
    double *prob = malloc((size_t)n_text * sizeof *prob);
    int *jump = malloc((size_t)(n_text + 1) * sizeof *jump);
    float *q = NULL, *qk = NULL;
    sotto_status st = seq && want && prob && jump && sotto__alignment_heads(ctx->model, &heads, &H) ? SOTTO_OK
                                                                                                     : SOTTO_ERR_NOMEM;
    if (!st) {
        memcpy(seq, o->sot_seq, (size_t)o->n_sot * sizeof *seq);
        seq[o->n_sot] = h->token_notimestamps;
        memcpy(seq + o->n_sot + 1, text, (size_t)n_text * sizeof *seq);
        seq[T - 1] = h->token_eot;
        for (int a = 0; a < H; a++) want[heads[2 * a]] = true;
        q = malloc((size_t)L * T * ctx->dec.d * sizeof *q);
        qk = malloc((size_t)H * T * (M > 0 ? M : 1) * sizeof *qk);
        if (!q || !qk) st = SOTTO_ERR_NOMEM;
    }
    if (st) st = sotto__ctx_fail(ctx, st, "word timestamps: out of memory");
    if (!st) {
        ctx->have_state = ctx->have_logits = false; /* cache slot 0 and the states are overwritten */
        sotto__decoder_forward_all(&ctx->dec, seq, T, 0, want, q);
        st = text_probs(ctx, o->n_sot, text, n_text, prob);
    }
    if (!st) st = sotto__ctx_sync(ctx, "word timestamps");
    if (!st && M > 0) st = head_scores(ctx, heads, H, q, T, M, qk);
    /* DTW over the rows of <|notimestamps|> and the text (matrix[len(sot_sequence):-1]) */
    bool aligned = !st && M > 0 && sotto__align_jumps(qk, H, T, M, M, MEDFILT_WIDTH, o->n_sot, n_text + 1, jump);
    sotto__wtime *words = NULL;
    int nw = 0;
    if (aligned) {
        seq[T - 1] = h->token_eot; /* text + eot, as split_to_word_tokens is given them */
        nw = sotto__split_words(ctx->model, seq + o->n_sot + 1, n_text + 1, o->unicode_only, &words);
        if (nw < 0) st = sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "word timestamps: out of memory");
    }
    if (!st && nw > 1) {
        /* word_boundaries over every word but the last (the one of <|endoftext|>) */
        for (int i = 0, b = 0; i < nw - 1; i++) {
            int e = b + words[i].n_tokens;
            double sum = 0;
            for (int k = b; k < e; k++) sum += prob[k];
            words[i].start = jump[b] / 50.0, words[i].end = jump[e] / 50.0;
            words[i].probability = sum / (e - b);
            b = e;
        }
        free(words[nw - 1].word);
        *w = words, *n_w = nw - 1;
        words = NULL;
    }
    sotto__words_free(words, nw > 0 ? nw : 0);
    free(seq), free(heads), free(want), free(prob), free(jump), free(q), free(qk);
    return st;
}

/* Python's round(x, 2): the decimal nearest to the double, ties to even. */
static double round2(double x)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.2f", x);
    return strtod(buf, NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* np.median of the nonzero durations of W (0 for none), as a float. */
static double median_duration(const sotto__wtime *w, int n, bool *any)
{
    double *d = malloc((size_t)(n ? n : 1) * sizeof *d);
    int k = 0;
    if (!d) return NAN;
    for (int i = 0; i < n; i++)
        if (w[i].end - w[i].start != 0) d[k++] = w[i].end - w[i].start;
    *any = k > 0;
    double med = 0;
    if (k) {
        qsort(d, (size_t)k, sizeof *d, cmp_double);
        med = k % 2 ? d[k / 2] : (d[k / 2 - 1] + d[k / 2]) / 2;
    }
    free(d);
    return med;
}

/* The reference's hack: words at sentence boundaries no longer than MAX_DURATION. */
static void truncate_at_sentences(sotto__wtime *w, int n, double max_duration)
{
    static const char marks[] = ".。!！?？";
    for (int i = 1; i < n; i++) {
        if (w[i].end - w[i].start > max_duration) {
            if (sotto__py_in(w[i].word, strlen(w[i].word), marks)) w[i].end = w[i].start + max_duration;
            else if (sotto__py_in(w[i - 1].word, strlen(w[i - 1].word), marks)) w[i].start = w[i].end - max_duration;
        }
    }
}

/* The reference's segment-boundary adjustments of S's words (after a pause, and the
 * segment's own start and end preferred over too-long first and last words). */
static void adjust_segment(sotto__wseg *s, double last_speech, double median, double max_duration)
{
    sotto_word *w = s->words;
    const int n = s->n_words;
    if (w[0].end - last_speech > median * 4 &&
        (w[0].end - w[0].start > max_duration || (n > 1 && w[1].end - w[0].start > max_duration * 2))) {
        if (n > 1 && w[1].end - w[1].start > max_duration) {
            double boundary = fmax(w[1].end / 2, w[1].end - max_duration);
            w[0].end = w[1].start = boundary;
        }
        w[0].start = fmax(0, w[0].end - max_duration);
    }
    if (s->start < w[0].end && s->start - 0.5 > w[0].start)
        w[0].start = fmax(0, fmin(w[0].end - median, s->start));
    else
        s->start = w[0].start;
    if (s->end > w[n - 1].start && s->end + 0.5 < w[n - 1].end)
        w[n - 1].end = fmax(w[n - 1].start + median, s->end);
    else
        s->end = w[n - 1].end;
}

/* The segments' words from the merged alignment A [NA], in the reference's order. */
static bool assign_words(sotto__wseg *segs, int n, const int *n_text, const sotto__wtime *a, int na,
                         double time_offset, double last_speech, double median, double max_duration)
{
    int wi = 0;
    for (int si = 0; si < n; si++) {
        sotto__wseg *s = &segs[si];
        s->words = calloc((size_t)(na ? na : 1), sizeof *s->words);
        if (!s->words) return false;
        for (int saved = 0; wi < na && saved < n_text[si]; wi++) {
            if (a[wi].word[0]) {
                char *word = strdup(a[wi].word);
                if (!word) return false;
                s->words[s->n_words++] = (sotto_word){.word = word, .start = round2(time_offset + a[wi].start),
                                                      .end = round2(time_offset + a[wi].end),
                                                      .probability = a[wi].probability};
            }
            saved += a[wi].n_tokens;
        }
        if (s->n_words > 0) {
            adjust_segment(s, last_speech, median, max_duration);
            last_speech = s->end;
        }
    }
    return true;
}

sotto_status sotto__add_word_timestamps(sotto_context *ctx, const sotto__timing_opts *o, sotto__wseg *segs, int n,
                                        double last_speech)
{
    if (n <= 0) return SOTTO_OK;
    const int32_t eot = ctx->model->info.token_eot;
    int total = 0;
    for (int i = 0; i < n; i++) total += segs[i].n_tokens;
    int32_t *text = malloc((size_t)(total ? total : 1) * sizeof *text);
    int *n_text = calloc((size_t)n, sizeof *n_text);
    if (!text || !n_text) {
        free(text), free(n_text);
        return sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "word timestamps: out of memory");
    }
    int nt = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < segs[i].n_tokens; k++)
            if (segs[i].tokens[k] < eot) text[nt++] = segs[i].tokens[k], n_text[i]++;
    sotto__wtime *a = NULL;
    int na = 0;
    sotto_status st = find_alignment(ctx, o, text, nt, &a, &na);
    if (!st) {
        bool any = false;
        double median = median_duration(a, na, &any);
        if (isnan(median)) st = SOTTO_ERR_NOMEM;
        median = fmin(0.7, median);
        const double max_duration = median * 2;
        if (!st && any) truncate_at_sentences(a, na, max_duration);
        const char *pre = o->prepend ? o->prepend : "\"'“¿([{-";
        const char *app = o->append ? o->append : "\"'.。,，!！?？:：”)]}、";
        if (!st && !sotto__merge_punctuations(a, na, pre, app)) st = SOTTO_ERR_NOMEM;
        if (!st && !assign_words(segs, n, n_text, a, na, (double)(o->seek * 160) / 16000.0, last_speech, median,
                                 max_duration))
            st = SOTTO_ERR_NOMEM;
        if (st) st = sotto__ctx_fail(ctx, st, "word timestamps: out of memory");
    }
    sotto__words_free(a, na);
    free(text), free(n_text);
    return st;
}

void sotto__wseg_free(sotto__wseg *s)
{
    for (int i = 0; s->words && i < s->n_words; i++) free((void *)s->words[i].word);
    free(s->words);
    s->words = NULL, s->n_words = 0;
}
