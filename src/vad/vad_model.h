/* vad_model.h — the Silero VAD model (16 kHz) as loaded from its GGUF file
 * (scripts/silero_vad_to_gguf.py, docs/FORMAT.md "Silero VAD"): every tensor checked for
 * name, type and shape, pointing into the read-only file mapping. The engine's vad.c
 * runs it. */
#ifndef SOTTO_VAD_MODEL_H
#define SOTTO_VAD_MODEL_H

#include "../common.h"

/* The fixed geometry of the 16 kHz model (silero-vad utils_vad.py OnnxWrapper). */
enum {
    SOTTO__VAD_RATE = 16000,
    SOTTO__VAD_WINDOW = 512,   /* new samples per probability */
    SOTTO__VAD_CONTEXT = 64,   /* samples of the previous window prepended */
    SOTTO__VAD_INPUT = SOTTO__VAD_WINDOW + SOTTO__VAD_CONTEXT, /* 576 */
    SOTTO__VAD_PAD = 64,       /* reflect padding on the right before the STFT */
    SOTTO__VAD_NFFT = 256,
    SOTTO__VAD_HOP = 128,
    SOTTO__VAD_FRAMES = (SOTTO__VAD_INPUT + SOTTO__VAD_PAD - SOTTO__VAD_NFFT) / SOTTO__VAD_HOP + 1, /* 4 */
    SOTTO__VAD_BINS = SOTTO__VAD_NFFT / 2 + 1, /* 129 */
    SOTTO__VAD_C1 = 128, SOTTO__VAD_C2 = 64, SOTTO__VAD_C3 = 64, SOTTO__VAD_C4 = 128,
    SOTTO__VAD_HIDDEN = 128    /* LSTM state */
};

/* Weights in PyTorch layout (row-major, outermost first), f32. */
typedef struct sotto__vad_weights {
    const float *stft;         /* [2 * BINS, 1, NFFT]: real rows, then imaginary rows */
    const float *conv_w[4];    /* [C1, BINS, 3], [C2, C1, 3], [C3, C2, 3], [C4, C3, 3] */
    const float *conv_b[4];    /* [C1], [C2], [C3], [C4] */
    const float *w_ih, *w_hh;  /* [4 * HIDDEN, C4], [4 * HIDDEN, HIDDEN]; gates i, f, g, o */
    const float *b_ih, *b_hh;  /* [4 * HIDDEN] each */
    const float *out_w;        /* [1, HIDDEN, 1] */
    const float *out_b;        /* [1] */
} sotto__vad_weights;

struct sotto_vad {
    sotto__map map;            /* the file; every weight points into it */
    sotto__vad_weights w;
};

/* Loads the GGUF file PATH into a new *OUT (free with sotto_vad_free): checks magic,
 * version, counts, keys (general.architecture "silero-vad", sample rate 16000, window
 * 512, context 64), every tensor's name, type (f32), shape, byte range and that its
 * values are finite; names the field on failure. */
sotto_status sotto__vad_model_load(const char *path, struct sotto_vad **out, sotto__err *err);

#endif
