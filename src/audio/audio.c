/* audio.c — the public audio input (sotto_audio_*): opens a file or standard input,
 * sniffs its first bytes and hands it to the built-in WAV reader (16 kHz mono PCM16, the
 * same samples as sotto_wav_read) or to FFmpeg (decode.c, everything else), then yields
 * 16 kHz mono floats a chunk at a time. In a build without FFmpeg (no
 * SOTTO_HAVE_FFMPEG) other files are refused with the packages to install. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"

#ifdef SOTTO_HAVE_FFMPEG
#define HAVE_FFMPEG 1
#else
#define HAVE_FFMPEG 0
/* stubs: never called when HAVE_FFMPEG is 0, present so the code below compiles once */
struct sotto__ff {
    int unused;
};
sotto_status sotto__ff_open(sotto__src *s, sotto__ff **out, double *duration, sotto__err *err)
{
    return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: built without FFmpeg", s->name);
}

int sotto__ff_channels(const sotto__ff *f)
{
    return 0;
}
sotto_status sotto__ff_read(sotto__ff *f, float *buf, int64_t cap, int64_t *n, sotto__err *err)
{
    return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "built without FFmpeg");
}
void sotto__ff_close(sotto__ff *f) {}
void sotto__ff_cut_short(sotto__ff *f, const char *note) {}
const char *sotto__ff_warning(const sotto__ff *f) { return ""; }
const char *sotto__ff_versions(void) { return ""; }
void sotto__ff_log(int verbosity) {}
#endif

#define NO_FFMPEG_HINT                                                                                       \
    "this sotto was built without FFmpeg and reads only 16 kHz mono WAV (16-bit PCM or 32-bit float) "      \
    "itself: install libavformat-dev libavcodec-dev libswresample-dev (Debian/Ubuntu) and rebuild"

struct sotto_audio {
    sotto__src src;
    bool builtin;          /* the built-in WAV reader, else FFmpeg */
    sotto__wav wav;
    sotto__ff *ff;
    double duration_s;     /* < 0 unknown */
    bool failed;           /* a read failed: every later read repeats ERR */
    sotto__err err;
};

/* Picks the reader for A's source, which is at its first byte. */
static sotto_status open_reader(sotto_audio *a, sotto__err *err)
{
    sotto__src *s = &a->src;
    uint8_t head[12];
    size_t got;
    sotto__src_record(s, true);
    sotto_status st = sotto__src_read(s, head, sizeof head, &got, err);
    if (st) return st;
    if (got == 0) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: empty file (0 bytes)", s->name);
    bool wav = got == 12 && memcmp(head, "RIFF", 4) == 0 && memcmp(head + 8, "WAVE", 4) == 0;
    if (wav) {
        st = sotto__wav_open(&a->wav, s, !HAVE_FFMPEG, err);
        if (!st && s->channel > 1)
            return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: channel %d of a 1-channel file", s->name, s->channel);
        if (!st) {
            sotto__src_record(s, false);
            a->builtin = true;
            a->duration_s = a->wav.n_samples >= 0 ? (double)a->wav.n_samples / SOTTO_SAMPLE_RATE : -1;
            return SOTTO_OK;
        }
        if (st != SOTTO_ERR_UNSUPPORTED) return st;
        if (!HAVE_FFMPEG) {
            size_t k = strlen(err->msg);
            snprintf(err->msg + k, sizeof err->msg - k, "; %s", NO_FFMPEG_HINT);
            return st;
        }
    } else if (!HAVE_FFMPEG) {
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: not a RIFF/WAVE file; %s", s->name, NO_FFMPEG_HINT);
    }
    err->status = SOTTO_OK;
    err->msg[0] = 0;
    if ((st = sotto__src_rewind(s, err))) return st;
    if ((st = sotto__ff_open(s, &a->ff, &a->duration_s, err))) return st;
    if (wav && a->wav.claimed) sotto__ff_cut_short(a->ff, a->wav.warning);
    return SOTTO_OK;
}

sotto_status sotto_audio_open_source(const sotto_audio_source *source, sotto_audio **out)
{
    sotto__err err = {0};
    if (out) *out = NULL;
    if (!source || !out) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "no audio source given"});
    sotto_audio *a = calloc(1, sizeof *a);
    if (!a) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "out of memory"});
    a->duration_s = -1;
    sotto_status st = sotto__src_open(&a->src, source, &err);
    if (st) {
        free(a);
        return sotto__publish(&err);
    }
    if ((st = open_reader(a, &err))) {
        sotto_audio_close(a);
        return sotto__publish(&err);
    }
    *out = a;
    return SOTTO_OK;
}

sotto_status sotto_audio_open(const char *path, sotto_audio **out)
{
    return sotto_audio_open_source(&(sotto_audio_source){.kind = SOTTO_SOURCE_PATH, .path = path}, out);
}

bool sotto__audio_seekable(const sotto_audio *a)
{
    return a->src.seekable;
}

sotto_status sotto__audio_restart(sotto_audio *a, sotto__err *err)
{
    sotto__ff_close(a->ff);
    a->ff = NULL;
    a->builtin = a->failed = false;
    a->wav = (sotto__wav){0};
    a->err = (sotto__err){0};
    a->duration_s = -1;
    sotto_status st = sotto__src_rewind(&a->src, err);
    return st ? st : open_reader(a, err);
}

sotto_status sotto_audio_read(sotto_audio *a, float *buf, int64_t cap, int64_t *n_read)
{
    if (n_read) *n_read = 0;
    if (!a || !n_read || cap < 0 || (!buf && cap > 0))
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "sotto_audio_read: invalid arguments"});
    if (a->failed) return sotto__publish(&a->err);
    if (cap == 0) return SOTTO_OK;
    sotto__err err = {0};
    sotto_status st = a->builtin ? sotto__wav_read(&a->wav, &a->src, buf, cap, n_read, &err)
                                 : sotto__ff_read(a->ff, buf, cap, n_read, &err);
    if (st) {
        *n_read = 0;
        a->failed = true;
        a->err = err;
        return sotto__publish(&err);
    }
    return SOTTO_OK;
}

const char *sotto_audio_warning(const sotto_audio *a)
{
    return !a ? "" : a->builtin ? a->wav.warning : a->ff ? sotto__ff_warning(a->ff) : "";
}

int sotto_audio_channels(const sotto_audio *a)
{
    return !a ? 0 : a->builtin ? 1 : sotto__ff_channels(a->ff);
}

double sotto_audio_duration(const sotto_audio *a)
{
    return a ? a->duration_s : -1;
}

void sotto_audio_close(sotto_audio *a)
{
    if (!a) return;
    sotto__ff_close(a->ff);
    sotto__src_close(&a->src);
    free(a);
}

sotto_status sotto_audio_load(const char *path, float **samples, int64_t *n_samples)
{
    if (samples) *samples = NULL;
    if (n_samples) *n_samples = 0;
    if (!samples || !n_samples)
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "sotto_audio_load: invalid arguments"});
    sotto_audio *a;
    sotto_status st = sotto_audio_open(path, &a);
    if (st) return st;
    /* the declared length sizes the first buffer (plus a little for encoder padding), up
     * to 10 minutes: a header may claim hours the file does not hold. It grows by half
     * when short. */
    double d = sotto_audio_duration(a);
    size_t cap = d > 0 && d < 600 ? (size_t)(d * SOTTO_SAMPLE_RATE) + 4096
                                  : (size_t)SOTTO_SAMPLE_RATE * (d >= 600 ? 600 : 30);
    size_t n = 0;
    float *buf = NULL;
    for (;;) {
        if (!buf || n == cap) {
            size_t want = buf ? cap + cap / 2 : cap, bytes;
            float *p = sotto__mul_ok(want, sizeof *p, &bytes) ? realloc(buf, bytes) : NULL;
            if (!p) {
                free(buf);
                sotto_audio_close(a);
                return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "out of memory for the audio samples"});
            }
            buf = p;
            cap = want;
        }
        int64_t got;
        if ((st = sotto_audio_read(a, buf + n, (int64_t)(cap - n), &got))) {
            free(buf);
            sotto_audio_close(a);
            return st; /* published by sotto_audio_read */
        }
        if (got == 0) break;
        n += (size_t)got;
    }
    sotto_audio_close(a);
    *samples = buf;
    *n_samples = (int64_t)n;
    return SOTTO_OK;
}

const char *sotto_audio_formats(void)
{
    return HAVE_FFMPEG ? sotto__ff_versions()
                       : "16 kHz mono WAV only (16-bit PCM or 32-bit float): this build has no FFmpeg; for other "
                         "files install libavformat-dev libavcodec-dev libswresample-dev and rebuild";
}

void sotto_audio_ffmpeg_log(int verbosity)
{
    sotto__ff_log(verbosity);
}
