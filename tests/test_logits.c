/* test_logits.c — the logit rules of src/whisper/logits.c on a small vocabulary, case by
 * case as openai/whisper decoding.py states them, and the vectorised log-sum-exp against
 * libm in double. Vocabulary: text 0..9, <|endoftext|> 10, <|notimestamps|> 11,
 * timestamps 12..19. Also when the CPU backend makes its vocabulary proxy (the greedy
 * argmax's shortcut): on the first argmax. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "backend.h"
#include "whisper/logits.h"
#include "whisper/prompt.h"

static sotto__backend *be; /* whose row math the rules use: the CPU's, of this machine's best set */

/* A backend on DEVICE through the registry, for the row math alone. */
static sotto__backend *open_backend(const char *device)
{
    sotto__backend_config cfg = {.n_threads = 1, .index = -1,
                                 .lim = {.max_rows = 1, .max_in = 32, .max_keys = 1, .max_heads = 1, .max_dh = 32,
                                         .cross_type = SOTTO_TYPE_F32, .cross_keys = 1, .vocab_in = 32}};
    sotto__backend *b = NULL;
    char desc[320];
    sotto__err err = {0};
    if (sotto__backend_open(device, &cfg, &b, desc, sizeof desc, &err)) {
        fprintf(stderr, "test_logits: %s\n", err.msg);
        exit(1);
    }
    return b;
}

enum { V = 20, EOT = 10, NOTS = 11, TB = 12 };

static int32_t blank_ids[] = {3, EOT}, suppress_ids[] = {7};

static sotto__rules rules(void)
{
    return (sotto__rules){.n_vocab = V, .eot = EOT, .ts_begin = TB, .no_timestamps = NOTS,
                          .suppress = {suppress_ids, 1}, .suppress_blank = true, .blank = {blank_ids, 2},
                          .timestamps = true, .max_initial = 2};
}

/* Applies the rules after SEQ to logits where text and eot (3) outweigh the timestamps
 * (0: their summed mass never wins) and returns which ids stay finite. */
static void allowed(const int32_t *seq, int n, float *logits, bool *ok)
{
    sotto__rules r = rules();
    for (int i = 0; i < V; i++) logits[i] = i < TB ? 3.0f : 0.0f;
    sotto__rules_apply(be, &r, seq, n, false, logits);
    for (int i = 0; i < V; i++) ok[i] = isfinite(logits[i]);
}

static int count_finite(const float *x)
{
    int c = 0;
    for (int i = 0; i < V; i++) c += isfinite(x[i]);
    return c;
}

static int count(const bool *ok, int from, int to)
{
    int c = 0;
    for (int i = from; i < to; i++) c += ok[i];
    return c;
}

/* CTranslate2's RepetitionPenalty and NoRepeatNgram (sotto__penalties_apply) on the
 * generated tokens: each distinct one penalised once, from its own logit; a token that
 * would repeat an n-gram masked; nothing with no tokens or both off. */
static void test_penalties(void)
{
    sotto__rules r = rules();
    r.repetition_penalty = 2.0f;
    float L[V];
    for (int i = 0; i < V; i++) L[i] = (float)i - 5.0f; /* 2 -> -3, 6 -> 1 */
    int32_t gen[] = {2, 6, 2, 6, 6};
    sotto__penalties_apply(&r, gen, 5, L);
    CHECK(L[2] == -6.0f && L[6] == 0.5f, "a negative logit doubled, a positive halved, once each: %g %g", L[2], L[6]);
    CHECK(L[3] == -2.0f && L[7] == 2.0f, "tokens not generated untouched");
    for (int i = 0; i < V; i++) L[i] = 1.0f;
    sotto__penalties_apply(&r, gen, 0, L);
    CHECK(L[2] == 1.0f, "no generated tokens: nothing");
    r.repetition_penalty = 1.0f, r.no_repeat_ngram = 2;
    int32_t g2[] = {4, 5, 1, 4}; /* "4 5" seen: after 4, 5 is banned */
    sotto__penalties_apply(&r, g2, 4, L);
    CHECK(isinf(L[5]) && L[5] < 0 && L[1] == 1.0f && L[4] == 1.0f, "the bigram 4 5 cannot come again");
    for (int i = 0; i < V; i++) L[i] = 1.0f;
    r.no_repeat_ngram = 3;
    int32_t g3[] = {4, 5, 6, 4, 5}; /* 4 5 6 seen, the tail is 4 5: 6 banned */
    sotto__penalties_apply(&r, g3, 5, L);
    CHECK(isinf(L[6]) && count_finite(L) == V - 1, "the trigram 4 5 6 cannot come again");
    for (int i = 0; i < V; i++) L[i] = 1.0f;
    r.no_repeat_ngram = 1;
    sotto__penalties_apply(&r, g3, 5, L);
    CHECK(isinf(L[4]) && isinf(L[5]) && isinf(L[6]) && count_finite(L) == V - 3, "size 1: no token twice");
    for (int i = 0; i < V; i++) L[i] = 1.0f;
    r.no_repeat_ngram = 6;
    sotto__penalties_apply(&r, g3, 5, L);
    CHECK(count_finite(L) == V, "fewer tokens than the n-gram: nothing");
}

/* The CPU backend's vocabulary proxy: made by the first argmax that needs it, not when a
 * backend opens (transcription computes every logit and never asks), once for every backend
 * on the same weights (the cache below stands in for the model's derived slots), and the
 * argmax through it is the argmax of every logit. */
enum { PV = 3000, PK = 128 }; /* the proxy takes rows of a multiple of 128 */
static int proxy_makes;
static void *proxy_data;
static void (*proxy_free)(void *);

static void *test_derived(const void *owner, int slot, void *(*make)(void *), void (*free_fn)(void *), void *arg)
{
    (void)owner;
    if (slot != SOTTO__SLOT_VOCAB_PROXY) return NULL; /* no batched panels here */
    if (!proxy_data) proxy_data = make(arg), proxy_free = free_fn, proxy_makes++;
    return proxy_data;
}

static sotto__backend *open_vocab(const sotto__linear *vocab)
{
    static int owner;
    sotto__backend_config cfg = {.n_threads = 2, .index = -1,
                                 .lim = {.max_rows = 1, .max_in = PK, .max_keys = 1, .max_heads = 1, .max_dh = 32,
                                         .cross_type = SOTTO_TYPE_F32, .cross_keys = 1, .vocab_in = PK},
                                 .vocab = vocab, .cache = {test_derived, NULL, &owner}};
    sotto__backend *b = NULL;
    char desc[320];
    sotto__err err = {0};
    CHECK(sotto__backend_open("cpu", &cfg, &b, desc, sizeof desc, &err) == SOTTO_OK, "proxy: open a CPU backend");
    return b;
}

/* The argmax of backend B over W's logits for X, or -1 when an op fails. */
static int32_t argmax_on(sotto__backend *b, const float *W, const float *x)
{
    sotto__err err = {0};
    sotto__buf w, X, U;
    int32_t out = -1;
    if (b->ops->import(b, W, (size_t)PV * PK * sizeof *W, &w, &err) || b->ops->alloc(b, PK * sizeof *x, &X, &err) ||
        b->ops->alloc(b, PV * sizeof(float), &U, &err))
        return -1;
    b->ops->write(b, X, x, PK * sizeof *x);
    sotto__blinear emb = {SOTTO_TYPE_F32, w, {NULL, 0}, PV, PK};
    return b->ops->argmax(b, X, &emb, NULL, 0, U, &out) ? -1 : out;
}

static void test_proxy_on_first_argmax(void)
{
    float *W = malloc((size_t)PV * PK * sizeof *W), x[PK];
    CHECK(W != NULL, "proxy: memory");
    if (!W) return;
    unsigned r = 12345;
    for (size_t i = 0; i < (size_t)PV * PK + PK; i++) { /* W's values, then x's, in [-1, 1] */
        r = r * 1103515245u + 12345u;
        float v = (float)((r >> 9) % 2001) / 1000.0f - 1.0f;
        if (i < (size_t)PV * PK) W[i] = v;
        else x[i - (size_t)PV * PK] = v;
    }
    sotto__linear vocab = {SOTTO_TYPE_F32, W, NULL, PV, PK};
    sotto__backend *plain = open_vocab(NULL), *a = open_vocab(&vocab), *b = open_vocab(&vocab);
    CHECK(proxy_makes == 0, "proxy: no backend makes it when it opens");
    int32_t want = plain ? argmax_on(plain, W, x) : -1;
    CHECK(want >= 0 && proxy_makes == 0, "proxy: every logit's argmax without a vocabulary");
    CHECK(a && argmax_on(a, W, x) == want, "proxy: the argmax through it is every logit's");
    CHECK(proxy_makes == 1 && proxy_data != NULL, "proxy: made by the first argmax");
    CHECK(b && argmax_on(b, W, x) == want && proxy_makes == 1, "proxy: a second backend on the weights shares it");
    sotto__backend *all[] = {plain, a, b};
    for (int i = 0; i < 3; i++)
        if (all[i]) all[i]->ops->free(all[i]);
    if (proxy_data) proxy_free(proxy_data);
    free(W);
}

int main(void)
{
    test_penalties();
    test_proxy_on_first_argmax();
    float L[V];
    bool ok[V];
    be = open_backend("cpu");
    /* first step: timestamps only, at most <|0.00|> + max_initial */
    allowed(NULL, 0, L, ok);
    CHECK(count(ok, 0, TB) == 0, "first step: no text, blank or eot");
    CHECK(ok[TB] && ok[TB + 1] && ok[TB + 2] && count(ok, TB + 3, V) == 0, "first step: <|0.00|>..<|0.04|> only");
    /* after a lone timestamp at the start (penultimate counts as a timestamp): text */
    int32_t s1[] = {TB + 1};
    allowed(s1, 1, L, ok);
    CHECK(count(ok, TB, V) == 0, "after the first timestamp no timestamp");
    CHECK(ok[0] && !ok[7] && !ok[NOTS], "text allowed, suppressed and notimestamps not");
    CHECK(ok[3], "blank is suppressed at the first step only");
    /* text then a timestamp: a closing timestamp >= it or eot, no text */
    int32_t s2[] = {TB + 1, 4, TB + 3};
    allowed(s2, 3, L, ok);
    CHECK(count(ok, 0, EOT) == 0 && ok[EOT], "after text + timestamp: eot or a timestamp, no text");
    CHECK(!ok[TB + 2] && ok[TB + 3] && ok[TB + 4], "the pair may repeat the timestamp, never go back");
    /* a closed pair: text next, and later timestamps strictly after the last */
    int32_t s3[] = {TB + 1, 4, TB + 3, TB + 3, 5};
    allowed(s3, 5, L, ok);
    CHECK(ok[5] && ok[EOT], "text after a pair");
    CHECK(!ok[TB + 3] && ok[TB + 4], "timestamps after text must exceed the last one");
    /* timestamp mass beats every text token: only timestamps */
    sotto__rules r = rules();
    for (int i = 0; i < V; i++) L[i] = i >= TB ? 1.0f : 0.5f;
    int32_t s4[] = {TB, 4};
    sotto__rules_apply(be, &r, s4, 2, false, L);
    bool text = false;
    for (int i = 0; i < TB; i++) text |= isfinite(L[i]);
    CHECK(!text, "log-sum-exp of the timestamps above the best text logit: text masked");
    for (int i = 0; i < V; i++) L[i] = i >= TB ? -5.0f : (i == 2 ? 3.0f : -9.0f);
    sotto__rules_apply(be, &r, s4, 2, false, L);
    CHECK(isfinite(L[2]) && isfinite(L[TB + 1]), "a dominant text token keeps text and timestamps");
    /* after a forced prefix (faster-whisper's, CTranslate2's rules): at its first step only
     * SuppressBlank, the lists and <|notimestamps|>: text and any timestamp may follow; then
     * the timestamp rules over the tokens after the prefix alone */
    for (int i = 0; i < V; i++) L[i] = i < TB ? 3.0f : 0.0f;
    sotto__rules_apply(be, &r, NULL, 0, true, L);
    CHECK(!isfinite(L[3]) && !isfinite(L[EOT]) && !isfinite(L[7]) && !isfinite(L[NOTS]) && isfinite(L[5]) &&
              isfinite(L[TB]) && isfinite(L[V - 1]),
          "after a prefix: blank, eot, the list and <|notimestamps|> masked; text and every timestamp allowed");
    int32_t s5[] = {TB + 3};
    for (int i = 0; i < V; i++) L[i] = i < TB ? 3.0f : 0.0f;
    sotto__rules_apply(be, &r, s5, 1, true, L);
    CHECK(isfinite(L[5]) && !isfinite(L[TB + 3]) && !isfinite(L[TB + 4]),
          "a timestamp first after a prefix: text next, as a pair's second (its penultimate is itself)");
    /* a window's most sampled tokens: openai's sample_len, CTranslate2's max_length */
    CHECK(sotto__sample_len(224, 0, false, 11, 3, 448) == 224, "openai: sample_len after the prefix");
    CHECK(sotto__sample_len(224, 0, true, 11, 3, 448) == 213, "CTranslate2: 224 with the prefix counted");
    CHECK(sotto__sample_len(224, 0, true, 0, 227, 448) == 222, "CTranslate2: 448 - 226 after a long prompt");
    CHECK(sotto__sample_len(100, 0, true, 0, 3, 448) == 100, "CTranslate2: sample_len when smaller");
    CHECK(sotto__sample_len(224, 20, false, 2, 3, 448) == 10 && sotto__sample_len(224, 500, true, 0, 3, 448) == -1,
          "max_new_tokens: CTranslate2's rule in both, past n_ctx refused");
    /* no timestamps: only the lists */
    r.timestamps = false;
    for (int i = 0; i < V; i++) L[i] = 0;
    sotto__rules_apply(be, &r, NULL, 0, false, L);
    CHECK(!isfinite(L[3]) && !isfinite(L[EOT]) && !isfinite(L[7]) && isfinite(L[NOTS]) && isfinite(L[TB]),
          "without timestamp rules only SuppressBlank and SuppressTokens apply");

    /* log-sum-exp against libm on rows like logits: random, -inf holes, all -inf */
    enum { N = 51864 };
    float *x = malloc(N * sizeof *x);
    unsigned seed = 1;
    double worst = 0;
    for (int t = 0; t < 20; t++) {
        for (int i = 0; i < N; i++) {
            seed = seed * 1103515245u + 12345u;
            x[i] = (float)((seed >> 8) / 16777216.0 * 40 - 25);
            if (i % 11 == t) x[i] = -INFINITY;
        }
        double m = -INFINITY, s = 0;
        for (int i = 0; i < N - t; i++) m = x[i] > m ? x[i] : m;
        for (int i = 0; i < N - t; i++) s += exp((double)x[i] - m);
        worst = fmax(worst, fabs(sotto__logsumexp(be, x, N - t) - (m + log(s))));
    }
    CHECK(worst < 1e-6, "log-sum-exp within 1e-6 of libm's (worst %g)", worst);
    for (int i = 0; i < N; i++) x[i] = -INFINITY;
    CHECK(sotto__logsumexp(be, x, N) == -INFINITY, "all -inf gives -inf");
    x[17] = 2.5f;
    CHECK(fabs(sotto__logsumexp(be, x, N) - 2.5) < 1e-12, "one finite value gives itself");
    CHECK(sotto__argmax(be, x, N) == 17, "argmax");
    x[40] = 2.5f;
    CHECK(sotto__argmax(be, x, N) == 17, "argmax: the first of equal maxima");

    /* the 8-lane (avx2, avx_vnni) and 16-lane (avx512) paths give the 4-lane ones' bits
     * (scalar: backend_row.h's, as Vulkan's slots): log-sum-exp, argmax (NaN, zeros of both
     * signs, maxima in the tails) and the weights */
    enum { W = 3 };
    static const char *const sets[W] = {"scalar", "avx2", "avx512"};
    float *w4 = malloc(N * sizeof *w4), *wk = malloc(N * sizeof *wk);
    bool same[W] = {true, true, true}, weights_ok = true;
    sotto__backend *lanes[W]; /* the backend's kernel set is chosen when it is made */
    for (int k = 0; k < W; k++) {
        setenv("SOTTO_KERNELS", sets[k], 1);
        lanes[k] = open_backend("cpu");
    }
    unsetenv("SOTTO_KERNELS");
    int cases = 0;
    for (int t = 0; t < 24; t++) {
        int n = N - t * 7;
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            x[i] = (float)((seed >> 8) / 16777216.0 * 60 - 40);
            if (i % 13 == t) x[i] = -INFINITY;
        }
        if (t % 4 == 1) x[n - 1 - t] = 30.0f;                 /* the maximum in the tail */
        if (t % 4 == 2) x[t] = NAN;                           /* NaN is never the maximum */
        if (t % 4 == 3) for (int i = 0; i < n; i++) x[i] = (i + t) % 3 ? -0.0f : 0.0f;
        if (t == 8) x[0] = NAN;                               /* the scalar loop keeps index 0 */
        int ref = 0;
        for (int i = 1; i < n; i++)
            if (x[i] > x[ref]) ref = i;
        double l0 = sotto__logsumexp(lanes[0], x, n), sw0 = sotto__exp_weights(lanes[0], x, n, 1.0f / 0.6f, w4);
        same[0] &= sotto__argmax(lanes[0], x, n) == ref;
        for (int k = 1; k < W; k++) {
            double l = sotto__logsumexp(lanes[k], x, n), sw = sotto__exp_weights(lanes[k], x, n, 1.0f / 0.6f, wk);
            same[k] &= memcmp(&l, &l0, sizeof l) == 0 && sotto__argmax(lanes[k], x, n) == ref &&
                       memcmp(&sw, &sw0, sizeof sw) == 0 && memcmp(w4, wk, n * sizeof *w4) == 0;
        }
        double s = 0;
        for (int i = 0; i < n; i++) s += w4[i];
        if (t % 4 != 2 && t != 8) weights_ok &= fabs(s - sw0) <= 1e-6 * sw0; /* the terms' rounding */
        cases++;
    }
    for (int k = 0; k < W; k++)
        CHECK(same[k], "the %s set gives the 4 lanes' log-sum-exp, argmax and weights in %d cases", sets[k], cases);
    CHECK(weights_ok, "the weights sum to what exp_weights returns");
    free(w4), free(wk);
    free(x);
    for (int k = 0; k < W; k++) lanes[k]->ops->free(lanes[k]);
    be->ops->free(be);
    return check_summary();
}
