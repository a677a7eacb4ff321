/* wav_stream.c — the one RIFF/WAVE parser: walks the chunks front to back from the byte
 * source (a file or a pipe), checking every size against the input, then converts the
 * data chunk a block at a time. sotto_wav_read (wav.c) and the audio input (audio.c) both
 * read through it. A data chunk cut short (a truncated file) gives the samples that are
 * there, with a warning, as ffmpeg (and so openai-whisper) decodes them. */
#include <stdio.h>
#include <string.h>

#include "audio.h"

/* Below this no real recording was made: a header that says 8 Hz makes a 32 kB file
 * 2000 s of audio (issue 23, defect 14). */
#define MIN_RATE_HZ 1000

/* Where the file size is known every size is checked against it up front; on a pipe the
 * same conditions are found when the input ends early. */
static bool avail_ok(const sotto__src *s, uint64_t need)
{
    return s->size < 0 || need <= (uint64_t)(s->size - s->pos);
}

static sotto_status check_format(sotto__wav *w, const char *name, int format, int bits, int channels,
                                 uint32_t rate, bool allow_f32, sotto__err *err)
{
    if (rate < MIN_RATE_HZ)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: a sample rate of %u Hz: no real audio has one below %d Hz "
                           "(a damaged header)", name, rate, MIN_RATE_HZ);
    bool pcm16 = format == 1 && bits == 16, f32 = format == 3 && bits == 32;
    if (!pcm16 && !f32)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED,
                           "%s: sample format %d with %d bits; sotto reads 16-bit PCM and 32-bit float WAV "
                           "(convert with: sox IN -r 16000 -c 1 -b 16 OUT.wav)", name, format, bits);
    if (channels != 1)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED,
                           "%s: %d channels; sotto needs mono audio for now (convert with: sox IN -r 16000 -c 1 "
                           "-b 16 OUT.wav)", name, channels);
    if (rate != SOTTO_SAMPLE_RATE)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED,
                           "%s: %u Hz; sotto needs 16000 Hz for now (convert with: sox IN -r 16000 -c 1 -b 16 "
                           "OUT.wav)", name, rate);
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

/* The data chunk's header said SIZE bytes and the source is at its first byte: how many
 * to read. 0 and 0xffffffff are written by streaming encoders that never came back to fill
 * in the size: the rest of the input. A size past the end of a file of known size is a
 * truncated file: what is there (*CLAIMED keeps the size for the warning). */
static void data_size(sotto__wav *w, const sotto__src *s, uint32_t size)
{
    uint64_t avail = s->size < 0 ? 0 : (uint64_t)(s->size - s->pos);
    if (size == 0xffffffffu || (size == 0 && (s->size < 0 || avail > 0))) {
        w->until_end = s->size < 0;
        w->declared = avail;
    } else if (!avail_ok(s, size)) {
        w->claimed = size;
        w->declared = avail;
    } else {
        w->declared = size;
    }
}

/* "PATH: data chunk claims N bytes but only M follow (truncated file)". */
static int truncated_msg(char *out, size_t cap, const char *name, uint64_t claimed, uint64_t present)
{
    return snprintf(out, cap, "%s: data chunk claims %llu bytes but only %llu follow (truncated file)", name,
                    (unsigned long long)claimed, (unsigned long long)present);
}

/* A data chunk cut short with samples in it: the warning; without: the failure. */
static sotto_status cut_short(sotto__wav *w, const char *name, uint64_t present, sotto__err *err)
{
    size_t width = w->f32 ? 4 : 2;
    if (present / width == 0) {
        truncated_msg(err->msg, sizeof err->msg, name, w->claimed, present);
        return err->status = SOTTO_ERR_FORMAT;
    }
    int k = truncated_msg(w->warning, sizeof w->warning, name, w->claimed, present);
    if (k > 0 && (size_t)k < sizeof w->warning)
        snprintf(w->warning + k, sizeof w->warning - (size_t)k, ": read the %.2f s there are",
                 (double)(present / width) / SOTTO_SAMPLE_RATE);
    return SOTTO_OK;
}

/* Skips the body of a chunk of SIZE bytes that is not read (LIST, fact, ...). */
static sotto_status skip_chunk(sotto__src *s, uint32_t size, sotto__err *err)
{
    if (!avail_ok(s, size)) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: chunk larger than the file", s->name);
    uint64_t skipped;
    sotto_status st = sotto__src_skip(s, size, &skipped, err);
    if (st) return st;
    if (skipped < size) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: chunk larger than the file", s->name);
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
            data_size(w, s, size);
            have_data = true;
            break;
        } else if ((st = skip_chunk(s, size, err))) {
            return st;
        }
        if (size & 1) { /* the pad byte; at the end of input the walk just ends */
            uint64_t skipped;
            if ((st = sotto__src_skip(s, 1, &skipped, err))) return st;
            if (skipped < 1) break;
        }
    }
    if (format < 0) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no fmt chunk", s->name);
    if (!have_data) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no data chunk", s->name);
    sotto_status st = check_format(w, s->name, format, bits, channels, rate, allow_f32, err);
    if (st == SOTTO_ERR_UNSUPPORTED && w->claimed) { /* FFmpeg reads it: the note goes along */
        int k = truncated_msg(w->warning, sizeof w->warning, s->name, w->claimed, w->declared);
        if (k > 0 && (size_t)k < sizeof w->warning)
            snprintf(w->warning + k, sizeof w->warning - (size_t)k, ": read what there is");
    }
    if (st) return st;
    if (w->claimed && (st = cut_short(w, s->name, w->declared, err))) return st;
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

/* The input ended inside the data chunk: on a pipe this is where a truncated file shows. */
static sotto_status input_ended(sotto__wav *w, const char *name, sotto__err *err)
{
    sotto_status st = SOTTO_OK;
    if (!w->until_end) {
        w->claimed = w->declared;
        st = cut_short(w, name, w->declared - w->left, err);
    }
    w->until_end = false;
    w->left = 0;
    return st;
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
        if (got < want) {
            if ((st = input_ended(w, s->name, err))) return st;
            break;
        }
    }
    if (k == 0 && w->n_done == 0)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no audio samples", s->name);
    *n = k;
    return SOTTO_OK;
}
