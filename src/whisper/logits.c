/* logits.c — the reference's logit filters (logits.h), mirroring openai/whisper
 * decoding.py line by line: SuppressBlank at the first sampled step, SuppressTokens, then
 * ApplyTimestampRules (no <|notimestamps|>; timestamps in pairs but for the one before
 * <|endoftext|>; never decreasing, each segment of nonzero length; only timestamps, up to
 * max_initial_timestamp, first; only timestamps when their summed probability beats every
 * text token's). */
#include "logits.h"

#include <math.h>
#include <string.h>

#include "../cpu/kernels.h"

static void mask(float *logits, int from, int to)
{
    for (int i = from; i < to; i++) logits[i] = -INFINITY;
}

static void mask_list(float *logits, const sotto__i32list *l, int n_vocab)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] >= 0 && l->v[i] < n_vocab) logits[l->v[i]] = -INFINITY;
}

/* The compiler's vector extension: four lanes (the SSE registers every x86-64 has, NEON
 * on AArch64: no ABI question), and on x86-64 CPUs with AVX-512 sixteen, in functions
 * built for it alone and chosen at run time. A search step takes the log-sum-exp of every
 * row of logits, 51864 values (libm's exp was a fifth of a beam-search step), and its
 * maximum, and sampling their exponentials, on the host beside the decoder.
 * Both widths do the same operations on each value (no fused multiply-adds: C11 and the
 * pragma below keep the products and sums apart), and the sums of the log-sum-exp go to
 * the same four accumulators by index mod 4 in the same order, so both give the same
 * bits. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
typedef float v4f __attribute__((vector_size(16), aligned(4)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16)));

/* e^x for x <= 0 to about 2 ulp (Cody-Waite reduction by ln 2, the Taylor polynomial of
 * degree 6 on [-ln2/2, ln2/2], whose remainder is under 1.2e-7); below -87 (e^x under
 * the smallest normal float, -inf included) exactly 0. */
#define DEFINE_EXP(NAME, VF, VI, ATTR)                                                        \
    ATTR static inline VF NAME(VF x)                                                          \
    {                                                                                         \
        VI tiny = x < -87.0f;                                                                 \
        VF floor = (VF){0} - 87.0f;                                                           \
        x = (VF)(((VI)x & ~tiny) | ((VI)floor & tiny));                                       \
        VF k = x * 1.44269504f + 12582912.0f; /* round to nearest by the 1.5 * 2^23 bias */   \
        k -= 12582912.0f;                                                                     \
        VF r = x - k * 0.693145751953125f - k * 1.42860682030941723e-6f;                      \
        VF p = r * (1.0f / 720) + 1.0f / 120;                                                 \
        p = p * r + 1.0f / 24;                                                                \
        p = p * r + 1.0f / 6;                                                                 \
        p = p * r + 0.5f;                                                                     \
        p = p * r + 1.0f;                                                                     \
        p = p * r + 1.0f;                                                                     \
        VI e = (__builtin_convertvector(k, VI) + 127) << 23;                                  \
        return (VF)((VI)(p * (VF)e) & ~tiny);                                                 \
    }
DEFINE_EXP(exp4, v4f, v4i, )

/* The larger of the lanes of M and X, lane by lane (NaN in X never taken). */
#define VMAX(VI, m, x) (m) = (__typeof__(m))((((VI)(x)) & ((x) > (m))) | (((VI)(m)) & ~((x) > (m))))

/* X[i] - M, times SCALE, e^ of it into W[i] for i from I, four at a time; the sum of the
 * W into ACC[i mod 4] (in order) when SUM. Returns where it stopped. */
static int exp_groups4(const float *x, int i, int n, float m, float scale, float *w, double acc[4])
{
    v2d a0 = {acc[0], acc[1]}, a1 = {acc[2], acc[3]};
    for (; i + 4 <= n; i += 4) {
        v4f e = exp4((*(const v4f *)(x + i) - m) * scale);
        if (w) *(v4f *)(w + i) = e;
        a0 += __builtin_convertvector(__builtin_shufflevector(e, e, 0, 1), v2d);
        a1 += __builtin_convertvector(__builtin_shufflevector(e, e, 2, 3), v2d);
    }
    acc[0] = a0[0], acc[1] = a0[1], acc[2] = a1[0], acc[3] = a1[1];
    return i;
}

static float max_groups4(const float *x, int *i, int n, float m)
{
    v4f v = (v4f){0} + m;
    for (; *i + 4 <= n; *i += 4) VMAX(v4i, v, *(const v4f *)(x + *i));
    for (int l = 0; l < 4; l++) m = v[l] > m ? v[l] : m;
    return m;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define WIDE 1
typedef float v16f __attribute__((vector_size(64), aligned(4)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef double v4d __attribute__((vector_size(32)));
#define AVX512 __attribute__((target("avx512f")))
DEFINE_EXP(exp16, v16f, v16i, AVX512)

AVX512 static int exp_groups16(const float *x, int n, float m, float scale, float *w, double acc[4])
{
    v4d a = {acc[0], acc[1], acc[2], acc[3]};
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        v16f e = exp16((*(const v16f *)(x + i) - m) * scale);
        if (w) *(v16f *)(w + i) = e;
        a += __builtin_convertvector(__builtin_shufflevector(e, e, 0, 1, 2, 3), v4d);
        a += __builtin_convertvector(__builtin_shufflevector(e, e, 4, 5, 6, 7), v4d);
        a += __builtin_convertvector(__builtin_shufflevector(e, e, 8, 9, 10, 11), v4d);
        a += __builtin_convertvector(__builtin_shufflevector(e, e, 12, 13, 14, 15), v4d);
    }
    acc[0] = a[0], acc[1] = a[1], acc[2] = a[2], acc[3] = a[3];
    return i;
}

AVX512 static float max_groups16(const float *x, int *i, int n, float m)
{
    v16f v = (v16f){0} + m;
    for (; *i + 16 <= n; *i += 16) VMAX(v16i, v, *(const v16f *)(x + *i));
    for (int l = 0; l < 16; l++) m = v[l] > m ? v[l] : m;
    return m;
}

/* Where the kernels are the avx512 set (this CPU has it and SOTTO_KERNELS does not say
 * otherwise). */
static bool wide(void) { return strcmp(sotto__kernels_get()->name, "avx512") == 0; }
#endif

/* The largest of X[0 .. n) (NaN skipped; -inf when none), the sign of a zero as the
 * scalar loop gives it. */
static float max_of(const float *x, int n)
{
    float m = -INFINITY;
    int i = 0;
#ifdef WIDE
    if (wide()) m = max_groups16(x, &i, n, m);
#endif
    m = max_groups4(x, &i, n, m);
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    if (m == 0) /* which zero comes first */
        for (i = 0, m = -INFINITY; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

/* sum e^((X[i] - M) SCALE) over i < N, in double, by index mod 4 in order (then the tail);
 * W[i] gets each term (as float) when W is not NULL. */
static double exp_sum(const float *x, int n, float m, float scale, float *w)
{
    double acc[4] = {0};
    int i = 0;
#ifdef WIDE
    if (wide()) i = exp_groups16(x, n, m, scale, w, acc);
#endif
    i = exp_groups4(x, i, n, m, scale, w, acc);
    double s = 0;
    for (; i < n; i++) {
        double e = exp(((double)x[i] - m) * scale);
        if (w) w[i] = (float)e;
        s += e;
    }
    return s + (acc[0] + acc[1] + acc[2] + acc[3]);
}

double sotto__logsumexp(const float *x, int n)
{
    float m = max_of(x, n);
    if (m == -INFINITY) return -INFINITY;
    return m + log(exp_sum(x, n, m, 1.0f, NULL));
}

double sotto__exp_weights(const float *x, int n, float scale, float *w)
{
    float m = max_of(x, n);
    if (m == -INFINITY) {
        for (int i = 0; i < n; i++) w[i] = 0.0f;
        return 0.0;
    }
    return exp_sum(x, n, m, scale, w);
}

int sotto__argmax(const float *x, int n)
{
    if (n <= 0 || isnan(x[0])) return 0; /* the scalar loop keeps index 0 then */
    float m = max_of(x, n);
    for (int i = 0; i < n; i++)
        if (x[i] == m) return i;
    return 0;
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
    if (ts_mass > max_of(logits, tb)) mask(logits, 0, tb);
}

void sotto__rules_apply(const sotto__rules *r, const int32_t *sampled, int n, float *logits)
{
    if (r->suppress_blank && n == 0) mask_list(logits, &r->blank, r->n_vocab);
    mask_list(logits, &r->suppress, r->n_vocab);
    if (r->timestamps) timestamp_rules(r, sampled, n, logits);
}
