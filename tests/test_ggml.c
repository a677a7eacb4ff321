/* test_ggml.c — a whisper.cpp legacy ggml .bin (written by bench/ct2_to_ggml.py) against
 * the same weights loaded another way (a GGUF of the same type, or the CTranslate2
 * directory it came from): every tensor with the same name, shape and values; the same
 * hyper-parameters and special ids; the same vocabulary, special tokens included (the
 * reference may spell <|nospeech|> and <|he|> the Hugging Face way, <|nocaptions|> and
 * <|iw|>: the ggml loader writes openai-whisper 20250625's names); suppress lists
 * equal to the reference's (from the CTranslate2 config.json: the ggml file has none, so
 * these are derived as openai-whisper's non_speech_tokens); then, on every golden clip
 * (or the first N), bit-identical encoder output and the same decoded ids.
 * usage: test_ggml GGML.bin REFERENCE_MODEL CLIPS_DIR [--max-clips N] */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/model.h"
#include "quant.h"

static void compare_tensors(const sotto_model *g, const sotto_model *ref)
{
    CHECK(g->n_tensors == ref->n_tensors, "%d tensors, reference %d", g->n_tensors, ref->n_tensors);
    int same = 0;
    for (int i = 0; i < ref->n_tensors; i++) {
        const sotto__tensor *r = &ref->tensors[i], *t = sotto__model_find(g, r->name);
        CHECK(t != NULL, "tensor %s missing", r->name);
        if (!t) continue;
        bool dims = t->n_dims == r->n_dims && memcmp(t->dims, r->dims, (size_t)r->n_dims * sizeof *r->dims) == 0;
        CHECK(dims, "tensor %s: shape differs", r->name);
        /* same stored type, or f32 where the reference has f16 (whisper.cpp's converter keeps
         * vectors and position tables f32) */
        CHECK(t->type == r->type || (t->type == SOTTO_TYPE_F32 && r->type == SOTTO_TYPE_F16),
              "tensor %s: type %d, reference %d", r->name, t->type, r->type);
        if (!dims) continue;
        int64_t n = sotto__tensor_numel(r);
        float *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
        sotto__dequantize(t->type, t->data, a, n);
        sotto__dequantize(r->type, r->data, b, n);
        bool eq = memcmp(a, b, (size_t)n * sizeof *a) == 0;
        CHECK(eq, "tensor %s: values differ", r->name);
        same += eq;
        free(a);
        free(b);
    }
    printf("tensors: %d of %d identical in value\n", same, ref->n_tensors);
}

static bool is_tok(const sotto_model *m, int32_t id, const char *s)
{
    size_t n;
    const char *p = sotto_token_bytes(m, id, &n);
    return p && n == strlen(s) && memcmp(p, s, n) == 0;
}

static void compare_vocab(const sotto_model *g, const sotto_model *ref)
{
    sotto_model_info a, b;
    sotto_model_get_info(g, &a);
    sotto_model_get_info(ref, &b);
    CHECK(strcmp(a.source_format, "ggml") == 0, "source_format %s", a.source_format);
    const char *names[] = {"n_vocab", "n_mels", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer",
                           "n_text_ctx", "n_text_state", "n_text_head", "n_text_layer"};
    int32_t va[] = {a.n_vocab, a.n_mels, a.n_audio_ctx, a.n_audio_state, a.n_audio_head, a.n_audio_layer,
                    a.n_text_ctx, a.n_text_state, a.n_text_head, a.n_text_layer, a.token_eot, a.token_sot,
                    a.token_translate, a.token_transcribe, a.token_startoflm, a.token_startofprev,
                    a.token_nospeech, a.token_notimestamps, a.token_timestamp_begin, a.token_lang_first,
                    a.n_languages, a.multilingual};
    int32_t vb[] = {b.n_vocab, b.n_mels, b.n_audio_ctx, b.n_audio_state, b.n_audio_head, b.n_audio_layer,
                    b.n_text_ctx, b.n_text_state, b.n_text_head, b.n_text_layer, b.token_eot, b.token_sot,
                    b.token_translate, b.token_transcribe, b.token_startoflm, b.token_startofprev,
                    b.token_nospeech, b.token_notimestamps, b.token_timestamp_begin, b.token_lang_first,
                    b.n_languages, b.multilingual};
    for (size_t i = 0; i < sizeof va / sizeof *va; i++)
        CHECK(va[i] == vb[i], "info field %zu (%s): %d, reference %d", i, i < 10 ? names[i] : "special id", va[i],
              vb[i]);
    int differ = 0;
    for (int32_t id = 0; id < b.n_vocab && id < a.n_vocab; id++) {
        size_t na, nb;
        const char *pa = sotto_token_bytes(g, id, &na), *pb = sotto_token_bytes(ref, id, &nb);
        if (na == nb && memcmp(pa, pb, na) == 0) continue;
        bool spelling = (is_tok(g, id, "<|nospeech|>") && is_tok(ref, id, "<|nocaptions|>")) ||
                        (is_tok(g, id, "<|he|>") && is_tok(ref, id, "<|iw|>"));
        CHECK(spelling, "token %d: '%.*s', reference '%.*s'", id, (int)na, pa, (int)nb, pb);
        differ += !spelling;
    }
    printf("vocabulary: %d tokens, %d differ (Hugging Face's spellings <|nocaptions|>, <|iw|> excepted)\n",
           b.n_vocab, differ);
}

static void compare_list(const sotto__i32list *a, const sotto__i32list *b, const char *what)
{
    bool eq = a->n == b->n && (a->n == 0 || memcmp(a->v, b->v, (size_t)a->n * sizeof *a->v) == 0);
    CHECK(b->n > 0, "%s: the reference has no list", what);
    CHECK(eq, "%s: %d ids, reference %d", what, a->n, b->n);
    for (int i = 0; !eq && i < a->n && i < b->n; i++)
        if (a->v[i] != b->v[i]) {
            printf("  %s: first difference at %d: %d, reference %d\n", what, i, a->v[i], b->v[i]);
            break;
        }
    printf("%s: %d ids, %s\n", what, a->n, eq ? "equal to the reference" : "DIFFERENT");
}

/* Encodes and decodes CLIP (reference decoder rules, up to half the context) with both
 * contexts; the encoder outputs must be bit-identical and the ids equal. */
static void compare_clip(sotto_context *cg, sotto_context *cr, const sotto_model_info *h, const char *path,
                         const char *name)
{
    float *pcm;
    int64_t n_pcm;
    if (sotto_wav_read(path, &pcm, &n_pcm) != SOTTO_OK) {
        CHECK(false, "%s: %s", path, sotto_last_error());
        return;
    }
    size_t n_mel = (size_t)h->n_mels * SOTTO_N_FRAMES, n_enc = (size_t)h->n_audio_ctx * h->n_audio_state;
    float *mel = malloc(n_mel * sizeof *mel);
    sotto_mel_window(pcm, n_pcm, h->n_mels, mel);
    sotto_free(pcm);
    sotto_context *ctx[2] = {cg, cr};
    int32_t *ids[2];
    int n_ids[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        ids[k] = malloc((size_t)h->n_text_ctx * sizeof *ids[k]);
        CHECK(sotto_encode(ctx[k], mel, (int64_t)n_mel) == SOTTO_OK, "%s: encode", name);
        sotto_greedy_params gp = sotto_greedy_params_default();
        gp.max_new_tokens = h->n_text_ctx / 2;
        gp.suppress = 1;
        CHECK(sotto_greedy(ctx[k], &gp, ids[k], &n_ids[k], NULL) == SOTTO_OK, "%s: decode", name);
    }
    bool enc = memcmp(sotto_encoder_output(cg), sotto_encoder_output(cr), n_enc * sizeof(float)) == 0;
    bool same = n_ids[0] == n_ids[1] && memcmp(ids[0], ids[1], (size_t)n_ids[0] * sizeof *ids[0]) == 0;
    CHECK(enc, "%s: encoder outputs differ", name);
    CHECK(same, "%s: ids differ (%d and %d ids)", name, n_ids[0], n_ids[1]);
    printf("%-16s encoder %s, %d ids %s\n", name, enc ? "identical" : "DIFFERENT", n_ids[0],
           same ? "identical" : "DIFFERENT");
    free(ids[0]);
    free(ids[1]);
    free(mel);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void compare_clips(const sotto_model *g, const sotto_model *ref, const char *dir, int max_clips)
{
    sotto_context *cg, *cr;
    CHECK(sotto_context_init(g, NULL, &cg) == SOTTO_OK, "context: %s", sotto_last_error());
    CHECK(sotto_context_init(ref, NULL, &cr) == SOTTO_OK, "context: %s", sotto_last_error());
    sotto_model_info h;
    sotto_model_get_info(g, &h);
    DIR *d = opendir(dir);
    CHECK(d != NULL, "cannot open %s", dir);
    if (!d) return;
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".wav") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    CHECK(n > 0, "no clips in %s", dir);
    for (int i = 0; i < n; i++) {
        if (i < max_clips) {
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            names[i][strlen(names[i]) - 4] = 0;
            compare_clip(cg, cr, &h, path, names[i]);
        }
        free(names[i]);
    }
    sotto_context_free(cg);
    sotto_context_free(cr);
}

int main(int argc, char **argv)
{
    int max_clips = 1 << 30;
    if (argc == 6 && strcmp(argv[4], "--max-clips") == 0) max_clips = atoi(argv[5]);
    else if (argc != 4) {
        fprintf(stderr, "usage: test_ggml GGML.bin REFERENCE_MODEL CLIPS_DIR [--max-clips N]\n");
        return 2;
    }
    sotto_model *g = NULL, *ref = NULL;
    if (sotto_model_load(argv[1], &g) != SOTTO_OK) {
        printf("FAIL: cannot load %s: %s\n", argv[1], sotto_last_error());
        return 1;
    }
    if (sotto_model_load(argv[2], &ref) != SOTTO_OK) {
        printf("FAIL: cannot load %s: %s\n", argv[2], sotto_last_error());
        return 1;
    }
    compare_tensors(g, ref);
    compare_vocab(g, ref);
    compare_list(&g->suppress, &ref->suppress, "suppress");
    compare_list(&g->suppress_begin, &ref->suppress_begin, "suppress_begin");
    CHECK(g->alignment_heads.n == 0, "alignment heads: %d, expected none", g->alignment_heads.n);
    if (!check_failed) compare_clips(g, ref, argv[3], max_clips);
    sotto_model_free(g);
    sotto_model_free(ref);
    return check_summary();
}
