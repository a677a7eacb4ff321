/* vad_chunks.h — the batched pipeline's cut (vad_chunks.c) with the caller's VAD
 * parameters, for batch.c: faster-whisper's BatchedInferencePipeline given vad_parameters. */
#ifndef SOTTO_VAD_CHUNKS_H
#define SOTTO_VAD_CHUNKS_H

#include "../common.h"

/* sotto_batch_chunks (sotto.h) with the speech found by PARAMS instead of
 * sotto_vad_params_batched(CHUNK_LENGTH_S) (NULL: those); the chunks still at most
 * CHUNK_LENGTH_S seconds of speech each. Invalid PARAMS fail as sotto_vad_intervals fails. */
sotto_status sotto__batch_chunks(const sotto_vad *vad, const float *samples, int64_t n_samples,
                                 const sotto_vad_params *params, double chunk_length_s, int n_threads,
                                 sotto_vad_interval **speech, int64_t *n_speech, sotto_batch_chunk **chunks,
                                 int64_t *n_chunks);

#endif
