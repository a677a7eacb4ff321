/* mel.c — the Whisper front end (openai/whisper whisper/audio.py): one 30 s window of
 * 16 kHz samples -> [n_mels, 3000] log-mel. STFT with n_fft 400, hop 160, periodic Hann
 * window, centred frames with reflect padding, last frame dropped; Slaney mel filters
 * (librosa.filters.mel, norm='slaney', fmax 8000); log10 clamped at 1e-10, floored at
 * max - 8, scaled (x + 4) / 4. The FFT and the filters run in double precision. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common.h"

#define N_FFT 400
#define HOP 160
#define N_BINS (N_FFT / 2 + 1)

/* Mixed-radix decimation-in-time FFT of length N dividing 400 (= 2^4 * 5^2): X[k] =
 * sum_j x[j] e^{-2 pi i jk/N}. IN is read with STRIDE; SCRATCH holds N values; TW[j] =
 * e^{-2 pi i j/400}. */
static void fft(const double complex *in, size_t stride, double complex *out, int n, double complex *scratch,
                const double complex *tw)
{
    const int step = N_FFT / n;
    if (n == 1) {
        out[0] = in[0];
        return;
    }
    int p = n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : n % 5 == 0 ? 5 : n;
    int m = n / p;
    if (p == n) { /* plain DFT of a prime length */
        for (int k = 0; k < n; k++) {
            double complex s = 0;
            for (int j = 0; j < n; j++) s += in[j * stride] * tw[(j * k % n) * step];
            out[k] = s;
        }
        return;
    }
    for (int r = 0; r < p; r++) fft(in + r * stride, stride * (size_t)p, scratch + r * m, m, out, tw);
    for (int k = 0; k < n; k++) {
        double complex s = 0;
        for (int r = 0; r < p; r++)
            s += scratch[r * m + k % m] * tw[(r * k % n) * step];
        out[k] = s;
    }
}

static double hz_to_mel(double f)
{
    const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
    const double logstep = log(6.4) / 27.0;
    return f < min_log_hz ? f / f_sp : min_log_mel + log(f / min_log_hz) / logstep;
}

static double mel_to_hz(double m)
{
    const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
    const double logstep = log(6.4) / 27.0;
    return m < min_log_mel ? f_sp * m : min_log_hz * exp(logstep * (m - min_log_mel));
}

/* librosa.filters.mel(sr=16000, n_fft=400, n_mels, fmin=0, fmax=8000, htk=False,
 * norm='slaney'), rounded to f32 as the reference's mel_filters.npz is. */
static void mel_filters(int n_mels, float *fb /* [n_mels, N_BINS] */)
{
    double *mel_f = malloc((size_t)(n_mels + 2) * sizeof *mel_f);
    double lo = hz_to_mel(0.0), hi = hz_to_mel(SOTTO_SAMPLE_RATE / 2.0);
    for (int i = 0; i < n_mels + 2; i++) mel_f[i] = mel_to_hz(lo + (hi - lo) * i / (n_mels + 1));
    for (int i = 0; i < n_mels; i++) {
        double enorm = 2.0 / (mel_f[i + 2] - mel_f[i]);
        for (int k = 0; k < N_BINS; k++) {
            double f = (double)SOTTO_SAMPLE_RATE / 2 * k / (N_BINS - 1);
            double lower = (f - mel_f[i]) / (mel_f[i + 1] - mel_f[i]);
            double upper = (mel_f[i + 2] - f) / (mel_f[i + 2] - mel_f[i + 1]);
            double w = fmax(0.0, fmin(lower, upper));
            fb[i * N_BINS + k] = (float)(w * enorm);
        }
    }
    free(mel_f);
}

sotto_status sotto_mel_window(const float *samples, int64_t n_samples, int n_mels, float *out)
{
    if ((n_mels != 80 && n_mels != 128) || !out || n_samples < 0 || (n_samples > 0 && !samples))
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "mel: n_mels must be 80 or 128"});
    const int64_t n = SOTTO_N_SAMPLES;
    float *x = calloc((size_t)n, sizeof *x);
    float *fb = malloc((size_t)n_mels * N_BINS * sizeof *fb);
    double *power = malloc((size_t)SOTTO_N_FRAMES * N_BINS * sizeof *power);
    double complex *frame = malloc(3 * N_FFT * sizeof *frame);
    if (!x || !fb || !power || !frame) {
        free(x), free(fb), free(power), free(frame);
        return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "mel: out of memory"});
    }
    memcpy(x, samples, (size_t)(n_samples < n ? n_samples : n) * sizeof *x);
    mel_filters(n_mels, fb);
    double window[N_FFT];
    double complex tw[N_FFT];
    for (int j = 0; j < N_FFT; j++) tw[j] = cexp(-2.0 * M_PI * I * j / N_FFT);
    for (int j = 0; j < N_FFT; j++) window[j] = 0.5 - 0.5 * cos(2.0 * M_PI * j / N_FFT);
    for (int t = 0; t < SOTTO_N_FRAMES; t++) {
        for (int j = 0; j < N_FFT; j++) {
            int64_t s = (int64_t)t * HOP + j - N_FFT / 2; /* reflect padding at both ends */
            if (s < 0) s = -s;
            if (s >= n) s = 2 * (n - 1) - s;
            frame[j] = window[j] * x[s];
        }
        fft(frame, 1, frame + N_FFT, N_FFT, frame + 2 * N_FFT, tw);
        for (int k = 0; k < N_BINS; k++) {
            double complex v = frame[N_FFT + k];
            power[(size_t)t * N_BINS + k] = creal(v) * creal(v) + cimag(v) * cimag(v);
        }
    }
    double max = -INFINITY;
    for (int i = 0; i < n_mels; i++) {
        /* a filter is a triangle over a few bins: only its non-zero span is summed (the
         * skipped terms are exact zeros, so the sums are bit-identical) */
        const float *f = fb + (size_t)i * N_BINS;
        int k0 = 0, k1 = N_BINS;
        while (k0 < N_BINS && f[k0] == 0.0f) k0++;
        while (k1 > k0 && f[k1 - 1] == 0.0f) k1--;
        for (int t = 0; t < SOTTO_N_FRAMES; t++) {
            double s = 0;
            const double *pw = power + (size_t)t * N_BINS;
            for (int k = k0; k < k1; k++) s += f[k] * pw[k];
            double l = log10(fmax(s, 1e-10));
            out[(size_t)i * SOTTO_N_FRAMES + t] = (float)l;
            if (l > max) max = l;
        }
    }
    for (size_t i = 0; i < (size_t)n_mels * SOTTO_N_FRAMES; i++)
        out[i] = (float)((fmax(out[i], max - 8.0) + 4.0) / 4.0);
    free(x), free(fb), free(power), free(frame);
    return SOTTO_OK;
}
