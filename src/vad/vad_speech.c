/* vad_speech.c — speech intervals from window probabilities, exactly as silero-vad 6.2.3's
 * get_speech_timestamps_from_probs (utils_vad.py) computes them at 16 kHz: hysteresis
 * between threshold and neg_threshold, a minimum silence to end speech and a minimum
 * speech to keep it, splits of over-long speech at the longest (or last) silence, then
 * padding that shares short gaps. Its float arithmetic is done in double, in its order;
 * sample positions are exact integers. */
#include <math.h>
#include <stdlib.h>

#include "../common.h"

#define WINDOW 512
#define RATE 16000.0

sotto_vad_params sotto_vad_params_default(void)
{
    return (sotto_vad_params){.threshold = 0.5, .use_neg_threshold = 0, .neg_threshold = 0.35,
                              .min_speech_duration_ms = 250, .max_speech_duration_s = INFINITY,
                              .min_silence_duration_ms = 100, .speech_pad_ms = 30,
                              .min_silence_at_max_speech_ms = 98, .use_max_poss_sil_at_max_speech = 1};
}

typedef struct ivec {
    sotto_vad_interval *v;
    int64_t n, cap;
    bool oom;
} ivec;

static void push(ivec *a, int64_t start, int64_t end)
{
    if (a->oom) return;
    if (a->n == a->cap) {
        int64_t cap = a->cap ? 2 * a->cap : 16;
        sotto_vad_interval *p = realloc(a->v, (size_t)cap * sizeof *p);
        if (!p) {
            a->oom = true;
            return;
        }
        a->v = p, a->cap = cap;
    }
    a->v[a->n++] = (sotto_vad_interval){start, end};
}

/* Python's floor division of integers. */
static int64_t floor_div2(int64_t x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); }

/* The loop's state: Python's triggered, current_speech (has_cur, cur_start), temp_end,
 * prev_end, next_start and possible_ends ((temp_end, silence) pairs). 0 means unset for
 * temp_end and prev_end, as in the reference (a silence starting at sample 0 is unset). */
typedef struct scan {
    bool triggered, has_cur;
    int64_t cur_start, temp_end, prev_end, next_start;
    int64_t (*ends)[2];
    int64_t n_ends;
} scan;

static void reset_cut(scan *s)
{
    s->prev_end = s->next_start = s->temp_end = 0;
    s->n_ends = 0;
}

/* The max-speech cut at sample CUR; true when the reference `continue`s. */
static bool max_speech_cut(scan *s, const sotto_vad_params *p, int64_t cur, ivec *out)
{
    if (p->use_max_poss_sil_at_max_speech && s->n_ends) {
        int64_t best = 0; /* max(possible_ends, key=duration): the first of equal maxima */
        for (int64_t k = 1; k < s->n_ends; k++)
            if (s->ends[k][1] > s->ends[best][1]) best = k;
        int64_t end = s->ends[best][0], dur = s->ends[best][1];
        push(out, s->cur_start, end);
        s->has_cur = false;
        s->next_start = end + dur;
        if (s->next_start < end + cur) { /* the reference's test, kept as written */
            s->cur_start = s->next_start;
            s->has_cur = true;
        } else {
            s->triggered = false;
        }
        reset_cut(s);
        return false;
    }
    if (s->prev_end) {
        push(out, s->cur_start, s->prev_end);
        s->has_cur = false;
        if (s->next_start < s->prev_end) {
            s->triggered = false;
        } else {
            s->cur_start = s->next_start;
            s->has_cur = true;
        }
        reset_cut(s);
        return false;
    }
    push(out, s->cur_start, cur);
    s->has_cur = false;
    s->triggered = false;
    reset_cut(s);
    return true;
}

/* Pads the intervals as the reference's last loop does (PAD and N_SAMPLES exact integers). */
static void pad_intervals(sotto_vad_interval *v, int64_t n, double pad, int64_t n_samples)
{
    for (int64_t i = 0; i < n; i++) {
        if (i == 0) {
            double x = (double)v[i].start - pad;
            v[i].start = (int64_t)(x > 0 ? x : 0);
        }
        if (i != n - 1) {
            int64_t silence = v[i + 1].start - v[i].end;
            if ((double)silence < 2 * pad) {
                v[i].end += floor_div2(silence);
                int64_t x = v[i + 1].start - floor_div2(silence);
                v[i + 1].start = x > 0 ? x : 0;
            } else {
                double e = (double)v[i].end + pad, x = (double)v[i + 1].start - pad;
                v[i].end = (int64_t)(e < (double)n_samples ? e : (double)n_samples);
                v[i + 1].start = (int64_t)(x > 0 ? x : 0);
            }
        } else {
            double e = (double)v[i].end + pad;
            v[i].end = (int64_t)(e < (double)n_samples ? e : (double)n_samples);
        }
    }
}

static sotto_status check_params(const sotto_vad_params *p, int64_t n_probs, int64_t n_samples)
{
    const char *bad = n_probs < 0 || n_samples < 0                           ? "a negative count"
                      : !isfinite(p->threshold)                             ? "threshold is not finite"
                      : p->use_neg_threshold && !isfinite(p->neg_threshold) ? "neg_threshold is not finite"
                      : p->min_speech_duration_ms < 0 || p->min_silence_duration_ms < 0 || p->speech_pad_ms < 0 ||
                              p->min_silence_at_max_speech_ms < 0
                          ? "a negative duration"
                      : !(p->max_speech_duration_s > 0) ? "max_speech_duration_s is not above 0"
                                                         : NULL;
    if (!bad) return SOTTO_OK;
    sotto__err err;
    sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "sotto_vad_intervals: %s", bad);
    return sotto__publish(&err);
}

sotto_status sotto_vad_intervals(const float *probs, int64_t n_probs, int64_t n_samples,
                                 const sotto_vad_params *params, sotto_vad_interval **out, int64_t *n_out)
{
    if (!out || !n_out || (n_probs > 0 && !probs))
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "sotto_vad_intervals: NULL argument"});
    *out = NULL;
    *n_out = 0;
    sotto_vad_params p = params ? *params : sotto_vad_params_default();
    sotto_status st = check_params(&p, n_probs, n_samples);
    if (st) return st;
    /* the reference's sample counts, computed as it computes them */
    double min_speech = RATE * p.min_speech_duration_ms / 1000, pad = RATE * p.speech_pad_ms / 1000;
    double max_speech = RATE * p.max_speech_duration_s - WINDOW - 2 * pad;
    double min_silence = RATE * p.min_silence_duration_ms / 1000;
    double min_silence_at_max = RATE * p.min_silence_at_max_speech_ms / 1000;
    double thr = p.threshold, neg = p.use_neg_threshold ? p.neg_threshold : fmax(p.threshold - 0.15, 0.01);
    ivec iv = {0};
    scan s = {.ends = malloc((size_t)(n_probs > 0 ? n_probs : 1) * sizeof *s.ends)};
    if (!s.ends) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "out of memory"});
    for (int64_t i = 0; i < n_probs; i++) {
        double prob = probs[i];
        int64_t cur = WINDOW * i;
        if (prob >= thr && s.temp_end) { /* speech is back after a silence */
            int64_t sil = cur - s.temp_end;
            if ((double)sil > min_silence_at_max) s.ends[s.n_ends][0] = s.temp_end, s.ends[s.n_ends++][1] = sil;
            s.temp_end = 0;
            if (s.next_start < s.prev_end) s.next_start = cur;
        }
        if (prob >= thr && !s.triggered) {
            s.triggered = s.has_cur = true;
            s.cur_start = cur;
            continue;
        }
        if (s.triggered && (double)(cur - s.cur_start) > max_speech && max_speech_cut(&s, &p, cur, &iv)) continue;
        if (prob < neg && s.triggered) {
            if (!s.temp_end) s.temp_end = cur;
            int64_t sil_now = cur - s.temp_end;
            if (!p.use_max_poss_sil_at_max_speech && (double)sil_now > min_silence_at_max) s.prev_end = s.temp_end;
            if ((double)sil_now < min_silence) continue;
            if ((double)(s.temp_end - s.cur_start) > min_speech) push(&iv, s.cur_start, s.temp_end);
            s.has_cur = s.triggered = false;
            reset_cut(&s);
        }
    }
    if (s.has_cur && (double)(n_samples - s.cur_start) > min_speech) push(&iv, s.cur_start, n_samples);
    free(s.ends);
    if (iv.oom) {
        free(iv.v);
        return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "out of memory"});
    }
    pad_intervals(iv.v, iv.n, pad, n_samples);
    *out = iv.v;
    *n_out = iv.n;
    return SOTTO_OK;
}

sotto_status sotto_vad_speech(const sotto_vad *vad, const float *samples, int64_t n_samples,
                              const sotto_vad_params *params, int n_threads, sotto_vad_interval **out,
                              int64_t *n_out)
{
    float *probs;
    int64_t n_probs;
    sotto_status st = sotto_vad_probs(vad, samples, n_samples, n_threads, &probs, &n_probs);
    if (st) return st;
    st = sotto_vad_intervals(probs, n_probs, n_samples, params, out, n_out);
    free(probs);
    return st;
}
