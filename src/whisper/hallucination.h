/* hallucination.h — openai-whisper's hallucination_silence_threshold (transcribe.py
 * 20250625): with word timestamps, a window's segments whose words look hallucinated
 * (improbable, very short or very long) and that silence surrounds are dropped, and the
 * seek moves past the silence. Pure over the window's segments. */
#ifndef SOTTO_HALLUCINATION_H
#define SOTTO_HALLUCINATION_H

#include "timing.h"

typedef struct sotto__hal_window {
    double threshold;          /* seconds of silence */
    int64_t seek, size;        /* the window: first frame (previous_seek), segment_size */
    int64_t content_frames;
    double last_speech;        /* last_speech_timestamp before the window */
    bool single;               /* its tokens end in a single timestamp */
} sotto__hal_window;

/* Applies the rule to the window's N segments SEGS (with words): *N may shrink (the
 * dropped segments' words are freed), *NEXT_SEEK (the seek transcribe() has chosen so
 * far) may change. True when the whole window is dropped (transcribe.py's `continue`:
 * nothing of it is kept). */
bool sotto__skip_hallucinations(const sotto__hal_window *w, sotto__wseg *segs, int *n, int64_t *next_seek);

/* utils.py get_end: the end of the last word of SEGS [N], else of the last segment;
 * false for no segments. */
bool sotto__segments_end(const sotto__wseg *segs, int n, double *end);

#endif
