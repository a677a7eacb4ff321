/* result.c — a transcript as it is built and freed (result.h): room for segments, a
 * segment appended, its text and tokens, the joined text; for the long-form loop and
 * batched transcription alike. */
#include "result.h"

#include <stdlib.h>
#include <string.h>

#include "text.h"

void sotto__segment_free(sotto_segment *s)
{
    free((void *)s->text), free((void *)s->tokens);
    for (int k = 0; k < s->n_words; k++) free((void *)s->words[k].word);
    free((void *)s->words);
}

void sotto_result_free(sotto_result *r)
{
    if (!r) return;
    sotto__result *x = (sotto__result *)r;
    for (int i = 0; i < r->n_segments; i++) sotto__segment_free(&x->seg[i]);
    free(x->seg);
    free(x->text);
    free(x);
}

bool sotto__result_grow(sotto__result *x, int more)
{
    if (x->pub.n_segments + more <= x->cap_seg) return true;
    int cap = 2 * (x->pub.n_segments + more) + 16;
    sotto_segment *s = realloc(x->seg, (size_t)cap * sizeof *s);
    if (!s) return false;
    x->seg = s, x->cap_seg = cap;
    x->pub.segments = s;
    return true;
}

void sotto__result_append(sotto__result *x, sotto_segment s)
{
    s.id = x->pub.n_segments;
    x->seg[x->pub.n_segments++] = s;
}

char *sotto__result_joined_text(const sotto__result *x)
{
    size_t len = 0;
    for (int i = 0; i < x->pub.n_segments; i++) len += strlen(x->seg[i].text);
    char *t = malloc(len + 1);
    if (!t) return NULL;
    size_t at = 0;
    for (int i = 0; i < x->pub.n_segments; i++) {
        size_t k = strlen(x->seg[i].text);
        memcpy(t + at, x->seg[i].text, k);
        at += k;
    }
    t[at] = 0;
    return t;
}

bool sotto__segment_strings(const sotto_model *m, const int32_t *tokens, int n, char **text, int32_t **toks)
{
    *text = sotto__detok(m, tokens, n, false);
    *toks = malloc((size_t)(n ? n : 1) * sizeof **toks);
    if (!*text || !*toks) {
        free(*text), free(*toks);
        *text = NULL, *toks = NULL;
        return false;
    }
    memcpy(*toks, tokens, (size_t)n * sizeof **toks);
    return true;
}
