/* vad.c — runs the Silero VAD (16 kHz) over a stream of samples, as silero-vad 6.2.3's
 * OnnxWrapper runs silero_vad.onnx: each 512-sample window with the previous window's
 * last 64 samples in front, reflect-padded by 64 on the right, an STFT as a convolution
 * (n_fft 256, hop 128: 4 frames) and its magnitude, four conv1d + ReLU (kernel 3, pad 1,
 * strides 1, 2, 2, 1), an LSTM cell whose (h, c) carries over to the next window, and
 * sigmoid(conv1x1(ReLU(h))). Weights come from vad/vad_model.c. The windows of a push
 * are batched: the STFT, the convolutions and the LSTM's input projection are matrix
 * products on the host backend of the stream's own (backend.h: the registry's fallback,
 * whose buffers are host memory; its linear op); the recurrence, which
 * must go window by window, and the element-wise steps are plain C on host memory. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backend.h"
#include "vad_model.h"

enum {
    BATCH = 64,                /* windows per batch of matrix products */
    H = SOTTO__VAD_HIDDEN,
    G4 = 4 * SOTTO__VAD_HIDDEN,
    K1 = 3 * SOTTO__VAD_BINS, K2 = 3 * SOTTO__VAD_C1, K3 = 3 * SOTTO__VAD_C2, K4 = 3 * SOTTO__VAD_C3
};

/* Per-batch activations, host addresses of backend buffers; rows are windows x times. */
typedef struct vad_bufs {
    float *frames;             /* [BATCH * 4, NFFT], then the magnitudes [BATCH * 4, BINS] */
    float *spec;               /* [BATCH * 4, 2 * BINS]: real, imaginary */
    float *p1, *y1;            /* im2col [BATCH * 4, K1]; conv1 [BATCH * 4, C1] */
    float *p2, *y2;            /* [BATCH * 2, K2]; [BATCH * 2, C2] */
    float *p3, *y3;            /* [BATCH, K3]; [BATCH, C3] */
    float *p4, *y4;            /* [BATCH, K4]; [BATCH, C4] */
    float *gates;              /* [BATCH, 4 H]: x W_ih^T + b_ih */
} vad_bufs;

struct sotto_vad_stream {
    const sotto_vad *vad;
    sotto__backend *be;
    sotto__blinear stft, conv[4], ih;
    sotto__buf b_frames, b_spec, b_p[4], b_y[4], b_gates;
    vad_bufs a;
    float *whh_t;              /* [H, 4 H]: W_hh transposed, for the recurrence's axpy form */
    float h[H], c[H];          /* the LSTM state */
    float *buf;                /* [CONTEXT + BATCH * WINDOW]: the context, then the new samples */
    int n_buf;                 /* new samples in buf (after the context) */
    char error[SOTTO__ERR_LEN];
};

const char *sotto_vad_stream_error(const sotto_vad_stream *s) { return s ? s->error : ""; }

/* Records a printf-style message on S and returns STATUS. */
static sotto_status stream_fail(sotto_vad_stream *s, sotto_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static sotto_status stream_fail(sotto_vad_stream *s, sotto_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof s->error, fmt, ap);
    va_end(ap);
    return status;
}

void sotto_vad_stream_reset(sotto_vad_stream *s)
{
    if (!s) return;
    memset(s->h, 0, sizeof s->h);
    memset(s->c, 0, sizeof s->c);
    memset(s->buf, 0, SOTTO__VAD_CONTEXT * sizeof *s->buf);
    s->n_buf = 0;
}

void sotto_vad_stream_free(sotto_vad_stream *s)
{
    if (!s) return;
    if (s->be) s->be->ops->free(s->be);
    free(s->whh_t);
    free(s->buf);
    free(s);
}

/* A backend buffer of N floats and its host address. */
static sotto_status alloc_f32(sotto__backend *be, size_t n, sotto__buf *b, float **host, sotto__err *err)
{
    sotto_status st = be->ops->alloc(be, n * sizeof(float), b, err);
    if (!st) *host = (float *)be->ops->host(be, *b);
    return st;
}

static sotto_status import_weights(sotto_vad_stream *s, sotto__err *err)
{
    const sotto__vad_weights *w = &s->vad->w;
    static const int c_out[4] = {SOTTO__VAD_C1, SOTTO__VAD_C2, SOTTO__VAD_C3, SOTTO__VAD_C4};
    static const int k_in[4] = {K1, K2, K3, K4};
    sotto__linear l = {SOTTO_TYPE_F32, w->stft, NULL, 2 * SOTTO__VAD_BINS, SOTTO__VAD_NFFT};
    sotto_status st = sotto__import_linear(s->be, &l, &s->stft, err);
    for (int i = 0; i < 4 && !st; i++) {
        /* conv1d weights [c_out, c_in, 3] are the rows of a linear layer over im2col rows */
        l = (sotto__linear){SOTTO_TYPE_F32, w->conv_w[i], w->conv_b[i], c_out[i], k_in[i]};
        st = sotto__import_linear(s->be, &l, &s->conv[i], err);
    }
    l = (sotto__linear){SOTTO_TYPE_F32, w->w_ih, w->b_ih, G4, SOTTO__VAD_C4};
    if (!st) st = sotto__import_linear(s->be, &l, &s->ih, err);
    return st;
}

static sotto_status alloc_bufs(sotto_vad_stream *s, sotto__err *err)
{
    const size_t rows[4] = {4 * BATCH, 2 * BATCH, BATCH, BATCH};
    const size_t k[4] = {K1, K2, K3, K4}, c[4] = {SOTTO__VAD_C1, SOTTO__VAD_C2, SOTTO__VAD_C3, SOTTO__VAD_C4};
    float **p[4] = {&s->a.p1, &s->a.p2, &s->a.p3, &s->a.p4}, **y[4] = {&s->a.y1, &s->a.y2, &s->a.y3, &s->a.y4};
    sotto_status st = alloc_f32(s->be, 4 * BATCH * SOTTO__VAD_NFFT, &s->b_frames, &s->a.frames, err);
    if (!st) st = alloc_f32(s->be, 4 * BATCH * 2 * SOTTO__VAD_BINS, &s->b_spec, &s->a.spec, err);
    for (int i = 0; i < 4 && !st; i++) {
        st = alloc_f32(s->be, rows[i] * k[i], &s->b_p[i], p[i], err);
        if (!st) st = alloc_f32(s->be, rows[i] * c[i], &s->b_y[i], y[i], err);
    }
    if (!st) st = alloc_f32(s->be, BATCH * G4, &s->b_gates, &s->a.gates, err);
    return st;
}

sotto_status sotto_vad_stream_init(const sotto_vad *vad, int n_threads, sotto_vad_stream **out)
{
    sotto__err err = {0};
    if (!out) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "sotto_vad_stream_init: no output pointer"});
    *out = NULL;
    if (!vad) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "sotto_vad_stream_init: no VAD model"});
    sotto_vad_stream *s = calloc(1, sizeof *s);
    if (!s) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "out of memory"});
    s->vad = vad;
    s->whh_t = malloc((size_t)H * G4 * sizeof *s->whh_t);
    s->buf = malloc((SOTTO__VAD_CONTEXT + (size_t)BATCH * SOTTO__VAD_WINDOW) * sizeof *s->buf);
    sotto_status st = s->whh_t && s->buf ? SOTTO_OK : sotto__fail(&err, SOTTO_ERR_NOMEM, "out of memory");
    /* the largest linear: 4 * BATCH rows of K1 inputs */
    sotto__backend_config cfg = {.n_threads = n_threads, .index = -1,
                                 .lim = {.max_rows = 4 * BATCH, .max_in = K1, .max_keys = 1, .max_heads = 1,
                                         .max_dh = 1, .cross_type = SOTTO_TYPE_F32, .cross_keys = 1, .vocab_in = 1}};
    if (!st) st = sotto__backend_open_host(&cfg, &s->be, &err);
    if (!st) st = import_weights(s, &err);
    if (!st) st = alloc_bufs(s, &err);
    if (st) {
        sotto_vad_stream_free(s);
        return sotto__publish(&err);
    }
    for (int o = 0; o < G4; o++)
        for (int k = 0; k < H; k++) s->whh_t[(size_t)k * G4 + o] = vad->w.w_hh[(size_t)o * H + k];
    sotto_vad_stream_reset(s);
    *out = s;
    return SOTTO_OK;
}

/* One window's conv1d input as im2col rows: P[t][i * 3 + k] = Y[s][i], s = STRIDE t + k - 1,
 * zero outside 0 <= s < T_IN (the padding of 1); Y [T_IN, C_IN] time-major, P [T_OUT, 3 C_IN]. */
static void im2col(const float *Y, int T_in, int c_in, int stride, int T_out, float *P)
{
    for (int t = 0; t < T_out; t++) {
        float *row = P + (size_t)t * 3 * c_in;
        for (int k = 0; k < 3; k++) {
            int src = stride * t + k - 1;
            if (src < 0 || src >= T_in) {
                for (int i = 0; i < c_in; i++) row[i * 3 + k] = 0.0f;
                continue;
            }
            const float *y = Y + (size_t)src * c_in;
            for (int i = 0; i < c_in; i++) row[i * 3 + k] = y[i];
        }
    }
}

static void relu(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/* The frames of window J: its 576 samples X (context first), reflect-padded by 64 on the
 * right (x[576 + i] = x[574 - i], torch/ONNX "reflect"), cut into 4 frames of 256 at hop 128. */
static void frames_of(const float *x, float *F)
{
    for (int f = 0; f < SOTTO__VAD_FRAMES; f++)
        for (int i = 0; i < SOTTO__VAD_NFFT; i++) {
            int at = f * SOTTO__VAD_HOP + i;
            F[(size_t)f * SOTTO__VAD_NFFT + i] = at < SOTTO__VAD_INPUT ? x[at] : x[2 * (SOTTO__VAD_INPUT - 1) - at];
        }
}

typedef float v4f __attribute__((vector_size(16)));

static float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

/* One LSTM step (PyTorch LSTMCell, gates i, f, g, o) from the input projection GX [4 H]
 * (x W_ih^T + b_ih), then the window's probability sigmoid(w . ReLU(h) + b). */
static float lstm_step(sotto_vad_stream *s, const float *gx)
{
    const sotto__vad_weights *w = &s->vad->w;
    float g[G4];
    /* g = gx + b_hh + W_hh h as axpy over the rows of W_hh^T, each gate summing its terms
     * in order of k; 32 gates at a time held in registers over all of k (where each k's
     * pass over all 512 had loaded and stored them: `sotto vad` 1.25x faster, the same bits) */
    for (int o0 = 0; o0 < G4; o0 += 8 * 4) {
        v4f acc[8];
#pragma GCC unroll 8
        for (int v = 0; v < 8; v++) {
            v4f x, b;
            memcpy(&x, gx + o0 + 4 * v, sizeof x), memcpy(&b, w->b_hh + o0 + 4 * v, sizeof b);
            acc[v] = x + b;
        }
        for (int k = 0; k < H; k++) {
            const float *wt = s->whh_t + (size_t)k * G4 + o0;
            const v4f hk = {s->h[k], s->h[k], s->h[k], s->h[k]};
#pragma GCC unroll 8
            for (int v = 0; v < 8; v++) {
                v4f y;
                memcpy(&y, wt + 4 * v, sizeof y);
                acc[v] += hk * y;
            }
        }
        memcpy(g + o0, acc, sizeof acc);
    }
    double z = w->out_b[0];
    for (int j = 0; j < H; j++) {
        float in = sigmoid(g[j]), fg = sigmoid(g[H + j]), cell = tanhf(g[2 * H + j]), out = sigmoid(g[3 * H + j]);
        s->c[j] = fg * s->c[j] + in * cell;
        s->h[j] = out * tanhf(s->c[j]);
        z += (double)w->out_w[j] * (s->h[j] > 0.0f ? s->h[j] : 0.0f);
    }
    return sigmoid((float)z);
}

/* The probabilities of the NB (1..BATCH) complete windows in s->buf into PROBS. */
static void run_batch(sotto_vad_stream *s, int nb, float *probs)
{
    sotto__backend *be = s->be;
    const vad_bufs *a = &s->a;
    const int B = SOTTO__VAD_BINS, NF = SOTTO__VAD_FRAMES;
    for (int j = 0; j < nb; j++)
        frames_of(s->buf + (size_t)j * SOTTO__VAD_WINDOW, a->frames + (size_t)j * NF * SOTTO__VAD_NFFT);
    be->ops->linear(be, s->b_frames, nb * NF, &s->stft, s->b_spec);
    be->ops->sync(be, NULL);
    float *mag = a->frames; /* the frames are dead: the magnitudes take their place */
    for (int r = 0; r < nb * NF; r++) {
        const float *re = a->spec + (size_t)r * 2 * B, *im = re + B;
        for (int i = 0; i < B; i++) mag[(size_t)r * B + i] = sqrtf(re[i] * re[i] + im[i] * im[i]);
    }
    /* conv1..4: time steps 4 -> 4 -> 2 -> 1 -> 1 per window */
    static const int T_in[4] = {4, 4, 2, 1}, T_out[4] = {4, 2, 1, 1}, stride[4] = {1, 2, 2, 1};
    const int c_in[4] = {B, SOTTO__VAD_C1, SOTTO__VAD_C2, SOTTO__VAD_C3};
    const float *in = mag;
    float *p[4] = {a->p1, a->p2, a->p3, a->p4}, *y[4] = {a->y1, a->y2, a->y3, a->y4};
    for (int l = 0; l < 4; l++) {
        for (int j = 0; j < nb; j++)
            im2col(in + (size_t)j * T_in[l] * c_in[l], T_in[l], c_in[l], stride[l], T_out[l],
                   p[l] + (size_t)j * T_out[l] * 3 * c_in[l]);
        be->ops->linear(be, s->b_p[l], nb * T_out[l], &s->conv[l], s->b_y[l]);
        be->ops->sync(be, NULL);
        relu(y[l], (size_t)nb * T_out[l] * s->conv[l].n_out);
        in = y[l];
    }
    be->ops->linear(be, s->b_y[3], nb, &s->ih, s->b_gates);
    be->ops->sync(be, NULL);
    for (int j = 0; j < nb; j++) probs[j] = lstm_step(s, a->gates + (size_t)j * G4);
}

/* Runs the complete windows buffered (at most BATCH) and keeps the context and the rest. */
static int64_t drain(sotto_vad_stream *s, float *probs)
{
    int nb = s->n_buf / SOTTO__VAD_WINDOW;
    if (nb == 0) return 0;
    run_batch(s, nb, probs);
    int used = nb * SOTTO__VAD_WINDOW, keep = s->n_buf - used;
    /* the next window's context is the last 64 samples of the last window run */
    memmove(s->buf, s->buf + used, (SOTTO__VAD_CONTEXT + (size_t)keep) * sizeof *s->buf);
    s->n_buf = keep;
    return nb;
}

sotto_status sotto_vad_stream_push(sotto_vad_stream *s, const float *samples, int64_t n, float *probs, int64_t cap,
                                   int64_t *n_probs)
{
    if (n_probs) *n_probs = 0;
    if (!s) return SOTTO_ERR_INVALID_ARG;
    if (!n_probs || n < 0 || (n > 0 && (!samples || !probs)))
        return stream_fail(s, SOTTO_ERR_INVALID_ARG, "sotto_vad_stream_push: %s",
                           n < 0 ? "negative sample count" : "NULL samples, probs or n_probs");
    int64_t need = (s->n_buf + n) / SOTTO__VAD_WINDOW;
    if (need > cap)
        return stream_fail(s, SOTTO_ERR_INVALID_ARG, "sotto_vad_stream_push: %lld samples complete %lld windows; "
                           "PROBS holds %lld", (long long)n, (long long)need, (long long)cap);
    const int room = BATCH * SOTTO__VAD_WINDOW;
    int64_t done = 0;
    while (n > 0) {
        int take = room - s->n_buf < n ? room - s->n_buf : (int)n;
        memcpy(s->buf + SOTTO__VAD_CONTEXT + s->n_buf, samples, (size_t)take * sizeof *samples);
        s->n_buf += take;
        samples += take;
        n -= take;
        done += drain(s, probs + done);
    }
    *n_probs = done;
    s->error[0] = 0;
    return SOTTO_OK;
}

sotto_status sotto_vad_stream_flush(sotto_vad_stream *s, float *probs, int64_t *n_probs)
{
    if (n_probs) *n_probs = 0;
    if (!s) return SOTTO_ERR_INVALID_ARG;
    if (!probs || !n_probs) return stream_fail(s, SOTTO_ERR_INVALID_ARG, "sotto_vad_stream_flush: NULL probs or n_probs");
    if (s->n_buf > 0) {
        memset(s->buf + SOTTO__VAD_CONTEXT + s->n_buf, 0,
               (size_t)(SOTTO__VAD_WINDOW - s->n_buf) * sizeof *s->buf);
        s->n_buf = SOTTO__VAD_WINDOW;
        *n_probs = drain(s, probs);
    }
    sotto_vad_stream_reset(s);
    s->error[0] = 0;
    return SOTTO_OK;
}

sotto_status sotto_vad_probs(const sotto_vad *vad, const float *samples, int64_t n_samples, int n_threads,
                             float **probs, int64_t *n_probs)
{
    if (!probs || !n_probs || n_samples < 0 || (n_samples > 0 && !samples))
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "sotto_vad_probs: bad arguments"});
    *probs = NULL;
    *n_probs = 0;
    int64_t total = (n_samples + SOTTO__VAD_WINDOW - 1) / SOTTO__VAD_WINDOW;
    if (total == 0) return SOTTO_OK;
    float *p = malloc((size_t)total * sizeof *p);
    if (!p) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "out of memory"});
    sotto_vad_stream *s;
    sotto_status st = sotto_vad_stream_init(vad, n_threads, &s);
    int64_t got = 0, last = 0;
    if (!st) st = sotto_vad_stream_push(s, samples, n_samples, p, total, &got);
    if (!st) st = sotto_vad_stream_flush(s, p + got, &last);
    if (st && s) {
        sotto__err err = {st, ""};
        snprintf(err.msg, sizeof err.msg, "%s", s->error);
        sotto__publish(&err);
    }
    sotto_vad_stream_free(s);
    if (st) {
        free(p);
        return st;
    }
    *probs = p;
    *n_probs = got + last;
    return SOTTO_OK;
}
