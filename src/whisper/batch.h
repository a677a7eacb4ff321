/* batch.h — batched transcription, faster-whisper's BatchedInferencePipeline: one input's
 * part (batch.c: its read, cut, language, logit rules, each chunk's log-mel and segments)
 * and the batches over the chunks of one or more inputs (batch_run.c), for
 * sotto_transcribe* when params.batch_size > 0 and for sotto_transcribe_batch. */
#ifndef SOTTO_BATCH_H
#define SOTTO_BATCH_H

#include "context.h"
#include "input.h"
#include "result.h"
#include "search.h"
#include "timing.h"

/* One input of a batched run. */
typedef struct sotto__bin {
    sotto_batch_item *item;    /* its audio and parameters; status and error written here */
    sotto_transcribe_params p; /* item->params */
    float *owned;              /* the signal read from item->source, or NULL */
    const float *x;            /* the signal, N samples */
    int64_t n;
    sotto_vad_interval *speech;
    int64_t n_speech;
    sotto_batch_chunk *chunks;
    int64_t n_chunks, next;    /* NEXT: chunks taken into batches so far */
    sotto__input map;          /* the time map over speech (input.h) */
    sotto__rules rules;
    sotto__i32list suppress;   /* the suppressed ids (suppress.h), in SUPPRESS_OWNED or the model */
    int32_t *suppress_owned;
    int32_t sot_seq[4];
    int n_sot;
    int32_t *prompt, *hotwords; /* the pipeline's prompt: initial_prompt's tokens, hotwords' */
    int n_prompt, n_hotwords;
    int key;                   /* the tokens before the first sampled one: inputs of one length
                                  are batched together; 0 until prepared */
    sotto__decode_opts o;      /* the pipeline's decoding of each chunk */
    sotto__result *res;
    uint64_t rng;
    double last_speech;
    bool failed;               /* item->status set: no more chunks */
    bool clips;                /* the chunks are clip_timestamps' (offsets on the file's timeline) */
} sotto__bin;

/* Shared by the inputs of a run: the context and its scratch. */
typedef struct sotto__brun {
    sotto_context *ctx;
    float *mels;               /* [max_batch][n_mels, 3000] */
    float *audio;              /* [SOTTO_N_SAMPLES]: one chunk's samples */
    sotto__wseg *cur;          /* [SOTTO__MAX_TOKENS + 1]: one chunk's segments */
} sotto__brun;

/* Checks IN's parameters, reads its audio, cuts it into chunks, finds its language (with
 * the context's encoder, for a multilingual model) and sets its decoding up. SOTTO_OK, or
 * the status with the context's message (the caller marks IN failed). */
sotto_status sotto__bin_prepare(sotto__brun *r, sotto__bin *in);
/* The log-mel of chunk C of IN from its sample SKIP on into MEL [n_mels, 3000]: its
 * samples end to end (SKIP 0: the whole chunk; more: the rest of a chunk whose decoding
 * ended early, batch_continue), then zeros. */
sotto_status sotto__bin_mel(sotto__brun *r, const sotto__bin *in, const sotto_batch_chunk *c, int64_t skip,
                            float *mel);
/* Chunk C of IN from sample SKIP, decoded as D, as segments of IN's result on the file's
 * timeline; with word timestamps its window W must be the decoder's (the alignment reads
 * its cross K/V). LANG: the language token the chunk was decoded in (multilingual), or
 * -1: the input's. */
sotto_status sotto__bin_add_chunk(sotto__brun *r, sotto__bin *in, const sotto_batch_chunk *c, int64_t skip, int w,
                                  const sotto__decode_result *d, int32_t lang);
/* batch_continue: where the next piece of chunk C of IN starts, after the piece from
 * sample SKIP decoded as D ended: past its last timestamp token when at least 1 s of the
 * chunk's speech is left after that, else -1 (the chunk is done). */
int64_t sotto__bin_next_skip(const sotto__bin *in, const sotto_batch_chunk *c, int64_t skip,
                             const sotto__decode_result *d);
/* IN failed with ST: the context's message into its item (none is taken from it after). */
void sotto__bin_fail(sotto__brun *r, sotto__bin *in, sotto_status st);
/* IN's result into its item (SOTTO_OK) unless it failed; frees what IN holds. */
void sotto__bin_finish(sotto__brun *r, sotto__bin *in);

/* Transcribes the N samples X (16 kHz mono, the whole file), or FROM (read whole first)
 * when it is not NULL, in chunks of speech of at most 30 s, P->batch_size (<= the
 * context's max_batch) chunks at a time; see sotto.h sotto_transcribe_params.batch_size.
 * P has been checked (sotto__transcribe_params_check). */
sotto_status sotto__transcribe_batched_source(sotto_context *ctx, const sotto_audio_source *from, const float *samples,
                                              int64_t n_samples, const sotto_transcribe_params *p, sotto_result **out);

#endif
