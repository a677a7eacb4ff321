/* test_badfiles.c — crafted malformed model and audio files (truncated at section
 * boundaries, wrong magic and versions, wrong shapes, out-of-range offsets and sizes):
 * every loader must refuse each with an error status and a message, never crash.
 * usage: test_badfiles SMALL.gguf CT2_DIR HF_DIR CLIP.wav TMP_DIR */
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

static void test_wav(const char *clip)
{
    size_t n;
    unsigned char *orig = slurp(clip, &n), *b = malloc(n + 64);
    printf("WAV (%zu bytes)\n", n);
    size_t fmt = find(orig, n, "fmt "), data = find(orig, n, "data");
    CHECK(fmt && data, "chunks found");
    const size_t cuts[] = {0, 4, 11, 12, 20, fmt + 8 + 8, data + 3, data + 8 + 1000};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        char what[64];
        snprintf(what, sizeof what, "truncated at %zu", cuts[i]);
        expect_wav_fails(what, orig, cuts[i]);
    }
    memcpy(b, orig, n), memcpy(b, "RIFX", 4);
    expect_wav_fails("wrong magic", b, n);
    memcpy(b, orig, n), b[fmt + 8 + 2] = 2;
    expect_wav_fails("stereo", b, n);
    memcpy(b, orig, n), put32(b + fmt + 8 + 4, 44100);
    expect_wav_fails("44.1 kHz", b, n);
    memcpy(b, orig, n), b[fmt + 8 + 14] = 8;
    expect_wav_fails("8-bit PCM", b, n);
    memcpy(b, orig, n), put32(b + data + 4, 576000000); /* a 10-hour header over a short file */
    expect_wav_fails("10-hour header, little data", b, n);
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

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: test_badfiles SMALL.gguf CT2_DIR HF_DIR CLIP.wav TMP_DIR\n");
        return 2;
    }
    tmp = argv[5];
    mkdir(tmp, 0755);
    test_gguf(argv[1]);
    test_ct2(argv[2]);
    test_safetensors(argv[3]);
    test_wav(argv[4]);
    return check_summary();
}
