/* test_vad.c — the Silero VAD against the silero-vad package (scripts/golden_vad.py,
 * tests/golden/vad/): per-window probabilities within 1e-4 of its onnxruntime output,
 * speech intervals identical to get_speech_timestamps for every parameter set, streaming
 * in any cut equal to the whole signal; and malformed VAD model files refused with a
 * message.
 *
 * usage: test_vad golden MODEL GOLDEN_DIR DATA_DIR GAPS10.wav
 *        test_vad badfiles MODEL TMP_DIR [WHISPER.gguf]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "sotto.h"
#include "whisper/input.h"

#define TOL_PROB 1e-4

/* ---- the parameter sets of scripts/golden_vad.py VARIANTS ---------------------------- */

typedef struct variant {
    const char *name;
    sotto_vad_params p;
} variant;

static int variants(variant *v)
{
    sotto_vad_params d = sotto_vad_params_default();
    int n = 0;
    v[n++] = (variant){"default", d};
    v[n] = (variant){"low", d};
    v[n].p.threshold = 0.3, v[n].p.min_silence_duration_ms = 50, v[n++].p.speech_pad_ms = 10;
    v[n] = (variant){"high", d};
    v[n].p.threshold = 0.7, v[n].p.use_neg_threshold = 1, v[n].p.neg_threshold = 0.6;
    v[n].p.min_speech_duration_ms = 100, v[n++].p.speech_pad_ms = 100;
    v[n] = (variant){"split", d};
    v[n++].p.max_speech_duration_s = 1.0;
    v[n] = (variant){"split_last", d};
    v[n].p.max_speech_duration_s = 1.0, v[n++].p.use_max_poss_sil_at_max_speech = 0;
    v[n] = (variant){"merge", d};
    v[n].p.min_silence_duration_ms = 500, v[n].p.speech_pad_ms = 200, v[n++].p.min_speech_duration_ms = 0;
    v[n] = (variant){"wide", d};
    v[n].p.min_silence_duration_ms = 2000, v[n].p.speech_pad_ms = 400, v[n].p.min_speech_duration_ms = 0;
    v[n++].p.max_speech_duration_s = 5.0;
    return n;
}

/* ---- golden files --------------------------------------------------------------------- */

static char *slurp_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (b) b[n] = 0;
    fclose(f);
    return b;
}

/* NAME.probs: one float per line; NULL when absent. */
static float *read_probs(const char *dir, const char *name, int64_t *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.probs", dir, name);
    char *t = slurp_text(path);
    *n = 0;
    if (!t) return NULL;
    int64_t cap = 1;
    for (char *c = t; *c; c++) cap += *c == '\n';
    float *p = malloc((size_t)cap * sizeof *p);
    char *s = t, *end;
    for (float v; (v = strtof(s, &end)), end != s; s = end) p[(*n)++] = v;
    free(t);
    return p;
}

/* The intervals of VARIANT in NAME.speech ("variant count start end ..."); false if absent. */
static bool read_speech(const char *dir, const char *name, const char *var, sotto_vad_interval **iv, int64_t *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.speech", dir, name);
    char *t = slurp_text(path);
    *iv = NULL;
    *n = 0;
    if (!t) return false;
    size_t len = strlen(var);
    for (char *line = t; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, var, len) != 0 || line[len] != ' ') continue;
        char *s = line + len;
        *n = strtoll(s, &s, 10);
        *iv = malloc((size_t)(*n ? *n : 1) * sizeof **iv);
        for (int64_t k = 0; k < *n; k++) {
            (*iv)[k].start = strtoll(s, &s, 10);
            (*iv)[k].end = strtoll(s, &s, 10);
        }
        free(t);
        return true;
    }
    free(t);
    return false;
}

/* ---- signals (scripts/golden_vad.py) -------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* N noise samples v / 32768 / 2^SHIFT, v = (splitmix64 >> 48) - 32768, added to X. */
static void add_noise(float *x, int64_t n, uint64_t seed, int shift)
{
    for (int64_t i = 0; i < n; i++) {
        int v = (int)(splitmix64(&seed) >> 48) - 32768;
        x[i] += ldexpf((float)v, -15 - shift);
    }
}

static float *make_signal(const char *kind, const char *src, const char *data_dir, const char *gaps10, int64_t *n)
{
    char path[1024];
    float *x = NULL;
    *n = 0;
    if (!strcmp(kind, "wav") || !strcmp(kind, "long")) {
        if (!strcmp(kind, "wav")) snprintf(path, sizeof path, "%s/%s", data_dir, src);
        else snprintf(path, sizeof path, "%s", gaps10);
        if (sotto_wav_read(path, &x, n)) printf("cannot read %s: %s\n", path, sotto_last_error());
    } else if (!strcmp(src, "white")) {
        *n = 160000;
        x = calloc((size_t)*n, sizeof *x);
        uint64_t seed = 1;
        for (int k = 0; k < 4; k++) {
            int64_t len = 40000;
            float *seg = x + k * len;
            for (int64_t i = 0; i < len; i++) { /* one generator across the segments */
                int v = (int)(splitmix64(&seed) >> 48) - 32768;
                seg[i] = ldexpf((float)v, -15 - (6 - 2 * k));
            }
        }
    } else if (!strcmp(src, "mix")) {
        snprintf(path, sizeof path, "%s/clips/librivox-0870.wav", data_dir);
        if (sotto_wav_read(path, &x, n) == SOTTO_OK) add_noise(x, *n, 2, 4);
    }
    return x;
}

/* ---- golden mode ---------------------------------------------------------------------- */

static bool same_intervals(const sotto_vad_interval *a, int64_t na, const sotto_vad_interval *b, int64_t nb,
                           int64_t *first_diff)
{
    int64_t k = 0;
    while (k < na && k < nb && a[k].start == b[k].start && a[k].end == b[k].end) k++;
    *first_diff = k;
    return na == nb && k == na;
}

/* Every variant's intervals from PROBS against the golden ones; WHAT says whose probs. */
static void check_variants(const char *gdir, const char *name, const float *probs, int64_t n_probs, int64_t n_samples,
                           const char *what)
{
    variant v[16];
    int nv = variants(v);
    for (int k = 0; k < nv; k++) {
        sotto_vad_interval *want, *got = NULL;
        int64_t n_want, n_got = 0, at;
        bool have = read_speech(gdir, name, v[k].name, &want, &n_want);
        CHECK(have, "%s: no golden intervals for variant %s", name, v[k].name);
        sotto_status st = sotto_vad_intervals(probs, n_probs, n_samples, &v[k].p, &got, &n_got);
        CHECK(st == SOTTO_OK, "%s %s: %s", name, v[k].name, sotto_last_error());
        if (have && !st) {
            bool same = same_intervals(got, n_got, want, n_want, &at);
            CHECK(same, "%s %s (%s probabilities): %lld intervals, golden %lld; first difference at %lld: "
                  "[%lld, %lld) vs [%lld, %lld)", name, v[k].name, what, (long long)n_got, (long long)n_want,
                  (long long)at, at < n_got ? (long long)got[at].start : -1LL,
                  at < n_got ? (long long)got[at].end : -1LL, at < n_want ? (long long)want[at].start : -1LL,
                  at < n_want ? (long long)want[at].end : -1LL);
        }
        free(want);
        sotto_free(got);
    }
}

/* Pushes X in a cycle of awkward chunk sizes; the probabilities must match WHOLE. */
static void check_streaming(const sotto_vad *vad, const char *name, const float *x, int64_t n, const float *whole,
                            int64_t n_whole)
{
    static const int64_t cuts[] = {1, 7, 511, 512, 513, 4000, 0, 40000, 100, 33333};
    sotto_vad_stream *s;
    CHECK(sotto_vad_stream_init(vad, 1, &s) == SOTTO_OK, "stream: %s", sotto_last_error());
    if (!s) return;
    float *p = malloc((size_t)(n_whole + 1) * sizeof *p);
    int64_t got = 0, at = 0, one;
    for (int k = 0; at < n; k++) {
        int64_t len = cuts[k % 10] < n - at ? cuts[k % 10] : n - at;
        sotto_status st = sotto_vad_stream_push(s, x + at, len, p + got, n_whole - got, &one);
        CHECK(st == SOTTO_OK, "%s: push: %s", name, sotto_vad_stream_error(s));
        if (st) break;
        got += one, at += len;
    }
    CHECK(sotto_vad_stream_flush(s, p + got, &one) == SOTTO_OK, "%s: flush", name);
    got += one;
    CHECK(got == n_whole, "%s: streamed %lld probabilities, whole %lld", name, (long long)got, (long long)n_whole);
    double max_d = 0;
    for (int64_t i = 0; i < got && i < n_whole; i++) max_d = fmax(max_d, fabs((double)p[i] - whole[i]));
    CHECK(max_d <= 1e-5, "%s: streamed probabilities differ from the whole signal's by %.3g", name, max_d);
    printf("  %-16s streamed in chunks of 0..40000 samples: max |diff| vs whole %.3g\n", name, max_d);
    /* a reset stream starts over: the same first probability again */
    if (n >= 1024) {
        float q[2];
        sotto_vad_stream_reset(s);
        CHECK(sotto_vad_stream_push(s, x, 1024, q, 2, &one) == SOTTO_OK && one == 2 && fabsf(q[0] - whole[0]) <= 1e-5f,
              "%s: after a reset", name);
        CHECK(sotto_vad_stream_push(s, x, 1024, q, 1, &one) == SOTTO_ERR_INVALID_ARG && one == 0 &&
                  sotto_vad_stream_error(s)[0],
              "%s: a too-small PROBS is refused", name);
    }
    free(p);
    sotto_vad_stream_free(s);
}

/* A transcription's input read with the VAD on a thread of its own (2 threads) gives the
 * probabilities, bit for bit, and the log-mel of the VAD inline (1 thread), from the
 * samples and from a WAV in memory (decoded into two buffers in turn); both within 1e-5
 * of sotto_vad_probs on the whole signal. */
static void check_input_threads(const sotto_vad *vad, const char *name, const float *x, int64_t n, const float *whole,
                                int64_t n_whole)
{
    unsigned char *wav = malloc(44 + 2 * (size_t)n);
    uint32_t data = 2 * (uint32_t)n, v32;
    memcpy(wav, "RIFF", 4), v32 = 36 + data, memcpy(wav + 4, &v32, 4), memcpy(wav + 8, "WAVEfmt ", 8);
    const uint16_t fmt[] = {1, 1}, bits[] = {2, 16};
    const uint32_t rates[] = {16000, 32000};
    v32 = 16, memcpy(wav + 16, &v32, 4), memcpy(wav + 20, fmt, 4), memcpy(wav + 24, rates, 8);
    memcpy(wav + 32, bits, 4), memcpy(wav + 36, "data", 4), memcpy(wav + 40, &data, 4);
    for (int64_t i = 0; i < n; i++) {
        float v = x[i] * 32768.0f;
        int16_t q = (int16_t)(v > 32767.0f ? 32767.0f : v < -32768.0f ? -32768.0f : v);
        memcpy(wav + 44 + 2 * i, &q, 2);
    }
    sotto_audio_source src = {.kind = SOTTO_SOURCE_MEMORY, .data = wav, .n_bytes = 44 + 2 * (size_t)n};
    sotto_transcribe_params tp = sotto_transcribe_params_default();
    tp.vad = vad;
    for (int from_wav = 0; from_wav < 2; from_wav++) {
        sotto__input in[2];
        sotto__err err;
        for (int t = 0; t < 2; t++)
            CHECK(sotto__input_read(from_wav ? &src : NULL, x, n, 80, t + 1, &tp, &in[t], &err) == SOTTO_OK,
                  "%s: input on %d threads: %s", name, t + 1, err.msg);
        int64_t np = in[0].n_probs;
        bool same = np == in[1].n_probs && np == n_whole && in[0].n_samples == n && in[1].n_samples == n &&
                    !memcmp(in[0].probs, in[1].probs, (size_t)np * sizeof *in[0].probs) &&
                    sotto__melfile_content_frames(in[0].mf) == sotto__melfile_content_frames(in[1].mf);
        float *w[2] = {malloc(80 * 3000 * sizeof(float)), malloc(80 * 3000 * sizeof(float))};
        for (int64_t seek = 0; same && seek < sotto__melfile_content_frames(in[0].mf); seek += 2999) {
            for (int t = 0; t < 2; t++) sotto__melfile_window(in[t].mf, seek, 3000, w[t]);
            same = !memcmp(w[0], w[1], 80 * 3000 * sizeof(float));
        }
        free(w[0]), free(w[1]);
        double max_d = 0;
        for (int64_t i = 0; same && !from_wav && i < np; i++) max_d = fmax(max_d, fabs((double)in[1].probs[i] - whole[i]));
        CHECK(same && max_d <= 1e-5, "%s%s: the VAD beside the log-mel gives %lld probabilities (inline %lld, whole "
              "%lld), max |diff| vs whole %.3g", name, from_wav ? " (a WAV in memory)" : "", (long long)in[1].n_probs,
              (long long)np, (long long)n_whole, max_d);
        sotto__input_free(&in[0]), sotto__input_free(&in[1]);
    }
    printf("  %-16s transcription's input, the VAD inline and on a thread of its own: the same bits\n", name);
    free(wav);
}

/* sotto_vad_speech_fw: faster-whisper's vad.py pads the signal to whole windows and one
 * window of zeros more when it is whole already, and splits over-long speech at the last
 * silence over 98 ms whatever the parameters say. */
static void check_fw(const sotto_vad *vad, const char *name, const float *x, int64_t n)
{
    sotto_vad_params rule = sotto_vad_params_batched(2.0);
    rule.speech_pad_ms = 30; /* less than the clip's last silence */
    sotto_vad_params p = rule;
    p.use_max_poss_sil_at_max_speech = 1, p.min_silence_at_max_speech_ms = 500; /* not read */
    int changed = 0, engine_checked = 0;
    for (int whole = 0; whole < 2; whole++) {
        int64_t m = whole ? n / 512 * 512 : n, n_probs = 0, n_bare = 0;
        CHECK(whole || m % 512, "%s: a signal of whole windows already", name);
        float *padded = calloc((size_t)m + 512, sizeof *padded), *probs = NULL, *bare = NULL;
        memcpy(padded, x, (size_t)m * sizeof *x);
        CHECK(sotto_vad_probs(vad, padded, m + (whole ? 512 : 0), 1, &probs, &n_probs) == SOTTO_OK &&
                  n_probs == m / 512 + 1 && sotto_vad_probs(vad, x, m, 1, &bare, &n_bare) == SOTTO_OK,
              "%s: probabilities", name);
        /* every minimum silence from 16 ms to 3 s: where the signal's last silence is one
         * window short of it, the extra window ends the speech there (else at the end) */
        int differ = 0, n_sets = 0;
        for (int ms = 16; ms <= 3000; ms += 16, n_sets++) {
            p.min_silence_duration_ms = rule.min_silence_duration_ms = ms;
            sotto_vad_interval *got = NULL, *want = NULL, *without = NULL;
            int64_t n_got = 0, n_want = 0, n_without = 0, at;
            CHECK(sotto_vad_speech_fw(vad, x, m, &p, 1, &got, &n_got) == SOTTO_OK &&
                      sotto_vad_intervals(probs, n_probs, m, &rule, &want, &n_want) == SOTTO_OK &&
                      sotto_vad_intervals(bare, n_bare, m, &rule, &without, &n_without) == SOTTO_OK,
                  "%s: min silence %d ms: %s", name, ms, sotto_last_error());
            CHECK(n_got > 0 && same_intervals(got, n_got, want, n_want, &at), "%s (%lld samples), min silence %d "
                  "ms: %lld intervals, vad.py's padding and rule give %lld", name, (long long)m, ms,
                  (long long)n_got, (long long)n_want);
            bool padding_matters = !same_intervals(without, n_without, want, n_want, &at);
            differ += padding_matters;
            if (whole && (padding_matters || ms % 256 == 0)) { /* the engine's vad_filter cuts the same */
                sotto_transcribe_params tp = sotto_transcribe_params_default();
                tp.vad = vad, tp.vad_filter = 2, tp.vad_min_silence_ms = ms, tp.vad_speech_pad_ms = 30;
                tp.vad_max_speech_s = 2.0f;
                sotto__input in;
                sotto__err err;
                CHECK(sotto__input_read(NULL, x, m, 80, 1, &tp, &in, &err) == SOTTO_OK &&
                          same_intervals(in.speech, in.n_speech, want, n_want, &at),
                      "%s (%lld samples), min silence %d ms: vad_filter's cut is not vad.py's (%lld intervals, "
                      "%lld wanted)", name, (long long)m, ms, (long long)in.n_speech, (long long)n_want);
                sotto__input_free(&in);
                engine_checked++;
            }
            sotto_free(got), sotto_free(want), sotto_free(without);
        }
        CHECK(whole ? differ > 0 : differ == 0, "%s (%lld samples): the extra window changed %d of %d cuts", name,
              (long long)m, differ, n_sets);
        changed += differ;
        sotto_free(probs), sotto_free(bare), free(padded);
    }
    sotto_vad_params vo = sotto_vad_params_batched(INFINITY);
    vo.min_silence_duration_ms = 2000; /* VadOptions' defaults */
    sotto_vad_interval *a = NULL, *b = NULL;
    int64_t na = 0, nb = 0, at;
    CHECK(sotto_vad_speech_fw(vad, x, n, NULL, 1, &a, &na) == SOTTO_OK &&
              sotto_vad_speech_fw(vad, x, n, &vo, 1, &b, &nb) == SOTTO_OK && same_intervals(a, na, b, nb, &at),
          "%s: NULL parameters are VadOptions' defaults", name);
    sotto_free(a), sotto_free(b);
    CHECK(sotto_vad_speech_fw(NULL, x, n, NULL, 1, &a, &na) == SOTTO_ERR_INVALID_ARG, "no VAD refused");
    CHECK(engine_checked > changed, "%s: vad_filter's cut checked %d times", name, engine_checked);
    printf("  %-16s faster-whisper's vad.py: its padding (one window more changed %d of 187 cuts) and split rule;"
           " vad_filter's cut the same in %d of them\n", name, changed, engine_checked);
}

static int live_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static int golden(const char *model, const char *gdir, const char *data_dir, const char *gaps10)
{
    sotto_vad *vad;
    int before = live_threads();
    if (sotto_vad_load(model, &vad) != SOTTO_OK) {
        printf("FAIL cannot load %s: %s\n", model, sotto_last_error());
        return 1;
    }
    /* loading starts no thread; a stream on 3 threads runs 2 workers until freed */
    CHECK(live_threads() == before, "loading left %d threads", live_threads() - before);
    sotto_vad_stream *s3;
    CHECK(sotto_vad_stream_init(vad, 3, &s3) == SOTTO_OK && live_threads() == before + 2, "a 3-thread stream runs %d",
          live_threads() - before);
    sotto_vad_stream_free(s3);
    CHECK(live_threads() == before, "freeing the stream left %d threads", live_threads() - before);
    char path[1024];
    snprintf(path, sizeof path, "%s/INDEX", gdir);
    char *index = slurp_text(path);
    CHECK(index != NULL, "no %s", path);
    double worst = 0;
    int n_signals = 0, n_compared = 0;
    for (char *line = index; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char name[128], kind[16], src[256];
        long long n_want;
        if (sscanf(line, "%127s %15s %255s %lld", name, kind, src, &n_want) != 4) continue;
        n_signals++;
        int64_t n_gold = 0;
        float *gold = read_probs(gdir, name, &n_gold);
        if (!strcmp(kind, "probs")) { /* the interval rules alone, on the reference's own numbers */
            CHECK(gold && n_gold > 0, "%s: no probabilities", name);
            check_variants(gdir, name, gold, n_gold, n_want, "golden");
            printf("  %-16s %6lld probabilities: intervals of %d parameter sets checked\n", name,
                   (long long)n_gold, 7);
            free(gold);
            continue;
        }
        int64_t n;
        float *x = make_signal(kind, src, data_dir, gaps10, &n);
        CHECK(x && n == n_want, "%s: %lld samples, golden %lld", name, (long long)n, n_want);
        float *probs = NULL;
        int64_t n_probs = 0;
        sotto_status st = x ? sotto_vad_probs(vad, x, n, 1, &probs, &n_probs) : SOTTO_ERR_IO;
        CHECK(st == SOTTO_OK && n_probs == (n + 511) / 512, "%s: probs: %s", name, sotto_last_error());
        double max_d = 0;
        if (gold) {
            CHECK(n_gold == n_probs, "%s: %lld probabilities, golden %lld", name, (long long)n_probs,
                  (long long)n_gold);
            for (int64_t i = 0; i < n_probs && i < n_gold; i++) max_d = fmax(max_d, fabs((double)probs[i] - gold[i]));
            CHECK(max_d <= TOL_PROB, "%s: probabilities differ from onnxruntime's by %.3g", name, max_d);
            worst = fmax(worst, max_d);
            n_compared++;
            check_variants(gdir, name, gold, n_gold, n, "golden");
        }
        check_variants(gdir, name, probs, n_probs, n, "sotto");
        char err_text[48] = "not stored";
        if (gold) snprintf(err_text, sizeof err_text, "%.3g", max_d);
        printf("  %-16s %6lld windows: max |p - onnxruntime| %s; intervals of 7 parameter sets checked\n", name,
               (long long)n_probs, err_text);
        if (!strcmp(name, "librivox-0870") || !strcmp(kind, "long")) check_streaming(vad, name, x, n, probs, n_probs);
        if (!strcmp(name, "librivox-0870") || !strcmp(kind, "long")) check_input_threads(vad, name, x, n, probs, n_probs);
        if (!strcmp(name, "librivox-0870")) check_fw(vad, name, x, n);
        if (!strcmp(name, "espeak-ng-04")) { /* on 2 threads: the same numbers up to rounding */
            float *p2;
            int64_t n2;
            CHECK(sotto_vad_probs(vad, x, n, 2, &p2, &n2) == SOTTO_OK && n2 == n_probs, "2 threads");
            double d2 = 0;
            for (int64_t i = 0; i < n2 && i < n_probs; i++) d2 = fmax(d2, fabs((double)p2[i] - probs[i]));
            CHECK(d2 <= 1e-5, "2 threads differ by %.3g", d2);
            sotto_free(p2);
        }
        free(gold);
        sotto_free(probs);
        sotto_free(x);
    }
    CHECK(n_signals >= 20 && n_compared >= 19, "%d signals, %d with probabilities", n_signals, n_compared);
    printf("max |p - onnxruntime| over %d signals: %.3g (tolerance %g)\n", n_compared, worst, TOL_PROB);
    free(index);
    sotto_vad_free(vad);
    return check_summary();
}

/* ---- badfiles mode -------------------------------------------------------------------- */

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n + 1);
    if (fread(b, 1, *n, f) != *n) *n = 0;
    fclose(f);
    return b;
}

static void spill(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(p, 1, n, f);
    fclose(f);
}

static size_t find(const unsigned char *b, size_t n, const char *s)
{
    unsigned char *p = memmem(b, n, s, strlen(s));
    return p ? (size_t)(p - b) : 0;
}

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

/* PATH must fail to load with STATUS (0: any error) and a message containing NEEDLE. */
static void expect_fails(const char *what, const char *path, sotto_status status, const char *needle)
{
    sotto_vad *v = (sotto_vad *)&v; /* must be reset to NULL */
    sotto_status st = sotto_vad_load(path, &v);
    const char *msg = sotto_last_error();
    CHECK(st != SOTTO_OK && v == NULL && msg[0], "%s: loaded", what);
    CHECK(!status || st == status, "%s: status %s", what, sotto_status_str(st));
    CHECK(!needle || strstr(msg, needle), "%s: message '%s' lacks '%s'", what, msg, needle);
    printf("  %-36s -> %s: %s\n", what, sotto_status_str(st), msg);
    if (st == SOTTO_OK) sotto_vad_free(v);
}

typedef struct edit {
    const char *what;
    const char *anchor;        /* a string in the file; the edit is at its end + AT */
    long at;
    int width;                 /* 4 or 8: an integer; 0: the bytes of TEXT */
    uint64_t v;
    const char *text;
    sotto_status status;
    const char *needle;
} edit;

static void test_edits(const unsigned char *orig, size_t n, const char *path)
{
    const size_t data_at = n - 1238560; /* the tensor data: 15 tensors, 1238560 bytes with padding */
    /* tensor info after a name: u32 rank, rank x u64 dims, u32 type, u64 offset */
    const edit edits[] = {
        {"wrong magic", NULL, 0, 4, 0x58554747, NULL, SOTTO_ERR_FORMAT, "magic"},
        {"version 1", NULL, 4, 4, 1, NULL, SOTTO_ERR_UNSUPPORTED, "version"},
        {"version 4", NULL, 4, 4, 4, NULL, SOTTO_ERR_UNSUPPORTED, "version"},
        {"2^40 tensors", NULL, 8, 8, (uint64_t)1 << 40, NULL, SOTTO_ERR_FORMAT, "implausible"},
        {"2^40 keys", NULL, 16, 8, (uint64_t)1 << 40, NULL, SOTTO_ERR_FORMAT, "implausible"},
        {"first key of length 2^62", NULL, 24, 8, (uint64_t)1 << 62, NULL, SOTTO_ERR_FORMAT, "truncated"},
        {"key of length 0", NULL, 24, 8, 0, NULL, SOTTO_ERR_FORMAT, "key of length 0"},
        {"value type 99", "general.architecture", 0, 4, 99, NULL, SOTTO_ERR_FORMAT, "unknown type"},
        {"architecture silero-vax", "general.architecture", 12, 0, 0, "silero-vax", SOTTO_ERR_UNSUPPORTED,
         "not \"silero-vad\""},
        {"no architecture key", "general.architecture", -4, 0, 0, "x", SOTTO_ERR_FORMAT, "no general.architecture"},
        {"sample rate 8000", "silero-vad.sample_rate", 4, 4, 8000, NULL, SOTTO_ERR_UNSUPPORTED, "sample_rate is 8000"},
        {"window 256", "silero-vad.window", 4, 4, 256, NULL, SOTTO_ERR_UNSUPPORTED, "window is 256"},
        {"context as a float", "silero-vad.context", 0, 4, 6, NULL, SOTTO_ERR_FORMAT, "must be a uint32"},
        {"no context key", "silero-vad.context", -1, 0, 0, "x", SOTTO_ERR_FORMAT, "no silero-vad.context key"},
        {"alignment 3", "general.alignment", 4, 4, 3, NULL, SOTTO_ERR_FORMAT, "power of two"},
        {"alignment 64", "general.alignment", 4, 4, 64, NULL, SOTTO_ERR_FORMAT, "misaligned"},
        {"rank 5", "stft.forward_basis_buffer", 0, 4, 5, NULL, SOTTO_ERR_FORMAT, "rank 5"},
        {"rank 2", "stft.forward_basis_buffer", 0, 4, 2, NULL, 0, NULL},
        {"dimension 0", "stft.forward_basis_buffer", 4, 8, 0, NULL, SOTTO_ERR_FORMAT, "dimension 0"},
        {"dimension 2^40", "stft.forward_basis_buffer", 4, 8, (uint64_t)1 << 40, NULL, SOTTO_ERR_FORMAT,
         "dimension"},
        {"wrong shape", "encoder.0.reparam_conv.bias", 4, 8, 64, NULL, SOTTO_ERR_FORMAT, "has shape [64]"},
        {"type f16", "decoder.rnn.weight_hh", 4 + 16, 4, 1, NULL, SOTTO_ERR_UNSUPPORTED, "has type 1"},
        {"type 99", "decoder.rnn.weight_hh", 4 + 16, 4, 99, NULL, SOTTO_ERR_UNSUPPORTED, "has type 99"},
        {"offset misaligned", "decoder.rnn.bias_hh", 4 + 8 + 4, 8, 4, NULL, SOTTO_ERR_FORMAT, "misaligned"},
        {"offset past the end", "decoder.decoder.2.bias", 4 + 8 + 4, 8, 1238560, NULL, SOTTO_ERR_FORMAT,
         "past the end"},
        {"offset 2^63", "decoder.decoder.2.bias", 4 + 8 + 4, 8, (uint64_t)1 << 63, NULL, SOTTO_ERR_FORMAT,
         "past the end"},
        {"overlapping tensors", "encoder.0.reparam_conv.bias", 4 + 8 + 4, 8, 0, NULL, SOTTO_ERR_FORMAT, "share bytes"},
        {"unknown tensor", "encoder.3.reparam_conv.weight", -21, 0, 0, "9", SOTTO_ERR_FORMAT, "not one of"},
        {"duplicate tensor", "encoder.1.reparam_conv.bias", -19, 0, 0, "2", SOTTO_ERR_FORMAT, "appears twice"},
    };
    unsigned char *b = malloc(n);
    for (size_t e = 0; e < sizeof edits / sizeof *edits; e++) {
        const edit *d = &edits[e];
        memcpy(b, orig, n);
        size_t at = (size_t)d->at;
        if (d->anchor) {
            size_t k = find(orig, n, d->anchor);
            CHECK(k > 0, "%s: anchor %s found", d->what, d->anchor);
            at = k + strlen(d->anchor) + (size_t)d->at;
        }
        if (d->width == 4) put32(b + at, (uint32_t)d->v);
        else if (d->width == 8) put64(b + at, d->v);
        else memcpy(b + at, d->text, strlen(d->text));
        spill(path, b, n);
        expect_fails(d->what, path, d->status, d->needle);
    }
    /* a NaN and an infinity among the weights */
    const float bad[2] = {NAN, INFINITY};
    for (int k = 0; k < 2; k++) {
        memcpy(b, orig, n);
        memcpy(b + data_at + 4 * 1000, &bad[k], 4);
        spill(path, b, n);
        expect_fails(k ? "an infinite weight" : "a NaN weight", path, SOTTO_ERR_FORMAT, "not finite");
    }
    free(b);
}

static int badfiles(const char *model, const char *tmp, const char *whisper)
{
    size_t n;
    unsigned char *orig = slurp(model, &n);
    if (!orig || n < 1240000) {
        printf("FAIL cannot read %s\n", model);
        return 1;
    }
    mkdir(tmp, 0700);
    char path[1024];
    snprintf(path, sizeof path, "%s/bad-vad.gguf", tmp);
    printf("VAD GGUF (%zu bytes)\n", n);
    sotto_vad *v = NULL;
    CHECK(sotto_vad_load(model, &v) == SOTTO_OK && v, "the valid file loads: %s", sotto_last_error());
    sotto_vad_free(v);
    const size_t info = find(orig, n, "stft.forward_basis_buffer");
    const size_t cuts[] = {0, 3, 4, 7, 8, 16, 23, 24, 40, 100, info - 4, info + 10, info + 30, info + 45,
                           n - 1238560 - 1, n - 1238560 + 7, n / 2, n - 29};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        char what[64];
        snprintf(what, sizeof what, "truncated at %zu", cuts[i]);
        spill(path, orig, cuts[i]);
        expect_fails(what, path, SOTTO_ERR_FORMAT, NULL);
    }
    test_edits(orig, n, path);
    expect_fails("a missing file", "/nonexistent/vad.gguf", SOTTO_ERR_IO, "cannot open");
    expect_fails("a directory", tmp, SOTTO_ERR_IO, NULL);
    if (whisper) expect_fails("a Whisper model", whisper, SOTTO_ERR_UNSUPPORTED, "\"whisper\", not \"silero-vad\"");
    /* the Whisper loader refuses the VAD file by its architecture */
    sotto_model *m = NULL;
    CHECK(sotto_model_load(model, &m) != SOTTO_OK && strstr(sotto_last_error(), "architecture"),
          "sotto_model_load of a VAD file: %s", sotto_last_error());
    sotto_model_free(m);
    unlink(path);
    free(orig);

    /* arguments */
    sotto_vad_interval *iv;
    int64_t n_iv;
    float p[10] = {0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f};
    sotto_vad_params bad = sotto_vad_params_default();
    bad.threshold = NAN;
    CHECK(sotto_vad_intervals(p, 3, 1536, &bad, &iv, &n_iv) == SOTTO_ERR_INVALID_ARG && sotto_last_error()[0],
          "a NaN threshold is refused");
    bad = sotto_vad_params_default();
    bad.speech_pad_ms = -1;
    CHECK(sotto_vad_intervals(p, 3, 1536, &bad, &iv, &n_iv) == SOTTO_ERR_INVALID_ARG, "a negative pad is refused");
    bad = sotto_vad_params_default();
    bad.max_speech_duration_s = 0;
    CHECK(sotto_vad_intervals(p, 3, 1536, &bad, &iv, &n_iv) == SOTTO_ERR_INVALID_ARG, "max speech 0 is refused");
    CHECK(sotto_vad_intervals(p, -1, 1536, NULL, &iv, &n_iv) == SOTTO_ERR_INVALID_ARG, "a negative count");
    CHECK(sotto_vad_intervals(p, 3, 1536, NULL, &iv, &n_iv) == SOTTO_OK && n_iv == 0 && !iv,
          "three speech windows: shorter than 250 ms, no interval");
    CHECK(sotto_vad_intervals(p, 10, 5120, NULL, &iv, &n_iv) == SOTTO_OK && n_iv == 1 && iv[0].start == 0 &&
              iv[0].end == 5120,
          "ten speech windows: one interval over the whole signal");
    sotto_free(iv);
    CHECK(sotto_vad_intervals(NULL, 0, 0, NULL, &iv, &n_iv) == SOTTO_OK && n_iv == 0 && !iv, "no windows");
    CHECK(sotto_vad_load(NULL, &v) == SOTTO_ERR_INVALID_ARG, "a NULL path");
    CHECK(sotto_vad_stream_init(NULL, 1, &(sotto_vad_stream *){0}) == SOTTO_ERR_INVALID_ARG, "a NULL model");
    sotto_vad_free(NULL);
    sotto_vad_stream_free(NULL);
    return check_summary();
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "golden")) return golden(argv[2], argv[3], argv[4], argv[5]);
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "badfiles")) return badfiles(argv[2], argv[3], argv[4]);
    fprintf(stderr, "usage: test_vad golden MODEL GOLDEN_DIR DATA_DIR GAPS10.wav\n"
                    "       test_vad badfiles MODEL TMP_DIR [WHISPER.gguf]\n");
    return 2;
}
