/* serve_http.c — the HTTP front end of `sotto serve` on GNU libmicrohttpd: routes, bearer
 * authentication, the multipart upload streamed by MHD's post processor into an unlinked
 * temporary file (the size limit checked as it streams), admission into the worker pool
 * (serve_pool.c), the answer once a worker is done (the connection is suspended meanwhile,
 * so MHD's one polling thread never waits on a transcription), one log line per request on
 * stderr, and the drain on SIGTERM, SIGINT or SIGHUP. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <microhttpd.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "serve.h"

typedef struct server {
    const serve_config *cfg;
    serve_pool *pool;
    atomic_int active;             /* requests begun and not yet completed */
    atomic_bool draining;
    atomic_bool forced;            /* the drain cut short: work in flight is stopped */
    atomic_int uploading;          /* requests whose body is still arriving (of active) */
    atomic_int job_ms;             /* a transcription's usual time, head to answer (a moving
                                      average of the answered ones; 0 before the first) */
    struct MHD_Daemon *daemon;
    serve_live *live;              /* the WebSocket sessions (serve_ws.c) */
} server;

enum { ROUTE_TRANSCRIBE = 1, ROUTE_TRANSLATE, ROUTE_REALTIME, ROUTE_MODEL };
enum { ST_UPLOADING, ST_QUEUED, ST_STREAMING, ST_DONE }; /* ST_STREAMING: stream=true, a worker took it */
enum { STOP_TOO_LONG = 1, STOP_FORCED, STOP_GONE }; /* why a job was stopped or dropped */

typedef struct request {
    server *srv;
    struct MHD_Connection *conn;
    char method[16], path[160];
    double t0_ms;
    int status;                    /* HTTP status answered; 0 before */
    double audio_s;                /* seconds transcribed; < 0 when none */
    int route;
    struct MHD_PostProcessor *pp;
    serve_epilogue epilogue;       /* what follows the body's close delimiter, not given to PP */
    int fd;                        /* the upload, unlinked; -1 */
    char filename[256];            /* as the client named it */
    uint64_t body_bytes, file_bytes;
    bool file_seen, reserved;
    bool uploading;                /* counted in server.uploading: its body is still arriving */
    uint64_t length;               /* its Content-Length, UINT64_MAX without one (chunked) */
    bool answered_raw;             /* answered on the socket, past MHD (too_slow): MHD closes it */
    double answered_ms;            /*   when (the log's time is the answer's, not the close's) */
    serve_error reject;            /* answered once the body is in, when http_status != 0 */
    serve_form form;
    const out_writer *format;
    serve_job job;
    atomic_int state;
    int why_stopped;               /* STOP_*: set on the worker's or the sweeping thread */
    char *body;                    /* the worker's answer: malloc'd */
    size_t n_body;
    int body_status;
    serve_sse *sse;                /* stream=true: the events, as the worker writes them */
    bool live_slot;                /* a live session's slot, until the upgrade hands it over */
    bool http10;                   /* an HTTP/1.0 request (no upgrade to a WebSocket) */
    char why[320];                 /* the error answered, "code: message", for its log line */
    atomic_int refs;               /* MHD's (until completed) and, streaming, the worker's */
} request;

/* ---- answers ---- */

/* The Access-Control-Allow-Origin Q's answer carries: "*" or its Origin when --cors allows
 * it, else NULL (no CORS headers: a browser keeps the answer from the page). */
static const char *cors_origin(const request *q)
{
    const char *allowed = q->srv->cfg->cors, *origin;
    if (!allowed || !(origin = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, "Origin"))) return NULL;
    if (!strcmp(allowed, "*")) return "*";
    const size_t n = strlen(origin);
    for (const char *a = allowed; *a;) {
        while (*a == ' ' || *a == ',') a++;
        size_t k = strcspn(a, ", ");
        if (k && k == n && !strncmp(a, origin, n)) return origin;
        a += k;
    }
    return NULL;
}

static void add_cors(const request *q, struct MHD_Response *r)
{
    const char *o = cors_origin(q);
    if (!o) return;
    MHD_add_response_header(r, "Access-Control-Allow-Origin", o);
    MHD_add_response_header(r, "Access-Control-Expose-Headers", "Retry-After");
    if (strcmp(o, "*") != 0) MHD_add_response_header(r, "Vary", "Origin");
}

/* Queues R as Q's answer with STATUS (and lets R go). */
static enum MHD_Result queue_answer(request *q, int status, struct MHD_Response *r)
{
    /* one request per connection: the front door checks every request head (serve_door.c),
     * and it sees only a connection's first */
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (q->reserved) { /* the slot goes back before the client sees the answer */
        serve_pool_cancel(q->srv->pool);
        q->reserved = false;
    }
    enum MHD_Result ok = MHD_queue_response(q->conn, (unsigned)status, r);
    MHD_destroy_response(r);
    q->status = status;
    return ok;
}

static enum MHD_Result send_buf(request *q, int status, char *buf, size_t n, const char *type)
{
    const server *s = q->srv;
    struct MHD_Response *r = MHD_create_response_from_buffer(n, buf, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(buf);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    add_cors(q, r);
    if (status == 503) { /* when a slot may be free again: a transcription's usual time */
        char after[16];
        int ms = atomic_load(&s->job_ms);
        snprintf(after, sizeof after, "%d", ms < 1000 ? 1 : ms > 120000 ? 120 : (ms + 999) / 1000);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, after);
    }
    if (status == 401) MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (status == 405)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, q->route ? "POST" : strcmp(q->path, "/health") ? "GET" : "GET, HEAD");
    return queue_answer(q, status, r);
}

/* Keeps E's code and message for Q's log line (cut at sizeof q->why). */
static void note_error(request *q, const serve_error *e)
{
    snprintf(q->why, sizeof q->why, "%.30s: %.280s", e->code ? e->code : e->type, e->message);
}

static enum MHD_Result send_error(request *q, const serve_error *e)
{
    note_error(q, e);
    size_t n = 0;
    char *buf = serve_error_json(e, &n);
    if (!buf) return MHD_NO;
    return send_buf(q, e->http_status, buf, n, "application/json");
}

static enum MHD_Result fail(request *q, int status, const char *type, const char *param, const char *code,
                            const char *msg)
{
    serve_error e;
    serve_error_set(&e, status, type, param, code, "%s", msg);
    return send_error(q, &e);
}

static enum MHD_Result send_text(request *q, int status, const char *text, const char *type)
{
    size_t n = strlen(text);
    char *buf = malloc(n + 1);
    if (!buf) return MHD_NO;
    memcpy(buf, text, n + 1);
    return send_buf(q, status, buf, n, type);
}

/* ---- authentication ---- */

/* GIVEN equals KEY, in time that depends on KEY's length alone. */
static bool same_secret(const char *given, const char *key)
{
    size_t n = strlen(given), k = strlen(key);
    volatile unsigned char d = n != k;
    for (size_t i = 0; i < k; i++) d |= (unsigned char)(key[i] ^ (i < n ? given[i] : 0));
    return d == 0;
}

static bool authorized(request *q)
{
    const char *key = q->srv->cfg->api_key;
    if (!key) return true;
    const char *h = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer ", 7) != 0) return false;
    h += 7;
    while (*h == ' ') h++;
    return same_secret(h, key);
}

/* ---- upload ---- */

/* Where uploads are stored: $TMPDIR, else /tmp. */
static const char *upload_dir(void)
{
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

/* A new upload file in upload_dir(), unlinked at once (nothing is left behind, whatever
 * happens to the process); -1 with errno. */
static int upload_file(void)
{
    char tmpl[4096];
    if (snprintf(tmpl, sizeof tmpl, "%s/sotto-upload-XXXXXX", upload_dir()) >= (int)sizeof tmpl) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = mkstemp(tmpl);
    if (fd >= 0) unlink(tmpl);
    return fd;
}

static void reject(request *q, int status, const char *param, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void reject(request *q, int status, const char *param, const char *code, const char *fmt, ...)
{
    if (q->reject.http_status) return; /* the first reason stands */
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    serve_error_set(&q->reject, status, status >= 500 ? "server_error" : "invalid_request_error", param, code, "%s",
                    msg);
    if (q->fd >= 0) { /* the disk space goes back now; the descriptor closes at the end */
        int rc = ftruncate(q->fd, 0);
        (void)rc;
    }
    if (q->reserved) { /* a refused request waits for no worker: its slot goes back now */
        serve_pool_cancel(q->srv->pool);
        q->reserved = false;
    }
}

static enum MHD_Result on_field(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                                const char *content_type, const char *transfer_encoding, const char *data,
                                uint64_t off, size_t size)
{
    request *q = cls;
    if (q->reject.http_status) return MHD_YES;
    if (!key) { /* MHD passes a part whose Content-Disposition has no name= with KEY NULL */
        reject(q, 400, NULL, "invalid_multipart", "a multipart part has no name in its Content-Disposition");
        return MHD_YES;
    }
    if (strcmp(key, "file") != 0) {
        serve_form_field(&q->form, key, data, off, size);
        return MHD_YES;
    }
    if (off == 0 && q->file_seen && (q->file_bytes > 0 || size > 0)) {
        reject(q, 400, "file", "invalid_value", "more than one 'file' part: send one audio file per request");
        return MHD_YES;
    }
    if (!q->file_seen && filename) snprintf(q->filename, sizeof q->filename, "%s", filename);
    q->file_seen = true;
    for (size_t done = 0; done < size;) {
        ssize_t w = write(q->fd, data + done, size - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            reject(q, 500, NULL, "storage_error", "cannot store the upload: %s", strerror(errno));
            return MHD_YES;
        }
        done += (size_t)w;
    }
    q->file_bytes += size;
    return MHD_YES;
}

/* A body may take --timeout seconds, and one more for each BODY_RATE bytes it brings
 * (64 kbit/s): a 25 MB upload over a 2 Mbit/s line is taken, a body trickling in to hold
 * a connection is not (a client silent for --timeout is closed by MHD meanwhile). */
#define BODY_RATE 8192.0

static double body_deadline_ms(const request *q)
{
    return q->t0_ms + 1000.0 * (q->srv->cfg->timeout_s + (double)q->body_bytes / BODY_RATE);
}

/* Answers 408 on the connection itself (MHD sends nothing while a body arrives) and drops
 * the rest of the body: the client has been told; a second --timeout later MHD closes it. */
static void too_slow(request *q)
{
    const serve_config *cfg = q->srv->cfg;
    serve_error e;
    serve_error_set(&e, 408, "invalid_request_error", NULL, "timeout", "the request body arrives too slowly: %zu "
                    "bytes in %.0f s, where this server waits --timeout (%d s) and 1 s more for each 8 kB received "
                    "(64 kbit/s)", (size_t)q->body_bytes, (cli_now_ms() - q->t0_ms) / 1000.0, cfg->timeout_s);
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(q->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci) serve_send_raw(ci->connect_fd, &e);
    reject(q, 408, NULL, "timeout", "%s", e.message); /* the upload's disk space goes back */
    q->status = 408;
    q->answered_raw = true;
    q->answered_ms = cli_now_ms();
}

/* Set on the thread that hands MHD a close of a request answered past it (or whose client
 * left mid-body): MHD then logs the close as an "internal error" of the application, which
 * it is not. */
static _Thread_local bool closing_answered;

static void upload(request *q, const char *data, size_t size)
{
    const serve_config *cfg = q->srv->cfg;
    if (q->reject.http_status) return; /* the rest of the body is read and dropped */
    q->body_bytes += size;
    if (q->body_bytes > cfg->max_upload_bytes) {
        reject(q, 413, "file", "file_too_large", "the request is larger than this server's limit of %zu MB",
               cfg->max_upload_bytes >> 20);
        return;
    }
    if (cli_now_ms() > body_deadline_ms(q)) {
        too_slow(q);
        return;
    }
    size_t keep = serve_epilogue_cut(&q->epilogue, data, size);
    if (keep && MHD_post_process(q->pp, data, keep) != MHD_YES)
        reject(q, 400, NULL, "invalid_multipart", "the multipart/form-data body is malformed");
}

/* ---- the request's life ---- */

/* Whether Q's client has gone: its side closed or reset (nginx's test of a client that
 * left, ngx_http_test_reading: a request whose answer nobody reads is not worth its work). */
static bool client_gone(request *q)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(q->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return false;
    char c;
    ssize_t r = recv(ci->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Q's Content-Length, or UINT64_MAX when it has none (chunked) or an unreadable one. */
static uint64_t body_length(request *q)
{
    const char *v = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    char *end;
    errno = 0;
    unsigned long long n = v ? strtoull(v, &end, 10) : 0;
    return v && *v && !*end && !errno ? (uint64_t)n : UINT64_MAX;
}

/* The job's abort callback (on the worker's thread, the connection suspended): past
 * --max-audio-s, on a forced stop, or when the client has left. */
static int job_abort(double audio_s, void *user)
{
    request *q = user;
    const server *s = q->srv;
    if (audio_s > s->cfg->max_audio_s) q->why_stopped = STOP_TOO_LONG;
    else if (atomic_load(&s->forced)) q->why_stopped = STOP_FORCED;
    else if (q->sse ? serve_sse_gone(q->sse) : client_gone(q)) q->why_stopped = STOP_GONE;
    return q->why_stopped != 0;
}

/* serve_pool_sweep's question for a queued job: drop it (a client gone, a forced stop)? */
static bool drop_job(serve_job *job)
{
    request *q = job->user;
    if (atomic_load(&q->srv->forced)) q->why_stopped = STOP_FORCED;
    else if (q->sse ? serve_sse_gone(q->sse) : client_gone(q)) q->why_stopped = STOP_GONE;
    return q->why_stopped != 0;
}

/* The error answer of a job that failed, expired in the queue or was stopped. */
static void job_error(request *q, const serve_job *job, serve_error *e)
{
    const serve_config *cfg = q->srv->cfg;
    if (job->outcome == SERVE_JOB_EXPIRED) {
        serve_error_set(e, 503, "server_error", NULL, "overloaded",
                        "no worker was free within %d s (--queue-timeout): retry later", cfg->queue_timeout_s);
        return;
    }
    if (q->why_stopped == STOP_TOO_LONG) {
        serve_error_set(e, 413, "invalid_request_error", "file", "audio_too_long",
                        "the audio is longer than this server's limit of %g s (--max-audio-s)", cfg->max_audio_s);
        return;
    }
    if (q->why_stopped) {
        serve_error_set(e, 503, "server_error", NULL, "overloaded",
                        q->why_stopped == STOP_FORCED ? "the server is shutting down" : "the client left");
        return;
    }
    char msg[512]; /* the library's message names the upload as the client named it */
    snprintf(msg, sizeof msg, "%s", job->status == SOTTO_OK ? "out of memory" : job->error);
    bool audio = job->status == SOTTO_ERR_FORMAT || job->status == SOTTO_ERR_IO || job->status == SOTTO_ERR_UNSUPPORTED;
    if (job->status == SOTTO_OK || job->status == SOTTO_ERR_NOMEM)
        serve_error_set(e, 500, "server_error", NULL, "internal_error", "%s", msg);
    else
        serve_error_set(e, 400, "invalid_request_error", audio ? "file" : NULL, audio ? "invalid_audio" : "invalid_value",
                        "%s", msg);
}

static void release(request *q);

/* stream=true: the job's end is the stream's last event; the worker lets go of Q. */
static void sse_job_done(request *q, serve_job *job)
{
    if (job->outcome == SERVE_JOB_RAN && job->status == SOTTO_OK) {
        q->audio_s = job->result->duration;
        serve_sse_done(q->sse, job->result->text);
        sotto_result_free(job->result);
    } else {
        serve_error e;
        job_error(q, job, &e);
        note_error(q, &e); /* before the event: the log line is written after it */
        serve_sse_error(q->sse, &e);
    }
    release(q);
}

static void job_done(serve_job *job)
{
    request *q = job->user;
    if (q->sse && job->outcome == SERVE_JOB_RAN) {
        sse_job_done(q, job);
        return;
    }
    /* else answered plainly: a streaming request that expired in the queue or was dropped
     * before a worker took it gets its 503 (with Retry-After) as any other, no stream */
    if (job->outcome == SERVE_JOB_RAN && job->status == SOTTO_OK) {
        q->audio_s = job->result->duration;
        q->body = serve_render(job->result, q->format, q->job.tp.translate, &q->n_body);
        q->body_status = q->body ? 200 : 500;
        sotto_result_free(job->result);
    }
    if (!q->body) {
        serve_error e;
        job_error(q, job, &e);
        q->body = serve_error_json(&e, &q->n_body);
        q->body_status = e.http_status;
    }
    if (q->sse) release(q); /* the worker's reference (MHD's stays until completed) */
    atomic_store(&q->state, ST_DONE);
    MHD_resume_connection(q->conn); /* last: MHD may complete and free Q from here on */
}

static enum MHD_Result begin_upload(request *q)
{
    const server *s = q->srv;
    const serve_config *cfg = s->cfg;
    const char *len = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    long long n = len ? strtoll(len, NULL, 10) : 0;
    if (n > 0 && (unsigned long long)n > cfg->max_upload_bytes) {
        char msg[160];
        snprintf(msg, sizeof msg, "the request (%lld bytes) is larger than this server's limit of %zu MB", n,
                 cfg->max_upload_bytes >> 20);
        return fail(q, 413, "invalid_request_error", "file", "file_too_large", msg);
    }
    const char *type = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!type || strncasecmp(type, "multipart/form-data", 19) != 0)
        return fail(q, 400, "invalid_request_error", NULL, "invalid_content_type",
                    "the body must be multipart/form-data with the audio in a 'file' part");
    if (atomic_load(&s->draining))
        return fail(q, 503, "server_error", NULL, "overloaded", "the server is shutting down");
    q->pp = MHD_create_post_processor(q->conn, 65536, on_field, q);
    if (q->pp) q->uploading = true, q->length = body_length(q), atomic_fetch_add(&q->srv->uploading, 1);
    if (!q->pp) /* libmicrohttpd's: a boundary of 2 characters or more */
        return fail(q, 400, "invalid_request_error", NULL, "invalid_multipart",
                    "the multipart/form-data header has no usable boundary (one of 2 to 70 characters)");
    serve_epilogue_init(&q->epilogue, type);
    q->fd = upload_file();
    if (q->fd < 0) {
        char msg[4200];
        snprintf(msg, sizeof msg, "cannot create a temporary file in %s: %s", upload_dir(), strerror(errno));
        return fail(q, 500, "server_error", NULL, "storage_error", msg);
    }
    return MHD_YES;
}

/* ---- GET /v1/realtime: the WebSocket upgrade (serve_ws.c) ---- */

static void on_upgrade(void *cls, struct MHD_Connection *c, void *con_cls, const char *extra, size_t n_extra,
                       MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
    (void)c, (void)con_cls;
    request *q = cls;
    q->live_slot = false; /* the session has it now */
    serve_live_upgraded(q->srv->live, extra, n_extra, sock, urh);
}

/* The handshake checked and a session slot taken: 101 through MHD's upgrade, which must not
 * carry send_buf's Connection: close (MHD writes Connection: Upgrade). */
static enum MHD_Result begin_live(request *q)
{
    const char *missing;
    if (!serve_live_available(&missing)) return fail(q, 501, "server_error", NULL, "not_implemented", missing);
    if (q->http10) /* libmicrohttpd upgrades HTTP/1.1 alone (it had answered nothing, logged as 101) */
        return fail(q, 400, "invalid_request_error", NULL, "bad_request",
                    "a WebSocket upgrade is an HTTP/1.1 request (RFC 6455 4.1), not HTTP/1.0");
    char accept[29];
    serve_error e;
    if (serve_live_handshake(q->srv->live, q->conn, accept, &e) != 0) return send_error(q, &e);
    q->live_slot = true;
    struct MHD_Response *r = MHD_create_response_for_upgrade(on_upgrade, q);
    if (!r) return MHD_NO; /* on_completed gives the slot back */
    MHD_add_response_header(r, MHD_HTTP_HEADER_UPGRADE, "websocket");
    MHD_add_response_header(r, "Sec-WebSocket-Accept", accept);
    enum MHD_Result ok = MHD_queue_response(q->conn, MHD_HTTP_SWITCHING_PROTOCOLS, r);
    MHD_destroy_response(r);
    q->status = 101;
    return ok;
}

/* GET /v1/models, or /v1/models/ID: the model served, also by the name whisper-1 (as
 * requests name it), in OpenAI's shapes; another ID is OpenAI's 404 model_not_found. */
static enum MHD_Result models(request *q, bool get)
{
    const char *id = q->route == ROUTE_MODEL ? q->path + 11 : NULL, *served = q->srv->cfg->model_id;
    if (!get)
        return fail(q, 405, "invalid_request_error", NULL, "method_not_allowed",
                    id ? "use GET /v1/models/ID" : "use GET /v1/models");
    if (id && strcmp(id, served) != 0 && strcmp(id, "whisper-1") != 0) {
        serve_error e;
        serve_error_set(&e, 404, "invalid_request_error", "model", "model_not_found",
                        "The model '%s' does not exist: this server runs '%s' (whisper-1 names it too)", id, served);
        return send_error(q, &e);
    }
    size_t n = 0;
    char *buf = serve_models_json(id ? id : served, !id, &n);
    return buf ? send_buf(q, 200, buf, n, "application/json") : MHD_NO;
}

/* A browser's CORS preflight (OPTIONS with Origin; no API key: browsers send none on it):
 * 204 with the methods and headers allowed, when --cors names its origin. */
static enum MHD_Result preflight(request *q)
{
    const char *o = cors_origin(q);
    if (!o)
        return fail(q, 403, "invalid_request_error", NULL, "origin_not_allowed",
                    "this origin is not among the server's --cors origins");
    struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    const char *want = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, "Access-Control-Request-Headers");
    add_cors(q, r);
    MHD_add_response_header(r, "Access-Control-Allow-Methods",
                            q->route == ROUTE_TRANSCRIBE || q->route == ROUTE_TRANSLATE ? "POST, OPTIONS"
                                                                                      : "GET, HEAD, OPTIONS");
    MHD_add_response_header(r, "Access-Control-Allow-Headers",
                            want && *want ? want : "Authorization, Content-Type");
    MHD_add_response_header(r, "Access-Control-Max-Age", "600");
    return queue_answer(q, 204, r);
}

static enum MHD_Result begin(request *q)
{
    const char *p = q->path, *m = q->method;
    bool get = !strcmp(m, "GET") || !strcmp(m, "HEAD"), post = !strcmp(m, "POST");
    if (!strcmp(p, "/health"))
        return get ? send_text(q, 200, "{\"status\": \"ok\"}\n", "application/json")
                   : fail(q, 405, "invalid_request_error", NULL, "method_not_allowed", "use GET /health");
    if (!strcmp(p, "/v1/audio/transcriptions")) q->route = ROUTE_TRANSCRIBE;
    else if (!strcmp(p, "/v1/audio/translations")) q->route = ROUTE_TRANSLATE;
    else if (!strcmp(p, "/v1/realtime")) q->route = ROUTE_REALTIME;
    else if (!strncmp(p, "/v1/models/", 11) && p[11]) q->route = ROUTE_MODEL;
    else if (strcmp(p, "/v1/models") != 0) {
        serve_error e;
        serve_error_set(&e, 404, "invalid_request_error", NULL, "not_found",
                        "no such route: %s %s (POST /v1/audio/transcriptions, POST /v1/audio/translations, "
                        "GET /v1/realtime (WebSocket), GET /v1/models[/ID] and GET /health are served)", m, p);
        return send_error(q, &e);
    }
    if (!strcmp(m, "OPTIONS") && q->srv->cfg->cors) return preflight(q);
    if (!authorized(q))
        return fail(q, 401, "authentication_error", NULL, "invalid_api_key",
                    "missing or wrong API key: send Authorization: Bearer KEY");
    if (q->route == ROUTE_REALTIME)
        return get ? begin_live(q)
                   : fail(q, 405, "invalid_request_error", NULL, "method_not_allowed",
                          "use GET /v1/realtime?intent=transcription with a WebSocket upgrade");
    if (!q->route || q->route == ROUTE_MODEL) return models(q, get);
    if (!post) return fail(q, 405, "invalid_request_error", NULL, "method_not_allowed", "use POST with multipart/form-data");
    return begin_upload(q);
}

/* ---- stream=true: server-sent events ---- */

static void sse_suspend(void *user)
{
    request *q = user;
    MHD_suspend_connection(q->conn);
}

static void sse_wake(void *user)
{
    request *q = user;
    MHD_resume_connection(q->conn);
}

static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    request *q = cls;
    ssize_t r = serve_sse_read(q->sse, buf, max, sse_suspend);
    return r < 0 ? MHD_CONTENT_READER_END_OF_STREAM : r;
}

/* The segment callback of a streaming job (the worker's thread): one delta per segment. */
static int sse_segment(const sotto_segment *seg, void *user)
{
    request *q = user;
    serve_sse_delta(q->sse, seg->text);
    return 0;
}

/* A worker took Q's streaming job (its thread): the connection, suspended since the job
 * was queued, is resumed, and body_done answers 200 with the stream. */
static void stream_started(serve_job *job)
{
    request *q = job->user;
    atomic_store(&q->state, ST_STREAMING);
    MHD_resume_connection(q->conn);
}

/* Q's job (a reserved slot, its parameters set) is submitted with the connection
 * suspended: the stream's 200 is answered when a worker takes it (stream_started), so that
 * a request that passes --queue-timeout in the queue, or is dropped there, gets its plain
 * 503 with Retry-After as any other. The worker writes the events as it decodes
 * (serve_sse.c): a delta for each segment, then done or an error; it holds a reference to Q
 * until its last event. */
static enum MHD_Result begin_stream(request *q)
{
    server *s = q->srv;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(q->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    q->sse = serve_sse_new(ci ? ci->connect_fd : -1, sse_wake, q);
    if (!q->sse) return fail(q, 500, "server_error", NULL, "internal_error", "out of memory");
    q->job.tp.on_segment = sse_segment;
    q->job.started = stream_started;
    q->reserved = false; /* the job holds the slot now; the pool gives it back */
    atomic_store(&q->state, ST_QUEUED);
    atomic_fetch_add(&q->refs, 1); /* the worker's, let go after the last event */
    MHD_suspend_connection(q->conn);
    serve_pool_submit(s->pool, &q->job);
    return MHD_YES;
}

/* The stream's 200, once a worker has taken the job. */
static enum MHD_Result answer_stream(request *q)
{
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_reader, q, NULL);
    if (!r) return MHD_NO; /* the worker's events go nowhere; on_completed cuts the job */
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(r, "X-Accel-Buffering", "no"); /* nginx passes each event on as it comes */
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close"); /* one request a connection */
    add_cors(q, r);
    enum MHD_Result ok = MHD_queue_response(q->conn, 200, r);
    MHD_destroy_response(r);
    q->status = 200;
    return ok;
}

/* Q's body is in (or it ended): no longer counted as arriving. */
static void upload_over(request *q)
{
    if (q->uploading) q->uploading = false, atomic_fetch_sub(&q->srv->uploading, 1);
}

/* The body is in: answer a rejection, or check the form and hand the file to the pool. */
static enum MHD_Result body_done(request *q)
{
    server *s = q->srv;
    upload_over(q);
    if (atomic_load(&q->state) == ST_STREAMING && !q->status) return answer_stream(q);
    if (atomic_load(&q->state) == ST_DONE) {
        char *b = q->body;
        q->body = NULL;
        return send_buf(q, q->body_status, b, q->n_body, q->body_status == 200 ? q->format->mime
                                                                             : "application/json");
    }
    if (q->pp && MHD_destroy_post_processor(q->pp) != MHD_YES)
        reject(q, 400, NULL, "invalid_multipart", "the multipart/form-data body ended before its closing boundary");
    q->pp = NULL;
    if (q->reject.http_status) return send_error(q, &q->reject);
    if (!q->file_seen)
        return fail(q, 400, "invalid_request_error", "file", "missing_file", "the form has no 'file' part (the audio)");
    serve_form_end(&q->form);
    serve_error e;
    if (!serve_form_check(&q->form, s->cfg, q->route == ROUTE_TRANSLATE, &q->job.tp, &q->format, &e))
        return send_error(q, &e);
    if (lseek(q->fd, 0, SEEK_SET) != 0)
        return fail(q, 500, "server_error", NULL, "storage_error", "cannot read the stored upload back");
    /* a slot is taken only now, with the whole upload on disk: a slow client holds none (a
     * request whose head came before a drain began is in flight: it is served) */
    if (!serve_pool_reserve(s->pool))
        return fail(q, 503, "server_error", NULL, "overloaded", "every worker is busy and the queue is full: retry later");
    q->reserved = true;
    q->job.source = (sotto_audio_source){.kind = SOTTO_SOURCE_FD, .fd = q->fd,
                                         .name = q->filename[0] ? q->filename : "the uploaded file"};
    q->job.done = job_done;
    q->job.user = q;
    q->job.deadline_ms = cli_now_ms() + 1000.0 * s->cfg->queue_timeout_s;
    q->job.tp.abort_callback = job_abort;
    q->job.tp.user_data = q;
    if (serve_form_stream(&q->form)) return begin_stream(q);
    q->reserved = false; /* the job holds the slot now; the pool gives it back */
    atomic_store(&q->state, ST_QUEUED);
    MHD_suspend_connection(q->conn);
    serve_pool_submit(s->pool, &q->job);
    return MHD_YES;
}

/* The path of a request target: an absolute-form one (GET http://host:port/health, as a
 * proxy sends; RFC 9112 3.2.2: a server must accept it) without its scheme and authority. */
static const char *origin_path(const char *url)
{
    size_t skip = !strncasecmp(url, "http://", 7) ? 7 : !strncasecmp(url, "https://", 8) ? 8 : 0;
    if (!skip) return url;
    const char *slash = strchr(url + skip, '/');
    return slash ? slash : "/";
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    server *s = cls;
    request *q = *con_cls;
    if (!q) {
        q = calloc(1, sizeof *q);
        if (!q) return MHD_NO;
        q->srv = s;
        q->conn = c;
        q->fd = -1;
        q->audio_s = -1;
        q->t0_ms = cli_now_ms();
        atomic_init(&q->refs, 1);
        snprintf(q->method, sizeof q->method, "%s", method);
        snprintf(q->path, sizeof q->path, "%s", origin_path(url));
        q->http10 = version && !strcmp(version, MHD_HTTP_VERSION_1_0);
        atomic_fetch_add(&s->active, 1);
        *con_cls = q;
        return begin(q);
    }
    if (*upload_data_size) {
        /* a refused body is read and dropped so the answer can be sent (MHD sends none while
         * a body arrives); one still arriving a second --timeout later is cut off */
        if (q->reject.http_status && cli_now_ms() - q->t0_ms > 2000.0 * s->cfg->timeout_s) return MHD_NO;
        if (q->answered_raw) {
            *upload_data_size = 0;
            return MHD_YES;
        }
        upload(q, upload_data, *upload_data_size);
        *upload_data_size = 0;
        /* a client that closed with its body cut short: libmicrohttpd (0.9.75, epoll) can miss
         * an end of stream that came in with the last bytes, and would hold the connection
         * and its upload until --timeout; closed here (a whole body's close is the client's
         * half-close: answered) */
        if (!q->reject.http_status && q->body_bytes < q->length && client_gone(q)) {
            closing_answered = true; /* (MHD's "internal error" line: the request's own says why) */
            return MHD_NO;
        }
        return MHD_YES;
    }
    if (q->answered_raw) { /* answered already: MHD closes the connection */
        closing_answered = true;
        return MHD_NO;
    }
    return body_done(q);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why)
{
    server *s = cls;
    request *q = *con_cls;
    if (!q) return;
    /* a stream cut before its last event: libmicrohttpd saw the client leave before the
     * worker's own check did, which now stops the work */
    const bool cut = q->sse && serve_sse_close(q->sse) && why != MHD_REQUEST_TERMINATED_COMPLETED_OK;
    const char *note = "";
    if (q->answered_raw) note = " (the body arrived too slowly: under 64 kbit/s past --timeout)";
    else if (q->why_stopped == STOP_GONE || cut) note = " (the client left: its work was stopped)";
    else if (why == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED) note = " (client silent for --timeout: closed unanswered)";
    else if (why != MHD_REQUEST_TERMINATED_COMPLETED_OK) note = q->status ? " (connection lost)" : " (closed by the client)";
    char error[sizeof q->why + 48];
    if (!*note && q->why[0]) { /* an error answer, or a stream's error event after its 200 */
        snprintf(error, sizeof error, q->status == 200 ? " (the stream ended in an error: %s)" : " (%s)", q->why);
        note = error;
    }
    if (q->status == 200 && (q->route == ROUTE_TRANSCRIBE || q->route == ROUTE_TRANSLATE)) {
        int ms = (int)(cli_now_ms() - q->t0_ms), avg = atomic_load(&s->job_ms);
        atomic_store(&s->job_ms, avg ? (7 * avg + ms) / 8 : ms);
    }
    char audio[32] = "-", status[8] = "-"; /* "-": nothing was answered */
    if (q->audio_s >= 0) snprintf(audio, sizeof audio, "%.2fs", q->audio_s);
    if (q->status) snprintf(status, sizeof status, "%d", q->status);
    fprintf(stderr, "sotto serve: %s %s %s audio=%s %.0fms%s\n", q->method, q->path, status, audio,
            (q->answered_raw ? q->answered_ms : cli_now_ms()) - q->t0_ms, note);
    if (q->pp) MHD_destroy_post_processor(q->pp);
    q->pp = NULL;
    if (q->reserved) serve_pool_cancel(s->pool);
    q->reserved = false;
    if (q->live_slot) serve_live_cancel(s->live); /* answered 101 but never upgraded */
    q->live_slot = false;
    *con_cls = NULL;
    release(q);
}

/* Lets go of one reference to Q (MHD's at completion, a streaming worker's after its last
 * event): the last frees it, and only then is the request no longer in flight. */
static void release(request *q)
{
    if (atomic_fetch_sub(&q->refs, 1) != 1) return;
    server *s = q->srv;
    if (q->fd >= 0) close(q->fd);
    serve_sse_free(q->sse);
    free(q->body);
    upload_over(q);
    free(q);
    atomic_fetch_sub(&s->active, 1);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n') msg[--n] = 0;
    /* the close of a request answered past MHD (408): the request's own line says why */
    bool ours = closing_answered && strstr(msg, "Application reported internal error");
    closing_answered = false;
    if (!ours) fprintf(stderr, "sotto serve: libmicrohttpd: %s\n", msg);
}

/* ---- the daemon ---- */

static struct addrinfo *resolve(const char *host, int port)
{
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "sotto serve: --host %s: %s\n", host, gai_strerror(rc));
        return NULL;
    }
    return res;
}

bool serve_http_available(const char **missing)
{
    *missing = NULL;
    return true;
}

/* A listening TCP socket on AI; -1 with errno. */
static int listen_on(const struct addrinfo *ai)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 256) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

static void pass_to_mhd(int fd, const struct sockaddr *addr, unsigned len, void *user)
{
    server *s = user;
    if (MHD_add_connection(s->daemon, fd, addr, (socklen_t)len) != MHD_YES) /* it closed FD */
        fprintf(stderr, "sotto serve: libmicrohttpd took no more connections: one closed unanswered\n");
}

static unsigned port_of(int fd)
{
    struct sockaddr_storage a;
    socklen_t n = sizeof a;
    if (getsockname(fd, (struct sockaddr *)&a, &n) != 0) return 0;
    if (a.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
    return ntohs(((struct sockaddr_in *)&a)->sin_port);
}

/* Stops the work in flight: running jobs at their next poll, queued ones at the next sweep;
 * each is answered 503. */
static void force_stop(server *s, const char *why)
{
    int n = atomic_load(&s->active);
    fprintf(stderr, "sotto serve: %s: stopping the %d request%s still in flight (answered 503)\n", why, n,
            n == 1 ? "" : "s");
    atomic_store(&s->forced, true);
    if (s->live) serve_live_stop(s->live, SERVE_LIVE_FORCE);
}

static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM";
}

/* Serves until SIGTERM, SIGINT or SIGHUP (sweeping the queue every 200 ms: deadlines, clients gone),
 * then drains: the requests in flight are answered, until a second signal or
 * --drain-timeout cuts the drain short. 0, or 128 + the first signal's number when cut. */
static int wait_and_drain(server *s, serve_door *door, const sigset_t *set)
{
    const serve_config *cfg = s->cfg;
    int sig = 0;
    double t_drain = 0, t_forced = 0;
    for (;;) {
        struct timespec tick = {0, 200 * 1000 * 1000};
        int got = sigtimedwait(set, NULL, &tick);
        double now = cli_now_ms();
        serve_pool_sweep(s->pool, now, drop_job);
        if (got > 0 && !sig) {
            sig = got, t_drain = now;
            atomic_store(&s->draining, true);
            int n = atomic_load(&s->active) + (s->live ? serve_live_count(s->live) : 0);
            fprintf(stderr, "sotto serve: %s: finishing %d request%s in flight, accepting no more (a second signal, "
                    "or %d s, stops them)\n", signal_name(sig), n, n == 1 ? "" : "s", cfg->drain_timeout_s);
            serve_door_close(door);
            if (s->live) serve_live_stop(s->live, SERVE_LIVE_DRAIN);
        } else if (got > 0 && !t_forced) {
            char why[48];
            snprintf(why, sizeof why, "a second signal (%s)", signal_name(got));
            force_stop(s, why);
            t_forced = now;
        } else if (sig && !t_forced && now - t_drain > 1000.0 * cfg->drain_timeout_s) {
            force_stop(s, "--drain-timeout passed");
            t_forced = now;
        }
        /* cut short, the uploads still arriving are not waited for: stopping the daemon closes them */
        int left = atomic_load(&s->active) - (t_forced ? atomic_load(&s->uploading) : 0);
        if (sig && left <= 0 && (!s->live || serve_live_count(s->live) == 0)) break;
        if (t_forced && now - t_forced > 10000) { /* a request that stays in flight: leave without it */
            fprintf(stderr, "sotto serve: %d request%s still in flight after 10 s: exiting without them\n",
                    atomic_load(&s->active), atomic_load(&s->active) == 1 ? "" : "s");
            _exit(128 + sig);
        }
    }
    return t_forced ? 128 + sig : EXIT_OK;
}

/* Whether A is a loopback address (127.0.0.0/8, ::1, or an IPv4-mapped 127.x). */
static bool loopback(const struct sockaddr *a)
{
    if (a->sa_family == AF_INET) return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
    if (a->sa_family != AF_INET6) return false;
    const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(x) || (IN6_IS_ADDR_V4MAPPED(x) && x->s6_addr[12] == 127);
}

int serve_http_listen(const serve_config *cfg, int *lfd)
{
    *lfd = -1;
    struct addrinfo *ai = resolve(cfg->host, cfg->port);
    if (!ai) return EXIT_INPUT;
    const bool local = loopback(ai->ai_addr);
    int fd = listen_on(ai);
    freeaddrinfo(ai);
    if (fd < 0) {
        fprintf(stderr, "sotto serve: cannot listen on %s port %d: %s\n", cfg->host, cfg->port, strerror(errno));
        return EXIT_EXEC;
    }
    int probe = upload_file(); /* a TMPDIR that cannot take uploads would fail every request */
    if (probe < 0) {
        fprintf(stderr, "sotto serve: cannot store uploads in %s: %s (set TMPDIR to a writable directory)\n",
                upload_dir(), strerror(errno));
        close(fd);
        return EXIT_EXEC;
    }
    close(probe);
    if (!local && !cfg->api_key)
        fprintf(stderr, "sotto serve: warning: listening on %s without an API key: anyone who reaches port %d "
                "can use it (--api-key or SOTTO_API_KEY)\n", cfg->host, cfg->port);
    *lfd = fd;
    return EXIT_OK;
}

int serve_http_run(const serve_config *cfg, serve_pool *pool, int lfd)
{
    server s = {.cfg = cfg, .pool = pool};
    unsigned port = port_of(lfd);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
                     MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC | MHD_ALLOW_UPGRADE;
    const char *missing;
    if (serve_live_available(&missing) && !(s.live = serve_live_new(cfg, pool))) {
        close(lfd);
        return EXIT_EXEC;
    }
    s.daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, &s,
                                MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, &s,
                                MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->timeout_s,
                                MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
                                MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(2 * SERVE_HEAD_MAX + 65536),
                                MHD_OPTION_NOTIFY_COMPLETED, on_completed, &s,
                                MHD_OPTION_END);
    serve_door *door = s.daemon ? serve_door_start(lfd, cfg->timeout_s, cfg->max_connections, pass_to_mhd, &s) : NULL;
    if (!door) {
        fprintf(stderr, "sotto serve: cannot start the HTTP server (libmicrohttpd, or out of memory)\n");
        if (s.daemon) MHD_stop_daemon(s.daemon);
        serve_live_free(s.live);
        close(lfd);
        return EXIT_EXEC;
    }
    struct MHD_Daemon *d = s.daemon;
    bool v6 = strchr(cfg->host, ':') != NULL;
    fprintf(stderr, "sotto serve: listening on http://%s%s%s:%u (model %s%s)\n", v6 ? "[" : "", cfg->host,
            v6 ? "]" : "", port, cfg->model_id,
            cfg->api_key ? ", API key required" : "");
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    int rc = wait_and_drain(&s, door, &set);
    serve_door_free(door);
    MHD_stop_daemon(d);
    serve_live_free(s.live);
    fprintf(stderr, "sotto serve: stopped\n");
    return rc;
}
