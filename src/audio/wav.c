/* wav.c — RIFF/WAVE reader: PCM 16-bit or IEEE float 32-bit (also inside
 * WAVE_FORMAT_EXTENSIBLE), 16 kHz mono. Every chunk size is checked against the file
 * before it is used; anything else is refused with a message saying what was found. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "../common.h"

static sotto_status parse_wav(const sotto__map *map, const char *path, float **samples, int64_t *n_samples,
                              sotto__err *err)
{
    const uint8_t *p = map->data;
    size_t n = map->size;
    if (n < 12 || memcmp(p, "RIFF", 4) != 0 || memcmp(p + 8, "WAVE", 4) != 0)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: not a RIFF/WAVE file", path);
    size_t i = 12;
    int format = -1, channels = 0, bits = 0;
    uint32_t rate = 0;
    const uint8_t *data = NULL;
    size_t data_bytes = 0;
    while (n - i >= 8) {
        uint32_t size = sotto__rd32(p + i + 4);
        const uint8_t *body = p + i + 8;
        size_t avail = n - i - 8;
        if (memcmp(p + i, "fmt ", 4) == 0) {
            if (size < 16 || size > avail)
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: fmt chunk of %u bytes is malformed", path, size);
            format = sotto__rd16(body);
            channels = sotto__rd16(body + 2);
            rate = sotto__rd32(body + 4);
            bits = sotto__rd16(body + 14);
            if (format == 0xfffe) { /* WAVE_FORMAT_EXTENSIBLE: the sub-format GUID starts with the code */
                if (size < 40)
                    return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: extensible fmt chunk too short", path);
                format = sotto__rd16(body + 24);
            }
        } else if (memcmp(p + i, "data", 4) == 0) {
            if (format < 0) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: data chunk before the fmt chunk", path);
            data = body;
            /* 0 and 0xffffffff are written by streaming encoders that never came back to
             * fill in the size: take the rest of the file. Any other size must fit. */
            if (size == 0xffffffffu || (size == 0 && avail > 0)) data_bytes = avail;
            else if (size > avail)
                return sotto__fail(err, SOTTO_ERR_FORMAT,
                                   "%s: data chunk claims %u bytes but only %zu follow (truncated file)", path,
                                   size, avail);
            else data_bytes = size;
            break;
        }
        if (size > avail) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: chunk larger than the file", path);
        i += 8 + (size_t)size + (size & 1);
        if (i > n) break;
    }
    if (format < 0) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no fmt chunk", path);
    if (!data) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no data chunk", path);
    bool pcm16 = format == 1 && bits == 16, f32 = format == 3 && bits == 32;
    if (!pcm16 && !f32)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED,
                           "%s: sample format %d with %d bits; sotto reads 16-bit PCM and 32-bit float WAV "
                           "(convert with: sox IN -r 16000 -c 1 -b 16 OUT.wav)", path, format, bits);
    if (channels != 1)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED,
                           "%s: %d channels; sotto needs mono audio for now (convert with: sox IN -c 1 OUT.wav)",
                           path, channels);
    if (rate != SOTTO_SAMPLE_RATE)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED,
                           "%s: %u Hz; sotto needs 16000 Hz for now (convert with: sox IN -r 16000 OUT.wav)", path,
                           rate);
    size_t width = pcm16 ? 2 : 4;
    size_t count = data_bytes / width;
    if (count == 0) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no audio samples", path);
    float *out = malloc(count * sizeof *out);
    if (!out) return sotto__fail(err, SOTTO_ERR_NOMEM, "%s: out of memory for %zu samples", path, count);
    for (size_t k = 0; k < count; k++) {
        if (pcm16) {
            out[k] = (float)(int16_t)sotto__rd16(data + 2 * k) / 32768.0f;
        } else {
            uint32_t b = sotto__rd32(data + 4 * k);
            memcpy(&out[k], &b, 4);
            if (!(out[k] == out[k]) || out[k] > 1e6f || out[k] < -1e6f) {
                free(out);
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: sample %zu is not a finite number", path, k);
            }
        }
    }
    *samples = out;
    *n_samples = (int64_t)count;
    return SOTTO_OK;
}

sotto_status sotto_wav_read(const char *path, float **samples, int64_t *n_samples)
{
    sotto__err err = {0};
    sotto__map map;
    *samples = NULL;
    *n_samples = 0;
    if (!path) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "no audio path given"});
    sotto_status st = sotto__map_file(path, &map, &err);
    if (!st) {
        st = parse_wav(&map, path, samples, n_samples, &err);
        sotto__unmap(&map);
    }
    return st ? sotto__publish(&err) : SOTTO_OK;
}
