/* randmodel.c — writes a Whisper model of real dimensions with deterministic random
 * weights as GGUF, bit-identical to scripts/golden.py's random models (PRNG contract in
 * docs/GOLDEN.md), so sizes whose real weights we lack are checked against eager PyTorch
 * without committing the weights.
 * usage: randmodel INFO.tsv OUT.gguf   (INFO.tsv: tests/golden/<model>/info.tsv) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

static uint64_t fnv1a64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* r_j in [-1, 1): splitmix64 finaliser on s + (j + 1) * golden ratio, top 24 bits. */
static float prng(uint64_t s, uint64_t j)
{
    uint64_t z = s + (j + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    float u = (float)(z >> 40) * (float)(1.0 / 16777216.0);
    return 2.0f * u - 1.0f;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static sotto_status add(sotto_model *m, uint64_t seed, const char *name, int n_dims, int64_t d0, int64_t d1,
                        int64_t d2)
{
    int64_t dims[3] = {d0, d1, d2}, numel = 1;
    for (int i = 0; i < n_dims; i++) numel *= dims[i];
    float *v = sotto__model_alloc(m, (size_t)numel * sizeof *v);
    if (!v) return SOTTO_ERR_NOMEM;
    uint64_t s = fnv1a64(name) ^ seed;
    bool ln_weight = ends_with(name, "ln.weight") || ends_with(name, "ln_post.weight");
    float scale;
    if (ends_with(name, ".bias")) scale = 0.02f;
    else if (strcmp(name, "decoder.token_embedding.weight") == 0) scale = 1.0f;
    else if (strstr(name, "positional_embedding")) scale = 0.1f;
    else if (n_dims == 3) scale = (float)(1.0 / sqrt((double)(d1 * d2)));
    else scale = (float)(1.0 / sqrt((double)d1));
    for (int64_t j = 0; j < numel; j++) {
        float r = prng(s, (uint64_t)j);
        v[j] = ln_weight ? 1.0f + r * 0.1f : r * scale;
    }
    return sotto__model_add_tensor(m, name, SOTTO_TYPE_F32, n_dims, dims, v, (size_t)numel * sizeof *v, NULL);
}

static sotto_status add_block(sotto_model *m, uint64_t seed, const char *stack, int i, int64_t d, bool cross)
{
    static const char *norms[] = {"attn_ln", "mlp_ln", "cross_attn_ln"};
    static const char *projs[] = {"attn.query", "attn.key", "attn.value", "attn.out", "cross_attn.query",
                                  "cross_attn.key", "cross_attn.value", "cross_attn.out"};
    char name[SOTTO__NAME_LEN];
    sotto_status st = SOTTO_OK;
    for (int k = 0; k < (cross ? 3 : 2) && !st; k++) {
        snprintf(name, sizeof name, "%s.blocks.%d.%s.weight", stack, i, norms[k]);
        st = add(m, seed, name, 1, d, 0, 0);
        snprintf(name, sizeof name, "%s.blocks.%d.%s.bias", stack, i, norms[k]);
        if (!st) st = add(m, seed, name, 1, d, 0, 0);
    }
    for (int k = 0; k < (cross ? 8 : 4) && !st; k++) {
        snprintf(name, sizeof name, "%s.blocks.%d.%s.weight", stack, i, projs[k]);
        st = add(m, seed, name, 2, d, d, 0);
        if (!st && !ends_with(projs[k], ".key")) {
            snprintf(name, sizeof name, "%s.blocks.%d.%s.bias", stack, i, projs[k]);
            st = add(m, seed, name, 1, d, 0, 0);
        }
    }
    snprintf(name, sizeof name, "%s.blocks.%d.mlp.0.weight", stack, i);
    if (!st) st = add(m, seed, name, 2, 4 * d, d, 0);
    snprintf(name, sizeof name, "%s.blocks.%d.mlp.0.bias", stack, i);
    if (!st) st = add(m, seed, name, 1, 4 * d, 0, 0);
    snprintf(name, sizeof name, "%s.blocks.%d.mlp.2.weight", stack, i);
    if (!st) st = add(m, seed, name, 2, d, 4 * d, 0);
    snprintf(name, sizeof name, "%s.blocks.%d.mlp.2.bias", stack, i);
    if (!st) st = add(m, seed, name, 1, d, 0, 0);
    return st;
}

/* Token strings: "t<i>" for text ids, then Whisper's specials at the reference ids for
 * this vocabulary size (English-only 51864, multilingual 51865, large-v3 51866). */
static sotto_status add_vocab(sotto_model *m, int32_t n_vocab)
{
    int n_langs = n_vocab == 51866 ? 100 : 99;
    int32_t eot = n_vocab == 51864 ? 50256 : 50257;
    char **tok = calloc((size_t)n_vocab, sizeof *tok);
    uint32_t *len = calloc((size_t)n_vocab, sizeof *len);
    char *text = calloc((size_t)n_vocab, 24);
    if (!tok || !len || !text) return SOTTO_ERR_NOMEM;
    static const char *specials[] = {"<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>",
                                     "<|nospeech|>", "<|notimestamps|>"};
    for (int32_t i = 0; i < n_vocab; i++) {
        char *s = text + (size_t)i * 24;
        int32_t lang = i - (eot + 2), spec = i - (eot + 2 + n_langs), ts = i - (eot + 2 + n_langs + 6);
        if (i < eot) snprintf(s, 24, "t%d", i);
        else if (i == eot) snprintf(s, 24, "<|endoftext|>");
        else if (i == eot + 1) snprintf(s, 24, "<|startoftranscript|>");
        else if (lang < n_langs) snprintf(s, 24, lang == 0 ? "<|en|>" : "<|l%d|>", lang);
        else if (spec < 6) snprintf(s, 24, "%s", specials[spec]);
        else snprintf(s, 24, "<|%d.%02d|>", ts / 50, ts % 50 * 2);
        tok[i] = s;
        len[i] = (uint32_t)strlen(s);
    }
    sotto_status st = sotto__model_set_vocab(m, n_vocab, (const char *const *)tok, len, NULL);
    free(tok);
    free(len);
    free(text);
    return st;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: randmodel INFO.tsv OUT.gguf\n");
        return 1;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    long n_mels = 0, n_vocab = 0, d = 0, n_head = 0, n_layer = 0, n_text_ctx = 0;
    unsigned long long seed = 0;
    char key[64];
    long long val;
    while (fscanf(f, "%63s %lld%*[^\n]", key, &val) == 2) {
        if (!strcmp(key, "n_mels")) n_mels = (long)val;
        else if (!strcmp(key, "n_vocab")) n_vocab = (long)val;
        else if (!strcmp(key, "d_model")) d = (long)val;
        else if (!strcmp(key, "n_head")) n_head = (long)val;
        else if (!strcmp(key, "n_layer")) n_layer = (long)val;
        else if (!strcmp(key, "n_text_ctx")) n_text_ctx = (long)val;
        else if (!strcmp(key, "seed")) seed = (unsigned long long)val;
    }
    fclose(f);
    if (!n_mels || !n_vocab || !d || !n_head || !n_layer || !n_text_ctx) {
        fprintf(stderr, "%s: missing dimensions\n", argv[1]);
        return 1;
    }
    sotto_model *m = sotto__model_new();
    sotto_status st = add(m, seed, "encoder.conv1.weight", 3, d, n_mels, 3);
    if (!st) st = add(m, seed, "encoder.conv1.bias", 1, d, 0, 0);
    if (!st) st = add(m, seed, "encoder.conv2.weight", 3, d, d, 3);
    if (!st) st = add(m, seed, "encoder.conv2.bias", 1, d, 0, 0);
    if (!st) st = add(m, seed, "encoder.positional_embedding", 2, 1500, d, 0);
    for (int i = 0; i < n_layer && !st; i++) st = add_block(m, seed, "encoder", i, d, false);
    if (!st) st = add(m, seed, "encoder.ln_post.weight", 1, d, 0, 0);
    if (!st) st = add(m, seed, "encoder.ln_post.bias", 1, d, 0, 0);
    if (!st) st = add(m, seed, "decoder.token_embedding.weight", 2, n_vocab, d, 0);
    if (!st) st = add(m, seed, "decoder.positional_embedding", 2, n_text_ctx, d, 0);
    for (int i = 0; i < n_layer && !st; i++) st = add_block(m, seed, "decoder", i, d, true);
    if (!st) st = add(m, seed, "decoder.ln.weight", 1, d, 0, 0);
    if (!st) st = add(m, seed, "decoder.ln.bias", 1, d, 0, 0);
    if (!st) st = add_vocab(m, (int32_t)n_vocab);
    m->n_audio_head_file = m->n_text_head_file = (int32_t)n_head;
    sotto__err err = {0};
    if (!st) st = sotto__model_finish(m, &err);
    if (!st) st = sotto_model_save_gguf(m, argv[2], NULL);
    if (st) fprintf(stderr, "randmodel: %s %s\n", err.msg, sotto_last_error());
    sotto_model_free(m);
    return st ? 1 : 0;
}
