/* tokenizer.c — text to token ids, as openai-whisper's tokenizer (tiktoken) encodes it:
 * the reference regex splits UTF-8 text into pieces, then each piece is byte-level BPE
 * encoded by rank by the one BPE (model/token_index.c, which the ggml loader's suppress
 * lists use too). The rank of a token is its id, so the vocabulary alone defines the
 * merges; no merges list is read.
 * [openai/whisper tokenizer.py get_encoding; tiktoken's byte-pair merge, re-derived] */
#include "tokenizer.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"

/* ---- character classes ----------------------------------------------------------- */

int sotto__uc_class(uint32_t cp)
{
    if (cp < 0x80) {
        if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return SOTTO__UC_LETTER;
        if (cp >= '0' && cp <= '9') return SOTTO__UC_NUMBER;
        if (cp == ' ' || (cp >= 0x09 && cp <= 0x0d)) return SOTTO__UC_SPACE;
        return SOTTO__UC_OTHER;
    }
    size_t lo = 0, hi = SOTTO__UC_N_RANGES; /* first range with hi >= cp */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sotto__uc_ranges[mid].hi < cp) lo = mid + 1;
        else hi = mid;
    }
    if (lo < SOTTO__UC_N_RANGES && sotto__uc_ranges[lo].lo <= cp) return (int)sotto__uc_ranges[lo].cls;
    return SOTTO__UC_OTHER;
}

/* ---- UTF-8 ------------------------------------------------------------------------ */

/* Length of the well-formed sequence at S[0..N) (RFC 3629 table 3-7), 0 if none. */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    uint8_t lo = 0x80, hi = 0xbf; /* range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c == 0xe0) len = 3, lo = 0xa0;
    else if (c == 0xed) len = 3, hi = 0x9f; /* no surrogates */
    else if (c >= 0xe1 && c <= 0xef) len = 3;
    else if (c == 0xf0) len = 4, lo = 0x90;
    else if (c == 0xf4) len = 4, hi = 0x8f; /* nothing above U+10FFFF */
    else if (c >= 0xf1 && c <= 0xf3) len = 4;
    else return 0;
    if (n < len || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return len;
}

size_t sotto__utf8_check(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t len = utf8_seq(s + i, n - i);
        if (!len) return i;
        i += len;
    }
    return n;
}

/* Code point at S[I] of valid UTF-8; *LEN receives its byte length. */
static uint32_t utf8_at(const uint8_t *s, size_t i, size_t *len)
{
    uint8_t c = s[i];
    if (c < 0x80) return *len = 1, c;
    if (c < 0xe0) return *len = 2, (uint32_t)(c & 0x1f) << 6 | (s[i + 1] & 0x3f);
    if (c < 0xf0)
        return *len = 3, (uint32_t)(c & 0x0f) << 12 | (uint32_t)(s[i + 1] & 0x3f) << 6 | (s[i + 2] & 0x3f);
    return *len = 4, (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3f) << 12 |
                         (uint32_t)(s[i + 2] & 0x3f) << 6 | (s[i + 3] & 0x3f);
}

static int class_at(const uint8_t *s, size_t i, size_t *len) { return sotto__uc_class(utf8_at(s, i, len)); }

/* ---- pre-split -------------------------------------------------------------------- */

size_t sotto__pretok_next(const uint8_t *s, size_t n, size_t pos)
{
    static const char *const suffix[] = {"s", "t", "re", "ve", "m", "ll", "d"};
    size_t len;
    if (s[pos] == '\'') { /* 's|'t|'re|'ve|'m|'ll|'d, tried first */
        for (size_t k = 0; k < sizeof suffix / sizeof *suffix; k++) {
            size_t l = strlen(suffix[k]);
            if (n - pos - 1 >= l && memcmp(s + pos + 1, suffix[k], l) == 0) return pos + 1 + l;
        }
    }
    int cls = class_at(s, pos, &len);
    size_t start = pos;
    if (s[pos] == ' ' && pos + 1 < n) { /* " ?" then a run: the space joins a non-space */
        size_t l2;
        int next = class_at(s, pos + 1, &l2);
        if (next != SOTTO__UC_SPACE) cls = next, start = pos + 1;
    }
    if (cls != SOTTO__UC_SPACE) { /* ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+ */
        size_t i = start;
        while (i < n && class_at(s, i, &len) == cls) i += len;
        return i;
    }
    /* \s+(?!\S): the whitespace run, less its last character when a non-space follows
     * and the run has more than one; a lone one before a non-space is \s+ */
    size_t i = pos, last = pos, count = 0;
    while (i < n && class_at(s, i, &len) == SOTTO__UC_SPACE) last = i, i += len, count++;
    if (i == n || count == 1) return i;
    return last;
}

/* ---- public ----------------------------------------------------------------------- */

typedef struct sink {
    int32_t *ids;
    size_t cap, n;
} sink;

static void sink_put(void *arg, int32_t id)
{
    sink *k = arg;
    if (k->ids && k->n < k->cap) k->ids[k->n] = id;
    k->n++;
}

sotto_status sotto_tokenize(const sotto_model *model, const char *text, int32_t *ids, int cap, int *n_ids)
{
    sotto__err err = {0};
    if (n_ids) *n_ids = 0;
    if (!model || !text || !n_ids || (ids && cap < 0)) {
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "sotto_tokenize: NULL model, text or n_ids, or a negative cap");
        return sotto__publish(&err);
    }
    if (model->tok_missing_byte >= 0) {
        sotto__fail(&err, SOTTO_ERR_UNSUPPORTED, "sotto_tokenize: the vocabulary has no token for the byte "
                    "0x%02x, so it cannot encode text", (unsigned)model->tok_missing_byte);
        return sotto__publish(&err);
    }
    const uint8_t *s = (const uint8_t *)text;
    size_t n = strlen(text), bad;
    if (n > INT_MAX) {
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "sotto_tokenize: text longer than %d bytes", INT_MAX);
        return sotto__publish(&err);
    }
    if ((bad = sotto__utf8_check(s, n)) < n) {
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "sotto_tokenize: invalid UTF-8 at byte %zu (0x%02x)", bad,
                    (unsigned)s[bad]);
        return sotto__publish(&err);
    }
    sink k = {ids, ids ? (size_t)cap : 0, 0};
    sotto__bpe b = {.m = model};
    bool ok = true;
    for (size_t pos = 0; pos < n && ok;) {
        size_t end = sotto__pretok_next(s, n, pos);
        ok = sotto__bpe_piece(&b, s + pos, end - pos, sink_put, &k);
        pos = end;
    }
    sotto__bpe_free(&b);
    if (!ok) {
        sotto__fail(&err, SOTTO_ERR_NOMEM, "sotto_tokenize: out of memory");
        return sotto__publish(&err);
    }
    *n_ids = (int)k.n; /* at most one id per byte */
    if (ids && k.n > (size_t)cap) {
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "sotto_tokenize: the text needs %zu ids, ids holds %d", k.n, cap);
        return sotto__publish(&err);
    }
    return SOTTO_OK;
}
