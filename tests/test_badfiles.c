/* test_badfiles.c — crafted malformed model and audio files (truncated at section
 * boundaries, wrong magic and versions, wrong shapes, out-of-range offsets and sizes):
 * every loader must refuse each with an error status and a message, never crash.
 * usage: test_badfiles SMALL.gguf CT2_DIR HF_DIR CLIP.wav TMP_DIR SMALL_GGML.bin */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "sotto.h"

static const char *tmp;

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

/* Writes the mutated bytes to PATH and expects MODEL_PATH to fail to load. */
static void expect_model_fails(const char *what, const char *path, const char *model_path, const unsigned char *b,
                               size_t n)
{
    spill(path, b, n);
    sotto_model *m = NULL;
    sotto_status st = sotto_model_load(model_path, &m);
    CHECK(st != SOTTO_OK && m == NULL && sotto_last_error()[0], "%s: loaded", what);
    printf("  %-34s -> %s: %s\n", what, sotto_status_str(st), sotto_last_error());
    sotto_model_free(m);
}

static void test_gguf(const char *good)
{
    size_t n;
    unsigned char *orig = slurp(good, &n), *b = malloc(n);
    char path[1024];
    snprintf(path, sizeof path, "%s/bad.gguf", tmp);
    printf("GGUF (%zu bytes)\n", n);
    size_t name = find(orig, n, "encoder.conv1.bias"); /* tensor info: name, n_dims, dims, type, offset */
    size_t info = name + strlen("encoder.conv1.bias");
    CHECK(name > 8, "tensor info found");
    const size_t cuts[] = {0, 3, 4, 7, 8, 16, 23, 24, 40, 200, 4000, name - 8, name + 4, info + 3, info + 12,
                           info + 20, n / 2, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        char what[64];
        snprintf(what, sizeof what, "truncated at %zu", cuts[i]);
        expect_model_fails(what, path, path, orig, cuts[i]);
    }
    struct { const char *what; size_t at; int width; uint64_t v; } edits[] = {
        {"wrong magic", 0, 4, 0x58554747},
        {"version 99", 4, 4, 99},
        {"2^40 tensors", 8, 8, (uint64_t)1 << 40},
        {"2^40 keys", 16, 8, (uint64_t)1 << 40},
        {"first key of length 2^62", 24, 8, (uint64_t)1 << 62},
        {"rank 9", info, 4, 9},
        {"wrong shape (385)", info + 4, 8, 385},
        {"zero dimension", info + 4, 8, 0},
        {"unknown tensor type", info + 12, 4, 77},
        {"offset past the end", info + 16, 8, (uint64_t)1 << 40},
        {"offset misaligned", info + 16, 8, 1},
        {"name length past the end", name - 8, 8, (uint64_t)1 << 50},
        {"NaN weight", n - 64, 4, 0x7fc00000},
        {"infinite weight", n - 128, 4, 0xff800000},
    };
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        memcpy(b, orig, n);
        if (edits[i].width == 4) put32(b + edits[i].at, (uint32_t)edits[i].v);
        else put64(b + edits[i].at, edits[i].v);
        expect_model_fails(edits[i].what, path, path, b, n);
    }
    free(orig);
    free(b);
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The layout of a (trusted, valid) ggml file: where the vocabulary count, the first
 * tensor record and up to 512 records start, and where their data begins. */
typedef struct ggml_map {
    size_t vocab, n_recs, rec[512], data[512];
} ggml_map;

static void ggml_walk(const unsigned char *b, size_t n, ggml_map *g)
{
    size_t p = 56 + 4 * (size_t)get32(b + 48) * get32(b + 52);
    g->vocab = p;
    uint32_t count = get32(b + p);
    p += 4;
    for (uint32_t k = 0; k < count; k++) p += 4 + get32(b + p);
    g->n_recs = 0;
    while (p + 12 <= n && g->n_recs < 512) {
        uint32_t nd = get32(b + p), nl = get32(b + p + 4), type = get32(b + p + 8);
        size_t numel = 1;
        for (uint32_t d = 0; d < nd; d++) numel *= get32(b + p + 12 + 4 * d);
        g->rec[g->n_recs] = p;
        g->data[g->n_recs++] = p + 12 + 4 * nd + nl;
        p += 12 + 4 * nd + nl + numel * (type == 0 ? 4 : 2); /* the small model is f32/f16 */
    }
}

static void test_ggml(const char *good)
{
    size_t n;
    unsigned char *orig = slurp(good, &n), *b = malloc(n + 4096);
    char path[1024];
    snprintf(path, sizeof path, "%s/bad.bin", tmp);
    printf("ggml (%zu bytes)\n", n);
    CHECK(orig && n > 70000 && get32(orig) == 0x67676d6cu, "%s: the small ggml model", good);
    if (!orig || n <= 70000) return;
    sotto_model *m = NULL;
    CHECK(sotto_model_load(good, &m) == SOTTO_OK, "the valid file loads: %s", sotto_last_error());
    sotto_model_free(m);
    ggml_map g;
    ggml_walk(orig, n, &g);
    CHECK(g.n_recs > 40 && g.vocab == 64376, "layout: %zu records, vocabulary at %zu", g.n_recs, g.vocab);
    size_t t0 = g.rec[0], d0 = g.data[0], last = g.rec[g.n_recs - 1];
    /* truncated at every section boundary and at 40 points between */
    size_t cuts[100] = {0, 1, 3, 4, 5, 8, 27, 47, 48, 51, 52, 55, 56, 1000, g.vocab - 1, g.vocab, g.vocab + 3,
                        g.vocab + 4, g.vocab + 5, g.vocab + 9, t0 - 1, t0, t0 + 4, t0 + 11, t0 + 12, t0 + 13,
                        d0 - 1, d0, d0 + 1, g.rec[1] - 1, last, last + 12, n - 1};
    size_t n_cuts = 33;
    for (size_t k = 1; k <= 40; k++) cuts[n_cuts++] = n * k / 41;
    for (size_t i = 0; i < n_cuts; i++) {
        char what[64];
        snprintf(what, sizeof what, "truncated at %zu", cuts[i]);
        expect_model_fails(what, path, path, orig, cuts[i]);
    }
    /* every hparam -1, 0 and INT32_MAX (ftype 0, "all f32", is a valid label) */
    static const char *const hp[11] = {"n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer",
                                       "n_text_ctx", "n_text_state", "n_text_head", "n_text_layer", "n_mels",
                                       "ftype"};
    const uint32_t vals[3] = {0xffffffffu, 0, 0x7fffffffu};
    for (int f = 0; f < 11; f++)
        for (int v = 0; v < 3; v++) {
            if (f == 10 && v == 1) continue;
            char what[64];
            snprintf(what, sizeof what, "hparam %s = %d", hp[f], (int32_t)vals[v]);
            memcpy(b, orig, n), put32(b + 4 + 4 * f, vals[v]);
            expect_model_fails(what, path, path, b, n);
        }
    struct { const char *what; size_t at; uint32_t v; } edits[] = {
        {"wrong magic", 0, 0x67676d6du},
        {"magic GGUF", 0, 0x46554747u},
        {"mel n_mel 128", 48, 128},
        {"mel n_fft -1", 52, 0xffffffffu},
        {"vocabulary count -1", g.vocab, 0xffffffffu},
        {"vocabulary count 0", g.vocab, 0},
        {"vocabulary count 2^31-1", g.vocab, 0x7fffffffu},
        {"vocabulary count n_vocab + 1", g.vocab, 1776},
        {"vocabulary count one short", g.vocab, 264},
        {"token length -1", g.vocab + 4, 0xffffffffu},
        {"token length 65536", g.vocab + 4, 65536},
        {"n_dims -1", t0, 0xffffffffu},
        {"n_dims 0", t0, 0},
        {"n_dims 5", t0, 5},
        {"n_dims 2^31-1", t0, 0x7fffffffu},
        {"name length -1", t0 + 4, 0xffffffffu},
        {"name length 0", t0 + 4, 0},
        {"name length 96", t0 + 4, 96},
        {"name length 2^31-1", t0 + 4, 0x7fffffffu},
        {"ttype -1", t0 + 8, 0xffffffffu},
        {"ttype 4 (q4_2)", t0 + 8, 4},
        {"ttype 9 (q8_1)", t0 + 8, 9},
        {"ttype 12 (q4_K)", t0 + 8, 12},
        {"ttype 30 (bf16)", t0 + 8, 30},
        {"ttype 2^31-1", t0 + 8, 0x7fffffffu},
        {"ttype q4_0 without a quant version", t0 + 8, 2},
        {"dimension -1", t0 + 12, 0xffffffffu},
        {"dimension 0", t0 + 12, 0},
        {"dimension 2^31-1", t0 + 12, 0x7fffffffu},
        {"dimension -2^31", t0 + 12, 0x80000000u},
        {"wrong shape (conv1 [8,80,4])", t0 + 12, 4},
        {"NaN weight", n - 4, 0x7fc00000u},
    };
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        memcpy(b, orig, n);
        put32(b + edits[i].at, edits[i].v);
        expect_model_fails(edits[i].what, path, path, b, n);
    }
    /* records: the last one missing, the first one twice, a name too long, an unknown name */
    expect_model_fails("tensor missing", path, path, orig, last);
    memcpy(b, orig, n), memcpy(b + n, orig + t0, g.rec[1] - t0);
    expect_model_fails("tensor duplicated", path, path, b, n + g.rec[1] - t0);
    for (int len = 95; len <= 96; len++) {
        unsigned char *q = b + n;
        memcpy(b, orig, n);
        put32(q, 1), put32(q + 4, (uint32_t)len), put32(q + 8, 0), put32(q + 12, 1);
        memset(q + 16, 'x', (size_t)len), memset(q + 16 + len, 0, 4);
        expect_model_fails(len == 96 ? "name of 96 bytes" : "unknown name of 95 bytes", path, path, b,
                           n + 20 + (size_t)len);
    }
    /* a vocabulary ending in <|endoftext|> (older whisper.cpp converters) reads the same */
    {
        size_t at = d0 - 12 - 4 * 3 - strlen("encoder.conv1.weight"); /* first record: 3 dims */
        CHECK(at == t0, "first record at %zu", at);
        memcpy(b, orig, t0);
        put32(b + g.vocab, get32(orig + g.vocab) + 1);
        put32(b + t0, 13), memcpy(b + t0 + 4, "<|endoftext|>", 13);
        memcpy(b + t0 + 17, orig + t0, n - t0);
        spill(path, b, n + 17);
        sotto_model *a = NULL, *v = NULL;
        CHECK(sotto_model_load(path, &a) == SOTTO_OK && sotto_model_load(good, &v) == SOTTO_OK,
              "<|endoftext|> in the vocabulary must load: %s", sotto_last_error());
        sotto_model_info ia, iv;
        if (a && v) {
            sotto_model_get_info(a, &ia), sotto_model_get_info(v, &iv);
            int differ = ia.n_vocab != iv.n_vocab || ia.token_eot != iv.token_eot;
            for (int32_t id = 0; id < iv.n_vocab && !differ; id++) {
                size_t la, lv;
                const char *sa = sotto_token_bytes(a, id, &la), *sv = sotto_token_bytes(v, id, &lv);
                differ = la != lv || memcmp(sa, sv, la) != 0;
            }
            CHECK(!differ && iv.token_eot == 265, "vocabulary with <|endoftext|> differs (eot %d)", ia.token_eot);
            printf("  %-34s -> loads, same vocabulary\n", "<|endoftext|> in the vocabulary");
        }
        sotto_model_free(a);
        sotto_model_free(v);
    }
    free(orig);
    free(b);
}

static void link_rest(const char *src_dir, const char *dst_dir, const char *const *files)
{
    char a[1024], c[1024];
    for (; *files; files++) {
        snprintf(a, sizeof a, "%s/%s", src_dir, *files);
        snprintf(c, sizeof c, "%s/%s", dst_dir, *files);
        unlink(c);
        if (access(a, F_OK) == 0 && symlink(a, c) != 0) perror(c);
    }
}

static void test_ct2(const char *dir)
{
    char src[2100], bad_dir[1024], path[2100];
    snprintf(src, sizeof src, "%s/model.bin", dir);
    snprintf(bad_dir, sizeof bad_dir, "%s/bad-ct2", tmp);
    snprintf(path, sizeof path, "%s/model.bin", bad_dir);
    mkdir(bad_dir, 0755);
    static const char *const rest[] = {"config.json", "vocabulary.txt", "vocabulary.json", NULL};
    char abs_dir[1024];
    if (!realpath(dir, abs_dir)) snprintf(abs_dir, sizeof abs_dir, "%s", dir);
    link_rest(abs_dir, bad_dir, rest);
    size_t n;
    unsigned char *orig = slurp(src, &n), *b = malloc(n);
    printf("CTranslate2 (%zu bytes)\n", n);
    size_t bias = find(orig, n, "encoder/conv1/bias"), w = find(orig, n, "encoder/conv1/weight");
    CHECK(bias && w, "records found");
    size_t bias_dims = bias + strlen("encoder/conv1/bias") + 1 + 1; /* NUL, rank */
    size_t w_dims = w + strlen("encoder/conv1/weight") + 1 + 1;
    const size_t cuts[] = {0, 2, 4, 6, 17, 20, 24, bias + 3, bias_dims + 2, n / 2, n - 5, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        char what[64];
        snprintf(what, sizeof what, "truncated at %zu", cuts[i]);
        expect_model_fails(what, path, bad_dir, orig, cuts[i]);
    }
    memcpy(b, orig, n), put32(b, 99);
    expect_model_fails("version 99", path, bad_dir, b, n);
    memcpy(b, orig, n), b[find(b, n, "WhisperSpec") + 7] = 'X';
    expect_model_fails("spec WhisperXpec", path, bad_dir, b, n);
    memcpy(b, orig, n), put32(b + bias_dims, 385);
    expect_model_fails("byte count does not match dims", path, bad_dir, b, n);
    memcpy(b, orig, n), put32(b + w_dims + 4, 40), put32(b + w_dims + 8, 6);
    expect_model_fails("conv1 shape [384,40,6]", path, bad_dir, b, n);
    memcpy(b, orig, n), put32(b + w_dims + 12 + 1, 0xfffffff0u);
    expect_model_fails("byte count past the end", path, bad_dir, b, n);
    memcpy(b, orig, n), put32(b + 4 + 2 + 12 + 4, 0x7fffffff);
    expect_model_fails("2^31 variables", path, bad_dir, b, n);
    /* many aliases are valid: ctranslate2 names every tensor equal to another one so */
    {
        const char *from = "decoder/projection/weight", *to = "decoder/embeddings/weight";
        size_t tail = 4 + 2 * (2 + strlen(from) + 1), base = n - tail;
        unsigned char *c = malloc(n + 64 * 64), *q = c;
        memcpy(q, orig, base), q += base;
        put32(q, 41), q += 4;
        for (int k = 0; k < 41; k++) {
            char a[32];
            const char *name = k ? a : from;
            snprintf(a, sizeof a, "extra/alias_%02d", k);
            const char *pair[2] = {name, k % 2 ? "encoder/conv1/bias" : to};
            for (int j = 0; j < 2; j++) {
                uint16_t l = (uint16_t)(strlen(pair[j]) + 1);
                memcpy(q, &l, 2), memcpy(q + 2, pair[j], l), q += 2 + l;
            }
        }
        spill(path, c, (size_t)(q - c));
        sotto_model *m = NULL;
        CHECK(sotto_model_load(bad_dir, &m) == SOTTO_OK, "41 aliases must load: %s", sotto_last_error());
        sotto_model_free(m);
        printf("  %-34s -> loads\n", "41 aliases");
        free(c);
    }
    spill(path, orig, n);
    snprintf(src, sizeof src, "%s/vocabulary.txt", bad_dir);
    unlink(src);
    spill(src, "a\nb\n", 4);
    sotto_model *m = NULL;
    CHECK(sotto_model_load(bad_dir, &m) != SOTTO_OK, "a 2-token vocabulary must be refused");
    printf("  %-34s -> %s\n", "2-token vocabulary", sotto_last_error());
    sotto_model_free(m);
    free(orig);
    free(b);
}

static void test_safetensors(const char *dir)
{
    char src[2100], bad_dir[1024], path[2100], abs_dir[1024];
    snprintf(src, sizeof src, "%s/model.safetensors", dir);
    snprintf(bad_dir, sizeof bad_dir, "%s/bad-hf", tmp);
    snprintf(path, sizeof path, "%s/model.safetensors", bad_dir);
    mkdir(bad_dir, 0755);
    static const char *const rest[] = {"config.json", "generation_config.json", "tokenizer.json", NULL};
    if (!realpath(dir, abs_dir)) snprintf(abs_dir, sizeof abs_dir, "%s", dir);
    link_rest(abs_dir, bad_dir, rest);
    size_t n;
    unsigned char *orig = slurp(src, &n), *b = malloc(n);
    printf("safetensors (%zu bytes)\n", n);
    uint64_t hlen;
    memcpy(&hlen, orig, 8);
    const size_t cuts[] = {0, 7, 8, 9, 100, (size_t)hlen + 7, (size_t)hlen + 8 + 10, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        char what[64];
        snprintf(what, sizeof what, "truncated at %zu", cuts[i]);
        expect_model_fails(what, path, bad_dir, orig, cuts[i]);
    }
    memcpy(b, orig, n), put64(b, (uint64_t)1 << 60);
    expect_model_fails("header length 2^60", path, bad_dir, b, n);
    memcpy(b, orig, n), b[8] = '[';
    expect_model_fails("header not an object", path, bad_dir, b, n);
    size_t at = find(b, n, "\"shape\": [384, 80, 3]");
    CHECK(at, "conv1 shape found");
    memcpy(b, orig, n), memcpy(b + at, "\"shape\": [384, 40, 6]", 21);
    expect_model_fails("conv1 shape [384,40,6]", path, bad_dir, b, n);
    at = find(orig, n, "\"data_offsets\": [");
    memcpy(b, orig, n), memcpy(b + at + 17, "9", 1);
    expect_model_fails("data offsets out of range", path, bad_dir, b, n);
    memcpy(b, orig, n), memcpy(b + find(b, n, "\"F16\""), "\"I64\"", 5);
    expect_model_fails("dtype I64", path, bad_dir, b, n);
    free(orig);
    free(b);
}

static void expect_wav_fails(const char *what, const unsigned char *b, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/bad.wav", tmp);
    spill(path, b, n);
    float *pcm = NULL;
    int64_t count = 0;
    sotto_status st = sotto_wav_read(path, &pcm, &count);
    CHECK(st != SOTTO_OK && pcm == NULL && sotto_last_error()[0], "%s: read", what);
    printf("  %-34s -> %s: %s\n", what, sotto_status_str(st), sotto_last_error());
    sotto_free(pcm);
}

/* A WAV the reader takes: N_WANT samples, the first of them the clip's. */
static void expect_wav_reads(const char *what, const unsigned char *b, size_t n, int64_t n_want, const float *ref)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/cut.wav", tmp);
    spill(path, b, n);
    float *pcm = NULL;
    int64_t count = 0;
    sotto_status st = sotto_wav_read(path, &pcm, &count);
    CHECK(st == SOTTO_OK && count == n_want && memcmp(pcm, ref, (size_t)count * sizeof *pcm) == 0,
          "%s: %s, %lld samples (want %lld)", what, sotto_last_error(), (long long)count, (long long)n_want);
    sotto_audio *a;
    CHECK(sotto_audio_open(path, &a) == SOTTO_OK && strstr(sotto_audio_warning(a), "(truncated file)"),
          "%s: the stream warns", what);
    sotto_audio_close(a);
    printf("  %-34s -> %lld samples\n", what, (long long)count);
    sotto_free(pcm);
}

static void test_wav(const char *clip)
{
    size_t n;
    unsigned char *orig = slurp(clip, &n), *b = malloc(n + 64);
    printf("WAV (%zu bytes)\n", n);
    size_t fmt = find(orig, n, "fmt "), data = find(orig, n, "data");
    CHECK(fmt && data, "chunks found");
    const size_t cuts[] = {0, 4, 11, 12, 20, fmt + 8 + 8, data + 3, data + 8, data + 8 + 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        char what[64];
        snprintf(what, sizeof what, "truncated at %zu", cuts[i]);
        expect_wav_fails(what, orig, cuts[i]);
    }
    /* cut inside the samples: what is there, as ffmpeg reads it (issue 23) */
    float *ref = NULL;
    int64_t n_ref = 0;
    CHECK(sotto_wav_read(clip, &ref, &n_ref) == SOTTO_OK && n_ref > 500, "the clip reads");
    expect_wav_reads("truncated at data + 1000 bytes", orig, data + 8 + 1000, 500, ref);
    expect_wav_reads("truncated at data + 1001 bytes", orig, data + 8 + 1001, 500, ref);
    memcpy(b, orig, n), memcpy(b, "RIFX", 4);
    expect_wav_fails("wrong magic", b, n);
    memcpy(b, orig, n), b[fmt + 8 + 2] = 2;
    expect_wav_fails("stereo", b, n);
    memcpy(b, orig, n), put32(b + fmt + 8 + 4, 44100);
    expect_wav_fails("44.1 kHz", b, n);
    memcpy(b, orig, n), b[fmt + 8 + 14] = 8;
    expect_wav_fails("8-bit PCM", b, n);
    memcpy(b, orig, n), put32(b + data + 4, 576000000); /* a 10-hour header over a short file */
    expect_wav_reads("10-hour header, little data", b, n, n_ref, ref);
    sotto_free(ref);
    memcpy(b, orig, n), put32(b + fmt + 8 + 4, 8); /* a 32 kB file of 8 Hz would be 2000 s */
    expect_wav_fails("8 Hz", b, n);
    CHECK(strstr(sotto_last_error(), "below 1000 Hz") != NULL, "8 Hz: %s", sotto_last_error());
    memcpy(b, orig, n), put32(b + fmt + 8 + 4, 1);
    expect_wav_fails("1 Hz", b, n);
    CHECK(strstr(sotto_last_error(), "a sample rate of 1 Hz") != NULL, "1 Hz: %s", sotto_last_error());
    expect_wav_fails("10-hour header, no data", b, data + 8);
    memcpy(b, orig, n), put32(b + data + 4, 0);
    expect_wav_fails("zero-length audio", b, data + 8);
    memcpy(b, orig, n), put32(b + fmt + 4, 0xfffffff0u);
    expect_wav_fails("fmt chunk larger than the file", b, n);
    memcpy(b, orig, n), memcpy(b + fmt, "fmX ", 4);
    expect_wav_fails("no fmt chunk", b, n);
    /* a single sample is valid input */
    char path[1024];
    snprintf(path, sizeof path, "%s/one.wav", tmp);
    memcpy(b, orig, data + 8), put32(b + data + 4, 2), b[data + 8] = 1, b[data + 9] = 0;
    spill(path, b, data + 10);
    float *pcm = NULL;
    int64_t count = 0;
    CHECK(sotto_wav_read(path, &pcm, &count) == SOTTO_OK && count == 1, "one-sample WAV: %s", sotto_last_error());
    sotto_free(pcm);
    free(orig);
    free(b);
}

/* Bad arguments to calls on a context: each failure's own message on the context (not an
 * earlier failure's) and as sotto_last_error(); a stream session on an English-only model
 * refuses another language at its start, not at its first push. */
static void test_api_args(const char *model_path)
{
    sotto_model *m = NULL;
    sotto_context *c = NULL;
    CHECK(sotto_model_load(model_path, &m) == SOTTO_OK, "load %s: %s", model_path, sotto_last_error());
    if (!m) return;
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = 1, cp.device = "cpu";
    CHECK(sotto_context_init(m, &cp, &c) == SOTTO_OK, "context: %s", sotto_last_error());
    if (c) {
        sotto_greedy_params gp = sotto_greedy_params_default();
        int32_t out[8];
        int n = 0;
        CHECK(sotto_greedy(c, &gp, out, &n, NULL) == SOTTO_ERR_INVALID_ARG, "greedy without an encoded window");
        sotto_result *r = NULL;
        sotto_transcribe_params tp = sotto_transcribe_params_default();
        CHECK(sotto_transcribe_file(c, NULL, &tp, &r) == SOTTO_ERR_INVALID_ARG &&
                  strstr(sotto_context_error(c), "no path") && strstr(sotto_last_error(), "no path"),
              "no path: its own message, not the greedy one's: '%s'", sotto_context_error(c));
        CHECK(sotto_greedy(c, &gp, NULL, &n, NULL) == SOTTO_ERR_INVALID_ARG && sotto_context_error(c)[0],
              "greedy with no room: a message");
        float x[1600] = {0};
        CHECK(sotto_transcribe(c, x, -1, &tp, &r) == SOTTO_ERR_INVALID_ARG &&
                  strstr(sotto_context_error(c), "negative count"), "a negative count: '%s'", sotto_context_error(c));
        sotto_model_info h;
        sotto_model_get_info(m, &h);
        sotto_stream_params sp = sotto_stream_params_default();
        sp.language = "de", sp.beam_size = 1;
        sotto_stream *st = NULL;
        sotto_status s = sotto_stream_init(c, &sp, &st);
        CHECK(h.multilingual || (s == SOTTO_ERR_INVALID_ARG && st == NULL && strstr(sotto_last_error(), "English-only")),
              "stream: German on an English-only model refused at the start: %d '%s'", s, sotto_last_error());
        sotto_stream_free(st);
    }
    sotto_context_free(c);
    sotto_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: test_badfiles SMALL.gguf CT2_DIR HF_DIR CLIP.wav TMP_DIR SMALL_GGML.bin\n");
        return 2;
    }
    tmp = argv[5];
    mkdir(tmp, 0755);
    test_gguf(argv[1]);
    test_ggml(argv[6]);
    test_ct2(argv[2]);
    test_safetensors(argv[3]);
    test_wav(argv[4]);
    test_api_args(argv[1]);
    return check_summary();
}
