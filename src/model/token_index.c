/* token_index.c — a hash index from a token's bytes to its id over the base vocabulary
 * (ids below <|endoftext|>: tiktoken's "mergeable ranks", whose rank is the id). Built
 * once at load from the vocabulary every loader fills; the BPE encoder
 * (whisper/tokenizer.c) looks pieces and pairs up in it. */
#include "model.h"

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

void sotto__token_index_fill(sotto_model *m, uint32_t *tab, size_t slots)
{
    int32_t n = m->info.token_eot;
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
