/* mel.c — the Whisper front end (openai/whisper whisper/audio.py): 16 kHz samples ->
 * log-mel frames. STFT with n_fft 400, hop 160, periodic Hann window, centred frames with
 * reflect padding, last frame dropped; Slaney mel filters (librosa.filters.mel,
 * norm='slaney', fmax 8000); log10 clamped at 1e-10, floored at max - 8, scaled
 * (x + 4) / 4. The FFT and the filters run in double precision. One 30 s window here
 * (sotto_mel_window); a whole file, frame pair by frame pair, in melfile.c. */
#include "mel.h"

#include <complex.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* RE + i IM, exactly (C11's CMPLX is missing from some compiler and libc pairs; a complex
 * value has the representation of an array of its two parts, C11 6.2.5). */
static inline double complex cpx(double re, double im)
{
    union {
        double complex z;
        double p[2];
    } u = {.p = {re, im}};
    return u.z;
}

/* x y, without C's checks for infinite and NaN parts (none occur here; the checks and
 * their library call were most of the front end's time). */
static inline double complex cmul(double complex x, double complex y)
{
    return cpx(creal(x) * creal(y) - cimag(x) * cimag(y), creal(x) * cimag(y) + cimag(x) * creal(y));
}

/* Mixed-radix decimation-in-time FFT of length N dividing 400 (= 2^4 * 5^2): X[k] =
 * sum_j x[j] e^{-2 pi i jk/N}. IN is read with STRIDE; SCRATCH holds N values; TW[j] =
 * e^{-2 pi i j/400}. N = p m: the p sub-transforms Y_r of x[r], x[r + p], ... (length m),
 * then for each k < m the butterfly X[k + q m] = sum_r W_p^{rq} (W_N^{rk} Y_r[k]). */
static void fft(const double complex *in, size_t stride, double complex *out, int n, double complex *scratch,
                const double complex *tw)
{
    int p = n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 5, m = n / p, step = N_FFT / n;
    if (m > 1)
        for (int r = 0; r < p; r++) fft(in + r * stride, stride * (size_t)p, scratch + r * m, m, out, tw);
    for (int k = 0; k < m; k++) {
        double complex z[5];
        for (int r = 0; r < p; r++) {
            double complex y = m > 1 ? scratch[r * m + k] : in[r * stride];
            z[r] = r == 0 || k == 0 ? y : cmul(y, tw[r * k * step]); /* r k step < 400 */
        }
        if (p == 4) { /* W_4 = -i */
            double complex a = z[0] + z[2], b = z[0] - z[2], c = z[1] + z[3], d = z[1] - z[3];
            d = cpx(cimag(d), -creal(d));
            out[k] = a + c, out[k + m] = b + d, out[k + 2 * m] = a - c, out[k + 3 * m] = b - d;
        } else if (p == 2) {
            out[k] = z[0] + z[1], out[k + m] = z[0] - z[1];
        } else { /* W_5^{rq} = TW[(rq mod 5) * 80] */
            for (int q = 0; q < 5; q++) {
                double complex s = z[0];
                for (int r = 1; r < 5; r++) s += q == 0 ? z[r] : cmul(z[r], tw[(r * q % 5) * (N_FFT / 5)]);
                out[k + q * m] = s;
            }
        }
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
    double mel_f[SOTTO__MEL_MAX_BINS + 2];
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
}

sotto_status sotto__melcore_new(int n_mels, sotto__melcore **out)
{
    *out = NULL;
    if (n_mels != 80 && n_mels != 128)
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "mel: n_mels must be 80 or 128"});
    sotto__melcore *c = malloc(sizeof *c);
    if (!c) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "mel: out of memory"});
    c->n_mels = n_mels;
    mel_filters(n_mels, c->fb);
    for (int j = 0; j < N_FFT; j++) c->tw[j] = cexp(-2.0 * M_PI * I * j / N_FFT);
    for (int j = 0; j < N_FFT; j++) c->window[j] = 0.5 - 0.5 * cos(2.0 * M_PI * j / N_FFT);
    /* a filter is a triangle over a few bins: only its non-zero span [k0, k1) is summed
     * (the skipped terms are exact zeros, so the sums are bit-identical) */
    for (int i = 0; i < n_mels; i++) {
        const float *f = c->fb + (size_t)i * N_BINS;
        int k0 = 0, k1 = N_BINS;
        while (k0 < N_BINS && f[k0] == 0.0f) k0++;
        while (k1 > k0 && f[k1 - 1] == 0.0f) k1--;
        c->span[i][0] = k0, c->span[i][1] = k1;
    }
    *out = c;
    return SOTTO_OK;
}

void sotto__mel_pair(const sotto__melcore *c, const float *x0, const float *x1, double *l0, double *l1)
{
    /* two real frames per complex transform: z = x_t + i x_{t+1} has Z[k] = X_t[k] + i X_{t+1}[k],
     * and X_t[k] = (Z[k] + conj Z[N - k]) / 2, X_{t+1}[k] = (Z[k] - conj Z[N - k]) / 2i */
    double complex frame[3 * N_FFT];
    double power[2][N_BINS];
    for (int j = 0; j < N_FFT; j++) frame[j] = cpx(c->window[j] * x0[j], c->window[j] * x1[j]);
    fft(frame, 1, frame + N_FFT, N_FFT, frame + 2 * N_FFT, c->tw);
    const double complex *Z = frame + N_FFT;
    for (int k = 0; k < N_BINS; k++) {
        double complex zk = Z[k], zc = conj(Z[(N_FFT - k) % N_FFT]);
        double complex a = 0.5 * (zk + zc), b = zk - zc;
        b = cpx(0.5 * cimag(b), -0.5 * creal(b)); /* (zk - zc) / 2i */
        power[0][k] = creal(a) * creal(a) + cimag(a) * cimag(a);
        power[1][k] = creal(b) * creal(b) + cimag(b) * cimag(b);
    }
    for (int f = 0; f < 2; f++) {
        double *l = f ? l1 : l0;
        for (int i = 0; i < c->n_mels; i++) {
            const float *w = c->fb + (size_t)i * N_BINS;
            double s = 0;
            for (int k = c->span[i][0]; k < c->span[i][1]; k++) s += w[k] * power[f][k];
            l[i] = log10(fmax(s, 1e-10));
        }
    }
}

/* Sample index S of a signal of N samples reflected at both ends (numpy's 'reflect'). */
static inline int64_t reflect(int64_t s, int64_t n)
{
    if (s < 0) s = -s;
    return s >= n ? 2 * (n - 1) - s : s;
}

/* The frame pairs T0 .. T1 (even) of the window X [n] into OUT, and their maximum. */
typedef struct pairs_job {
    const sotto__melcore *c;
    const float *x;
    float *out;
    int t0, t1;
    double max;
} pairs_job;

static void *run_pairs(void *arg)
{
    pairs_job *j = arg;
    const int64_t n = SOTTO_N_SAMPLES;
    const int n_mels = j->c->n_mels;
    for (int t = j->t0; t < j->t1; t += 2) {
        float x0[N_FFT], x1[N_FFT];
        double l[2][SOTTO__MEL_MAX_BINS];
        for (int i = 0; i < N_FFT; i++) {
            int64_t s = (int64_t)t * HOP + i - N_FFT / 2; /* reflect padding at both ends */
            x0[i] = j->x[reflect(s, n)], x1[i] = j->x[reflect(s + HOP, n)];
        }
        sotto__mel_pair(j->c, x0, x1, l[0], l[1]);
        for (int f = 0; f < 2; f++)
            for (int i = 0; i < n_mels; i++) {
                j->out[(size_t)i * SOTTO_N_FRAMES + t + f] = (float)l[f][i];
                if (l[f][i] > j->max) j->max = l[f][i];
            }
    }
    return NULL;
}

sotto_status sotto__mel_window_on(const float *samples, int64_t n_samples, int n_mels, int n_threads, float *out)
{
    if (n_mels != 80 && n_mels != 128)
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "mel: n_mels must be 80 or 128"});
    if (!out || n_samples < 0 || (n_samples > 0 && !samples))
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "mel: no room for the log-mel, a negative "
                                                                   "count, or no samples for one"});
    const int64_t n = SOTTO_N_SAMPLES;
    float *x = calloc((size_t)n, sizeof *x);
    sotto__melcore *c = NULL;
    if (!x || sotto__melcore_new(n_mels, &c)) {
        free(x);
        return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "mel: out of memory"});
    }
    const int64_t m = n_samples < n ? n_samples : n; /* then zeros */
    if (m > 0) memcpy(x, samples, (size_t)m * sizeof *x);
    _Static_assert(SOTTO_N_FRAMES % 2 == 0, "frames go in pairs");
    /* the pairs from ZEROS on read only zeros (the first sample of pair t is t HOP - N_FFT /
     * 2; the last pair reflects back to sample n - 41 at the lowest): each of their frames
     * is log10(1e-10), as melfile.c has them; a clip's mel costs its length, not 30 s */
    int zeros = SOTTO_N_FRAMES;
    if (m <= n - 41) zeros = (int)((m + N_FFT / 2 + 2 * HOP - 1) / (2 * HOP) * 2);
    if (zeros > SOTTO_N_FRAMES) zeros = SOTTO_N_FRAMES;
    const double silent = log10(fmax(0.0, 1e-10)); /* sotto__mel_pair's of a frame of zeros */
    double max = zeros < SOTTO_N_FRAMES ? silent : -INFINITY;
    for (int t = zeros; t < SOTTO_N_FRAMES; t++)
        for (int i = 0; i < n_mels; i++) out[(size_t)i * SOTTO_N_FRAMES + t] = (float)silent;
    /* with 2 threads the first half of the pairs on a thread of its own (each pair's
     * frames depend on its samples alone: the same bits) */
    const int mid = n_threads >= 2 && zeros >= 64 ? zeros / 4 * 2 : 0;
    pairs_job lo = {c, x, out, 0, mid, -INFINITY}, hi = {c, x, out, mid, zeros, -INFINITY};
    pthread_t th;
    bool beside = mid > 0 && pthread_create(&th, NULL, run_pairs, &lo) == 0;
    if (!beside) run_pairs(&lo);
    run_pairs(&hi);
    if (beside) pthread_join(th, NULL);
    max = fmax(max, fmax(lo.max, hi.max));
    for (size_t i = 0; i < (size_t)n_mels * SOTTO_N_FRAMES; i++) out[i] = sotto__mel_scale(out[i], max);
    free(x);
    free(c);
    return SOTTO_OK;
}

sotto_status sotto_mel_window(const float *samples, int64_t n_samples, int n_mels, float *out)
{
    return sotto__mel_window_on(samples, n_samples, n_mels, 1, out);
}
