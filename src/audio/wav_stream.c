/* wav_stream.c — the built-in WAV reader as a stream: walks the RIFF chunks front to
 * back from the byte source (a file or a pipe) by the rules and with the messages of
 * sotto_wav_read (wav.c), then converts the data chunk a block at a time. Samples are
 * bit-identical to sotto_wav_read's; tests/test_audio.c checks it on every WAV we have. */
#include <string.h>

#include "audio.h"

/* Where the file size is known every rule is checked as wav.c checks it against its
 * mapping; on a pipe the same conditions are found when the input ends early. */
static bool avail_ok(const sotto__src *s, uint64_t need)
{
    return s->size < 0 || need <= (uint64_t)(s->size - s->pos);
}

static sotto_status check_format(sotto__wav *w, const char *name, int format, int bits, int channels,
                                 uint32_t rate, bool allow_f32, sotto__err *err)
{
    bool pcm16 = format == 1 && bits == 16, f32 = format == 3 && bits == 32;
    if (!pcm16 && !f32)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED,
                           "%s: sample format %d with %d bits; sotto reads 16-bit PCM and 32-bit float WAV "
                           "(convert with: sox IN -r 16000 -c 1 -b 16 OUT.wav)", name, format, bits);
    if (channels != 1)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED,
                           "%s: %d channels; sotto needs mono audio for now (convert with: sox IN -c 1 OUT.wav)",
                           name, channels);
    if (rate != SOTTO_SAMPLE_RATE)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED,
                           "%s: %u Hz; sotto needs 16000 Hz for now (convert with: sox IN -r 16000 OUT.wav)", name,
                           rate);
    if (f32 && !allow_f32)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: 32-bit float WAV goes through FFmpeg", name);
    w->f32 = f32;
    return SOTTO_OK;
}

/* The fmt chunk of SIZE bytes (the source is at its body). */
static sotto_status read_fmt(sotto__src *s, uint32_t size, int *format, int *channels, uint32_t *rate, int *bits,
                             sotto__err *err)
{
    uint8_t body[40];
    if (size < 16 || !avail_ok(s, size))
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: fmt chunk of %u bytes is malformed", s->name, size);
    size_t want = size < sizeof body ? size : sizeof body, got;
    sotto_status st = sotto__src_read(s, body, want, &got, err);
    if (st) return st;
    uint64_t skipped = 0;
    if (got == want && size > want && (st = sotto__src_skip(s, size - want, &skipped, err))) return st;
    if (got < want || skipped < size - want)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: fmt chunk of %u bytes is malformed", s->name, size);
    *format = sotto__rd16(body);
    *channels = sotto__rd16(body + 2);
    *rate = sotto__rd32(body + 4);
    *bits = sotto__rd16(body + 14);
    if (*format == 0xfffe) { /* WAVE_FORMAT_EXTENSIBLE: the sub-format GUID starts with the code */
        if (size < 40) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: extensible fmt chunk too short", s->name);
        *format = sotto__rd16(body + 24);
    }
    return SOTTO_OK;
}

sotto_status sotto__wav_open(sotto__wav *w, sotto__src *s, bool allow_f32, sotto__err *err)
{
    memset(w, 0, sizeof *w);
    int format = -1, channels = 0, bits = 0;
    uint32_t rate = 0;
    bool have_data = false;
    for (;;) {
        uint8_t hdr[8];
        size_t got;
        sotto_status st = sotto__src_read(s, hdr, 8, &got, err);
        if (st) return st;
        if (got < 8) break;
        uint32_t size = sotto__rd32(hdr + 4);
        if (memcmp(hdr, "fmt ", 4) == 0) {
            if ((st = read_fmt(s, size, &format, &channels, &rate, &bits, err))) return st;
        } else if (memcmp(hdr, "data", 4) == 0) {
            if (format < 0)
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: data chunk before the fmt chunk", s->name);
            uint64_t avail = s->size < 0 ? 0 : (uint64_t)(s->size - s->pos);
            /* 0 and 0xffffffff are written by streaming encoders that never came back to
             * fill in the size: take the rest of the input. Any other size must fit. */
            if (size == 0xffffffffu || (size == 0 && (s->size < 0 || avail > 0))) {
                w->until_end = true;
                if (s->size >= 0) {
                    w->until_end = false;
                    w->declared = avail;
                }
            } else if (!avail_ok(s, size)) {
                return sotto__fail(err, SOTTO_ERR_FORMAT,
                                   "%s: data chunk claims %u bytes but only %llu follow (truncated file)",
                                   s->name, size, (unsigned long long)avail);
            } else {
                w->declared = size;
            }
            have_data = true;
            break;
        } else {
            if (!avail_ok(s, size))
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: chunk larger than the file", s->name);
            uint64_t skipped;
            if ((st = sotto__src_skip(s, size, &skipped, err))) return st;
            if (skipped < size) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: chunk larger than the file", s->name);
        }
        if (size & 1) { /* the pad byte; at the end of input the walk just ends, as in wav.c */
            uint64_t skipped;
            if ((st = sotto__src_skip(s, 1, &skipped, err))) return st;
            if (skipped < 1) break;
        }
    }
    if (format < 0) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no fmt chunk", s->name);
    if (!have_data) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no data chunk", s->name);
    sotto_status st = check_format(w, s->name, format, bits, channels, rate, allow_f32, err);
    if (st) return st;
    size_t width = w->f32 ? 4 : 2;
    w->left = w->declared;
    w->n_samples = w->until_end ? -1 : (int64_t)(w->declared / width);
    if (w->n_samples == 0) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no audio samples", s->name);
    return SOTTO_OK;
}

/* One sample from its little-endian bytes; false for a float that is not finite. */
static bool convert(const sotto__wav *w, const uint8_t *p, float *out)
{
    if (!w->f32) {
        *out = (float)(int16_t)sotto__rd16(p) / 32768.0f;
        return true;
    }
    uint32_t b = sotto__rd32(p);
    memcpy(out, &b, 4);
    return *out == *out && *out <= 1e6f && *out >= -1e6f;
}

sotto_status sotto__wav_read(sotto__wav *w, sotto__src *s, float *buf, int64_t cap, int64_t *n,
                             sotto__err *err)
{
    size_t width = w->f32 ? 4 : 2;
    uint8_t tmp[8192];
    int64_t k = 0;
    *n = 0;
    while (k < cap) {
        int64_t m_want = (int64_t)(sizeof tmp / width) - 1;
        if (m_want > cap - k) m_want = cap - k;
        uint64_t want = (uint64_t)m_want * width - w->n_carry;
        if (!w->until_end && want > w->left) want = w->left;
        if (want == 0) break;
        memcpy(tmp, w->carry, w->n_carry);
        size_t got;
        sotto_status st = sotto__src_read(s, tmp + w->n_carry, (size_t)want, &got, err);
        if (st) return st;
        if (!w->until_end) w->left -= got;
        size_t have = w->n_carry + got, m = have / width;
        for (size_t j = 0; j < m; j++) {
            if (!convert(w, tmp + j * width, &buf[k + (int64_t)j]))
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: sample %lld is not a finite number", s->name,
                                   (long long)(w->n_done + (int64_t)j));
        }
        w->n_carry = have - m * width;
        memcpy(w->carry, tmp + m * width, w->n_carry);
        k += (int64_t)m;
        w->n_done += (int64_t)m;
        if (got < want) { /* the input ended */
            if (!w->until_end)
                return sotto__fail(err, SOTTO_ERR_FORMAT,
                                   "%s: data chunk claims %llu bytes but only %llu follow (truncated file)",
                                   s->name, (unsigned long long)w->declared,
                                   (unsigned long long)(w->declared - w->left));
            w->until_end = false;
            w->left = 0;
            break;
        }
    }
    if (k == 0 && w->n_done == 0)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no audio samples", s->name);
    *n = k;
    return SOTTO_OK;
}
