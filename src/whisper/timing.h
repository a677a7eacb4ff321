/* timing.h — word timestamps of one decoded window (openai/whisper 20250625 timing.py
 * add_word_timestamps): one decoder pass over all the window's text tokens, the
 * alignment heads' cross-attention aligned by DTW (align.c), words (words.c), and the
 * reference's adjustments of long words and of the segments' start and end. */
#ifndef SOTTO_TIMING_H
#define SOTTO_TIMING_H

#include "context.h"

/* A segment of the window being finished (transcribe.py current_segments). */
typedef struct sotto__wseg {
    double start, end;         /* seconds on the decoded timeline; adjusted here */
    const int32_t *tokens;     /* its tokens, timestamps included */
    int n_tokens;
    sotto_word *words;         /* out: malloc'd, each word's string malloc'd (sotto__wseg_free) */
    int n_words;
} sotto__wseg;

typedef struct sotto__timing_opts {
    const int32_t *sot_seq;    /* tokenizer.sot_sequence: <|startoftranscript|> [language task] */
    int n_sot;
    int64_t seek;              /* the window's first mel frame */
    int num_frames;            /* its frames of audio (segment_size) */
    const char *prepend, *append; /* punctuation sets */
    bool unicode_only;         /* split words at characters (zh, ja, th, lo, my, yue) */
} sotto__timing_opts;

/* add_word_timestamps over the N segments of the window last encoded on CTX, with
 * LAST_SPEECH the end of the speech before it. Errors: out of memory, a window of more
 * tokens than the decoder's context, the backend's. */
sotto_status sotto__add_word_timestamps(sotto_context *ctx, const sotto__timing_opts *o, sotto__wseg *segs, int n,
                                        double last_speech);

/* The alignment heads of M as (layer, head) pairs, sorted: the model's own, or when it
 * has none every head of layers n_text_layer / 2 .. (openai's default). *OUT: malloc'd, 2 *
 * *N ints; false when out of memory. */
bool sotto__alignment_heads(const sotto_model *m, int **out, int *n);

void sotto__wseg_free(sotto__wseg *s);

#endif
