/* result.c — freeing a transcript (result.h) and its segments, for the long-form loop and
 * batched transcription alike. */
#include "result.h"

#include <stdlib.h>

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
