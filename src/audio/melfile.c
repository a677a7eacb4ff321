/* melfile.c — the log-mel of a whole file as openai-whisper's transcribe() makes it
 * (audio.py log_mel_spectrogram with padding=N_SAMPLES): the samples with 30 s of zeros
 * appended, one STFT over all of it, the max - 8 floor taken over the whole file. Samples
 * arrive in chunks and are dropped once their frames are made; only the log10 frames are
 * kept (4 n_mels bytes per 10 ms: 115 MB for an hour at 80 bins), because the floor
 * needs the global maximum before any window can be scaled. */
#include "melfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mel.h"

enum { BLOCK = 3000 };        /* frames per storage block */
enum { HEAD = N_FFT / 2 + 1 }; /* samples 0..200: the reflection at the start reads 1..200 */

struct sotto__melfile {
    sotto__melcore *core;
    int n_mels;
    float **blocks;            /* [n_blocks][BLOCK][n_mels] log10 values */
    int64_t n_blocks, cap_blocks;
    int64_t n_frames;          /* frames made so far (pairs: always even) */
    double max;                /* of every log10 value made */
    int64_t n_samples;         /* received */
    float head[HEAD];          /* the first samples (zeros past the end) */
    float *buf;                /* samples [buf_start, n_samples) not yet consumed */
    int64_t buf_start;
    size_t buf_cap;
    bool finished;
    int64_t content_frames;    /* n_samples / HOP, once finished */
};

sotto_status sotto__melfile_new(int n_mels, sotto__melfile **out)
{
    *out = NULL;
    sotto__melfile *m = calloc(1, sizeof *m);
    if (!m) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "mel: out of memory"});
    sotto_status st = sotto__melcore_new(n_mels, &m->core);
    if (st) {
        free(m);
        return st;
    }
    m->n_mels = n_mels;
    m->max = -INFINITY;
    *out = m;
    return SOTTO_OK;
}

void sotto__melfile_free(sotto__melfile *m)
{
    if (!m) return;
    for (int64_t b = 0; b < m->n_blocks; b++) free(m->blocks[b]);
    free(m->blocks);
    free(m->buf);
    free(m->core);
    free(m);
}

/* Sample S of the padded signal: the reflection at the start, zeros after the end. */
static float sample(const sotto__melfile *m, int64_t s)
{
    if (s < 0) return -s < HEAD ? m->head[-s] : 0.0f;
    if (s >= m->n_samples) return 0.0f;
    return m->buf[s - m->buf_start];
}

/* Room for frames [n_frames, n_frames + 2) (a pair never straddles a block: BLOCK is even). */
static bool reserve(sotto__melfile *m)
{
    if (m->n_frames < m->n_blocks * BLOCK) return true;
    if (m->n_blocks == m->cap_blocks) {
        int64_t cap = m->cap_blocks ? 2 * m->cap_blocks : 16;
        float **p = realloc(m->blocks, (size_t)cap * sizeof *p);
        if (!p) return false;
        m->blocks = p, m->cap_blocks = cap;
    }
    float *blk = malloc((size_t)BLOCK * m->n_mels * sizeof *blk);
    if (!blk) return false;
    m->blocks[m->n_blocks++] = blk;
    return true;
}

/* Makes the pair of frames starting at n_frames (its samples all present, or past the end). */
static bool make_pair(sotto__melfile *m)
{
    if (!reserve(m)) return false;
    const int64_t t = m->n_frames;
    float x0[N_FFT], x1[N_FFT];
    double l[2][SOTTO__MEL_MAX_BINS];
    for (int j = 0; j < N_FFT; j++) {
        int64_t s = t * HOP + j - N_FFT / 2;
        x0[j] = sample(m, s), x1[j] = sample(m, s + HOP);
    }
    sotto__mel_pair(m->core, x0, x1, l[0], l[1]);
    float *dst = m->blocks[t / BLOCK] + (size_t)(t % BLOCK) * m->n_mels;
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < m->n_mels; i++) {
            dst[(size_t)f * m->n_mels + i] = (float)l[f][i];
            if (l[f][i] > m->max) m->max = l[f][i];
        }
    m->n_frames += 2;
    return true;
}

/* Drops the samples no later frame reads. */
static void consume(sotto__melfile *m)
{
    int64_t keep = m->n_frames * HOP - N_FFT / 2; /* the next pair's first sample */
    if (keep <= m->buf_start) return;
    int64_t drop = keep - m->buf_start, have = m->n_samples - m->buf_start;
    if (drop > have) drop = have;
    memmove(m->buf, m->buf + drop, (size_t)(have - drop) * sizeof *m->buf);
    m->buf_start += drop;
}

sotto_status sotto__melfile_push(sotto__melfile *m, const float *x, int64_t n)
{
    if (m->finished || n < 0 || (n && !x))
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "mel: samples pushed after the end"});
    for (int64_t i = 0; i < n && m->n_samples + i < HEAD; i++) m->head[m->n_samples + i] = x[i];
    size_t have = (size_t)(m->n_samples - m->buf_start), need = have + (size_t)n;
    if (need > m->buf_cap) {
        size_t cap = need > 2 * m->buf_cap ? need : 2 * m->buf_cap;
        float *p = realloc(m->buf, cap * sizeof *p);
        if (!p) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "mel: out of memory"});
        m->buf = p, m->buf_cap = cap;
    }
    memcpy(m->buf + have, x, (size_t)n * sizeof *x);
    m->n_samples += n;
    /* a pair at t reads samples up to t HOP + HOP + N_FFT / 2 - 1 */
    while ((m->n_frames + 1) * HOP + N_FFT / 2 <= m->n_samples)
        if (!make_pair(m)) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "mel: out of memory"});
    consume(m);
    return SOTTO_OK;
}

sotto_status sotto__melfile_finish(sotto__melfile *m)
{
    if (m->finished) return SOTTO_OK;
    m->content_frames = m->n_samples / HOP;
    /* frames past content_frames + 2 read only the appended zeros (their first sample,
     * 160 t - 200, is past the end): make the pairs up to there, the rest are the floor */
    while (m->n_frames <= m->content_frames + 2)
        if (!make_pair(m)) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "mel: out of memory"});
    double zero = log10(fmax(0.0, 1e-10)); /* a frame of zeros, as make_pair computes it */
    if (zero > m->max) m->max = zero;
    free(m->buf);
    m->buf = NULL, m->buf_cap = 0;
    m->finished = true;
    return SOTTO_OK;
}

int64_t sotto__melfile_content_frames(const sotto__melfile *m) { return m->finished ? m->content_frames : 0; }
int64_t sotto__melfile_samples(const sotto__melfile *m) { return m->n_samples; }

void sotto__melfile_window(const sotto__melfile *m, int64_t seek, int n, float *out)
{
    const float zero = sotto__mel_scale((float)log10(fmax(0.0, 1e-10)), m->max);
    for (int t = 0; t < SOTTO_N_FRAMES; t++) {
        int64_t f = seek + t;
        const float *src = t < n && f < m->n_frames ? m->blocks[f / BLOCK] + (size_t)(f % BLOCK) * m->n_mels : NULL;
        for (int i = 0; i < m->n_mels; i++)
            out[(size_t)i * SOTTO_N_FRAMES + t] = t >= n ? 0.0f : src ? sotto__mel_scale(src[i], m->max) : zero;
    }
}
