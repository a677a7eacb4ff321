/* encoder.h — the audio encoder's state: its weights as the backend holds them and its
 * buffers, declared on the context's arena. */
#ifndef SOTTO_ENCODER_H
#define SOTTO_ENCODER_H

#include "arena.h"
#include "layer.h"

typedef struct sotto__encoder {
    sotto__backend *be;
    int n_mels, n_frames, n_ctx, d, n_head, n_layer;
    int n_batch;                   /* windows one pass may hold (sotto_context_params.max_batch) */
    int ff_rows;                   /* rows of one block of the MLP (a quarter window) */
    sotto__buf conv1_w, conv1_b;   /* [d, n_mels, 3], [d] */
    sotto__buf conv2_w, conv2_b;   /* [d, d, 3], [d] */
    sotto__buf pos;                /* [n_ctx, d] */
    sotto__blayer *blocks;         /* [n_layer] */
    sotto__bnorm ln_post;
    /* buffers, each of n_batch windows' rows (below: one window's shape) but for kt and ff;
     * mel, patches and conv1 (one window's) are dead once the blocks start, and live inside
     * h .. ff */
    sotto__buf mel;                /* [n_mels, n_frames] */
    sotto__buf patches;            /* im2col rows: [n_frames, 3 n_mels] or [n_frames / 2, 3 d] */
    sotto__buf conv1;              /* [n_frames, d] */
    sotto__buf x;                  /* [n_ctx, d] residual stream */
    sotto__buf out;                /* [n_ctx, d] output of ln_post, in q's bytes (valid until
                                      the next pass) */
    sotto__buf h, q, attn;         /* [n_ctx, d] */
    sotto__buf k, v;               /* [n_ctx, max(d, d_text)]: free after the blocks, for the
                                      decoder's cross-attention projections */
    sotto__buf kt;                 /* [d, n_ctx] keys transposed: one window's */
    sotto__buf ff;                 /* [ff_rows, 4d]: the MLP runs in blocks of rows, whose bits
                                      are those of one pass (the backends' rows are
                                      independent), so its widest buffer is not the
                                      encoder's largest (9.2 MB of 2.3 for tiny's window) */
} sotto__encoder;

/* Imports M's encoder weights through BE and declares the buffers on A, for passes of
 * up to N_BATCH (>= 1) windows. */
sotto_status sotto__encoder_init(sotto__encoder *e, sotto__backend *be, const sotto_model *m, int n_batch,
                                 sotto__arena *a, sotto__err *err);
/* Declares on A the buffers of E (its dimensions and n_batch set, as by init) for M's
 * model: what init declares, alone, so that a context can size other batches. */
void sotto__encoder_declare(sotto__encoder *e, const sotto_model *m, sotto__arena *a);
void sotto__encoder_free(sotto__encoder *e);

/* Runs the encoder on MEL [n_mels, n_frames] (host memory): e->out holds the result. */
void sotto__encoder_forward(sotto__encoder *e, const float *mel);

/* The encoder over NB (<= n_batch) windows in one pass: MELS [nb][n_mels, n_frames], host
 * memory; e->out rows [w * n_ctx, (w + 1) * n_ctx) are window w's output. Every linear
 * runs over all nb * n_ctx rows at once (one GEMM per layer); the convolutions, the
 * attention and the element-wise steps per window. Window w's output is what
 * sotto__encoder_forward gives for it alone, bit for bit, where the backend's linear
 * keeps rows independent (be->exact_rows, which n_ctx rows reach). */
void sotto__encoder_forward_batch(sotto__encoder *e, const float *mels, int nb);

#endif
