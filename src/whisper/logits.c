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

/* Four lanes in the compiler's vector extension (the SSE registers every x86-64 has, NEON
 * on AArch64: no ABI question): a search step takes the log-sum-exp of every row of
 * logits, 51864 values, where libm's exp was a fifth of a beam-search step. */
typedef float v4f __attribute__((vector_size(16), aligned(4)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16)));

/* e^x for x <= 0 to about 2 ulp (Cody-Waite reduction by ln 2, the Taylor polynomial of
 * degree 6 on [-ln2/2, ln2/2], whose remainder is under 1.2e-7); below -87 (e^x under
 * the smallest normal float, -inf included) exactly 0. */
static v4f exp4(v4f x)
{
    const v4f floor = {-87.0f, -87.0f, -87.0f, -87.0f};
    v4i tiny = x < floor;
    x = (v4f)(((v4i)x & ~tiny) | ((v4i)floor & tiny));
    v4f k = x * 1.44269504f + 12582912.0f; /* round to nearest by the 1.5 * 2^23 bias */
    k -= 12582912.0f;
    v4f r = x - k * 0.693145751953125f - k * 1.42860682030941723e-6f;
    v4f p = r * (1.0f / 720) + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    v4i e = (__builtin_convertvector(k, v4i) + 127) << 23;
    return (v4f)((v4i)(p * (v4f)e) & ~tiny);
}

double sotto__logsumexp(const float *x, int n)
{
    float m = -INFINITY;
    for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    if (m == -INFINITY) return -INFINITY;
    v2d acc0 = {0}, acc1 = {0};
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        v4f e = exp4(*(const v4f *)(x + i) - m);
        acc0 += __builtin_convertvector(__builtin_shufflevector(e, e, 0, 1), v2d);
        acc1 += __builtin_convertvector(__builtin_shufflevector(e, e, 2, 3), v2d);
    }
    double s = 0;
    for (; i < n; i++) s += exp((double)x[i] - m);
    s += acc0[0] + acc0[1] + acc1[0] + acc1[1];
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
