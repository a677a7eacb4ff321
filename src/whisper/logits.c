/* logits.c — the reference's logit filters (logits.h), mirroring openai/whisper
 * decoding.py line by line: SuppressBlank at the first sampled step, SuppressTokens, then
 * ApplyTimestampRules (no <|notimestamps|>; timestamps in pairs but for the one before
 * <|endoftext|>; never decreasing, each segment of nonzero length; only timestamps, up to
 * max_initial_timestamp, first; only timestamps when their summed probability beats every
 * text token's). The row math (maximum, sums of exponentials) is the backend's
 * (backend.h row_max, row_exp_sum): the context's, on the host's fastest lanes. Before
 * them, faster-whisper's repetition_penalty and no_repeat_ngram_size as CTranslate2
 * applies them (sotto__penalties_apply). */
#include "logits.h"

#include <math.h>
#include <string.h>

static void mask(float *logits, int from, int to)
{
    for (int i = from; i < to; i++) logits[i] = -INFINITY;
}

static void mask_list(float *logits, const sotto__i32list *l, int n_vocab)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] >= 0 && l->v[i] < n_vocab) logits[l->v[i]] = -INFINITY;
}

double sotto__logsumexp_max(sotto__backend *be, const float *x, int n, float m)
{
    if (isnan(m)) m = be->ops->row_max(be, x, n);
    if (m == -INFINITY) return -INFINITY;
    return m + log(be->ops->row_exp_sum(be, x, n, m, 1.0f, NULL));
}

double sotto__logsumexp(sotto__backend *be, const float *x, int n) { return sotto__logsumexp_max(be, x, n, NAN); }

double sotto__exp_weights(sotto__backend *be, const float *x, int n, float scale, float *w)
{
    float m = be->ops->row_max(be, x, n);
    if (m == -INFINITY) {
        for (int i = 0; i < n; i++) w[i] = 0.0f;
        return 0.0;
    }
    return be->ops->row_exp_sum(be, x, n, m, scale, w);
}

int sotto__argmax_max(sotto__backend *be, const float *x, int n, float m)
{
    if (n <= 0 || isnan(x[0])) return 0; /* the scalar loop keeps index 0 then */
    if (isnan(m)) m = be->ops->row_max(be, x, n);
    for (int i = 0; i < n; i++)
        if (x[i] == m) return i;
    return 0;
}

int sotto__argmax(sotto__backend *be, const float *x, int n) { return sotto__argmax_max(be, x, n, NAN); }

double sotto__softmax_at(sotto__backend *be, const float *x, int n, int i)
{
    return exp((double)x[i] - sotto__logsumexp(be, x, n));
}

/* ApplyTimestampRules.apply for one sequence; returns the largest of the filtered row. */
static float timestamp_rules(sotto__backend *be, const sotto__rules *r, const int32_t *seq, int n, float *logits)
{
    const int V = r->n_vocab, tb = r->ts_begin;
    if (r->no_timestamps >= 0) logits[r->no_timestamps] = -INFINITY;
    bool last_ts = n >= 1 && seq[n - 1] >= tb;
    bool penultimate_ts = n < 2 || seq[n - 2] >= tb;
    if (last_ts) {
        if (penultimate_ts) mask(logits, tb, V); /* has to be a non-timestamp */
        else mask(logits, 0, r->eot);            /* cannot be normal text */
    }
    int32_t ts_last = -1;
    for (int i = 0; i < n; i++)
        if (seq[i] >= tb) ts_last = seq[i];
    if (ts_last >= 0) {
        /* never decreasing; a segment has nonzero length unless this closes a pair */
        int upto = last_ts && !penultimate_ts ? ts_last : ts_last + 1;
        mask(logits, tb, upto < V ? upto : V);
    }
    if (n == 0) {
        mask(logits, 0, tb);
        if (r->max_initial >= 0 && tb + r->max_initial + 1 < V) mask(logits, tb + r->max_initial + 1, V);
    }
    /* the log-softmax's normaliser cancels: compare log-sum-exp of the timestamps with the
     * best text-or-special logit */
    float ts_max = be->ops->row_max(be, logits + tb, V - tb), text_max = be->ops->row_max(be, logits, tb);
    if (sotto__logsumexp_max(be, logits + tb, V - tb, ts_max) > text_max) {
        mask(logits, 0, tb);
        return ts_max;
    }
    return ts_max > text_max ? ts_max : text_max; /* row_max's: the first of equal maxima */
}

float sotto__rules_apply(sotto__backend *be, const sotto__rules *r, const int32_t *sampled, int n, bool prefixed,
                        float *logits)
{
    if (r->suppress_blank && n == 0) mask_list(logits, &r->blank, r->n_vocab);
    mask_list(logits, &r->suppress, r->n_vocab);
    if (!r->timestamps) return NAN;
    if (prefixed && n == 0) { /* CTranslate2: no rule at the step after a prefix but this one */
        if (r->no_timestamps >= 0) logits[r->no_timestamps] = -INFINITY;
        return NAN;
    }
    return timestamp_rules(be, r, sampled, n, logits);
}

void sotto__penalties_apply(const sotto__rules *r, const int32_t *gen, int n, float *logits)
{
    const float pen = r->repetition_penalty;
    if (n > 0 && pen > 0 && pen != 1) {
        for (int j = 0; j < n; j++) { /* penalize_previous_tokens: each token once, from its own logit */
            bool seen = false;
            for (int k = 0; k < j && !seen; k++) seen = gen[k] == gen[j];
            if (seen || gen[j] < 0 || gen[j] >= r->n_vocab) continue;
            float x = logits[gen[j]];
            logits[gen[j]] = x < 0 ? x * pen : x / pen;
        }
    }
    const int g = r->no_repeat_ngram;
    if (g <= 0 || n < g) return;
    const int32_t *tail = gen + n - (g - 1); /* the n-gram's first g - 1 tokens, if it went on now */
    for (int i = 0; i + g <= n; i++)
        if (memcmp(gen + i, tail, (size_t)(g - 1) * sizeof *gen) == 0) {
            int32_t t = gen[i + g - 1];
            if (t >= 0 && t < r->n_vocab) logits[t] = -INFINITY;
        }
}
