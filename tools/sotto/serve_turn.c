/* serve_turn.c — the input audio of a Realtime transcription session: the PCM16 buffer
 * (bounded by --live-buffer-s), server VAD turns on the Silero VAD (speech_started when a
 * window's probability reaches the threshold, speech_stopped after silence_duration_ms
 * below it less 0.15, as silero-vad's end threshold; the turn is then committed), and each
 * committed item transcribed as a job of the worker pool, one at a time per session and in
 * order: its segments as delta events, then completed (or failed). A turn is the buffer's
 * PCM16 wrapped as a WAV in memory, so it decodes exactly as an upload of that WAV. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "serve_rt.h"

struct rt_turn {
    serve_rt *rt;
    serve_job job;
    char item[32], previous[32];
    unsigned char *wav;            /* header + PCM16 */
    size_t n_wav;
    bool spoken;                   /* a delta with text was sent */
    rt_turn *next;
};

/* ---- the buffer ---- */

static double rate_ms(const serve_rt *rt, long long samples)
{
    return 1000.0 * (double)samples / rt->conf.rate;
}

/* Drops the buffer's first K samples. */
static void drop_front(serve_rt *rt, size_t k)
{
    size_t bytes = 2 * k < rt->n_pcm ? 2 * k : rt->n_pcm;
    if (!bytes) return;
    if (bytes < rt->n_pcm) memmove(rt->pcm, rt->pcm + bytes, rt->n_pcm - bytes);
    rt->n_pcm -= bytes;
    rt->buf_start += (long long)(bytes / 2);
}

static bool keep(serve_rt *rt, const unsigned char *pcm, size_t n)
{
    if (rt->n_pcm + n > rt->cap_pcm) {
        size_t cap = rt->cap_pcm ? rt->cap_pcm : 65536;
        while (cap < rt->n_pcm + n) cap *= 2;
        unsigned char *p = realloc(rt->pcm, cap);
        if (!p) return false;
        rt->pcm = p, rt->cap_pcm = cap;
    }
    memcpy(rt->pcm + rt->n_pcm, pcm, n);
    rt->n_pcm += n;
    return true;
}

/* PCM16 [N bytes] at RATE as a WAV file in memory (malloc'd, *n_out bytes). */
static unsigned char *wav_of(const unsigned char *pcm, size_t n, int rate, size_t *n_out)
{
    unsigned char *w = malloc(44 + n);
    if (!w) return NULL;
    unsigned h[11] = {0x46464952, (unsigned)(36 + n), 0x45564157, 0x20746d66, 16, 0x00010001, (unsigned)rate,
                      (unsigned)rate * 2, 0x00100002, 0x61746164, (unsigned)n};
    for (int i = 0; i < 11; i++) /* little-endian, whatever the host */
        for (int b = 0; b < 4; b++) w[4 * i + b] = (unsigned char)(h[i] >> (8 * b));
    memcpy(w + 44, pcm, n);
    *n_out = 44 + n;
    return w;
}

/* ---- turns: jobs of the pool ---- */

static void turn_free(rt_turn *t)
{
    if (!t) return;
    free(t->wav);
    free(t);
}

static void send_failed(serve_rt *rt, rt_turn *t, const char *code, const char *msg)
{
    rt_event ev;
    if (!rt_event_begin(rt, &ev, "conversation.item.input_audio_transcription.failed")) return;
    rt_put_str(&ev, "item_id", t->item);
    rt_put_int(&ev, "content_index", 0);
    fputs(", \"error\": {\"type\": \"server_error\", \"code\": ", ev.f);
    out_json_string(ev.f, code);
    fputs(", \"message\": ", ev.f);
    out_json_string(ev.f, msg);
    fputs(", \"param\": null}", ev.f);
    rt_event_send(rt, &ev);
}

static int turn_segment(const sotto_segment *seg, void *user)
{
    rt_turn *t = user;
    const char *text = seg->text;
    if (!t->spoken) /* the deltas join into completed's transcript, which has no leading space */
        while (*text == ' ') text++;
    if (!*text) return 0;
    t->spoken = true;
    rt_event ev;
    if (!rt_event_begin(t->rt, &ev, "conversation.item.input_audio_transcription.delta")) return 0;
    rt_put_str(&ev, "item_id", t->item);
    rt_put_int(&ev, "content_index", 0);
    rt_put_str(&ev, "delta", text);
    rt_event_send(t->rt, &ev);
    return 0;
}

static int turn_abort(double audio_s, void *user)
{
    (void)audio_s;
    rt_turn *t = user;
    return atomic_load(&t->rt->aborted);
}

static bool turn_drop(serve_job *job)
{
    return turn_abort(0, job->user) != 0;
}

static void submit_next(serve_rt *rt);

static void turn_done(serve_job *job)
{
    rt_turn *t = job->user;
    serve_rt *rt = t->rt;
    if (job->outcome == SERVE_JOB_RAN && job->status == SOTTO_OK) {
        const char *text = job->result->text;
        while (*text == ' ') text++;
        rt_event ev;
        if (rt_event_begin(rt, &ev, "conversation.item.input_audio_transcription.completed")) {
            rt_put_str(&ev, "item_id", t->item);
            rt_put_int(&ev, "content_index", 0);
            rt_put_str(&ev, "transcript", text);
            fprintf(ev.f, ", \"usage\": {\"type\": \"duration\", \"seconds\": %.3f}", job->result->duration);
            rt_event_send(rt, &ev);
        }
        sotto_result_free(job->result);
    } else if (job->outcome == SERVE_JOB_EXPIRED) {
        send_failed(rt, t, "overloaded", "no worker was free within --queue-timeout");
    } else if (job->outcome == SERVE_JOB_RAN && job->status != SOTTO_ERR_CANCELLED) {
        send_failed(rt, t, "transcription_failed", job->error);
    } /* stopped (the session closing): nobody listens */
    pthread_mutex_lock(&rt->mu);
    rt->running = NULL;
    submit_next(rt);
    pthread_cond_broadcast(&rt->cv);
    pthread_mutex_unlock(&rt->mu);
    turn_free(t);
}

/* The next committed turn onto the pool, when none runs (under rt->mu). */
static void submit_next(serve_rt *rt)
{
    while (!rt->running && rt->head) {
        rt_turn *t = rt->head;
        rt->head = t->next;
        if (!rt->head) rt->tail = NULL;
        if (atomic_load(&rt->aborted)) {
            turn_free(t);
            continue;
        }
        if (!serve_pool_reserve(rt->pool)) {
            send_failed(rt, t, "overloaded", "every worker is busy and the queue is full: retry later");
            turn_free(t);
            continue;
        }
        rt->running = t;
        serve_pool_submit(rt->pool, &t->job);
    }
}

/* Commits the buffer's first N_SAMPLES as a new item (ITEM, or a fresh id when ""). */
static void commit_samples(serve_rt *rt, size_t n_samples, const char *item)
{
    rt_turn *t = calloc(1, sizeof *t);
    if (!t || !(t->wav = wav_of(rt->pcm, 2 * n_samples, rt->conf.rate, &t->n_wav))) {
        free(t);
        serve_rt_error(rt, "server_error", NULL, "out of memory");
        return;
    }
    drop_front(rt, n_samples);
    t->rt = rt;
    if (item && item[0]) snprintf(t->item, sizeof t->item, "%s", item);
    else rt_new_item(rt, t->item);
    snprintf(t->previous, sizeof t->previous, "%s", rt->last_item);
    snprintf(rt->last_item, sizeof rt->last_item, "%s", t->item);
    rt_event ev;
    if (rt_event_begin(rt, &ev, "input_audio_buffer.committed")) {
        rt_put_str(&ev, "previous_item_id", t->previous[0] ? t->previous : NULL);
        rt_put_str(&ev, "item_id", t->item);
        rt_event_send(rt, &ev);
    }
    if (rate_ms(rt, (long long)n_samples) > 1000.0 * rt->cfg->max_audio_s) { /* as an upload past it */
        char msg[160];
        snprintf(msg, sizeof msg, "the turn is longer than this server's limit of %g s (--max-audio-s)",
                 rt->cfg->max_audio_s);
        send_failed(rt, t, "audio_too_long", msg);
        turn_free(t);
        return;
    }
    serve_job *j = &t->job;
    j->source = (sotto_audio_source){.kind = SOTTO_SOURCE_MEMORY, .data = t->wav, .n_bytes = t->n_wav,
                                     .name = "the committed audio"};
    j->tp = rt->cfg->tp;
    j->tp.language = rt->conf.language[0] ? rt->conf.language : NULL;
    j->tp.initial_prompt = rt->conf.prompt[0] ? rt->conf.prompt : NULL; /* batched: every chunk's */
    j->tp.on_segment = turn_segment;
    j->tp.abort_callback = turn_abort;
    j->tp.user_data = t;
    j->done = turn_done;
    j->drop = turn_drop;
    j->user = t;
    j->deadline_ms = cli_now_ms() + 1000.0 * rt->cfg->queue_timeout_s;
    pthread_mutex_lock(&rt->mu);
    if (rt->tail) rt->tail->next = t;
    else rt->head = t;
    rt->tail = t;
    submit_next(rt);
    pthread_mutex_unlock(&rt->mu);
}

/* ---- server VAD ---- */

static void speech_event(serve_rt *rt, const char *type, const char *key, long long ms)
{
    rt_event ev;
    if (!rt_event_begin(rt, &ev, type)) return;
    rt_put_int(&ev, key, ms);
    rt_put_str(&ev, "item_id", rt->speech_item);
    rt_event_send(rt, &ev);
}

/* One VAD window's probability P, ending at 16 kHz sample END16. */
static void vad_window(serve_rt *rt, float p, long long end16)
{
    const rt_config *c = &rt->conf;
    long long win_ms = (end16 - SOTTO_VAD_WINDOW) / 16;
    if (!rt->speaking && p >= c->threshold) {
        rt->speaking = true, rt->silence16 = 0;
        rt_new_item(rt, rt->speech_item);
        long long start_ms = win_ms - c->prefix_padding_ms;
        speech_event(rt, "input_audio_buffer.speech_started", "audio_start_ms", start_ms < 0 ? 0 : start_ms);
        return;
    }
    if (!rt->speaking) { /* silence: only prefix_padding_ms of it is kept before speech */
        long long keep_from = (long long)((double)(win_ms + 32 - c->prefix_padding_ms) * c->rate / 1000.0);
        if (keep_from > rt->buf_start) drop_front(rt, (size_t)(keep_from - rt->buf_start));
        return;
    }
    rt->silence16 = p < c->threshold - 0.15 ? rt->silence16 + SOTTO_VAD_WINDOW : 0;
    if (rt->silence16 < 16LL * c->silence_duration_ms) return;
    rt->speaking = false;
    speech_event(rt, "input_audio_buffer.speech_stopped", "audio_end_ms", end16 / 16);
    long long end = (long long)((double)end16 * c->rate / 16000.0) - rt->buf_start;
    size_t n = (size_t)(end < 0 ? 0 : end) < rt->n_pcm / 2 ? (size_t)(end < 0 ? 0 : end) : rt->n_pcm / 2;
    if (n) commit_samples(rt, n, rt->speech_item);
}

/* 16 kHz SAMPLES [N] to the VAD, each window's probability to vad_window. */
static void vad_push(serve_rt *rt, const float *x, int64_t n)
{
    float probs[64];
    for (int64_t at = 0; at < n;) {
        int64_t k = n - at < 32 * SOTTO_VAD_WINDOW ? n - at : 32 * SOTTO_VAD_WINDOW, got = 0;
        if (sotto_vad_stream_push(rt->vs, x + at, k, probs, 64, &got) != SOTTO_OK) {
            serve_rt_error(rt, "server_error", NULL, "the VAD failed: %s", sotto_vad_stream_error(rt->vs));
            return;
        }
        long long done = rt->n_vad16 + at + k; /* windows end on multiples of 512 */
        long long end = done - done % SOTTO_VAD_WINDOW - (got - 1) * SOTTO_VAD_WINDOW;
        for (int64_t i = 0; i < got; i++) vad_window(rt, probs[i], end + i * SOTTO_VAD_WINDOW);
        at += k;
    }
    rt->n_vad16 += n;
}

/* PCM16 [N bytes] at the session's rate to the VAD at 16 kHz: 16 kHz as it comes; 24 kHz
 * through the library's decoder (a WAV in memory, resampled by libswresample as any
 * upload) in blocks of at least 0.25 s, so few block edges. */
static void vad_feed(serve_rt *rt, const unsigned char *pcm, size_t n)
{
    if (rt->conf.rate == 16000) {
        float x[4096];
        for (size_t at = 0; at < n / 2;) {
            size_t k = n / 2 - at < 4096 ? n / 2 - at : 4096;
            for (size_t i = 0; i < k; i++)
                x[i] = (float)(int16_t)(pcm[2 * (at + i)] | pcm[2 * (at + i) + 1] << 8) / 32768.0f;
            vad_push(rt, x, (int64_t)k);
            at += k;
        }
        return;
    }
    unsigned char *p = realloc(rt->vad_pending, rt->n_vad_pending + n);
    if (!p) return;
    rt->vad_pending = p;
    memcpy(p + rt->n_vad_pending, pcm, n);
    rt->n_vad_pending += n;
    if (rt->n_vad_pending < 2 * 6000) return;
    size_t n_wav;
    unsigned char *wav = wav_of(rt->vad_pending, rt->n_vad_pending, rt->conf.rate, &n_wav);
    rt->n_vad_pending = 0;
    sotto_audio *a = NULL;
    sotto_audio_source src = {.kind = SOTTO_SOURCE_MEMORY, .data = wav, .n_bytes = n_wav, .name = "the appended audio"};
    if (!wav || sotto_audio_open_source(&src, &a) != SOTTO_OK) {
        serve_rt_error(rt, "server_error", NULL, "cannot resample the audio for the VAD: %s", sotto_last_error());
        free(wav);
        return;
    }
    float x[4096];
    int64_t got = 0;
    while (sotto_audio_read(a, x, 4096, &got) == SOTTO_OK && got > 0) vad_push(rt, x, got);
    sotto_audio_close(a);
    free(wav);
}

/* ---- the events' work ---- */

/* Server VAD, the buffer at --live-buffer-s: the turn so far committed as if a pause had
 * come (speech_stopped, committed), and the speech goes on as a new turn (speech_started
 * at the same time), so that an utterance without a pause never fills the buffer for good. */
static void split_turn(serve_rt *rt)
{
    long long ms = (long long)rate_ms(rt, rt->n_in);
    if (!rt->speaking) {
        commit_samples(rt, rt->n_pcm / 2, "");
        return;
    }
    speech_event(rt, "input_audio_buffer.speech_stopped", "audio_end_ms", ms);
    commit_samples(rt, rt->n_pcm / 2, rt->speech_item);
    rt_new_item(rt, rt->speech_item);
    speech_event(rt, "input_audio_buffer.speech_started", "audio_start_ms", ms);
}

void rt_append(serve_rt *rt, const unsigned char *pcm, size_t n)
{
    const serve_config *cfg = rt->cfg;
    double limit_ms = 1000.0 * cfg->live_buffer_s;
    if (rt->conf.vad && rate_ms(rt, (long long)(rt->n_pcm + n) / 2) > limit_ms &&
        rate_ms(rt, (long long)rt->n_pcm / 2) >= 100)
        split_turn(rt);
    if (rate_ms(rt, (long long)(rt->n_pcm + n) / 2) > limit_ms) {
        serve_rt_error(rt, "input_audio_buffer_full", "audio", "the input buffer would hold more than %g s "
                       "(--live-buffer-s): commit it (or let server VAD do so) before appending more",
                       cfg->live_buffer_s);
        return;
    }
    if (!keep(rt, pcm, n)) {
        serve_rt_error(rt, "server_error", NULL, "out of memory");
        return;
    }
    rt->n_in += (long long)(n / 2);
    if (rt->conf.vad) vad_feed(rt, pcm, n);
}

void rt_commit(serve_rt *rt)
{
    if (rate_ms(rt, (long long)rt->n_pcm / 2) < 100) {
        serve_rt_error(rt, "input_audio_buffer_commit_empty", NULL, "buffer too small: expected at least 100 ms of "
                       "audio, but the buffer holds %.2f ms", rate_ms(rt, (long long)rt->n_pcm / 2));
        return;
    }
    bool speaking = rt->speaking;
    rt->speaking = false;
    commit_samples(rt, rt->n_pcm / 2, speaking ? rt->speech_item : "");
}

void rt_clear(serve_rt *rt)
{
    drop_front(rt, rt->n_pcm / 2);
    rt->speaking = false;
    rt_event ev;
    if (rt_event_begin(rt, &ev, "input_audio_buffer.cleared")) rt_event_send(rt, &ev);
}

bool rt_reconfigure(serve_rt *rt, const rt_config *c)
{
    if (c->vad && !rt->cfg->tp.vad) {
        serve_rt_error(rt, "invalid_value", "session.audio.input.turn_detection",
                       "server_vad needs the Silero VAD, which this server has not loaded (--vad-model, or "
                       "install it with scripts/setup.sh): use turn_detection null and commit");
        return false;
    }
    if (c->vad && !rt->vs && sotto_vad_stream_init(rt->cfg->tp.vad, 1, &rt->vs) != SOTTO_OK) {
        serve_rt_error(rt, "server_error", NULL, "cannot start the VAD: %s", sotto_last_error());
        return false;
    }
    bool restart = c->vad != rt->conf.vad || c->rate != rt->conf.rate;
    rt->conf = *c;
    if (restart && rt->vs) { /* the VAD hears the stream from here on */
        sotto_vad_stream_reset(rt->vs);
        rt->n_vad16 = (long long)((double)rt->n_in * 16000.0 / c->rate);
        rt->n_vad16 -= rt->n_vad16 % SOTTO_VAD_WINDOW;
        rt->n_vad_pending = 0, rt->speaking = false;
    }
    return true;
}

void rt_turns_stop(serve_rt *rt, bool abort)
{
    if (abort) atomic_store(&rt->aborted, true);
}

void rt_turns_free(serve_rt *rt)
{
    atomic_store(&rt->aborted, true);
    pthread_mutex_lock(&rt->mu);
    while (rt->running) pthread_cond_wait(&rt->cv, &rt->mu);
    rt_turn *t = rt->head;
    rt->head = rt->tail = NULL;
    pthread_mutex_unlock(&rt->mu);
    while (t) {
        rt_turn *next = t->next;
        turn_free(t);
        t = next;
    }
}
