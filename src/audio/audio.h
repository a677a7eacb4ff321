/* audio.h — internals of the audio input (audio.c): the byte source every decoder reads
 * from (a file or standard input, rewindable once its first bytes were sniffed), the
 * built-in streaming WAV reader (wav_stream.c) and the FFmpeg decoder (decode.c). */
#ifndef SOTTO_AUDIO_H
#define SOTTO_AUDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common.h"

/* Bytes a pipe source keeps while its first bytes are parsed, so it can be rewound for
 * FFmpeg; the built-in WAV header walk stops recording beyond this. */
#define SOTTO__SRC_RECORD_MAX ((size_t)1 << 20)

/* A file descriptor read front to back, or a buffer in memory. A seekable one (a
 * regular file, standard input redirected from one, memory) rewinds with lseek (memory:
 * by its position); a pipe rewinds by replaying the bytes recorded since
 * sotto__src_record(true). */
typedef struct sotto__src {
    int fd;                /* -1 for memory */
    const uint8_t *mem;    /* memory: [size] bytes from base 0; else NULL */
    bool own_fd;           /* close on sotto__src_close (not for standard input) */
    bool seekable;
    int64_t base;          /* offset of the first byte in the descriptor */
    int64_t size;          /* bytes from base to the end; -1 unknown (a pipe) */
    int64_t pos;           /* bytes consumed from base */
    const char *name;      /* for messages: the path, "standard input", the source's name */
    int channel;           /* sotto_audio_source.channel: 0 the mix, N >= 1 channel N alone */
    const char *url;       /* for FFmpeg's probe by extension: the path, or "" */
    char fd_name[40];      /* "descriptor N", when the source names none */
    uint8_t *rec;          /* pipe only: [rec_len] bytes from base, while recording */
    size_t rec_len, rec_cap;
    size_t replay;         /* pipe only: next byte of rec to hand out after a rewind */
    bool recording, rec_overflow;
} sotto__src;

/* Opens IN (a path, "-": standard input, a descriptor or memory). */
sotto_status sotto__src_open(sotto__src *s, const sotto_audio_source *in, sotto__err *err);
void sotto__src_close(sotto__src *s);

/* Reads up to N bytes; *got < N only at the end of input. */
sotto_status sotto__src_read(sotto__src *s, void *buf, size_t n, size_t *got, sotto__err *err);

/* Reads what is there, up to N bytes: returns once some came (one read() of a pipe), so a
 * reader of a live pipe is not held until N bytes arrive; *got == 0 only at the end. */
sotto_status sotto__src_read_some(sotto__src *s, void *buf, size_t n, size_t *got, sotto__err *err);

/* Skips N bytes (lseek when seekable); *got < N only at the end of input. */
sotto_status sotto__src_skip(sotto__src *s, uint64_t n, uint64_t *got, sotto__err *err);

/* Starts recording (pipes), or stops it and drops what was recorded; a rewind needs
 * recording since position 0. */
void sotto__src_record(sotto__src *s, bool on);

/* Back to the first byte: fails only on a pipe that recorded more than
 * SOTTO__SRC_RECORD_MAX bytes. Stops recording. */
sotto_status sotto__src_rewind(sotto__src *s, sotto__err *err);

/* Seeks to OFFSET from the first byte (seekable sources only; used by FFmpeg). */
int64_t sotto__src_seek(sotto__src *s, int64_t offset);

/* Whether A can go back to its first sample (sotto__audio_restart): a seekable source. */
bool sotto__audio_seekable(const sotto_audio *a);
/* Back to the first sample of a seekable A: the source rewound and its reader opened anew,
 * as sotto_audio_open left it. */
sotto_status sotto__audio_restart(sotto_audio *a, sotto__err *err);

/* ---- built-in WAV (wav_stream.c) ------------------------------------------------ */

typedef struct sotto__wav {
    bool f32;              /* IEEE float 32-bit, else PCM 16-bit */
    bool until_end;        /* the data chunk runs to the end of a pipe (size 0 or ~0) */
    uint64_t declared;     /* data bytes to read (when !until_end): the header's, or what a
                              truncated file holds */
    uint64_t claimed;      /* a truncated data chunk: the bytes its header claims; else 0 */
    uint64_t left;         /* data bytes not yet read (when !until_end) */
    int64_t n_samples;     /* samples in the data chunk; -1 unknown */
    int64_t n_done;
    uint8_t carry[4];      /* bytes of a sample split across two reads */
    size_t n_carry;
    char warning[SOTTO__ERR_LEN]; /* "" or what was read around (a truncated file) */
} sotto__wav;

/* Parses a RIFF/WAVE header from S (whose first 12 bytes, "RIFF....WAVE", were already
 * consumed), checking every chunk size against the input, and leaves S at the first
 * sample. A data chunk longer than the file is read as far as it goes (w->warning says
 * so); one with no whole sample there fails ("... (truncated file)"). A sample rate below
 * 1000 Hz fails with SOTTO_ERR_FORMAT. SOTTO_ERR_UNSUPPORTED: well-formed, but not a
 * format the built-in reader takes (16 kHz mono PCM16; f32 too when ALLOW_F32): FFmpeg may
 * decode it. */
sotto_status sotto__wav_open(sotto__wav *w, sotto__src *s, bool allow_f32, sotto__err *err);

/* Up to CAP samples into BUF; *n 0 at the end. A data chunk that a pipe cuts short ends
 * there, with w->warning set; with no sample at all it fails. */
sotto_status sotto__wav_read(sotto__wav *w, sotto__src *s, float *buf, int64_t cap, int64_t *n,
                             sotto__err *err);

/* ---- FFmpeg (decode.c; only in a build with SOTTO_HAVE_FFMPEG) ----------------------- */

typedef struct sotto__ff sotto__ff;

/* Opens the first audio stream of S (at its first byte) and sets up the resampler.
 * *duration: seconds the container declares, or -1. */
sotto_status sotto__ff_open(sotto__src *s, sotto__ff **out, double *duration, sotto__err *err);
sotto_status sotto__ff_read(sotto__ff *f, float *buf, int64_t cap, int64_t *n, sotto__err *err);
int sotto__ff_channels(const sotto__ff *f); /* of the decoder */
void sotto__ff_close(sotto__ff *f);
/* A WAV file the built-in walk found cut short (NOTE says so): its last, partial packet
 * is dropped instead of failing, and NOTE becomes the stream's warning. */
void sotto__ff_cut_short(sotto__ff *f, const char *note);
const char *sotto__ff_warning(const sotto__ff *f);
const char *sotto__ff_versions(void);
void sotto__ff_log(int verbosity);

#endif
