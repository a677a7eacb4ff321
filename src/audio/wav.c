/* wav.c — sotto_wav_read: a whole RIFF/WAVE file (16 kHz mono, PCM 16-bit or IEEE float
 * 32-bit) into one array, read front to back through the one WAV parser (wav_stream.c),
 * so it takes the files and gives the messages and samples of the audio input. */
#include <stdlib.h>
#include <string.h>

#include "audio.h"

/* Every sample of S, which is at its first byte, into a new *SAMPLES[*N]. */
static sotto_status read_all(sotto__src *s, float **samples, int64_t *n, sotto__err *err)
{
    uint8_t head[12];
    size_t got;
    sotto_status st = sotto__src_read(s, head, sizeof head, &got, err);
    if (st) return st;
    if (got < 12 || memcmp(head, "RIFF", 4) != 0 || memcmp(head + 8, "WAVE", 4) != 0)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: not a RIFF/WAVE file", s->name);
    sotto__wav w;
    if ((st = sotto__wav_open(&w, s, true, err))) return st;
    /* the count is known but on a pipe whose data chunk runs to the end: then it grows */
    size_t cap = w.n_samples > 0 ? (size_t)w.n_samples : (size_t)SOTTO_SAMPLE_RATE * 30, k = 0;
    float *buf = NULL;
    for (;;) {
        if (buf && k == cap && w.n_samples >= 0 && (int64_t)k >= w.n_samples) break; /* all there is */
        if (!buf || k == cap) {
            size_t want = buf ? cap + cap / 2 : cap, bytes;
            float *p = sotto__mul_ok(want, sizeof *p, &bytes) ? realloc(buf, bytes) : NULL;
            if (!p) {
                free(buf);
                return sotto__fail(err, SOTTO_ERR_NOMEM, "%s: out of memory for %zu samples", s->name, want);
            }
            buf = p, cap = want;
        }
        int64_t m;
        if ((st = sotto__wav_read(&w, s, buf + k, (int64_t)(cap - k), &m, err))) {
            free(buf);
            return st;
        }
        if (m == 0) break;
        k += (size_t)m;
    }
    *samples = buf;
    *n = (int64_t)k;
    return SOTTO_OK;
}

sotto_status sotto_wav_read(const char *path, float **samples, int64_t *n_samples)
{
    sotto__err err = {0};
    if (!samples || !n_samples)
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "sotto_wav_read: invalid arguments"});
    *samples = NULL;
    *n_samples = 0;
    if (!path) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "no audio path given"});
    sotto__src s;
    sotto_status st = sotto__src_open(&s, &(sotto_audio_source){.kind = SOTTO_SOURCE_PATH, .path = path}, &err);
    if (!st) {
        st = read_all(&s, samples, n_samples, &err);
        sotto__src_close(&s);
    }
    return st ? sotto__publish(&err) : SOTTO_OK;
}
