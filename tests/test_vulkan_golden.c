/* test_vulkan_golden.c — a model on the Vulkan device against the same model on the CPU,
 * through the public API, on the golden clips' eager log-mel windows: the encoder output's
 * correlation to the CPU fp32 path (>= 0.99999 unless --min-enc-corr), the greedy id
 * sequences of the reference decoder (suppress rules, n_text_ctx / 2 tokens) and of plain
 * argmax (32 tokens) identical, and the logits of the last step (>= 0.99999 unless
 * --min-logit-corr); every call must succeed.
 * With the validation layer on (ctest sets VK_INSTANCE_LAYERS) any layer error fails a
 * call, so the test.
 * usage: test_vulkan_golden MODEL GOLDEN_DIR [--device DEV] [--clips N | --only A,B,..]
 *                           [--min-enc-corr X] [--min-logit-corr X] [--cpu-kernels NAME]
 *                           [--allow-differ A,B,..]
 * --cpu-kernels NAME: the CPU side on that kernel set (SOTTO_KERNELS; scalar = the reference
 * kernels, the same on every machine). --allow-differ names clips whose ids may differ
 * (reported, not failed). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sotto.h"

static int failures;
static const char *allowed; /* --allow-differ */

/* Whether CLIP is in the comma-separated LIST. */
static bool listed(const char *list, const char *clip)
{
    if (!list) return false;
    char all[2048], pat[300];
    snprintf(all, sizeof all, ",%s,", list);
    snprintf(pat, sizeof pat, ",%s,", clip);
    return strstr(all, pat) != NULL;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static float *read_f32(const char *path, size_t want)
{
    FILE *f = fopen(path, "rb");
    float *v = f ? malloc(want * sizeof *v) : NULL;
    bool ok = v && fread(v, sizeof *v, want, f) == want && fgetc(f) == EOF;
    if (f) fclose(f);
    if (!ok) free(v);
    return ok ? v : NULL;
}

static double corr(const float *a, const float *b, size_t n, double *max_abs)
{
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; i++) ma += a[i], mb += b[i];
    ma /= (double)n, mb /= (double)n;
    *max_abs = 0;
    for (size_t i = 0; i < n; i++) {
        double x = a[i] - ma, y = b[i] - mb, d = fabs((double)a[i] - b[i]);
        sab += x * y, saa += x * x, sbb += y * y;
        if (d > *max_abs || d != d) *max_abs = d;
    }
    return sab / sqrt(saa * sbb);
}

static void fail(const char *clip, const char *fmt, const char *detail)
{
    printf("FAIL %s: %s%s%s\n", clip, fmt, detail ? ": " : "", detail ? detail : "");
    failures++;
}

/* The first difference of two id sequences, or -1 when they are the same. */
static int differ(const int32_t *a, int na, const int32_t *b, int nb)
{
    int n = na < nb ? na : nb;
    for (int i = 0; i < n; i++)
        if (a[i] != b[i]) return i;
    return na == nb ? -1 : n;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The clips of GDIR (names of *.mel.f32), sorted; ONLY (comma-separated) or the first N. */
static int list_clips(const char *gdir, const char *only, int n_max, char **out, int cap)
{
    DIR *d = opendir(gdir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < cap) {
        size_t len = strlen(e->d_name);
        if (len > 8 && strcmp(e->d_name + len - 8, ".mel.f32") == 0) {
            char *name = strndup(e->d_name, len - 8);
            bool keep = !only || listed(only, name);
            if (keep) out[n++] = name;
            else free(name);
        }
    }
    if (d) closedir(d);
    qsort(out, (size_t)n, sizeof *out, cmp_str);
    if (n_max > 0 && n > n_max) {
        for (int i = n_max; i < n; i++) free(out[i]);
        n = n_max;
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *model_path = NULL, *gdir = NULL, *device = "vulkan", *only = NULL;
    int n_clips = 0;
    double min_corr = 0.99999, min_lcorr = 0.99999;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (strcmp(argv[i], "--clips") == 0 && i + 1 < argc) n_clips = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--min-enc-corr") == 0 && i + 1 < argc) min_corr = atof(argv[++i]);
        else if (strcmp(argv[i], "--min-logit-corr") == 0 && i + 1 < argc) min_lcorr = atof(argv[++i]);
        else if (strcmp(argv[i], "--allow-differ") == 0 && i + 1 < argc) allowed = argv[++i];
        else if (strcmp(argv[i], "--cpu-kernels") == 0 && i + 1 < argc) setenv("SOTTO_KERNELS", argv[++i], 1);
        else if (!model_path) model_path = argv[i];
        else gdir = argv[i];
    }
    if (!model_path || !gdir) {
        fprintf(stderr, "usage: test_vulkan_golden MODEL GOLDEN_DIR [--device DEV] [--clips N | --only A,B] "
                        "[--min-enc-corr X]\n");
        return 2;
    }
    sotto_model *model;
    if (sotto_model_load(model_path, &model) != SOTTO_OK) {
        printf("FAIL: cannot load %s: %s\n", model_path, sotto_last_error());
        return 1;
    }
    sotto_model_info h;
    sotto_model_get_info(model, &h);
    sotto_context *cpu = NULL, *gpu = NULL;
    sotto_context_params pc = sotto_context_params_default(), pg = pc;
    pc.device = "cpu", pg.device = device;
    if (sotto_context_init(model, &pc, &cpu) != SOTTO_OK || sotto_context_init(model, &pg, &gpu) != SOTTO_OK) {
        printf("FAIL: no context: %s\n", sotto_last_error());
        return 1;
    }
    printf("model %s (%s/%s); device %s against %s\n", model_path, h.encoder_type == SOTTO_TYPE_Q8_0 ? "q8_0" : "fp",
           h.decoder_type == SOTTO_TYPE_Q8_0 ? "q8_0" : "fp", sotto_context_device(gpu), sotto_context_device(cpu));
    char *clips[64];
    int n = list_clips(gdir, only, n_clips, clips, 64);
    const size_t n_mel = (size_t)h.n_mels * SOTTO_N_FRAMES, n_enc = (size_t)h.n_audio_ctx * h.n_audio_state;
    int32_t *a = malloc((size_t)h.n_text_ctx * sizeof *a), *b = malloc((size_t)h.n_text_ctx * sizeof *b);
    double worst_corr = 1, worst_lcorr = 1, enc_ms = 0, step_ms = 0;
    int steps = 0, same = 0;
    printf("%-16s %11s %10s %9s %9s %11s\n", "clip", "enc_corr", "enc_maxabs", "ids", "run32", "last_lcorr");
    for (int c = 0; c < n; c++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s.mel.f32", gdir, clips[c]);
        float *mel = read_f32(path, n_mel);
        if (!mel) {
            fail(clips[c], "no eager mel of the model's size", path);
            continue;
        }
        double t0 = now_ms();
        sotto_status sg = sotto_encode(gpu, mel, (int64_t)n_mel);
        enc_ms += now_ms() - t0;
        if (sotto_encode(cpu, mel, (int64_t)n_mel) != SOTTO_OK || sg != SOTTO_OK) {
            fail(clips[c], "encode failed", sg ? sotto_context_error(gpu) : sotto_context_error(cpu));
            free(mel);
            continue;
        }
        double max_abs, ec = corr(sotto_encoder_output(gpu), sotto_encoder_output(cpu), n_enc, &max_abs);
        if (!(ec >= min_corr)) fail(clips[c], "encoder-output correlation to the CPU below the bound", NULL);
        worst_corr = fmin(worst_corr, ec);
        /* the reference decoder, then plain argmax over 32 tokens */
        const char *verdict[2] = {"same", "same"};
        double lc = NAN; /* not compared: the sequences differ where allowed */
        for (int pass = 0; pass < 2; pass++) {
            sotto_greedy_params gp = sotto_greedy_params_default();
            gp.suppress = pass == 0;
            gp.max_new_tokens = pass == 0 ? h.n_text_ctx / 2 : 32;
            int na = 0, nb = 0;
            sotto_decode_stats s;
            sotto_status st = sotto_greedy(gpu, &gp, b, &nb, &s);
            if (st != SOTTO_OK || sotto_greedy(cpu, &gp, a, &na, NULL) != SOTTO_OK) {
                fail(clips[c], "greedy failed", st ? sotto_context_error(gpu) : sotto_context_error(cpu));
                verdict[pass] = "FAILED";
                continue;
            }
            step_ms += s.steps_ms, steps += s.n_steps;
            int at = differ(a, na, b, nb);
            bool allow = listed(allowed, clips[c]);
            if (at >= 0) {
                char d[128];
                snprintf(d, sizeof d, "position %d: cpu %d, vulkan %d", at, at < na ? a[at] : -1, at < nb ? b[at] : -1);
                if (allow) printf("note %s: %s (allowed): %s\n", clips[c], pass == 0 ? "decode ids differ" : "run32 ids differ", d);
                else fail(clips[c], pass == 0 ? "decode ids differ" : "run32 ids differ", d);
                verdict[pass] = allow ? "allowed" : "DIFFER";
            }
            if (pass == 1 && !(at >= 0 && allow)) { /* the logits of the pass that made the last token */
                const float *lg = sotto_logits(gpu), *lcpu = sotto_logits(cpu);
                double ma;
                lc = lg && lcpu ? corr(lg, lcpu, (size_t)h.n_vocab, &ma) : 0;
                if (!(lc >= min_lcorr)) fail(clips[c], "last-step logits' correlation below the bound", NULL);
                worst_lcorr = fmin(worst_lcorr, lc);
            }
        }
        same += strcmp(verdict[0], "same") == 0 && strcmp(verdict[1], "same") == 0;
        char lcs[16] = "-";
        if (lc == lc) snprintf(lcs, sizeof lcs, "%.8f", lc);
        printf("%-16s %11.8f %10.2e %9s %9s %11s\n", clips[c], ec, max_abs, verdict[0], verdict[1], lcs);
        free(mel);
        free(clips[c]);
    }
    if (n == 0) fail(gdir, "no clips", only);
    printf("summary: clips %d identical %d enc_corr_min %.8f logit_corr_min %.8f; vulkan encoder %.1f ms/window, "
           "decoder %.2f ms/step\n", n, same, worst_corr, worst_lcorr, n ? enc_ms / n : 0.0,
           steps ? step_ms / steps : 0.0);
    printf("%d clips, %d failures\n", n, failures);
    free(a), free(b);
    sotto_context_free(gpu);
    sotto_context_free(cpu);
    sotto_model_free(model);
    return failures ? 1 : 0;
}
