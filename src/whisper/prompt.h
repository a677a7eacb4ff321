/* prompt.h — the pieces faster-whisper 1.2.1 (transcribe.py get_prompt, generate_segments,
 * generate_with_fallback) adds to openai's window prompt, for transcribe.c and search.c:
 * text turned into prompt tokens (the initial prompt, hotwords, a prefix), the clips of
 * clip_timestamps in frames, and CTranslate2's cap on the tokens of a window. */
#ifndef SOTTO_PROMPT_H
#define SOTTO_PROMPT_H

#include "context.h"

/* The tokens of " " + TEXT stripped (openai's and faster-whisper's encoding of a prompt),
 * the first MAX of them (MAX < 0: all), into *IDS (free with free; never NULL on success)
 * and *N. A failure (invalid UTF-8, out of memory) is set on CTX, its message naming WHAT. */
sotto_status sotto__prompt_tokens(sotto_context *ctx, const char *text, int max, const char *what, int32_t **ids,
                                  int *n);

/* One clip of clip_timestamps: mel frames [start, end) (end may pass the content). */
typedef struct sotto__clip {
    int64_t start, end;
} sotto__clip;

/* The clips of the N seconds in TS (start, end, ...) over CONTENT frames, as
 * generate_segments makes them: each time round(t * 100) (half to even); none given: one
 * clip from 0; an odd count: the last clip ends at CONTENT. *OUT (free with free) gets
 * *N_OUT >= 1 clips (one that ends before it starts is empty: the loop passes it). A
 * negative or NaN time fails on CTX. */
sotto_status sotto__clips(sotto_context *ctx, const double *ts, int n, int64_t content, sotto__clip **out,
                          int *n_out);

/* The window at *SEEK of the clips [N_CLIPS) over CONTENT frames: its size in frames, the
 * seek moved into the clip *CLIP it belongs to (openai's and faster-whisper's loop over
 * seek_clips: a window never passes its clip's end); 0 once past the last clip. */
int sotto__clip_window(const sotto__clip *clips, int n_clips, int *clip, int64_t content, int64_t *seek);

/* The most tokens a window may sample after a prompt of N_BEFORE_PREFIX tokens (the
 * previous text and the start sequence) and a prefix of N_PREFIX, in a decoder of N_CTX
 * positions: SAMPLE_LEN; with MAX_NEW_TOKENS N > 0, CTranslate2 4.8's min((P + N) / 2,
 * P + N - S + 1) with P the whole prompt and S = N_BEFORE_PREFIX, less the prefix (which
 * it counts); -1 when P + N passes N_CTX (faster-whisper refuses that). CT2 without N:
 * faster-whisper's max_length of N_CTX the same way, min(N_CTX / 2, N_CTX - S + 1) less
 * the prefix, at most SAMPLE_LEN. */
int sotto__sample_len(int sample_len, int max_new_tokens, bool ct2, int n_prefix, int n_before_prefix, int n_ctx);

#endif
