/* tokenizer.c — text to token ids, as openai-whisper's tokenizer (tiktoken) encodes it:
 * the reference regex splits UTF-8 text into pieces, then each piece is byte-level BPE
 * encoded by rank over the model's base vocabulary (model/token_index.c). The rank of a
 * token is its id, so the vocabulary alone defines the merges; no merges list is read.
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

/* ---- byte-pair merge -------------------------------------------------------------- */

/* A candidate merge of the part starting at START with the next part, ending at END. */
typedef struct pair {
    uint32_t rank, start, end;
} pair;

typedef struct bpe {
    const sotto_model *m;
    uint32_t *next, *prev;     /* [cap + 1]: part boundaries; next[i] = end of part i */
    uint8_t *alive;            /* [cap]: a part starts at i */
    pair *heap;                /* [3 * cap]: n_heap used */
    size_t cap, n_heap;
} bpe;

static bool pair_less(pair a, pair b) { return a.rank < b.rank || (a.rank == b.rank && a.start < b.start); }

static void heap_push(bpe *b, pair p)
{
    size_t i = b->n_heap++;
    while (i > 0 && pair_less(p, b->heap[(i - 1) / 2])) {
        b->heap[i] = b->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    b->heap[i] = p;
}

static pair heap_pop(bpe *b)
{
    pair top = b->heap[0], last = b->heap[--b->n_heap];
    size_t i = 0, n = b->n_heap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && pair_less(b->heap[c + 1], b->heap[c])) c++;
        if (!pair_less(b->heap[c], last)) break;
        b->heap[i] = b->heap[c];
        i = c;
    }
    if (n) b->heap[i] = last;
    return top;
}

static bool bpe_reserve(bpe *b, size_t n)
{
    if (n <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < n) cap *= 2;
    uint32_t *nx = realloc(b->next, (cap + 1) * sizeof *nx), *pv;
    if (nx) b->next = nx;
    pv = nx ? realloc(b->prev, (cap + 1) * sizeof *pv) : NULL;
    if (pv) b->prev = pv;
    uint8_t *al = pv ? realloc(b->alive, cap) : NULL;
    if (al) b->alive = al;
    pair *hp = al ? realloc(b->heap, 3 * cap * sizeof *hp) : NULL;
    if (hp) b->heap = hp;
    if (!hp) return false;
    b->cap = cap;
    return true;
}

/* Queues the merge of the part at START with the one after it, if their bytes form a
 * token. */
static void queue_pair(bpe *b, const uint8_t *p, uint32_t n, uint32_t start)
{
    uint32_t mid = b->next[start];
    if (mid >= n) return;
    uint32_t end = b->next[mid];
    int32_t id = sotto__token_lookup(b->m, p + start, end - start);
    if (id >= 0) heap_push(b, (pair){(uint32_t)id, start, end});
}

/* Encodes the piece P[0..N) (N >= 2, not itself a token): starting from single bytes,
 * merges the adjacent pair whose concatenation has the lowest rank (the leftmost such
 * pair on a tie) until no adjacent concatenation is a token. Calls EMIT per token. */
static bool bpe_piece(bpe *b, const uint8_t *p, uint32_t n, void (*emit)(void *, int32_t), void *arg)
{
    if (!bpe_reserve(b, n)) return false;
    b->n_heap = 0;
    for (uint32_t i = 0; i < n; i++) b->next[i] = i + 1, b->prev[i] = i - 1, b->alive[i] = 1;
    b->next[n] = n;
    for (uint32_t i = 0; i + 1 < n; i++) queue_pair(b, p, n, i);
    while (b->n_heap) {
        pair q = heap_pop(b);
        uint32_t mid = b->next[q.start];
        /* stale when a side has merged since: the part is gone or the pair grew */
        if (!b->alive[q.start] || mid >= n || b->next[mid] != q.end) continue;
        b->alive[mid] = 0;
        b->next[q.start] = q.end;
        if (q.end < n) b->prev[q.end] = q.start;
        queue_pair(b, p, n, q.start);
        if (q.start > 0) queue_pair(b, p, n, b->prev[q.start]);
    }
    for (uint32_t i = 0; i < n; i = b->next[i]) emit(arg, sotto__token_lookup(b->m, p + i, b->next[i] - i));
    return true;
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
    bpe b = {.m = model};
    bool ok = true;
    for (size_t pos = 0; pos < n && ok;) {
        size_t end = sotto__pretok_next(s, n, pos);
        int32_t whole = sotto__token_lookup(model, s + pos, end - pos);
        /* a piece that is a token is that token: a shortcut (as tiktoken's), not a rule of its
         * own, since every token of the gpt2 and multilingual vocabularies is its own BPE */
        if (whole >= 0) sink_put(&k, whole);
        else ok = bpe_piece(&b, s + pos, (uint32_t)(end - pos), sink_put, &k);
        pos = end;
    }
    free(b.next);
    free(b.prev);
    free(b.alive);
    free(b.heap);
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
