/* words.c — text tokens to words and punctuation merged into words, as openai/whisper
 * 20250625 does it (tokenizer.py split_tokens_on_unicode / split_tokens_on_spaces, with
 * tiktoken's decode(errors="replace"); timing.py merge_punctuations). */
#include "words.h"

#include <stdlib.h>
#include <string.h>

enum { REPLACEMENT = 0xFFFD };

int sotto__utf8_decode(const unsigned char *b, size_t n, uint32_t *cp)
{
    int k = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = b[i];
        if (c < 0x80) {
            cp[k++] = c, i++;
            continue;
        }
        int need;
        unsigned lo = 0x80, hi = 0xBF, v;
        if (c >= 0xC2 && c <= 0xDF) need = 1, v = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF) need = 2, v = c & 0x0F, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        else if (c >= 0xF0 && c <= 0xF4) need = 3, v = c & 0x07, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        else {
            cp[k++] = REPLACEMENT, i++; /* not a lead byte */
            continue;
        }
        size_t j = i + 1;
        int got = 0;
        for (; got < need && j < n; got++, j++) {
            unsigned d = b[j];
            if (d < lo || d > hi) break;
            v = v << 6 | (d & 0x3F);
            lo = 0x80, hi = 0xBF; /* only the second byte has a narrower range */
        }
        cp[k++] = got == need ? v : REPLACEMENT; /* a maximal subpart: one U+FFFD */
        i = j;
    }
    return k;
}

/* CP[0..N) as UTF-8 appended to the string *S of *LEN bytes (realloc). */
static bool append_utf8(char **s, size_t *len, const uint32_t *cp, int n)
{
    char *p = realloc(*s, *len + 4 * (size_t)n + 1);
    if (!p) return false;
    size_t o = *len;
    for (int i = 0; i < n; i++) {
        uint32_t c = cp[i];
        if (c < 0x80) p[o++] = (char)c;
        else if (c < 0x800) p[o++] = (char)(0xC0 | c >> 6), p[o++] = (char)(0x80 | (c & 0x3F));
        else if (c < 0x10000)
            p[o++] = (char)(0xE0 | c >> 12), p[o++] = (char)(0x80 | (c >> 6 & 0x3F)), p[o++] = (char)(0x80 | (c & 0x3F));
        else
            p[o++] = (char)(0xF0 | c >> 18), p[o++] = (char)(0x80 | (c >> 12 & 0x3F)),
            p[o++] = (char)(0x80 | (c >> 6 & 0x3F)), p[o++] = (char)(0x80 | (c & 0x3F));
    }
    p[o] = 0;
    *s = p, *len = o;
    return true;
}

/* The bytes of tokens TOK[0..N) into a new buffer (*N_BYTES); NULL when out of memory. */
static unsigned char *token_bytes(const sotto_model *m, const int32_t *tok, int n, size_t *n_bytes)
{
    size_t total = 0, len;
    for (int i = 0; i < n; i++)
        if (sotto_token_bytes(m, tok[i], &len)) total += len;
    unsigned char *b = malloc(total ? total : 1);
    if (!b) return NULL;
    total = 0;
    for (int i = 0; i < n; i++) {
        const char *p = sotto_token_bytes(m, tok[i], &len);
        if (p) memcpy(b + total, p, len), total += len;
    }
    *n_bytes = total;
    return b;
}

/* Python's str.isspace for one code point. */
static bool py_space(uint32_t c)
{
    return (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool sotto__py_in(const char *needle, size_t n, const char *hay)
{
    size_t h = strlen(hay);
    for (size_t i = 0; i + n <= h; i++)
        if (memcmp(hay + i, needle, n) == 0) return true;
    return false;
}

/* S[0..N) (valid UTF-8) without Python's whitespace at either end: *A, *LEN. */
static void py_strip(const char *s, size_t n, size_t *a, size_t *len)
{
    size_t i = 0, e = n;
    uint32_t cp[1];
    while (i < e) {
        size_t l = 1;
        while (i + l < e && ((unsigned char)s[i + l] & 0xC0) == 0x80) l++;
        if (sotto__utf8_decode((const unsigned char *)s + i, l, cp) != 1 || !py_space(cp[0])) break;
        i += l;
    }
    while (e > i) {
        size_t b = e - 1;
        while (b > i && ((unsigned char)s[b] & 0xC0) == 0x80) b--;
        if (sotto__utf8_decode((const unsigned char *)s + b, e - b, cp) != 1 || !py_space(cp[0])) break;
        e = b;
    }
    *a = i, *len = e - i;
}

/* Python's `s.strip() in PUNCT` for the UTF-8 string S. */
static bool stripped_in(const char *s, const char *punct)
{
    size_t a, len;
    py_strip(s, strlen(s), &a, &len);
    return sotto__py_in(s + a, len, punct);
}

static const char PY_PUNCTUATION[] = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"; /* string.punctuation */

int sotto__split_words(const sotto_model *m, const int32_t *tok, int n, bool unicode_only, sotto__wtime **out)
{
    *out = NULL;
    size_t n_full = 0;
    unsigned char *full = token_bytes(m, tok, n, &n_full);
    uint32_t *cf = full ? malloc((n_full + 1) * sizeof *cf) : NULL;
    uint32_t *cur = full ? malloc((n_full + 1) * sizeof *cur) : NULL;
    sotto__wtime *w = calloc((size_t)(n ? n : 1), sizeof *w);
    char *sub = NULL;
    size_t n_sub = 0;
    int n_words = 0, offset = 0, first = 0;
    bool ok = full && cf && cur && w;
    int n_cf = ok ? sotto__utf8_decode(full, n_full, cf) : 0;
    size_t at = 0, at_first = 0; /* byte offsets of the end of token i and of the group's start */
    for (int i = 0; ok && i < n; i++) {
        size_t len = 0;
        if (sotto_token_bytes(m, tok[i], &len)) at += len;
        /* split_tokens_on_unicode: the group tok[first..i] is a subword unless its first
         * U+FFFD is not one of the whole text's (a character that later tokens complete) */
        int nc = sotto__utf8_decode(full + at_first, at - at_first, cur), bad = -1;
        for (int k = 0; k < nc && bad < 0; k++)
            if (cur[k] == REPLACEMENT) bad = k;
        if (bad >= 0 && !(offset + bad < n_cf && cf[offset + bad] == REPLACEMENT)) continue;
        n_sub = 0;
        ok = append_utf8(&sub, &n_sub, cur, nc);
        /* split_tokens_on_spaces: a word of its own, or the end of the last one */
        bool own = unicode_only || n_words == 0 || tok[first] >= m->info.token_eot || sub[0] == ' ' ||
                   stripped_in(sub, PY_PUNCTUATION);
        sotto__wtime *t = own ? &w[n_words++] : &w[n_words - 1];
        size_t wl = t->word ? strlen(t->word) : 0;
        ok = ok && append_utf8(&t->word, &wl, cur, nc);
        t->n_tokens += i + 1 - first;
        offset += nc, first = i + 1, at_first = at;
    }
    free(full), free(cf), free(cur), free(sub);
    if (!ok) {
        sotto__words_free(w, n);
        return -1;
    }
    *out = w;
    return n_words;
}

/* A's word and tokens joined with B's (A first when B_FIRST is false), B emptied into ""
 * and no tokens: the joined word goes to A. */
static bool join(sotto__wtime *a, sotto__wtime *b, bool b_first)
{
    size_t la = strlen(a->word), lb = strlen(b->word);
    char *s = malloc(la + lb + 1);
    if (!s) return false;
    if (b_first) memcpy(s, b->word, lb), memcpy(s + lb, a->word, la + 1);
    else memcpy(s, a->word, la), memcpy(s + la, b->word, lb + 1);
    free(a->word);
    a->word = s;
    a->n_tokens += b->n_tokens;
    b->word[0] = 0;
    b->n_tokens = 0;
    return true;
}

bool sotto__merge_punctuations(sotto__wtime *w, int n, const char *prepended, const char *appended)
{
    for (int i = n - 2, j = n - 1; i >= 0; i--) {
        if (w[i].word[0] == ' ' && stripped_in(w[i].word, prepended)) {
            if (!join(&w[j], &w[i], true)) return false; /* prepend it to the following word */
        } else {
            j = i;
        }
    }
    for (int i = 0, j = 1; j < n; j++) {
        size_t lp = strlen(w[i].word);
        if ((lp == 0 || w[i].word[lp - 1] != ' ') && sotto__py_in(w[j].word, strlen(w[j].word), appended)) {
            if (!join(&w[i], &w[j], false)) return false; /* append it to the previous word */
        } else {
            i = j;
        }
    }
    return true;
}

void sotto__words_free(sotto__wtime *w, int n)
{
    if (!w) return;
    for (int i = 0; i < n; i++) free(w[i].word);
    free(w);
}
