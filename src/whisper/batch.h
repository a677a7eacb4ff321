/* batch.h — batched transcription (batch.c): faster-whisper's BatchedInferencePipeline
 * over a signal in memory, for sotto_transcribe* when params.batch_size > 0. */
#ifndef SOTTO_BATCH_H
#define SOTTO_BATCH_H

#include "context.h"

/* Transcribes the N samples X (16 kHz mono, the whole file) in chunks of speech of at
 * most 30 s, P->batch_size (<= the context's max_batch) chunks at a time; see sotto.h
 * sotto_transcribe_params.batch_size. */
sotto_status sotto__transcribe_batched(sotto_context *ctx, const float *x, int64_t n, const sotto_transcribe_params *p,
                                       sotto_result **out);

/* The same over FROM (read whole first), or over SAMPLES when FROM is NULL. */
sotto_status sotto__transcribe_batched_source(sotto_context *ctx, const sotto_audio_source *from, const float *samples,
                                              int64_t n_samples, const sotto_transcribe_params *p, sotto_result **out);

#endif
