/* serve_rt.h — what the parts of a Realtime transcription session share: the protocol
 * (serve_rt.c: client events parsed, session configuration), the server events
 * (serve_event.c) and the input audio (serve_turn.c: the buffer, server VAD turns, each
 * committed turn transcribed as a job of the worker pool). A session belongs to its
 * WebSocket's thread; a turn's job runs on a worker and speaks through the send callback. */
#ifndef SOTTO_SERVE_RT_H
#define SOTTO_SERVE_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "serve.h"

typedef struct rt_config {
    bool beta;                     /* set by transcription_session.update: answered in its shape */
    int rate;                      /* of the PCM16 input: 24000 (OpenAI's) or 16000 */
    char language[16];             /* "" : detected (multilingual) */
    char prompt[SERVE_FIELD_MAX];
    bool vad;                      /* turn_detection server_vad; else commits are the client's */
    double threshold;              /* server_vad's, OpenAI's defaults: 0.5, 300 ms, 500 ms */
    int prefix_padding_ms, silence_duration_ms;
} rt_config;

typedef struct rt_turn rt_turn;

struct serve_rt {
    const serve_config *cfg;
    serve_pool *pool;
    int id;
    serve_rt_send send;
    void *user;
    pthread_mutex_t mu;            /* the turns (never held while the pool's lock is asked for
                                      by a sweep: aborted is atomic) */
    pthread_cond_t cv;             /* a turn ended */
    atomic_llong n_event, n_item;
    rt_config conf;
    char client_event[64];         /* event_id of the client event being handled, or "" */
    /* the input buffer: PCM16 at conf.rate, the stream's samples [buf_start, buf_start + n/2) */
    unsigned char *pcm;
    size_t n_pcm, cap_pcm;
    long long buf_start, n_in;     /* samples at conf.rate */
    /* server VAD, on the 16 kHz signal */
    sotto_vad_stream *vs;
    unsigned char *vad_pending;    /* PCM16 not yet resampled for it (24 kHz input) */
    size_t n_vad_pending;
    long long n_vad16;             /* 16 kHz samples the VAD has had */
    bool speaking;
    long long silence16;           /* 16 kHz samples of silence since speech was last heard */
    char speech_item[32];          /* the item the speech being heard will be */
    char last_item[32];            /* the last committed item: previous_item_id */
    rt_turn *head, *tail;          /* committed, not yet running */
    rt_turn *running;
    atomic_bool aborted;           /* the session is gone: the running turn stops, queued ones drop */
};

/* ---- serve_event.c ---- */

/* An event being written: {"event_id": ..., "type": TYPE, then rt_put_* members, then }. */
typedef struct rt_event {
    FILE *f;
    char *buf;
    size_t n;
} rt_event;

bool rt_event_begin(serve_rt *rt, rt_event *ev, const char *type);
void rt_put_str(rt_event *ev, const char *key, const char *value); /* NULL: null */
void rt_put_int(rt_event *ev, const char *key, long long value);
void rt_put_raw(rt_event *ev, const char *key, const char *json);
/* Ends EV and sends it (any thread: the send callback queues it in order). */
void rt_event_send(serve_rt *rt, rt_event *ev);
/* OpenAI's error event, {"type": "error", "error": {type, code, message, param, event_id}},
 * EVENT_ID the client event at fault's (rt->client_event) or null. */
void rt_error(serve_rt *rt, const char *type, const char *code, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A new item id: "item_<session>_<n>". */
void rt_new_item(serve_rt *rt, char out[32]);

/* ---- serve_turn.c ---- */

/* input_audio_buffer.append's decoded PCM16 (N bytes, even): kept, and heard by the VAD. */
void rt_append(serve_rt *rt, const unsigned char *pcm, size_t n);
/* input_audio_buffer.commit: the buffer becomes an item, transcribed in order. */
void rt_commit(serve_rt *rt);
/* input_audio_buffer.clear */
void rt_clear(serve_rt *rt);
/* The configuration changes to C (the buffer is empty when the rate changes): false, with
 * an error event sent, when the VAD cannot be had. */
bool rt_reconfigure(serve_rt *rt, const rt_config *c);
/* With ABORT, ends every turn: queued ones are dropped, the running one stopped; without,
 * the turns committed go on (a drain answers them before it closes). */
void rt_turns_stop(serve_rt *rt, bool abort);
void rt_turns_free(serve_rt *rt);

#endif
