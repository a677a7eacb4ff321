/* serve_sse.c — the answer to stream=true: OpenAI's server-sent events, written by the
 * worker as it decodes (a transcript.text.delta per segment, then transcript.text.done, or
 * an error event) into a buffer that libmicrohttpd's content reader drains. The reader
 * suspends its connection when the buffer is empty, and the worker resumes it, both under
 * one lock, so neither waits on the other and no wake-up is lost. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "output.h"
#include "serve.h"

struct serve_sse {
    pthread_mutex_t mu;
    char *buf;                     /* events written, [off, n) not yet read */
    size_t n, off;
    bool finished;                 /* the last event is written */
    bool waiting;                  /* the reader suspended its connection: wake it */
    bool closed;                   /* the connection is gone: wake nothing, write nothing */
    bool spoken;                   /* a delta with text was written: later ones keep their spaces */
    bool failed;                   /* out of memory: the stream ends where it is */
    int fd;                        /* the connection's socket, while not closed */
    void (*wake)(void *user);
    void *user;
};

serve_sse *serve_sse_new(int fd, void (*wake)(void *user), void *user)
{
    serve_sse *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    pthread_mutex_init(&s->mu, NULL);
    s->fd = fd, s->wake = wake, s->user = user;
    return s;
}

void serve_sse_free(serve_sse *s)
{
    if (!s) return;
    pthread_mutex_destroy(&s->mu);
    free(s->buf);
    free(s);
}

/* Appends one event, "data: JSON\n\n" (JSON NULL: none, the stream just ends when LAST);
 * wakes the reader. */
static void put_event(serve_sse *s, const char *json, size_t n_json, bool last)
{
    pthread_mutex_lock(&s->mu);
    if (!s->closed && !s->finished && !s->failed) {
        char *b = json ? realloc(s->buf, s->n + n_json + 8) : s->buf;
        if (json && !b) s->failed = true;
        else if (json) {
            s->buf = b;
            memcpy(s->buf + s->n, "data: ", 6);
            memcpy(s->buf + s->n + 6, json, n_json);
            memcpy(s->buf + s->n + 6 + n_json, "\n\n", 2);
            s->n += n_json + 8;
        }
        if (last || s->failed) s->finished = true;
        if (s->waiting) {
            s->waiting = false;
            s->wake(s->user);
        }
    }
    pthread_mutex_unlock(&s->mu);
}

/* {"type": TYPE, KEY: TEXT} as one line (the json writer's strings). */
static void put_text_event(serve_sse *s, const char *type, const char *key, const char *text, bool last)
{
    char *json = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&json, &n);
    if (!f) {
        if (last) put_event(s, NULL, 0, true);
        return;
    }
    fprintf(f, "{\"type\": \"%s\", \"%s\": ", type, key);
    out_json_string(f, text);
    fputc('}', f);
    bool ok = !ferror(f);
    if (fclose(f) == 0 && ok) put_event(s, json, n, last);
    else put_event(s, NULL, 0, true); /* out of memory: the stream ends */
    free(json);
}

void serve_sse_delta(serve_sse *s, const char *text)
{
    /* the deltas join into the done event's text, which has no leading space (OpenAI's) */
    pthread_mutex_lock(&s->mu);
    if (!s->spoken)
        while (*text == ' ') text++;
    if (*text) s->spoken = true;
    pthread_mutex_unlock(&s->mu);
    if (*text) put_text_event(s, "transcript.text.delta", "delta", text, false);
}

void serve_sse_done(serve_sse *s, const char *text)
{
    while (*text == ' ') text++;
    put_text_event(s, "transcript.text.done", "text", text, true);
}

void serve_sse_error(serve_sse *s, const serve_error *e)
{
    size_t n = 0;
    char *json = serve_error_json(e, &n);
    if (json && n && json[n - 1] == '\n') n--; /* one line: an event's data */
    put_event(s, json, n, true);
    free(json);
}

ssize_t serve_sse_read(serve_sse *s, char *out, size_t max, void (*suspend)(void *user))
{
    pthread_mutex_lock(&s->mu);
    ssize_t r;
    if (s->off < s->n) {
        size_t k = s->n - s->off < max ? s->n - s->off : max;
        memcpy(out, s->buf + s->off, k);
        s->off += k;
        if (s->off == s->n) s->off = s->n = 0; /* the buffer is reused from its start */
        r = (ssize_t)k;
    } else if (s->finished) {
        r = -1;
    } else {
        s->waiting = true; /* under the lock: the writer's next event resumes it */
        suspend(s->user);
        r = 0;
    }
    pthread_mutex_unlock(&s->mu);
    return r;
}

bool serve_sse_close(serve_sse *s)
{
    pthread_mutex_lock(&s->mu);
    s->closed = true;
    s->waiting = false;
    s->fd = -1;
    bool cut = !s->finished;
    pthread_mutex_unlock(&s->mu);
    return cut;
}

bool serve_sse_gone(serve_sse *s)
{
    pthread_mutex_lock(&s->mu);
    bool gone = s->closed;
    if (!gone && s->fd >= 0) { /* its side closed or reset (the socket is open while not closed) */
        char c;
        ssize_t r = recv(s->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
        gone = r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    }
    pthread_mutex_unlock(&s->mu);
    return gone;
}
