/* result.h — a transcript as the engine builds it (sotto_result and what it owns), shared
 * by the long-form loop (transcribe.c, which frees it: sotto_result_free) and batched
 * transcription (batch.c). */
#ifndef SOTTO_RESULT_H
#define SOTTO_RESULT_H

#include "../common.h"

typedef struct sotto__result {
    sotto_result pub;          /* first: sotto_result_free casts */
    sotto_segment *seg;        /* [cap_seg]; pub.segments */
    int cap_seg;
    char lang[16];             /* pub.language */
    char *text;                /* pub.text */
    bool dropped;              /* a callback stopped the run inside a window */
} sotto__result;

/* Frees what segment S owns (its text, tokens, words), not S. */
void sotto__segment_free(sotto_segment *s);

/* Room for MORE segments in X: false when out of memory (X unchanged). */
bool sotto__result_grow(sotto__result *x, int more);
/* S as X's next segment (room made by sotto__result_grow), its id set. */
void sotto__result_append(sotto__result *x, sotto_segment s);
/* The segments' texts joined (malloc'd), NULL when out of memory. */
char *sotto__result_joined_text(const sotto__result *x);
/* A segment's strings: TOKENS [N] as text into *TEXT and copied into *TOKS (both
 * malloc'd); false when out of memory (both NULL). */
bool sotto__segment_strings(const sotto_model *m, const int32_t *tokens, int n, char **text, int32_t **toks);

#endif
