/* vad_chunks.c — the cut of faster-whisper 1.2.1's BatchedInferencePipeline: its own
 * get_speech_timestamps (faster_whisper/vad.py: the older silero rule, a split of over-long
 * speech at the last silence of 98 ms, the audio padded to whole windows plus one more
 * when already whole) with the pipeline's VadOptions(max_speech_duration_s=chunk_length,
 * min_silence_duration_ms=160), then collect_chunks: intervals merged in order into
 * chunks of at most chunk_length seconds, each chunk their samples end to end. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "vad_chunks.h"

sotto_vad_params sotto_vad_params_batched(double chunk_length_s)
{
    sotto_vad_params p = sotto_vad_params_default();
    /* faster-whisper's VadOptions defaults, then the pipeline's two */
    p.min_speech_duration_ms = 0;
    p.speech_pad_ms = 400;
    p.max_speech_duration_s = chunk_length_s;
    p.min_silence_duration_ms = 160;
    p.use_max_poss_sil_at_max_speech = 0; /* vad.py keeps the last silence > 98 ms (prev_end) */
    return p;
}

/* collect_chunks over SPEECH [N]: *OUT gets the chunks (at most N + 1). */
static int64_t collect(const sotto_vad_interval *speech, int64_t n, double max_samples, sotto_batch_chunk *out)
{
    int64_t n_out = 0, first = 0, total = 0, cur = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t len = speech[i].end - speech[i].start;
        if ((double)(cur + len) > max_samples) { /* as vad.py: an empty chunk when the first overflows */
            out[n_out++] = (sotto_batch_chunk){.offset = total, .n_samples = cur, .first = first, .n_speech = i - first};
            total += cur;
            first = i, cur = len;
        } else {
            cur += len;
        }
    }
    out[n_out++] = (sotto_batch_chunk){.offset = total, .n_samples = cur, .first = first, .n_speech = n - first};
    return n_out;
}

/* The window probabilities of SAMPLES as vad.py computes them: np.pad to the next whole
 * window, a whole extra one of zeros when N is already a multiple of 512. */
static sotto_status probs_padded(const sotto_vad *vad, const float *x, int64_t n, int n_threads, float **probs,
                                 int64_t *n_probs)
{
    int64_t total = n / SOTTO_VAD_WINDOW + 1;
    float *p = malloc((size_t)total * sizeof *p), zeros[SOTTO_VAD_WINDOW] = {0};
    if (!p) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "out of memory"});
    sotto_vad_stream *s = NULL;
    sotto_status st = sotto_vad_stream_init(vad, n_threads, &s);
    int64_t got = 0, more = 0;
    if (!st) st = sotto_vad_stream_push(s, x, n, p, total, &got);
    if (!st && n % SOTTO_VAD_WINDOW == 0) st = sotto_vad_stream_push(s, zeros, SOTTO_VAD_WINDOW, p + got, total - got, &more);
    got += more, more = 0;
    if (!st) st = sotto_vad_stream_flush(s, p + got, &more);
    if (st && s) {
        sotto__err err = {st, ""};
        snprintf(err.msg, sizeof err.msg, "VAD: %s", sotto_vad_stream_error(s));
        sotto__publish(&err);
    }
    sotto_vad_stream_free(s);
    if (st) {
        free(p);
        return st;
    }
    *probs = p;
    *n_probs = got + more;
    return SOTTO_OK;
}

sotto_status sotto_vad_speech_fw(const sotto_vad *vad, const float *samples, int64_t n_samples,
                                 const sotto_vad_params *params, int n_threads, sotto_vad_interval **out,
                                 int64_t *n_out)
{
    if (!vad || !out || !n_out || n_samples < 0 || (n_samples && !samples))
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "sotto_vad_speech_fw: bad arguments"});
    *out = NULL, *n_out = 0;
    sotto_vad_params p = sotto_vad_params_batched(INFINITY);
    p.min_silence_duration_ms = 2000; /* VadOptions' own; the pipeline's 160 is sotto_vad_params_batched's */
    if (params) {
        p = *params;
        p.min_silence_at_max_speech_ms = 98, p.use_max_poss_sil_at_max_speech = 0;
    }
    float *probs = NULL;
    int64_t n_probs = 0;
    sotto_status st = probs_padded(vad, samples, n_samples, n_threads, &probs, &n_probs);
    if (!st) st = sotto_vad_intervals(probs, n_probs, n_samples, &p, out, n_out);
    free(probs);
    return st;
}

sotto_status sotto__batch_chunks(const sotto_vad *vad, const float *samples, int64_t n_samples,
                                 const sotto_vad_params *params, double chunk_length_s, int n_threads,
                                 sotto_vad_interval **speech, int64_t *n_speech, sotto_batch_chunk **chunks,
                                 int64_t *n_chunks)
{
    if (!vad || !speech || !n_speech || !chunks || !n_chunks || n_samples < 0 || (n_samples && !samples))
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "sotto_batch_chunks: bad arguments"});
    *speech = NULL, *chunks = NULL, *n_speech = *n_chunks = 0;
    if (!(chunk_length_s > 0 && chunk_length_s <= 30))
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "sotto_batch_chunks: the chunk length must be "
                                                                   "in (0, 30] seconds"});
    sotto_vad_params p = params ? *params : sotto_vad_params_batched(chunk_length_s);
    sotto_status st = sotto_vad_speech_fw(vad, samples, n_samples, &p, n_threads, speech, n_speech);
    if (st || *n_speech == 0) return st; /* no speech: no chunk (the pipeline decodes none) */
    *chunks = malloc((size_t)(*n_speech + 1) * sizeof **chunks);
    if (!*chunks) {
        free(*speech), *speech = NULL, *n_speech = 0;
        return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "out of memory"});
    }
    *n_chunks = collect(*speech, *n_speech, chunk_length_s * SOTTO_SAMPLE_RATE, *chunks);
    return SOTTO_OK;
}

sotto_status sotto_batch_chunks(const sotto_vad *vad, const float *samples, int64_t n_samples, double chunk_length_s,
                                int n_threads, sotto_vad_interval **speech, int64_t *n_speech,
                                sotto_batch_chunk **chunks, int64_t *n_chunks)
{
    return sotto__batch_chunks(vad, samples, n_samples, NULL, chunk_length_s, n_threads, speech, n_speech, chunks,
                               n_chunks);
}
