/* token_index.c — the one byte-level BPE: a hash index from a token's bytes to its id over
 * the base vocabulary (ids below <|endoftext|>: tiktoken's "mergeable ranks", whose rank is
 * the id), built once at load from the vocabulary every loader fills, and the byte-pair
 * merge of a pre-split piece over it (tiktoken's, re-derived). Its callers: the text
 * encoder (whisper/tokenizer.c) and the ggml loader's suppress lists (ggml_legacy.c). */
#include "model.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash_bytes(const uint8_t *s, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a, 32-bit */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
    return h;
}

/* Token ID's bytes and their number *N (ID a valid id of the model's vocabulary). */
static const uint8_t *token_bytes(const sotto_model *m, int32_t id, size_t *n)
{
    *n = m->vocab_off[id + 1] - m->vocab_off[id];
    return (const uint8_t *)m->vocab_bytes + m->vocab_off[id];
}

size_t sotto__token_index_slots(int32_t n)
{
    size_t slots = 1;
    while (slots < 2 * (size_t)n) slots <<= 1;
    return slots;
}

void sotto__token_index_fill(sotto_model *m, int32_t n, uint32_t *tab, size_t slots)
{
    memset(tab, 0, slots * sizeof *tab);
    m->tok_index = tab;
    m->tok_index_mask = (uint32_t)(slots - 1);
    m->tok_max_len = 0;
    for (int32_t id = 0; id < n; id++) {
        size_t len;
        const uint8_t *s = token_bytes(m, id, &len);
        if (len == 0) continue; /* the multilingual vocabulary's rank 50256 is empty */
        if (sotto__token_lookup(m, s, len) >= 0) continue; /* a duplicate: the lowest id wins */
        uint32_t i = hash_bytes(s, len) & m->tok_index_mask;
        while (tab[i]) i = (i + 1) & m->tok_index_mask;
        tab[i] = (uint32_t)id + 1;
        if (len > m->tok_max_len) m->tok_max_len = (uint32_t)len;
    }
    m->tok_missing_byte = -1;
    for (int b = 255; b >= 0; b--) {
        uint8_t c = (uint8_t)b;
        if (sotto__token_lookup(m, &c, 1) < 0) m->tok_missing_byte = b;
    }
}

int32_t sotto__token_lookup(const sotto_model *m, const uint8_t *s, size_t n)
{
    if (!m->tok_index || n == 0 || n > m->tok_max_len) return -1;
    for (uint32_t i = hash_bytes(s, n) & m->tok_index_mask;; i = (i + 1) & m->tok_index_mask) {
        uint32_t slot = m->tok_index[i];
        if (!slot) return -1;
        int32_t id = (int32_t)(slot - 1);
        size_t len;
        const uint8_t *t = token_bytes(m, id, &len);
        if (len == n && memcmp(t, s, n) == 0) return id;
    }
}

/* ---- byte-pair merge -------------------------------------------------------------- */

typedef sotto__bpe bpe;
typedef sotto__bpe_pair pair;

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
static bool merge_piece(bpe *b, const uint8_t *p, uint32_t n, void (*emit)(void *, int32_t), void *arg)
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

bool sotto__bpe_piece(sotto__bpe *b, const uint8_t *s, size_t n, void (*emit)(void *, int32_t), void *arg)
{
    int32_t whole = sotto__token_lookup(b->m, s, n);
    /* a piece that is a token is that token: a shortcut (as tiktoken's), not a rule of its
     * own, since every token of the gpt2 and multilingual vocabularies is its own BPE */
    if (whole >= 0) {
        emit(arg, whole);
        return true;
    }
    if (n == 0) return true;
    if (n > UINT32_MAX - 1) return false;
    return merge_piece(b, s, (uint32_t)n, emit, arg);
}

void sotto__bpe_free(sotto__bpe *b)
{
    free(b->next);
    free(b->prev);
    free(b->alive);
    free(b->heap);
    *b = (sotto__bpe){.m = b->m};
}
