/* context.h — per-stream engine state: the backend chosen for the context, the encoder
 * and the decoder (their weights as the backend holds them, every buffer carved from one
 * arena made when the context is created) and the error message. */
#ifndef SOTTO_CONTEXT_H
#define SOTTO_CONTEXT_H

#include "../model/model.h"
#include "decoder.h"
#include "encoder.h"

enum { SOTTO__WORDS_ROWS = 32 }; /* rows of logits per pass of the word timestamps */

struct sotto_context {
    const sotto_model *model;
    sotto__backend *be;
    sotto__encoder enc;
    sotto__decoder dec;
    char error[SOTTO__ERR_LEN];
    char device[320];          /* sotto_context_device */
    int max_batch;             /* windows encoded and decoded together (sotto_context_params) */
    size_t batch_bytes;        /* a batched context on host memory: its buffers, on the */
    const void *batch_mem;     /* process's list of them (context.c), from batch_mem */
    sotto_context *batch_next;
    int n_threads;             /* the host threads it may use (sotto_context_params, 0 resolved) */
    bool encoded;
    bool have_state;           /* dec.h row 0 holds the final state of the last decode */
    bool have_logits;          /* dec.logits holds its projection (made on demand) */
    sotto__buf words_logits;   /* [SOTTO__WORDS_ROWS, n_vocab]: word timestamps' logits */
    bool have_words_logits;    /*   (allocated on first use) */
    float *host_enc;           /* host copies of the encoder output and logits, for a */
    float *host_logits;        /* backend whose memory is not the host's (on demand) */
};

/* A public call's arguments refused: the message on CTX (when there is one) and as
 * sotto_last_error(), SOTTO_ERR_INVALID_ARG returned. */
sotto_status sotto__ctx_args(sotto_context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records a message on CTX and returns STATUS. */
sotto_status sotto__ctx_fail(sotto_context *ctx, sotto_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The backend's sync after a pass: its failure (a GPU's lost device, a validation
 * error) as the context's, its message prefixed by WHAT. */
sotto_status sotto__ctx_sync(sotto_context *ctx, const char *what);

/* sotto_decode without computing the logits (sotto_logits still makes them on demand). */
sotto_status sotto__decode_state(sotto_context *ctx, const int32_t *tokens, int n_tokens, int n_past);

/* sotto_decode in cache slot SLOT instead of 0 (batched decoding: a window's own slot,
 * while other windows' searches hold theirs). */
sotto_status sotto__decode_in(sotto_context *ctx, int slot, const int32_t *tokens, int n_tokens, int n_past);

#endif
