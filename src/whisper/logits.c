/* logits.c — the reference's logit filters (logits.h), mirroring openai/whisper
 * decoding.py line by line: SuppressBlank at the first sampled step, SuppressTokens, then
 * ApplyTimestampRules (no <|notimestamps|>; timestamps in pairs but for the one before
 * <|endoftext|>; never decreasing, each segment of nonzero length; only timestamps, up to
 * max_initial_timestamp, first; only timestamps when their summed probability beats every
 * text token's). */
#include "logits.h"

#include <math.h>

static void mask(float *logits, int from, int to)
{
    for (int i = from; i < to; i++) logits[i] = -INFINITY;
}

static void mask_list(float *logits, const sotto__i32list *l, int n_vocab)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] >= 0 && l->v[i] < n_vocab) logits[l->v[i]] = -INFINITY;
}

double sotto__logsumexp(const float *x, int n)
{
    float m = -INFINITY;
    for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    if (m == -INFINITY) return -INFINITY;
    double s = 0;
    for (int i = 0; i < n; i++) s += exp((double)x[i] - m);
    return m + log(s);
}

int sotto__argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

double sotto__softmax_at(const float *x, int n, int i) { return exp((double)x[i] - sotto__logsumexp(x, n)); }

/* ApplyTimestampRules.apply for one sequence. */
static void timestamp_rules(const sotto__rules *r, const int32_t *seq, int n, float *logits)
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
    double ts_mass = sotto__logsumexp(logits + tb, V - tb);
    float text_max = -INFINITY;
    for (int i = 0; i < tb; i++) text_max = logits[i] > text_max ? logits[i] : text_max;
    if (ts_mass > text_max) mask(logits, 0, tb);
}

void sotto__rules_apply(const sotto__rules *r, const int32_t *sampled, int n, float *logits)
{
    if (r->suppress_blank && n == 0) mask_list(logits, &r->blank, r->n_vocab);
    mask_list(logits, &r->suppress, r->n_vocab);
    if (r->timestamps) timestamp_rules(r, sampled, n, logits);
}
