/* input.c — the audio side of transcription: samples (an array, or a file decoded a chunk
 * at a time) pushed into the whole-file log-mel and, with a VAD model, into a Silero VAD
 * stream whose per-32-ms speech probabilities go along (on a thread of its own beside the
 * log-mel when the caller has two or more); and for vad_filter the speech-only signal
 * (faster-whisper's collect_chunks) with the map of its times back to the original's
 * (SpeechTimestampsMap). */
#define _POSIX_C_SOURCE 200809L
#include "input.h"

#include "../audio/audio.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK = 1 << 16 };

void sotto__input_free(sotto__input *in)
{
    sotto__melfile_free(in->mf);
    free(in->probs);
    free(in->speech);
    free(in->keep_end), free(in->silence_before);
    *in = (sotto__input){0};
}

static bool grow_probs(sotto__input *in, int64_t more)
{
    if (in->n_probs + more <= in->cap_probs) return true;
    int64_t cap = (in->n_probs + more) * 2 + 1024;
    float *p = realloc(in->probs, (size_t)cap * sizeof *p);
    if (!p) return false;
    in->probs = p, in->cap_probs = cap;
    return true;
}

/* One source of samples: an array, or an audio stream. */
typedef struct source {
    const float *x;
    int64_t n, at;
    sotto_audio *audio;
} source;

static sotto_status next_chunk(source *s, float *buf, const float **out, int64_t *got)
{
    if (!s->audio) {
        *got = s->n - s->at < CHUNK ? s->n - s->at : CHUNK;
        *out = s->x + s->at;
        s->at += *got;
        return SOTTO_OK;
    }
    *out = buf;
    return sotto_audio_read(s->audio, buf, CHUNK, got);
}

/* The VAD on a thread of its own: a chunk's probabilities are computed while the reader
 * decodes the next chunk and pushes it into the log-mel. The two consumers share nothing
 * but the samples, so the results are those of one thread; on a 5-minute reading the VAD
 * (0.45 s) and the log-mel (0.22 s) had run one after the other while the other cores
 * waited for the first window. */
typedef struct vad_side {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sotto_vad_stream *vs;
    const float *x;            /* the chunk posted and not yet done, or NULL */
    int64_t n;
    float *probs;              /* room for CAP probabilities */
    int64_t cap, n_p;          /* the probabilities the last chunk gave */
    sotto_status st;           /* its status */
    bool quit;
} vad_side;

static void *side_main(void *arg)
{
    vad_side *v = arg;
    pthread_mutex_lock(&v->mu);
    for (;;) {
        while (!v->x && !v->quit) pthread_cond_wait(&v->cv, &v->mu);
        if (!v->x) break;
        pthread_mutex_unlock(&v->mu);
        int64_t n_p = 0;
        sotto_status st = sotto_vad_stream_push(v->vs, v->x, v->n, v->probs, v->cap, &n_p);
        pthread_mutex_lock(&v->mu);
        v->st = st, v->n_p = n_p, v->x = NULL;
        pthread_cond_broadcast(&v->cv);
    }
    pthread_mutex_unlock(&v->mu);
    return NULL;
}

static bool side_start(vad_side *v, sotto_vad_stream *vs)
{
    *v = (vad_side){.vs = vs};
    if (pthread_mutex_init(&v->mu, NULL)) return false;
    if (pthread_cond_init(&v->cv, NULL)) {
        pthread_mutex_destroy(&v->mu);
        return false;
    }
    if (pthread_create(&v->thread, NULL, side_main, v)) {
        pthread_cond_destroy(&v->cv), pthread_mutex_destroy(&v->mu);
        return false;
    }
    return true;
}

/* Waits for the chunk posted last (if any); its status, and its probabilities' count
 * added to *N_PROBS. */
static sotto_status side_wait(vad_side *v, int64_t *n_probs)
{
    pthread_mutex_lock(&v->mu);
    while (v->x) pthread_cond_wait(&v->cv, &v->mu);
    sotto_status st = v->st;
    *n_probs += v->n_p;
    v->n_p = 0, v->st = SOTTO_OK;
    pthread_mutex_unlock(&v->mu);
    return st;
}

/* Posts X [N] (which stays valid until side_wait) with room for CAP probabilities at PROBS. */
static void side_post(vad_side *v, const float *x, int64_t n, float *probs, int64_t cap)
{
    pthread_mutex_lock(&v->mu);
    v->x = x, v->n = n, v->probs = probs, v->cap = cap;
    pthread_cond_broadcast(&v->cv);
    pthread_mutex_unlock(&v->mu);
}

static void side_stop(vad_side *v)
{
    pthread_mutex_lock(&v->mu);
    v->quit = true;
    pthread_cond_broadcast(&v->cv);
    pthread_mutex_unlock(&v->mu);
    pthread_join(v->thread, NULL);
    pthread_cond_destroy(&v->cv), pthread_mutex_destroy(&v->mu);
}

/* Every sample of SRC into the log-mel (when MEL) and the VAD (when VS; with SIDE on its
 * thread, beside the log-mel). With KEEP, only the samples inside in->speech go to the
 * log-mel (the second pass of vad_filter). P's abort callback is polled after each chunk. */
static sotto_status feed(sotto__input *in, source *src, bool mel, sotto_vad_stream *vs, vad_side *side, bool keep,
                         int n_mels, const sotto_transcribe_params *p)
{
    /* two buffers with SIDE: it reads one chunk while the next is decoded into the other */
    float *bufs = malloc((side ? 2 : 1) * CHUNK * sizeof *bufs);
    sotto_status st = bufs ? SOTTO_OK : SOTTO_ERR_NOMEM;
    if (!st && mel) st = sotto__melfile_new(n_mels, &in->mf);
    int64_t pos = 0, k = 0; /* samples so far; the speech interval at or after pos */
    for (int64_t got = 1, chunk = 0; !st && got > 0; chunk++) {
        const float *x;
        st = next_chunk(src, bufs + (side ? chunk % 2 : 0) * CHUNK, &x, &got);
        if (st || got == 0) break;
        if (vs) {
            int64_t n_p = 0;
            if (side) st = side_wait(side, &in->n_probs); /* the chunk before: probs may move */
            if (!st && !grow_probs(in, got / SOTTO_VAD_WINDOW + 2)) st = SOTTO_ERR_NOMEM;
            if (!st && side) side_post(side, x, got, in->probs + in->n_probs, in->cap_probs - in->n_probs);
            else if (!st)
                st = sotto_vad_stream_push(vs, x, got, in->probs + in->n_probs, in->cap_probs - in->n_probs, &n_p);
            in->n_probs += n_p;
        }
        if (!st && mel && !keep) st = sotto__melfile_push(in->mf, x, got);
        while (!st && mel && keep && k < in->n_speech) {
            int64_t a = in->speech[k].start > pos ? in->speech[k].start : pos, b = in->speech[k].end;
            if (a >= pos + got) break;
            int64_t e = b < pos + got ? b : pos + got;
            st = sotto__melfile_push(in->mf, x + (a - pos), e - a);
            if (b <= pos + got) k++;
            else break;
        }
        pos += got;
        if (!st && p->abort_callback && p->abort_callback((double)pos / SOTTO_SAMPLE_RATE, p->user_data))
            st = SOTTO_ERR_CANCELLED;
    }
    if (side) { /* the last chunk posted */
        sotto_status vst = side_wait(side, &in->n_probs);
        if (!st) st = vst;
    }
    if (!st && vs && !mel && pos > 0 && pos % SOTTO_VAD_WINDOW == 0) {
        /* vad_filter's pass: faster-whisper's vad.py pads a whole signal with one window of
         * zeros more (np.pad to the next multiple of 512), as sotto_vad_speech_fw does */
        static const float zeros[SOTTO_VAD_WINDOW];
        int64_t n_p = 0;
        if (!grow_probs(in, 2)) st = SOTTO_ERR_NOMEM;
        if (!st) st = sotto_vad_stream_push(vs, zeros, SOTTO_VAD_WINDOW, in->probs + in->n_probs,
                                            in->cap_probs - in->n_probs, &n_p);
        in->n_probs += n_p;
    }
    if (!st && vs) {
        int64_t n_p = 0;
        if (!grow_probs(in, 1)) st = SOTTO_ERR_NOMEM;
        if (!st) st = sotto_vad_stream_flush(vs, in->probs + in->n_probs, &n_p);
        in->n_probs += n_p;
    }
    if (!st && mel) st = sotto__melfile_finish(in->mf);
    in->n_samples = pos;
    free(bufs);
    return st;
}

bool sotto__input_map(sotto__input *in)
{
    int64_t n = in->n_speech;
    in->keep_end = malloc((size_t)(n ? n : 1) * sizeof *in->keep_end);
    in->silence_before = malloc((size_t)(n ? n : 1) * sizeof *in->silence_before);
    if (!in->keep_end || !in->silence_before) return false;
    int64_t previous_end = 0, silent = 0;
    for (int64_t i = 0; i < n; i++) {
        silent += in->speech[i].start - previous_end;
        previous_end = in->speech[i].end;
        in->keep_end[i] = in->speech[i].end - silent;
        in->silence_before[i] = (double)silent / SOTTO_SAMPLE_RATE;
    }
    return true;
}

/* bisect.bisect: the first chunk ending after SAMPLE, at most the last. */
static int64_t chunk_of(const sotto__input *in, int64_t sample)
{
    int64_t lo = 0, hi = in->n_speech;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (sample < in->keep_end[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo < in->n_speech - 1 ? lo : in->n_speech - 1;
}

int64_t sotto__input_chunk(const sotto__input *in, double t)
{
    return in->n_speech ? chunk_of(in, (int64_t)(t * SOTTO_SAMPLE_RATE)) : 0;
}

/* The chunk of time T, an end at a chunk's last sample counted in that chunk
 * (get_chunk_index with is_end). */
static int64_t end_chunk(const sotto__input *in, double t)
{
    int64_t sample = (int64_t)(t * SOTTO_SAMPLE_RATE);
    for (int64_t i = 0; i < in->n_speech; i++)
        if (in->keep_end[i] == sample) return i;
    return chunk_of(in, sample);
}

int64_t sotto__input_end_chunk(const sotto__input *in, double t)
{
    return in->n_speech ? end_chunk(in, t) : 0;
}

double sotto__input_original_time(const sotto__input *in, double t, bool is_end)
{
    if (!in->n_speech) return t;
    int64_t idx = is_end ? end_chunk(in, t) : chunk_of(in, (int64_t)(t * SOTTO_SAMPLE_RATE));
    return nearbyint((in->silence_before[idx] + t) * 100.0) / 100.0; /* round(x, 2) */
}

double sotto__input_original_time_at(const sotto__input *in, double t, double at)
{
    if (!in->n_speech) return t;
    int64_t idx = chunk_of(in, (int64_t)(at * SOTTO_SAMPLE_RATE));
    return nearbyint((in->silence_before[idx] + t) * 100.0) / 100.0;
}

bool sotto__input_has_speech(const sotto__input *in, int64_t from, int64_t to, float threshold)
{
    if (!in->probs) return true;
    int64_t a = from / SOTTO_VAD_WINDOW, b = (to + SOTTO_VAD_WINDOW - 1) / SOTTO_VAD_WINDOW;
    for (int64_t i = a; i < b && i < in->n_probs; i++)
        if (in->probs[i] >= threshold) return true;
    return false;
}

sotto_status sotto__input_read_all(sotto_audio *audio, const sotto_transcribe_params *p, float **x, int64_t *n)
{
    int64_t cap = CHUNK, got = 1;
    *n = 0;
    *x = malloc((size_t)cap * sizeof **x);
    sotto_status st = *x ? SOTTO_OK : SOTTO_ERR_NOMEM;
    while (!st && got > 0) {
        if (*n + CHUNK > cap) {
            float *more = realloc(*x, (size_t)(cap *= 2) * sizeof *more);
            if (!more) st = SOTTO_ERR_NOMEM;
            else *x = more;
        }
        if (!st) st = sotto_audio_read(audio, *x + *n, CHUNK, &got);
        if (!st) *n += got;
        if (!st && got > 0 && p && p->abort_callback &&
            p->abort_callback((double)*n / SOTTO_SAMPLE_RATE, p->user_data))
            st = SOTTO_ERR_CANCELLED;
    }
    return st;
}

/* Hands AUDIO's warning (a truncated file) to P's on_warning, once per input. */
static void warn(const sotto_transcribe_params *p, const sotto_audio *audio, bool *told)
{
    const char *w = sotto_audio_warning(audio);
    if (*told || !w[0]) return;
    *told = true;
    if (p->on_warning) p->on_warning(w, p->user_data);
}

/* The speech intervals of the first pass, with faster-whisper's VadOptions under its
 * vad.py's rule for over-long speech (sotto_vad_speech_fw's). */
static sotto_status intervals(sotto__input *in, const sotto_transcribe_params *p)
{
    sotto_vad_params vp = sotto_vad_params_batched(p->vad_max_speech_s);
    vp.threshold = p->vad_threshold;
    vp.use_neg_threshold = !isnan(p->vad_neg_threshold);
    vp.neg_threshold = vp.use_neg_threshold ? p->vad_neg_threshold : 0;
    vp.min_speech_duration_ms = p->vad_min_speech_ms;
    vp.min_silence_duration_ms = p->vad_min_silence_ms;
    vp.speech_pad_ms = p->vad_speech_pad_ms;
    sotto_status st = sotto_vad_intervals(in->probs, in->n_probs, in->n_samples, &vp, &in->speech, &in->n_speech);
    if (!st && !sotto__input_map(in)) st = SOTTO_ERR_NOMEM;
    return st;
}

sotto_status sotto__input_read(const sotto_audio_source *from, const float *samples, int64_t n_samples, int n_mels,
                               int n_threads, const sotto_transcribe_params *p, sotto__input *in, sotto__err *err)
{
    *in = (sotto__input){0};
    sotto_vad_stream *vs = NULL;
    sotto_status st = SOTTO_OK;
    bool filter = p->vad && p->vad_filter;
    if (p->vad && (st = sotto_vad_stream_init(p->vad, 1, &vs)))
        return sotto__fail(err, st, "VAD: %s", sotto_last_error());
    source src = {samples, n_samples, 0, NULL};
    if (from && (st = sotto_audio_open_source(from, &src.audio))) {
        sotto_vad_stream_free(vs);
        return sotto__fail(err, st, "%s", sotto_last_error());
    }
    /* vad_filter reads the signal twice: for the VAD, then the speech into the log-mel
     * (a pipe cannot be read again: its samples are kept between the passes) */
    float *kept = NULL;
    int64_t n_kept = 0;
    bool told = false;
    if (src.audio) warn(p, src.audio, &told); /* a file's truncation shows at once, a pipe's at its end */
    if (filter && src.audio && !sotto__audio_seekable(src.audio)) {
        st = sotto__input_read_all(src.audio, p, &kept, &n_kept);
        warn(p, src.audio, &told);
        sotto_audio_close(src.audio);
        src = (source){kept, n_kept, 0, NULL};
    }
    vad_side side;
    bool beside = vs && !filter && n_threads >= 2 && side_start(&side, vs); /* else the VAD runs inline */
    if (!st) st = feed(in, &src, !filter, vs, beside ? &side : NULL, false, n_mels, p);
    if (beside) side_stop(&side);
    if (!st && src.audio) warn(p, src.audio, &told);
    if (!st && filter) st = intervals(in, p);
    if (!st && filter) {
        src.at = 0;
        if (src.audio && (st = sotto__audio_restart(src.audio, err))) st = sotto__publish(err);
        if (!st) st = feed(in, &src, true, NULL, NULL, true, n_mels, p);
    }
    sotto_audio_close(src.audio);
    sotto_vad_stream_free(vs);
    free(kept);
    if (st) {
        sotto__input_free(in);
        return sotto__fail(err, st, "%s", st == SOTTO_ERR_NOMEM       ? "out of memory"
                                          : st == SOTTO_ERR_CANCELLED ? "cancelled by the caller while reading the audio"
                                                                      : sotto_last_error());
    }
    return SOTTO_OK;
}
