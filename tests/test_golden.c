/* test_golden.c — compares sotto against eager PyTorch golden vectors
 * (scripts/golden.py, committed in tests/golden/<model>/): log-mel max-abs error,
 * encoder output and first-step logits (correlation, max-abs), and complete greedy id
 * sequences, for every clip that has vectors.
 * usage: test_golden MODEL GOLDEN_DIR [CLIPS_DIR] [--min-enc-corr X] [--min-logit-corr X]
 *                    [--max-id-mismatch N]
 * The defaults hold fp32 to eager: correlations >= 0.99999 and every id sequence
 * identical. Quantised weights pass looser bounds; the last line sums up either way. */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sotto.h"

static int failures;
static double min_enc_corr = 0.99999, min_logit_corr = 0.99999;
static int max_id_mismatch = 0, id_mismatches, clips_differ;

static float *read_f32(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    float *v = malloc((size_t)size);
    if (v && fread(v, 1, (size_t)size, f) != (size_t)size) {
        free(v);
        v = NULL;
    }
    fclose(f);
    *n = (size_t)size / sizeof(float);
    return v;
}

static int read_ids(const char *path, int32_t *ids, int cap)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int n = 0;
    while (n < cap && fscanf(f, "%d", &ids[n]) == 1) n++;
    fclose(f);
    return n;
}

static void compare(const float *a, const float *b, size_t n, double *corr, double *max_abs)
{
    double ma = 0, mb = 0;
    for (size_t i = 0; i < n; i++) ma += a[i], mb += b[i];
    ma /= (double)n, mb /= (double)n;
    double sab = 0, saa = 0, sbb = 0;
    *max_abs = 0;
    for (size_t i = 0; i < n; i++) {
        double x = a[i] - ma, y = b[i] - mb;
        sab += x * y, saa += x * x, sbb += y * y;
        double d = fabs((double)a[i] - b[i]);
        if (d > *max_abs || d != d) *max_abs = d;
    }
    *corr = sab / sqrt(saa * sbb);
}

static void check(bool ok, const char *name, const char *what)
{
    if (!ok) {
        printf("FAIL %s: %s\n", name, what);
        failures++;
    }
}

static bool same_ids(const int32_t *a, int na, const int32_t *b, int nb, const char *name, const char *what)
{
    int n = na < nb ? na : nb, i = 0;
    while (i < n && a[i] == b[i]) i++;
    if (i == n && na == nb) return true;
    printf("%s %s: %s differ at position %d (sotto %d, eager %d)\n", max_id_mismatch ? "note" : "FAIL", name, what,
           i, i < na ? a[i] : -1, i < nb ? b[i] : -1);
    id_mismatches++;
    return false;
}

int main(int argc, char **argv)
{
    const char *pos[3] = {NULL, NULL, NULL};
    int n_pos = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--min-enc-corr") == 0 && i + 1 < argc) min_enc_corr = atof(argv[++i]);
        else if (strcmp(argv[i], "--min-logit-corr") == 0 && i + 1 < argc) min_logit_corr = atof(argv[++i]);
        else if (strcmp(argv[i], "--max-id-mismatch") == 0 && i + 1 < argc) max_id_mismatch = atoi(argv[++i]);
        else if (n_pos < 3) pos[n_pos++] = argv[i];
    }
    if (n_pos < 2) {
        fprintf(stderr, "usage: test_golden MODEL GOLDEN_DIR [CLIPS_DIR] [--min-enc-corr X] [--min-logit-corr X] "
                        "[--max-id-mismatch N]\n");
        return 2;
    }
    argv[1] = (char *)pos[0];
    const char *gdir = pos[1], *cdir = pos[2];
    sotto_model *model;
    if (sotto_model_load(argv[1], &model) != SOTTO_OK) {
        printf("FAIL: cannot load %s: %s\n", argv[1], sotto_last_error());
        return 1;
    }
    sotto_model_info h;
    sotto_model_get_info(model, &h);
    sotto_context *ctx;
    if (sotto_context_init(model, NULL, &ctx) != SOTTO_OK) return 1;
    DIR *dir = opendir(gdir);
    if (!dir) {
        printf("FAIL: cannot open %s\n", gdir);
        return 1;
    }
    size_t n_mel = (size_t)h.n_mels * SOTTO_N_FRAMES, n_enc = (size_t)h.n_audio_ctx * h.n_audio_state;
    float *mel = malloc(n_mel * sizeof *mel);
    int32_t *ids = malloc((size_t)h.n_text_ctx * sizeof *ids), *ref = malloc((size_t)h.n_text_ctx * sizeof *ref);
    int n_clips = 0;
    double worst_mel = 0, worst_enc_corr = 1, worst_enc_abs = 0, worst_logit_corr = 1, worst_logit_abs = 0;
    printf("%-16s %10s %10s %10s %10s %10s %s\n", "clip", "mel_maxabs", "enc_corr", "enc_maxabs", "lgt_corr",
           "lgt_maxabs", "ids");
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t len = strlen(e->d_name);
        if (len < 9 || strcmp(e->d_name + len - 8, ".enc.f32") != 0) continue;
        char name[256], path[1024];
        snprintf(name, sizeof name, "%.*s", (int)(len - 8), e->d_name);
        n_clips++;
        size_t n;
        /* 1. front end: our mel of the clip against the eager mel */
        snprintf(path, sizeof path, "%s/%s.%s", gdir, name, h.n_mels == 128 ? "mel128.f32" : "mel.f32");
        float *gmel = read_f32(path, &n);
        if (!gmel && h.n_mels == 80) { /* 80-bin random models share the tiny.en clip mel */
            snprintf(path, sizeof path, "%s/../tiny.en/%s.mel.f32", gdir, name);
            gmel = read_f32(path, &n);
        }
        if (!gmel || n != n_mel) {
            printf("FAIL %s: no golden mel\n", name);
            failures++;
            free(gmel);
            continue;
        }
        double mel_abs = -1;
        snprintf(path, sizeof path, "%s/%s.wav", cdir ? cdir : "", name);
        float *pcm;
        int64_t n_pcm;
        bool have_wav = cdir && sotto_wav_read(path, &pcm, &n_pcm) == SOTTO_OK;
        if (have_wav) {
            double corr;
            sotto_mel_window(pcm, n_pcm, h.n_mels, mel);
            sotto_free(pcm);
            compare(mel, gmel, n_mel, &corr, &mel_abs);
            check(mel_abs <= 1e-4, name, "log-mel max-abs error above 1e-4");
            if (mel_abs > worst_mel) worst_mel = mel_abs;
        }
        /* 2. encoder on the eager mel, so its error is the encoder's alone */
        double enc_corr, enc_abs, lg_corr = 0, lg_abs = 0;
        sotto_encode(ctx, gmel, (int64_t)n_mel);
        snprintf(path, sizeof path, "%s/%s.enc.f32", gdir, name);
        float *genc = read_f32(path, &n);
        check(genc && n == n_enc, name, "golden encoder output missing or of the wrong size");
        if (!genc || n != n_enc) { free(gmel); free(genc); continue; }
        compare(sotto_encoder_output(ctx), genc, n_enc, &enc_corr, &enc_abs);
        check(enc_corr >= min_enc_corr, name, "encoder-output correlation below the bound");
        /* 3. first-step logits after the default prefix */
        sotto_greedy_params gp = sotto_greedy_params_default();
        int n_ids;
        gp.max_new_tokens = 1;
        gp.suppress = 0;
        sotto_greedy(ctx, &gp, ids, &n_ids, NULL);
        int n_prefix = n_ids - 1;
        snprintf(path, sizeof path, "%s/%s.logits.f32", gdir, name);
        float *glog = read_f32(path, &n);
        if (glog && n == (size_t)h.n_vocab) {
            /* re-run the prefill: greedy masks nothing with suppress 0, logits are intact */
            compare(sotto_logits(ctx), glog, n, &lg_corr, &lg_abs);
            check(lg_corr >= min_logit_corr, name, "first-step logit correlation below the bound");
        } else {
            check(false, name, "golden logits missing");
        }
        free(glog);
        /* 4. plain argmax, 32-token budget */
        const char *verdict = "ok";
        snprintf(path, sizeof path, "%s/%s.run32.ids", gdir, name);
        int n_ref = read_ids(path, ref, h.n_text_ctx);
        if (n_ref > 0) {
            gp.max_new_tokens = 32;
            sotto_greedy(ctx, &gp, ids, &n_ids, NULL);
            if (!same_ids(ids, n_ids, ref, n_ref, name, "run32 ids")) verdict = "RUN32 DIFFER";
            /* logits of the pass that produced the last token: the whole KV-cache path */
            snprintf(path, sizeof path, "%s/%s.run32.last_logits.f32", gdir, name);
            float *last = read_f32(path, &n);
            if (last && n == (size_t)h.n_vocab) {
                double c, a;
                compare(sotto_logits(ctx), last, n, &c, &a);
                if (!max_id_mismatch) check(c >= min_logit_corr, name, "last-step logit correlation below the bound");
                printf("%-16s last-step logits: corr %.8f max-abs %.2e after %d cached steps\n", name, c, a,
                       n_ids - n_prefix - 1);
            }
            free(last);
        }
        /* 5. the reference decoder (suppress rules, 224 tokens) end to end from our mel */
        snprintf(path, sizeof path, "%s/%s.ids", gdir, name);
        n_ref = read_ids(path, ref, h.n_text_ctx);
        if (n_ref > 0) {
            if (have_wav) sotto_encode(ctx, mel, (int64_t)n_mel);
            gp.max_new_tokens = h.n_text_ctx / 2;
            gp.suppress = 1;
            sotto_greedy(ctx, &gp, ids, &n_ids, NULL);
            if (!same_ids(ids, n_ids, ref, n_ref, name, "decode ids")) verdict = "IDS DIFFER";
        }
        clips_differ += strcmp(verdict, "ok") != 0;
        printf("%-16s %10.2e %10.7f %10.2e %10.7f %10.2e %s\n", name, mel_abs, enc_corr, enc_abs, lg_corr, lg_abs,
               verdict);
        if (enc_corr < worst_enc_corr) worst_enc_corr = enc_corr;
        if (enc_abs > worst_enc_abs) worst_enc_abs = enc_abs;
        if (lg_corr < worst_logit_corr) worst_logit_corr = lg_corr;
        if (lg_abs > worst_logit_abs) worst_logit_abs = lg_abs;
        free(gmel);
        free(genc);
    }
    closedir(dir);
    check(n_clips > 0, gdir, "no golden clips found");
    printf("worst: mel max-abs %.2e, encoder corr %.8f max-abs %.2e, logits corr %.8f max-abs %.2e over %d clips\n",
           worst_mel, worst_enc_corr, worst_enc_abs, worst_logit_corr, worst_logit_abs, n_clips);
    printf("summary: clips %d enc_corr_min %.8f enc_maxabs %.3e logit_corr_min %.8f logit_maxabs %.3e "
           "id_mismatches %d clips_identical %d\n",
           n_clips, worst_enc_corr, worst_enc_abs, worst_logit_corr, worst_logit_abs, id_mismatches,
           n_clips - clips_differ);
    if (id_mismatches > max_id_mismatch) {
        printf("FAIL: %d id sequences differ from eager (at most %d allowed)\n", id_mismatches, max_id_mismatch);
        failures++;
    }
    printf("%d clips, %d failures\n", n_clips, failures);
    free(mel), free(ids), free(ref);
    sotto_context_free(ctx);
    sotto_model_free(model);
    return failures ? 1 : 0;
}
