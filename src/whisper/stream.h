/* stream.h — the live session's seam for tests (stream.c): a scripted decoder in place of
 * sotto_transcribe, so that the policy (agreement, trims, the bound, the loop rule, the
 * VAD's commits) can be checked step by step on words a test chooses, without a model. */
#ifndef SOTTO_STREAM_H
#define SOTTO_STREAM_H

#include "sotto.h"

/* Decodes X[0..N) (the session's buffer, which starts OFFSET_S seconds into the stream)
 * as sotto_transcribe would with TP: a result with times relative to the buffer's start,
 * owned by the decoder and valid until its next call, or NULL to fail the step. */
typedef const sotto_result *(*sotto__stream_decoder)(void *user, const float *x, int64_t n, double offset_s,
                                                     const sotto_transcribe_params *tp);

/* Every later step of S decodes with FN(USER, ...) instead of sotto_transcribe (NULL:
 * sotto_transcribe again). */
void sotto__stream_set_decoder(sotto_stream *s, sotto__stream_decoder fn, void *user);

/* sotto_transcribe of N samples, each step's decoding: up to 30 s of them as one window.
 * The segment the decoding leaves unfinished (text after its last timestamp pair) is
 * kept, to the window's end, and the loop stops there, where openai's loop would encode
 * a window again from the last timestamp or word end to decode that tail anew. Only a
 * decoding whose words (with word_timestamps) end 2 s or more before the audio does (an
 * early <|endoftext|>: the speech after it unheard) goes on, from its last word, as
 * openai's loop does. More than 30 s (a push of a step far behind) goes through openai's
 * loop. (transcribe.c) */
sotto_status sotto__transcribe_window(sotto_context *ctx, const float *samples, int64_t n_samples,
                                      const sotto_transcribe_params *params, sotto_result **out);

#endif
