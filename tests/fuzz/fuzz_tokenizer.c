/* fuzz_tokenizer.c — libFuzzer target: the tokenizer paths that see untrusted bytes.
 * 1. Byte-level token strings (what vocabulary files hold) to raw bytes,
 *    sotto__bytelevel_decode, on an exact-size copy of the input and exact-size output
 *    buffers; an accepted string must encode back (sotto__bytelevel_encode) to itself,
 *    so the mapping is a bijection and no two spellings load as the same token.
 * 2. Token ids to text: the input read as little-endian int32 ids (any value, negative
 *    and out of range included) through sotto_detokenize and sotto_token_bytes on the
 *    small valid model of the fuzz_gguf seeds; the text must be exactly the
 *    concatenation of the ordinary tokens' bytes. */
#include "fuzz_common.h"
#include "model/model.h"

#ifndef SOTTO_FUZZ_MODEL
#define SOTTO_FUZZ_MODEL "tests/fuzz/corpus/fuzz_gguf/valid-f16.gguf"
#endif

static sotto_model *fuzz_model(void)
{
    static sotto_model *m;
    if (m) return m;
    const char *path = getenv("SOTTO_FUZZ_MODEL");
    if (!path) path = SOTTO_FUZZ_MODEL;
    if (sotto_model_load(path, &m) != SOTTO_OK) {
        fprintf(stderr, "fuzz harness: cannot load %s (set SOTTO_FUZZ_MODEL): %s\n", path,
                sotto_last_error());
        abort();
    }
    return m;
}

static void bytelevel(const uint8_t *data, size_t size)
{
    char *in = malloc(size ? size : 1); /* exact sizes: ASan sees any overrun */
    char *raw = malloc(size ? size : 1);
    if (!in || !raw) abort();
    memcpy(in, data, size);
    long n = sotto__bytelevel_decode(in, size, raw, size);
    if (n > (long)size) abort();
    if (n >= 0) {
        char *back = malloc(2 * (size_t)n + 1);
        if (!back) abort();
        size_t b = sotto__bytelevel_encode(raw, (size_t)n, back);
        if (b != size || memcmp(back, in, size) != 0) abort(); /* not a bijection */
        free(back);
        /* one byte short of the room it needs must be refused, not overrun */
        if (n > 0 && sotto__bytelevel_decode(in, size, raw, (size_t)n - 1) != -1) abort();
    }
    free(raw);
    free(in);
}

static void detokenize(const uint8_t *data, size_t size)
{
    sotto_model *m = fuzz_model();
    sotto_model_info info;
    sotto_model_get_info(m, &info);
    int n_ids = (int)(size / 4);
    int32_t *ids = malloc(n_ids ? (size_t)n_ids * 4 : 1);
    if (!ids) abort();
    size_t want = 0;
    for (int i = 0; i < n_ids; i++) {
        uint32_t u = (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8 |
                     (uint32_t)data[4 * i + 2] << 16 | (uint32_t)data[4 * i + 3] << 24;
        /* small ids most of the time, so real tokens are hit; any value otherwise */
        ids[i] = (u & 0x80000000u) ? (int32_t)(u & 0xff) : (int32_t)(u ^ 0x40000000u) - 0x40000000;
        size_t len = 0;
        const char *s = sotto_token_bytes(m, ids[i], &len);
        if ((s != NULL) != (ids[i] >= 0 && ids[i] < info.n_vocab)) abort();
        if (s && ids[i] < info.token_eot) want += len;
    }
    char *text = NULL;
    if (sotto_detokenize(m, ids, n_ids, &text) != SOTTO_OK || !text) abort();
    if (strlen(text) > want) abort(); /* a token may hold NUL, so <= */
    size_t o = 0;
    for (int i = 0; i < n_ids; i++) {
        size_t len = 0;
        const char *s = ids[i] >= 0 && ids[i] < info.token_eot ? sotto_token_bytes(m, ids[i], &len) : NULL;
        if (s && memcmp(text + o, s, len) != 0) abort();
        o += s ? len : 0;
    }
    if (o != want || text[o] != 0) abort();
    sotto_free(text);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bytelevel(data, size);
    detokenize(data, size);
    return 0;
}
