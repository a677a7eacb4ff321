/* stream_input.c — `sotto stream`'s audio as it arrives (stream_input.h): raw PCM read from
 * a descriptor as its bytes come (poll, partial reads) and resampled to 16 kHz by a
 * windowed sinc, or a file or pipe decoded by sotto_audio_read a tenth of a second at a
 * time; with --realtime nothing is handed out before its time on the wall clock. */
#define _POSIX_C_SOURCE 200809L
#include "stream_input.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "sotto.h"

#define RATE SOTTO_SAMPLE_RATE
#define PIECE (RATE / 10)      /* samples decoded per sotto_audio_read */
#define PI 3.14159265358979323846
#define SINC_ZEROS 16          /* the resampler's half width, in zero crossings of its sinc */

struct stream_input {
    stream_in_opts o;
    sotto_audio *audio;        /* a container, or NULL: raw PCM on FD */
    int fd;
    bool own_fd, eof;
    bool warned;               /* f32le samples that are no audio: said once */
    int sample_bytes;
    unsigned char part[4];     /* the bytes of a sample cut by a read */
    int n_part;
    float *hist;               /* raw input samples at the input's rate; hist[0] is input sample BASE */
    int64_t n_hist, cap_hist, base, n_made; /* n_made: 16 kHz samples made */
    float *pend;               /* 16 kHz samples made and not handed out yet */
    int64_t n_pend, cap_pend, n_given;
    float *out;                /* what the last read handed out */
    int64_t cap_out;
    double t0_ms;              /* the wall clock at the first read */
};

bool stream_input_format_ok(const char *name)
{
    return name && (!strcmp(name, "s16le") || !strcmp(name, "f32le"));
}

static bool grow(float **p, int64_t *cap, int64_t need)
{
    if (need <= *cap) return true;
    int64_t c = need * 2 + 4096;
    float *q = realloc(*p, (size_t)c * sizeof *q);
    if (!q) return false;
    *p = q, *cap = c;
    return true;
}

stream_input *stream_input_open(const stream_in_opts *o, char *msg, size_t n)
{
    stream_input *in = calloc(1, sizeof *in);
    if (!in) {
        snprintf(msg, n, "out of memory");
        return NULL;
    }
    in->o = *o, in->fd = -1, in->t0_ms = -1;
    bool stdin_ = !strcmp(o->path, "-");
    if (!o->format) {
        if (sotto_audio_open(o->path, &in->audio) == SOTTO_OK) return in;
        snprintf(msg, n, "%s", sotto_last_error());
    } else {
        in->sample_bytes = !strcmp(o->format, "s16le") ? 2 : 4;
        in->fd = stdin_ ? STDIN_FILENO : open(o->path, O_RDONLY | O_CLOEXEC);
        in->own_fd = !stdin_;
        if (in->fd >= 0) return in;
        snprintf(msg, n, "%s: cannot open: %s", o->path, strerror(errno));
    }
    stream_input_close(in);
    return NULL;
}

void stream_input_close(stream_input *in)
{
    if (!in) return;
    sotto_audio_close(in->audio);
    if (in->own_fd) close(in->fd);
    free(in->hist), free(in->pend), free(in->out);
    free(in);
}

/* ---- raw PCM --------------------------------------------------------------------- */

/* The windowed sinc (Hann window over SINC_ZEROS zero crossings each side) at distance D
 * input samples, for a cutoff FC (cycles per input sample, times 2). */
static double kernel(double d, double fc, double half)
{
    if (fabs(d) >= half) return 0;
    double x = d * fc, s = x == 0 ? 1 : sin(PI * x) / (PI * x);
    return fc * s * (0.5 + 0.5 * cos(PI * d / half));
}

/* The 16 kHz samples the input samples so far determine (all of them at the end), into
 * the pending ones; at 16 kHz the samples pass as they are. */
static bool resample(stream_input *in, bool end)
{
    double ratio = (double)in->o.rate / RATE, fc = ratio > 1 ? 1 / ratio : 1;
    double half = SINC_ZEROS / fc;
    for (;;) {
        double x = (double)in->n_made * ratio; /* its position in input samples */
        int64_t hi = (int64_t)floor(x + half);
        if (in->o.rate == RATE) hi = (int64_t)x;
        if (hi >= in->base + in->n_hist && !(end && (int64_t)x < in->base + in->n_hist)) break;
        double acc = 0;
        if (in->o.rate == RATE) {
            acc = in->hist[(int64_t)x - in->base];
        } else {
            for (int64_t i = (int64_t)ceil(x - half); i <= hi; i++)
                if (i >= in->base && i < in->base + in->n_hist) acc += in->hist[i - in->base] * kernel(x - i, fc, half);
        }
        if (!grow(&in->pend, &in->cap_pend, in->n_pend + 1)) return false;
        in->pend[in->n_pend++] = (float)acc;
        in->n_made++;
    }
    int64_t keep_from = (int64_t)floor((double)in->n_made * ratio - half) - 1; /* the history still needed */
    if (keep_from > in->base) {
        int64_t k = keep_from - in->base < in->n_hist ? keep_from - in->base : in->n_hist;
        memmove(in->hist, in->hist + k, (size_t)(in->n_hist - k) * sizeof *in->hist);
        in->n_hist -= k, in->base += k;
    }
    return true;
}

/* Converts BYTES[0..N) (with the part of a sample left by the last read) to samples. */
static bool take_bytes(stream_input *in, const unsigned char *b, size_t n)
{
    int sb = in->sample_bytes;
    if (!grow(&in->hist, &in->cap_hist, in->n_hist + (int64_t)(n / (size_t)sb) + 2)) return false;
    for (size_t i = 0; i < n; i++) {
        in->part[in->n_part++] = b[i];
        if (in->n_part < sb) continue;
        const unsigned char *p = in->part;
        float v;
        if (sb == 2) {
            v = (float)(int16_t)(uint16_t)(p[0] | p[1] << 8) / 32768.0f;
        } else {
            uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
            memcpy(&v, &u, sizeof v);
            if (!(fabsf(v) <= 64) && !in->warned) { /* not audio in [-1, 1]: another format's bytes */
                fprintf(stderr, "sotto stream: %s: f32le samples that are not audio (%g): is the input another "
                        "format (--format s16le)?\n", in->o.path, (double)v);
                in->warned = true;
            }
            if (!isfinite(v)) v = 0; /* a NaN or infinity would poison every later decoding */
        }
        in->hist[in->n_hist++] = v;
        in->n_part = 0;
    }
    return resample(in, false);
}

/* Reads what the descriptor has now (waiting up to WAIT_MS for the first byte), at most
 * MAX samples' worth. */
static int read_raw(stream_input *in, int wait_ms, int64_t max, char *msg, size_t msg_n)
{
    static unsigned char buf[1 << 16];
    size_t want = (size_t)max * (size_t)in->sample_bytes * (size_t)(in->o.rate / RATE + 1);
    if (want > sizeof buf) want = sizeof buf;
    struct pollfd p = {in->fd, POLLIN, 0};
    int r = poll(&p, 1, wait_ms);
    if (r <= 0) return 0; /* nothing yet (or EINTR: the caller looks at its stop flag) */
    ssize_t k = read(in->fd, buf, want);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    if (k < 0) {
        snprintf(msg, msg_n, "%s: read failed: %s", in->o.path, strerror(errno));
        return -1;
    }
    if (k == 0) {
        in->eof = true;
        if (in->n_part) fprintf(stderr, "sotto stream: %s: its last %d bytes are not a whole sample: dropped\n",
                                in->o.path, in->n_part);
        return resample(in, true) ? 0 : -1;
    }
    if (!take_bytes(in, buf, (size_t)k)) {
        snprintf(msg, msg_n, "out of memory");
        return -1;
    }
    return 0;
}

/* ---- any container --------------------------------------------------------------- */

static int read_container(stream_input *in, char *msg, size_t msg_n)
{
    if (!grow(&in->pend, &in->cap_pend, in->n_pend + PIECE)) {
        snprintf(msg, msg_n, "out of memory");
        return -1;
    }
    int64_t got = 0;
    if (sotto_audio_read(in->audio, in->pend + in->n_pend, PIECE, &got) != SOTTO_OK) {
        snprintf(msg, msg_n, "%s", sotto_last_error());
        return -1;
    }
    in->n_pend += got;
    if (got < PIECE) {
        float none;
        in->eof = true;
        /* the stream ended: one more read returns nothing, and what is found at the end
         * (a stream short of its container's length, or mostly undecodable) is judged */
        if (sotto_audio_read(in->audio, &none, 1, &got) != SOTTO_OK) {
            snprintf(msg, msg_n, "%s", sotto_last_error());
            return -1;
        }
        if (sotto_audio_warning(in->audio)[0]) /* what was read around: said once, at the end */
            fprintf(stderr, "sotto stream: warning: %s\n", sotto_audio_warning(in->audio));
    }
    return 0;
}

/* ---- handing it out -------------------------------------------------------------- */

static void sleep_ms(double ms)
{
    struct timespec t = {(time_t)(ms / 1000), (long)(fmod(ms, 1000) * 1e6)};
    nanosleep(&t, NULL);
}

/* The samples due by now on the wall clock (with --realtime), else every one. */
static int64_t due(const stream_input *in)
{
    if (!in->o.realtime) return INT64_MAX;
    return (int64_t)((cli_now_ms() - in->t0_ms) * (RATE / 1000.0)) - in->n_given;
}

int stream_input_read(stream_input *in, const float **samples, int64_t *n, int64_t max, volatile sig_atomic_t *stop,
                      char *msg, size_t msg_n)
{
    *n = 0;
    if (in->t0_ms < 0) in->t0_ms = cli_now_ms();
    while (!*stop) {
        int64_t d = due(in), want = d < max ? d : max;
        while (!in->eof && in->n_pend < want && !*stop) { /* fill what is due */
            int r = in->audio ? read_container(in, msg, msg_n) : read_raw(in, 100, want - in->n_pend, msg, msg_n);
            if (r < 0) return -1;
            if (!in->audio && in->n_pend && !in->o.realtime) break; /* a pipe: what it has now */
        }
        int64_t give = in->n_pend < want ? in->n_pend : want;
        if (give > 0) {
            if (!grow(&in->out, &in->cap_out, give)) {
                snprintf(msg, msg_n, "out of memory");
                return -1;
            }
            memcpy(in->out, in->pend, (size_t)give * sizeof *in->out);
            memmove(in->pend, in->pend + give, (size_t)(in->n_pend - give) * sizeof *in->pend);
            in->n_pend -= give, in->n_given += give;
            *samples = in->out, *n = give;
            return 0;
        }
        if (in->eof && !in->n_pend) return 0;
        if (in->o.realtime) sleep_ms(20); /* the next samples are not due yet */
    }
    return 0;
}
