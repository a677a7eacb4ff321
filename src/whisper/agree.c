/* agree.c — LocalAgreement-2's word lists (agree.h): the agreed prefix of two decodings
 * and the committed words a decoding of the trimmed buffer repeats, after
 * whisper_streaming's HypothesisBuffer (ufal/whisper_streaming whisper_online.py). */
#include <stdlib.h>
#include <string.h>

#include "agree.h"

static bool grow(sotto__twords *l, int more)
{
    if (l->n + more <= l->cap) return true;
    int cap = (l->n + more) * 2 + 16;
    sotto__tword *w = realloc(l->w, (size_t)cap * sizeof *w);
    if (!w) return false;
    l->w = w, l->cap = cap;
    return true;
}

bool sotto__twords_push(sotto__twords *l, const char *text, double start, double end, double probability)
{
    char *t = strdup(text ? text : "");
    if (!t || !grow(l, 1)) {
        free(t);
        return false;
    }
    l->w[l->n++] = (sotto__tword){t, start, end, probability};
    return true;
}

bool sotto__twords_take(sotto__twords *to, sotto__twords *from, int n)
{
    if (n > from->n) n = from->n;
    if (n <= 0) return true;
    if (!grow(to, n)) return false;
    memcpy(to->w + to->n, from->w, (size_t)n * sizeof *from->w);
    to->n += n;
    memmove(from->w, from->w + n, (size_t)(from->n - n) * sizeof *from->w);
    from->n -= n;
    return true;
}

void sotto__twords_drop(sotto__twords *l, int n)
{
    if (n > l->n) n = l->n;
    if (n <= 0) return;
    for (int i = 0; i < n; i++) free(l->w[i].text);
    memmove(l->w, l->w + n, (size_t)(l->n - n) * sizeof *l->w);
    l->n -= n;
}

void sotto__twords_keep(sotto__twords *l, int n)
{
    if (n < 0) n = 0;
    for (int i = n; i < l->n; i++) free(l->w[i].text);
    if (n < l->n) l->n = n;
}

void sotto__twords_clear(sotto__twords *l)
{
    sotto__twords_drop(l, l->n);
}

void sotto__twords_free(sotto__twords *l)
{
    sotto__twords_clear(l);
    free(l->w);
    *l = (sotto__twords){0};
}

/* The next byte of S that the comparison sees (folded), from *I on; 0 at the end. */
static unsigned char next_kept(const char *s, size_t *i)
{
    for (;;) {
        unsigned char c = (unsigned char)s[*i];
        if (!c) return 0;
        (*i)++;
        if (c >= 'A' && c <= 'Z') return (unsigned char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80) return c;
    }
}

bool sotto__word_same(const char *a, const char *b)
{
    size_t i = 0, j = 0;
    for (;;) {
        unsigned char x = next_kept(a, &i), y = next_kept(b, &j);
        if (x != y) return false;
        if (!x) return true;
    }
}

int sotto__agree_prefix(const sotto__twords *a, const sotto__twords *b)
{
    int n = 0;
    while (n < a->n && n < b->n && sotto__word_same(a->w[n].text, b->w[n].text)) n++;
    return n;
}

int sotto__repeat_of_committed(const sotto__twords *committed, const sotto__twords *new_words)
{
    return sotto__leading_repeat(committed, new_words, 1, 5);
}

int sotto__leading_repeat(const sotto__twords *committed, const sotto__twords *new_words, int least, int most)
{
    if (most > committed->n) most = committed->n;
    if (most > new_words->n) most = new_words->n;
    for (int len = most; len >= least; len--) {
        const sotto__tword *tail = committed->w + committed->n - len;
        int k = 0;
        while (k < len && sotto__word_same(tail[k].text, new_words->w[k].text)) k++;
        if (k == len) return len;
    }
    return 0;
}

/* Whether the L words of W at I and at J are the same (sotto__word_same). */
static bool same_run(const sotto__twords *w, int i, int j, int L)
{
    for (int k = 0; k < L; k++)
        if (!sotto__word_same(w->w[i + k].text, w->w[j + k].text)) return false;
    return true;
}

int sotto__loop_start(const sotto__twords *w)
{
    for (int i = 0; i < w->n; i++)
        for (int L = 1; L <= SOTTO__LOOP_MAX_WORDS; L++) {
            int times = L == 1 ? 4 : 3;
            if (i + times * L > w->n) break;
            int t = 1;
            while (t < times && same_run(w, i, i + t * L, L)) t++;
            if (t == times) return i;
        }
    return w->n;
}
