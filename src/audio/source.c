/* source.c — the byte source of the audio input: a file, standard input or a caller's
 * descriptor read front to back, never mapped or held whole, or a caller's buffer. Its first bytes are sniffed
 * (WAV or not) and then rewound for FFmpeg: by lseek, or on a pipe by replaying what was
 * recorded. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audio.h"

/* A memory source: seekable, SIZE bytes from 0. */
static sotto_status open_memory(sotto__src *s, const sotto_audio_source *in, sotto__err *err)
{
    if (!in->data && in->n_bytes) return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "audio in memory: no bytes given");
    if (in->n_bytes > (uint64_t)INT64_MAX)
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "audio in memory: %zu bytes is too many", in->n_bytes);
    s->mem = in->data ? in->data : (const uint8_t *)"";
    s->seekable = true;
    s->size = (int64_t)in->n_bytes;
    s->name = in->name ? in->name : "the audio in memory";
    return SOTTO_OK;
}

sotto_status sotto__src_open(sotto__src *s, const sotto_audio_source *in, sotto__err *err)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->url = "";
    if (in->channel < 0) return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "channel %d (0: the mix, N >= 1)", in->channel);
    s->channel = in->channel;
    if (in->kind == SOTTO_SOURCE_MEMORY) return open_memory(s, in, err);
    if (in->kind == SOTTO_SOURCE_FD) {
        if (in->fd < 0) return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "descriptor %d is not open", in->fd);
        snprintf(s->fd_name, sizeof s->fd_name, "descriptor %d", in->fd);
        s->fd = in->fd;
        s->name = in->name ? in->name : s->fd_name;
    } else if (in->kind != SOTTO_SOURCE_PATH) {
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "audio source kind %d (SOTTO_SOURCE_PATH, _FD or _MEMORY)",
                           (int)in->kind);
    } else if (!in->path) {
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "no audio path given");
    } else if (strcmp(in->path, "-") == 0) {
        s->fd = STDIN_FILENO;
        s->name = "standard input";
    } else {
        s->fd = open(in->path, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0) return sotto__fail(err, SOTTO_ERR_IO, "%s: cannot open: %s", in->path, strerror(errno));
        s->own_fd = true;
        s->name = s->url = in->path;
    }
    struct stat st;
    if (fstat(s->fd, &st) != 0) {
        sotto__fail(err, SOTTO_ERR_IO, "%s: cannot stat: %s", s->name, strerror(errno));
        sotto__src_close(s);
        return err->status;
    }
    if (S_ISDIR(st.st_mode)) {
        sotto__fail(err, SOTTO_ERR_IO, "%s: is a directory, not an audio file", s->name);
        sotto__src_close(s);
        return err->status;
    }
    off_t cur = S_ISREG(st.st_mode) ? lseek(s->fd, 0, SEEK_CUR) : -1;
    s->seekable = cur >= 0;
    if (!s->seekable) s->url = ""; /* as FFmpeg's -i reads a pipe: no probe by extension */
    s->base = s->seekable ? (int64_t)cur : 0;
    s->size = s->seekable ? (int64_t)st.st_size - s->base : -1;
    if (s->size < -1) s->size = 0;
    return SOTTO_OK;
}

void sotto__src_close(sotto__src *s)
{
    if (s->own_fd && s->fd >= 0) close(s->fd);
    free(s->rec);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

/* Appends N bytes to the recording; past SOTTO__SRC_RECORD_MAX it gives up (a later
 * rewind then fails) rather than hold an unbounded header. */
static void record(sotto__src *s, const void *p, size_t n)
{
    if (!s->recording || s->rec_overflow || n == 0) return;
    if (s->rec_len + n > SOTTO__SRC_RECORD_MAX) {
        s->rec_overflow = true;
        return;
    }
    if (s->rec_len + n > s->rec_cap) {
        size_t cap = s->rec_cap ? s->rec_cap : 4096;
        while (cap < s->rec_len + n) cap *= 2;
        uint8_t *q = realloc(s->rec, cap);
        if (!q) {
            s->rec_overflow = true;
            return;
        }
        s->rec = q;
        s->rec_cap = cap;
    }
    memcpy(s->rec + s->rec_len, p, n);
    s->rec_len += n;
}

/* sotto__src_read, or with SOME sotto__src_read_some. */
static sotto_status src_read(sotto__src *s, void *buf, size_t n, size_t *got, sotto__err *err, bool some)
{
    uint8_t *out = buf;
    size_t k = 0;
    if (s->mem) {
        k = s->pos < s->size ? (size_t)(s->size - s->pos) : 0;
        if (k > n) k = n;
        memcpy(out, s->mem + s->pos, k);
        s->pos += (int64_t)k;
        *got = k;
        return SOTTO_OK;
    }
    if (s->replay < s->rec_len && !s->recording) { /* a pipe after a rewind */
        size_t m = s->rec_len - s->replay < n ? s->rec_len - s->replay : n;
        memcpy(out, s->rec + s->replay, m);
        s->replay += m;
        k = m;
        if (s->replay == s->rec_len) { /* replayed in full: the memory is no longer needed */
            free(s->rec);
            s->rec = NULL;
            s->rec_len = s->rec_cap = s->replay = 0;
        }
    }
    while (k < n && !(some && k > 0)) {
        ssize_t r = read(s->fd, out + k, n - k);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            *got = k;
            return sotto__fail(err, SOTTO_ERR_IO, "%s: read failed at byte %lld: %s", s->name,
                               (long long)(s->pos + (int64_t)k), strerror(errno));
        }
        if (r == 0) break;
        record(s, out + k, (size_t)r);
        k += (size_t)r;
    }
    s->pos += (int64_t)k;
    *got = k;
    return SOTTO_OK;
}

sotto_status sotto__src_read(sotto__src *s, void *buf, size_t n, size_t *got, sotto__err *err)
{
    return src_read(s, buf, n, got, err, false);
}

sotto_status sotto__src_read_some(sotto__src *s, void *buf, size_t n, size_t *got, sotto__err *err)
{
    return src_read(s, buf, n, got, err, true);
}

sotto_status sotto__src_skip(sotto__src *s, uint64_t n, uint64_t *got, sotto__err *err)
{
    if (s->seekable) {
        uint64_t left = (uint64_t)(s->size - s->pos);
        uint64_t m = n < left ? n : left;
        if (!s->mem && lseek(s->fd, (off_t)(s->base + s->pos + (int64_t)m), SEEK_SET) < 0)
            return sotto__fail(err, SOTTO_ERR_IO, "%s: cannot seek: %s", s->name, strerror(errno));
        s->pos += (int64_t)m;
        *got = m;
        return SOTTO_OK;
    }
    uint8_t tmp[4096];
    uint64_t k = 0;
    while (k < n) {
        size_t want = n - k < sizeof tmp ? (size_t)(n - k) : sizeof tmp, r;
        sotto_status st = sotto__src_read(s, tmp, want, &r, err);
        k += r;
        if (st) {
            *got = k;
            return st;
        }
        if (r < want) break;
    }
    *got = k;
    return SOTTO_OK;
}

void sotto__src_record(sotto__src *s, bool on)
{
    s->recording = on && !s->seekable;
    if (!on) { /* no rewind will come: the recording is no longer needed */
        free(s->rec);
        s->rec = NULL;
        s->rec_len = s->rec_cap = s->replay = 0;
        s->rec_overflow = false;
    }
}

sotto_status sotto__src_rewind(sotto__src *s, sotto__err *err)
{
    if (s->seekable) {
        if (!s->mem && lseek(s->fd, (off_t)s->base, SEEK_SET) < 0)
            return sotto__fail(err, SOTTO_ERR_IO, "%s: cannot seek: %s", s->name, strerror(errno));
        s->pos = 0;
        return SOTTO_OK;
    }
    s->recording = false;
    if (s->rec_overflow || s->pos != (int64_t)s->rec_len)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED,
                           "%s: its first %lld bytes are RIFF chunks sotto does not read, too many to hand to "
                           "FFmpeg from a pipe; pass it as a file", s->name, (long long)s->pos);
    s->replay = 0;
    s->pos = 0;
    return SOTTO_OK;
}

int64_t sotto__src_seek(sotto__src *s, int64_t offset)
{
    if (!s->seekable || offset < 0) return -1;
    if (!s->mem && lseek(s->fd, (off_t)(s->base + offset), SEEK_SET) < 0) return -1;
    s->pos = offset;
    return offset;
}
