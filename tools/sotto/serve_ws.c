/* serve_ws.c — the WebSocket of `sotto serve`'s live sessions (/v1/realtime): the RFC 6455
 * handshake checked over libmicrohttpd's request and answered 101 through MHD's upgrade,
 * then one thread per session that runs wslay's framing (masking, fragments, control
 * frames, UTF-8, close) on the upgraded socket and hands each text message to the Realtime
 * protocol (serve_rt.c), whose events, from any thread, wait in an outbox this thread sends.
 * Bounded: --max-sessions at once (past it, 503 before the upgrade), --session-timeout of
 * client silence, --max-message-kb a message. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <nettle/base64.h>
#include <nettle/sha1.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wslay/wslay.h>

#include "cli.h"
#include "serve.h"

enum { CLOSE_WAIT_MS = 2000 };     /* after our close frame, the client's is awaited this long */

struct serve_live {
    const serve_config *cfg;
    serve_pool *pool;
    pthread_mutex_t mu;
    int n;                         /* sessions open (or upgrading) */
    int next_id;
    atomic_int stop;               /* 0; SERVE_LIVE_DRAIN; SERVE_LIVE_FORCE */
};

typedef struct ws_session {
    serve_live *live;
    int fd;
    struct MHD_UpgradeResponseHandle *urh;
    char *extra;                   /* bytes MHD read past the head: the first frames */
    size_t n_extra, at_extra;
    wslay_event_context_ptr ctx;
    serve_rt *rt;
    pthread_mutex_t mu;            /* the outbox */
    char **out;
    size_t n_out, cap_out;
    int wake[2];
    double last_ms;                /* the client's last message */
    uint64_t msg_bytes;            /* of the message arriving, over its fragments */
    bool oversize;                 /* it passed --max-message-kb: dropped when complete */
    bool eof;
    int id;
} ws_session;

serve_live *serve_live_new(const serve_config *cfg, serve_pool *pool)
{
    serve_live *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->cfg = cfg, l->pool = pool;
    pthread_mutex_init(&l->mu, NULL);
    return l;
}

int serve_live_count(serve_live *l)
{
    pthread_mutex_lock(&l->mu);
    int n = l->n;
    pthread_mutex_unlock(&l->mu);
    return n;
}

void serve_live_stop(serve_live *l, int how)
{
    if (atomic_load(&l->stop) < how) atomic_store(&l->stop, how);
}

void serve_live_free(serve_live *l)
{
    if (!l) return;
    pthread_mutex_destroy(&l->mu);
    free(l);
}

static void release_slot(serve_live *l)
{
    pthread_mutex_lock(&l->mu);
    l->n--;
    pthread_mutex_unlock(&l->mu);
}

void serve_live_cancel(serve_live *l)
{
    release_slot(l);
}

/* ---- the handshake (RFC 6455 4.2) ---- */

/* Whether header value V holds TOKEN in its comma-separated list (case aside). */
static bool has_token(const char *v, const char *token)
{
    size_t n = strlen(token);
    while (v && *v) {
        while (*v == ' ' || *v == '\t' || *v == ',') v++;
        const char *end = v;
        while (*end && *end != ',') end++;
        const char *e = end;
        while (e > v && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if ((size_t)(e - v) == n && strncasecmp(v, token, n) == 0) return true;
        v = end;
    }
    return false;
}

/* Sec-WebSocket-Accept for KEY: base64(SHA-1(KEY + the RFC's GUID)). */
static void accept_of(const char *key, char out[29])
{
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    struct sha1_ctx sha;
    uint8_t digest[SHA1_DIGEST_SIZE];
    sha1_init(&sha);
    sha1_update(&sha, strlen(key), (const uint8_t *)key);
    sha1_update(&sha, sizeof guid - 1, (const uint8_t *)guid);
    sha1_digest(&sha, sizeof digest, digest);
    base64_encode_raw(out, sizeof digest, digest);
    out[28] = 0;
}

static enum MHD_Result count_key(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind, (void)value;
    if (key && !strcasecmp(key, "Sec-WebSocket-Key")) ++*(int *)cls;
    return MHD_YES;
}

int serve_live_handshake(serve_live *l, struct MHD_Connection *c, char accept[29], serve_error *e)
{
#define HDR(name) MHD_lookup_connection_value(c, MHD_HEADER_KIND, name)
    const char *intent = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "intent");
    if (!intent || strcmp(intent, "transcription") != 0) {
        serve_error_set(e, 400, "invalid_request_error", "intent", "invalid_value",
                        "only transcription sessions are served: connect to /v1/realtime?intent=transcription");
        return -1;
    }
    const char *upgrade = HDR(MHD_HTTP_HEADER_UPGRADE), *conn = HDR(MHD_HTTP_HEADER_CONNECTION);
    const char *version = HDR("Sec-WebSocket-Version"), *key = HDR("Sec-WebSocket-Key");
    if (!upgrade || !has_token(upgrade, "websocket") || !conn || !has_token(conn, "upgrade")) {
        serve_error_set(e, 426, "invalid_request_error", NULL, "upgrade_required",
                        "/v1/realtime is a WebSocket: send Upgrade: websocket and Connection: Upgrade");
        return -1;
    }
    if (!version || strcmp(version, "13") != 0) {
        serve_error_set(e, 426, "invalid_request_error", NULL, "upgrade_required",
                        "Sec-WebSocket-Version %s is not served: 13 is (RFC 6455)", version ? version : "(none)");
        return -1;
    }
    unsigned char raw[24];
    size_t bad;
    int n_keys = 0;
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_key, &n_keys);
    if (n_keys > 1) { /* RFC 6455 11.3.1: not more than once */
        serve_error_set(e, 400, "invalid_request_error", NULL, "bad_request", "Sec-WebSocket-Key is given more than once");
        return -1;
    }
    if (!key || strlen(key) != 24 || serve_b64_decode(key, 24, raw, &bad) != 16) {
        serve_error_set(e, 400, "invalid_request_error", NULL, "bad_request",
                        "Sec-WebSocket-Key must be the base64 of 16 bytes");
        return -1;
    }
    if (HDR(MHD_HTTP_HEADER_CONTENT_LENGTH) || HDR(MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
        /* what follows the head is frames: a body there would be read as both */
        serve_error_set(e, 400, "invalid_request_error", NULL, "bad_request", "a WebSocket upgrade has no body");
        return -1;
    }
#undef HDR
    if (atomic_load(&l->stop)) {
        serve_error_set(e, 503, "server_error", NULL, "overloaded", "the server is shutting down");
        return -1;
    }
    pthread_mutex_lock(&l->mu);
    bool room = l->n < l->cfg->max_sessions;
    if (room) l->n++;
    pthread_mutex_unlock(&l->mu);
    if (!room) {
        serve_error_set(e, 503, "server_error", NULL, "session_limit",
                        "%d live sessions are open, this server's limit (--max-sessions): retry later",
                        l->cfg->max_sessions);
        return -1;
    }
    accept_of(key, accept);
    return 0;
}

/* ---- the outbox: events from any thread, sent by the session's ---- */

static void post(void *user, char *text)
{
    ws_session *w = user;
    if (!text) return;
    pthread_mutex_lock(&w->mu);
    if (w->n_out == w->cap_out) {
        size_t cap = w->cap_out ? 2 * w->cap_out : 16;
        char **o = realloc(w->out, cap * sizeof *o);
        if (!o) {
            pthread_mutex_unlock(&w->mu);
            free(text);
            return;
        }
        w->out = o, w->cap_out = cap;
    }
    w->out[w->n_out++] = text;
    pthread_mutex_unlock(&w->mu);
    ssize_t r = write(w->wake[1], "x", 1); /* a full pipe is awake already */
    (void)r;
}

/* The outbox's events into wslay's queue, in order. */
static void flush_outbox(ws_session *w)
{
    char b[64];
    while (read(w->wake[0], b, sizeof b) > 0) {
    }
    pthread_mutex_lock(&w->mu);
    char **out = w->out;
    size_t n = w->n_out;
    w->out = NULL, w->n_out = w->cap_out = 0;
    pthread_mutex_unlock(&w->mu);
    for (size_t i = 0; i < n; i++) {
        struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)out[i], strlen(out[i])};
        wslay_event_queue_msg(w->ctx, &m); /* copied; refused once our close is queued */
        free(out[i]);
    }
    free(out);
}

/* ---- wslay's callbacks ---- */

static ssize_t on_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *user)
{
    (void)flags;
    ws_session *w = user;
    if (w->at_extra < w->n_extra) {
        size_t k = w->n_extra - w->at_extra < len ? w->n_extra - w->at_extra : len;
        memcpy(buf, w->extra + w->at_extra, k);
        w->at_extra += k;
        return (ssize_t)k;
    }
    ssize_t r = recv(w->fd, buf, len, MSG_DONTWAIT);
    if (r > 0) return r;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    w->eof = true; /* closed or reset under us: no close frame */
    wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
}

static ssize_t on_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags, void *user)
{
    (void)flags;
    ws_session *w = user;
    ssize_t r = send(w->fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r >= 0) return r;
    wslay_event_set_error(ctx, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? WSLAY_ERR_WOULDBLOCK
                                                                                      : WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
}

/* A frame begins: the message's size so far against --max-message-kb. wslay itself closes
 * with 1009 past twice that (its buffer's bound); between the two, the message is read,
 * answered with an error event and dropped, and the session goes on (as OpenAI's errors). */
static void on_frame_start(wslay_event_context_ptr ctx, const struct wslay_event_on_frame_recv_start_arg *a,
                           void *user)
{
    (void)ctx;
    ws_session *w = user;
    if (a->opcode >= WSLAY_CONNECTION_CLOSE) return; /* control frames: 125 bytes at most */
    if (a->opcode != WSLAY_CONTINUATION_FRAME) w->msg_bytes = 0, w->oversize = false;
    w->msg_bytes += a->payload_length;
    if (!w->oversize && w->msg_bytes > w->live->cfg->max_message_bytes) {
        w->oversize = true;
        serve_rt_error(w->rt, "message_too_large", NULL, "a message is larger than this server's limit of %zu kB "
                       "(--max-message-kb): it is dropped; send audio in smaller appends",
                       w->live->cfg->max_message_bytes >> 10);
    }
}

static void on_message(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *a, void *user)
{
    (void)ctx;
    ws_session *w = user;
    w->last_ms = cli_now_ms();
    if (a->opcode >= WSLAY_CONNECTION_CLOSE) return; /* wslay answers close and ping */
    if (w->oversize) {
        w->oversize = false;
        return;
    }
    if (a->opcode == WSLAY_BINARY_FRAME) {
        serve_rt_error(w->rt, "invalid_event", NULL, "a binary message: events are JSON text messages");
        return;
    }
    serve_rt_message(w->rt, (const char *)a->msg, a->msg_length);
}

/* ---- the session's thread ---- */

static void queue_close(ws_session *w, uint16_t code, const char *why)
{
    flush_outbox(w);
    wslay_event_send(w->ctx); /* the events first: wslay sends a queued close before them */
    wslay_event_queue_close(w->ctx, code, (const uint8_t *)why, strlen(why));
}

/* Our side is done: what the client still sends (the rest of a refused message) is read and
 * dropped until it closes, for CLOSE_WAIT_MS at most, so closing does not reset the
 * connection under our close frame before the client has read it. */
static void linger(ws_session *w)
{
    shutdown(w->fd, SHUT_WR);
    double t0 = cli_now_ms();
    char buf[16384];
    while (cli_now_ms() - t0 < CLOSE_WAIT_MS) {
        struct pollfd p = {.fd = w->fd, .events = POLLIN};
        if (poll(&p, 1, 100) < 0 && errno != EINTR) return;
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t r = recv(w->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) return;
    }
}

/* Serves W until both sides have closed (or the connection is lost), then lets it go. */
static void run(ws_session *w)
{
    const serve_config *cfg = w->live->cfg;
    double closing_since = 0;
    bool stopping = false;
    serve_rt_start(w->rt);
    for (;;) {
        flush_outbox(w);
        int stop = atomic_load(&w->live->stop);
        double now = cli_now_ms();
        if (stop == SERVE_LIVE_FORCE || w->eof) serve_rt_stop(w->rt, true);
        if (!closing_since && stop && !stopping) { /* drain: the turns in flight first */
            stopping = true;
            serve_rt_stop(w->rt, stop == SERVE_LIVE_FORCE);
        }
        if (!closing_since && stopping && !serve_rt_busy(w->rt)) {
            queue_close(w, WSLAY_CODE_GOING_AWAY, "the server is shutting down");
            closing_since = now;
        }
        if (serve_rt_busy(w->rt)) w->last_ms = now; /* a turn being transcribed is not silence */
        if (!closing_since && !stopping && now - w->last_ms > 1000.0 * cfg->session_timeout_s) {
            serve_rt_error(w->rt, "session_timeout", NULL, "no message for %d s (--session-timeout): closing",
                           cfg->session_timeout_s);
            queue_close(w, WSLAY_CODE_NORMAL_CLOSURE, "idle timeout");
            closing_since = now;
        }
        if (!closing_since && wslay_event_get_close_received(w->ctx)) closing_since = now;
        if (wslay_event_want_write(w->ctx) && wslay_event_send(w->ctx) != 0) break;
        bool rd = wslay_event_want_read(w->ctx), wr = wslay_event_want_write(w->ctx);
        if (w->eof || (!rd && !wr)) break;
        if (!closing_since && !rd) { /* wslay refused the client's frames (1002, 1007, 1009) */
            closing_since = now;
        }
        if (closing_since && now - closing_since > CLOSE_WAIT_MS) break;
        struct pollfd p[2] = {{.fd = w->fd, .events = (short)((rd ? POLLIN : 0) | (wr ? POLLOUT : 0))},
                              {.fd = w->wake[0], .events = POLLIN}};
        int r = poll(p, 2, 100); /* the timeouts and the drain are looked at this often */
        if (r < 0 && errno != EINTR) break;
        if (r <= 0) continue;
        if (p[0].revents & (POLLERR | POLLNVAL)) break;
        if ((p[0].revents & (POLLIN | POLLHUP)) && rd && wslay_event_recv(w->ctx) != 0) {
            w->eof = true;
        }
    }
    serve_rt_stop(w->rt, true); /* the client is gone: its turns are not worth their work */
    if (!w->eof) linger(w);
}

static void *session_main(void *arg)
{
    ws_session *w = arg;
    run(w);
    serve_rt_free(w->rt); /* waits for a turn still running to stop */
    flush_outbox(w);      /* (what it said last goes nowhere) */
    wslay_event_context_free(w->ctx);
    MHD_upgrade_action(w->urh, MHD_UPGRADE_ACTION_CLOSE);
    fprintf(stderr, "sotto serve: live session %d closed\n", w->id);
    serve_live *l = w->live;
    close(w->wake[0]), close(w->wake[1]);
    pthread_mutex_destroy(&w->mu);
    free(w->out);
    free(w->extra);
    free(w);
    release_slot(l);
    return NULL;
}

void serve_live_upgraded(serve_live *l, const char *extra, size_t n_extra, int fd,
                         struct MHD_UpgradeResponseHandle *urh)
{
    ws_session *w = calloc(1, sizeof *w);
    static const struct wslay_event_callbacks cb = {on_recv, on_send, NULL, on_frame_start, NULL, NULL, on_message};
    bool ok = w && pipe2(w->wake, O_NONBLOCK | O_CLOEXEC) == 0;
    if (ok) {
        w->live = l, w->fd = fd, w->urh = urh;
        pthread_mutex_init(&w->mu, NULL);
        w->last_ms = cli_now_ms();
        pthread_mutex_lock(&l->mu);
        w->id = ++l->next_id;
        pthread_mutex_unlock(&l->mu);
        w->extra = n_extra ? malloc(n_extra) : NULL;
        ok = !n_extra || w->extra;
        if (ok && n_extra) memcpy(w->extra, extra, n_extra), w->n_extra = n_extra;
    }
    ok = ok && wslay_event_context_server_init(&w->ctx, &cb, w) == 0;
    if (ok) wslay_event_config_set_max_recv_msg_length(w->ctx, 2 * (uint64_t)l->cfg->max_message_bytes);
    ok = ok && (w->rt = serve_rt_new(l->cfg, l->pool, w->id, post, w)) != NULL;
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int id = ok ? w->id : 0; /* W is the thread's once it starts: it may be gone at once */
    ok = ok && pthread_create(&t, &attr, session_main, w) == 0;
    pthread_attr_destroy(&attr);
    if (ok) {
        fprintf(stderr, "sotto serve: live session %d open\n", id);
        return;
    }
    fprintf(stderr, "sotto serve: a live session could not start (out of memory or threads): closed\n");
    if (w) {
        serve_rt_free(w->rt);
        if (w->ctx) wslay_event_context_free(w->ctx);
        if (w->wake[0] > 0) close(w->wake[0]), close(w->wake[1]);
        free(w->extra);
        free(w);
    }
    MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
    release_slot(l);
}

bool serve_live_available(const char **missing)
{
    *missing = NULL;
    return true;
}
