/* fuzz_tokenizer.c — libFuzzer target: the tokenizer paths that see untrusted bytes.
 * 1. Byte-level token strings (what vocabulary files hold) to raw bytes,
 *    sotto__bytelevel_decode, on an exact-size copy of the input and exact-size output
 *    buffers; an accepted string must encode back (sotto__bytelevel_encode) to itself,
 *    so the mapping is a bijection and no two spellings load as the same token.
 * 2. Token ids to text: the input read as little-endian int32 ids (any value, negative
 *    and out of range included) through sotto_detokenize and sotto_token_bytes on the
 *    small valid model of the fuzz_gguf seeds; the text must be exactly the
 *    concatenation of the ordinary tokens' bytes.
 * 3. Text to token ids: the input up to its first NUL as text through sotto_tokenize on a
 *    real vocabulary (tiny.en, SOTTO_FUZZ_BPE_MODEL): it must accept exactly the inputs a
 *    separate UTF-8 check here accepts, give every count the same way (size query, exact
 *    buffer, one id short), produce base-vocabulary ids only, and decode back
 *    (sotto_detokenize) to the input; the pre-split pieces must tile the text. */
#include "fuzz_common.h"
#include "model/model.h"
#include "whisper/tokenizer.h"

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

#ifndef SOTTO_FUZZ_BPE_MODEL
#define SOTTO_FUZZ_BPE_MODEL "models/tiny.en-ct2"
#endif

static sotto_model *bpe_model(void)
{
    static sotto_model *m;
    if (m) return m;
    const char *path = getenv("SOTTO_FUZZ_BPE_MODEL");
    if (!path) path = SOTTO_FUZZ_BPE_MODEL;
    if (sotto_model_load(path, &m) != SOTTO_OK) {
        fprintf(stderr, "fuzz harness: cannot load %s (set SOTTO_FUZZ_BPE_MODEL to a model with a "
                "full vocabulary, e.g. models/tiny.en-ct2): %s\n", path, sotto_last_error());
        abort();
    }
    return m;
}

/* Well-formed UTF-8, decoded and range-checked code point by code point (written apart
 * from the library's table-driven check, on purpose). */
static bool utf8_valid(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t c = s[i], min;
        size_t k;
        if (c < 0x80) k = 0, min = 0;
        else if ((c & 0xe0) == 0xc0) k = 1, c &= 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0) k = 2, c &= 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0) k = 3, c &= 0x07, min = 0x10000;
        else return false;
        if (i + k >= n) return false; /* continuation bytes cut off */
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80) return false;
            c = c << 6 | (s[i + j] & 0x3f);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return false;
        i += k + 1;
    }
    return true;
}

static void encode(const uint8_t *data, size_t size)
{
    sotto_model *m = bpe_model();
    sotto_model_info info;
    sotto_model_get_info(m, &info);
    size_t len = 0;
    while (len < size && data[len]) len++;
    char *text = malloc(len + 1);
    if (!text) abort();
    memcpy(text, data, len);
    text[len] = 0;
    bool valid = utf8_valid((const uint8_t *)text, len);
    int n = -1;
    sotto_status st = sotto_tokenize(m, text, NULL, 0, &n);
    if (st != (valid ? SOTTO_OK : SOTTO_ERR_INVALID_ARG)) abort();
    if (!valid) {
        if (n != 0) abort();
        free(text);
        return;
    }
    if (n < 0 || (size_t)n > len || (len > 0) != (n > 0)) abort();
    for (size_t pos = 0; pos < len;) { /* the pieces tile the text */
        size_t end = sotto__pretok_next((const uint8_t *)text, len, pos);
        if (end <= pos || end > len) abort();
        pos = end;
    }
    int32_t *ids = malloc(n ? (size_t)n * sizeof *ids : 1); /* exact size: ASan sees an overrun */
    if (!ids) abort();
    int n2 = -1;
    if (sotto_tokenize(m, text, ids, n, &n2) != SOTTO_OK || n2 != n) abort();
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= info.token_eot) abort();
    if (n > 0 && (sotto_tokenize(m, text, ids, n - 1, &n2) != SOTTO_ERR_INVALID_ARG || n2 != n)) abort();
    char *back = NULL;
    if (sotto_detokenize(m, ids, n, &back) != SOTTO_OK || !back) abort();
    if (strlen(back) != len || memcmp(back, text, len) != 0) abort(); /* encode -> decode is the input */
    sotto_free(back);
    free(ids);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bytelevel(data, size);
    detokenize(data, size);
    encode(data, size);
    return 0;
}
