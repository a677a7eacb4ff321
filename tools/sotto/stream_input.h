/* stream_input.h — the audio of `sotto stream`, read as it arrives: raw PCM (s16le or
 * f32le at any rate, resampled to 16 kHz) from standard input or a file, or any file or
 * pipe sotto_audio_open reads; optionally paced at real time (--realtime). */
#ifndef SOTTO_STREAM_INPUT_H
#define SOTTO_STREAM_INPUT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct stream_input stream_input;

typedef struct stream_in_opts {
    const char *path;          /* a file, or "-": standard input */
    const char *format;        /* "s16le" or "f32le": raw PCM; NULL: a container sotto reads */
    int rate;                  /* of raw PCM (8000..192000) */
    bool realtime;             /* hand out no audio before its time on the wall clock */
} stream_in_opts;

/* Whether the raw format NAME is one stream_input reads. */
bool stream_input_format_ok(const char *name);

/* Opens the input; NULL with a message in MSG (N bytes) naming it when it cannot be read. */
stream_input *stream_input_open(const stream_in_opts *o, char *msg, size_t n);

/* Waits for audio and hands out every sample there is now, 16 kHz mono, in *SAMPLES (valid
 * until the next call) and *N; at least one unless the input ended (*N 0, returns 0) or
 * *STOP became nonzero while waiting (*N 0, returns 0). -1 with a message in MSG on a read
 * or decoding error. MAX bounds the samples handed out at once (a file read without
 * --realtime comes in pieces of MAX). */
int stream_input_read(stream_input *in, const float **samples, int64_t *n, int64_t max,
                      volatile sig_atomic_t *stop, char *msg, size_t msg_n);

void stream_input_close(stream_input *in);

#endif
