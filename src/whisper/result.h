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

#endif
