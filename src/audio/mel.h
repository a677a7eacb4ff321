/* mel.h — the front end's parts shared by the one-window path (mel.c) and the whole-file
 * path (melfile.c): filters, window and twiddles made once, and the log-mel of a pair
 * of frames. */
#ifndef SOTTO_MEL_H
#define SOTTO_MEL_H

#include <complex.h>

#include "../common.h"

#define N_FFT 400
#define HOP 160
#define N_BINS (N_FFT / 2 + 1)
#define SOTTO__MEL_MAX_BINS 128

typedef struct sotto__melcore {
    int n_mels;                           /* 80 or 128 */
    float fb[SOTTO__MEL_MAX_BINS * N_BINS]; /* [n_mels, N_BINS] Slaney filters, f32 */
    int span[SOTTO__MEL_MAX_BINS][2];     /* each filter's non-zero bins [k0, k1) */
    double window[N_FFT];                 /* periodic Hann */
    double complex tw[N_FFT];             /* e^{-2 pi i j / 400} */
} sotto__melcore;

/* A core for N_MELS bins (free with free()); the message in sotto_last_error. */
sotto_status sotto__melcore_new(int n_mels, sotto__melcore **out);

/* log10(max(mel power, 1e-10)) of two frames of N_FFT raw samples X0 and X1 (windowed
 * here; one complex transform for both) into L0, L1 [n_mels]. */
void sotto__mel_pair(const sotto__melcore *c, const float *x0, const float *x1, double *l0, double *l1);

/* sotto_mel_window on N_THREADS (with 2 or more the first half of the frames on a thread
 * of its own): the same bits on any. */
sotto_status sotto__mel_window_on(const float *samples, int64_t n_samples, int n_mels, int n_threads, float *out);

/* A log10 value X after the floor at MAX - 8 and the scaling (x + 4) / 4. */
static inline float sotto__mel_scale(float x, double max)
{
    double v = x > max - 8.0 ? x : max - 8.0;
    return (float)((v + 4.0) / 4.0);
}

#endif
