/* serve.h — what the parts of `sotto serve` share: the server's configuration (made by
 * cmd_serve.c from the command line), the worker pool (serve_pool.c), the form of one
 * request (serve_form.c), the response bodies (serve_reply.c) and the HTTP front end
 * (serve_http.c on libmicrohttpd; serve_nohttp.c in a build without it). */
#ifndef SOTTO_SERVE_H
#define SOTTO_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "output.h"
#include "sotto.h"

/* ---- configuration ---- */

typedef struct serve_config {
    const char *host;              /* address to listen on ("127.0.0.1", "::1", "0.0.0.0") */
    int port;                      /* 0: any free port (the one taken is printed) */
    int workers;                   /* contexts, each transcribing one request at a time */
    int queue;                     /* requests that may wait for a worker beyond those */
    int timeout_s;                 /* idle connections closed; a request head, and then its
                                      body, must each arrive within it */
    int max_connections;           /* open at once (from the open-file limit) */
    int queue_timeout_s;           /* a request waiting this long for a worker gets 503 */
    double max_audio_s;            /* longer audio gets 413, found as it is decoded */
    int drain_timeout_s;           /* after SIGTERM/SIGINT: the work still in flight is stopped */
    size_t max_upload_bytes;       /* request bodies larger than this get 413 */
    const char *api_key;           /* NULL: no authentication */
    const char *cors;              /* origins whose pages may call the server ("*": any; else
                                      a comma-separated list); NULL: no CORS headers */
    const char *model_id;          /* the name /v1/models lists ("tiny.en") */
    int multilingual;              /* of the model: languages and translation allowed */
    const sotto_model *model;
    sotto_transcribe_params tp;    /* every request starts from these (the decoding flags) */
    bool fallback;                 /* temperature fallback (--no-fallback clears it) */
    int max_sessions;              /* live WebSocket sessions open at once; past them, 503 */
    int session_timeout_s;         /* a live session whose client is silent this long is closed */
    size_t max_message_bytes;      /* of one WebSocket message */
    double live_buffer_s;          /* audio a live session's input buffer may hold */
    int batch_size;                /* 0: each request alone (the long-form loop); N: batched
                                      transcription, the chunks of up to N requests together */
    int batch_window_ms;           /* a worker with fewer than N requests waits this long */
} serve_config;

/* ---- worker pool: one shared model, N contexts, a bounded queue ---- */

typedef struct serve_job serve_job;
/* Called on the worker's thread when JOB is done; the pool no longer touches JOB after it. */
typedef void (*serve_job_done)(serve_job *job);

enum { SERVE_JOB_RAN, SERVE_JOB_EXPIRED, SERVE_JOB_DROPPED };

struct serve_job {
    sotto_audio_source source;     /* in: the audio (the upload's descriptor) */
    sotto_transcribe_params tp;    /* in (its abort callback, if any, is the caller's) */
    serve_job_done done;           /* in */
    void *user;                    /* in: for DONE */
    double deadline_ms;            /* in: cli_now_ms() by which a worker must take it; 0: none */
    bool (*drop)(serve_job *job);  /* in: serve_pool_sweep's question for it instead of the sweep's
                                      own, or NULL */
    void (*started)(serve_job *job); /* in: called on the worker's thread as it takes the job,
                                      before running it; or NULL */
    int outcome;                   /* out: SERVE_JOB_RAN, or EXPIRED / DROPPED by serve_pool_sweep
                                      without running (status and result are then unset) */
    sotto_status status;           /* out: of sotto_transcribe_source */
    sotto_result *result;          /* out: on success (the caller frees it) */
    char error[512];               /* out: the context's message on failure */
    serve_job *next;               /* the pool's queue */
};

typedef struct serve_pool serve_pool;

/* Creates WORKERS contexts on MODEL with CP and a thread for each; QUEUE requests may wait
 * beyond them. BATCH > 1: a worker takes up to BATCH waiting jobs at once (waiting up to
 * WINDOW_MS after the first for more) and runs them as one sotto_transcribe_batch (their
 * params' batch_size set, CP's max_batch at least it); 1: one job at a time. NULL with a
 * message on stderr when a context cannot be made. */
serve_pool *serve_pool_init(const sotto_model *model, const sotto_context_params *cp, int workers, int queue,
                            int batch, int window_ms);
/* Takes one of the workers + queue slots for a request whose body is in; false when all are
 * taken (the caller answers 503). A slot is given back by serve_pool_cancel, or when the job
 * submitted with it is done (before its DONE is called). */
bool serve_pool_reserve(serve_pool *pool);
void serve_pool_cancel(serve_pool *pool);
/* Queues JOB on a reserved slot; a worker runs it in order of submission. */
void serve_pool_submit(serve_pool *pool, serve_job *job);
/* Slots taken now (requests waiting or being transcribed). */
int serve_pool_busy(serve_pool *pool);
/* Takes out of the queue every job whose deadline has passed by NOW_MS (EXPIRED), and, with
 * DROP, those DROP says to (DROPPED: a client gone); each then gets its DONE, on this thread,
 * its slot given back. */
void serve_pool_sweep(serve_pool *pool, double now_ms, bool (*drop)(serve_job *job));
/* Runs the jobs still queued, then stops the workers and frees every context. NULL is fine. */
void serve_pool_free(serve_pool *pool);

/* ---- the form of one request ---- */

#define SERVE_FIELD_MAX 65536      /* bytes of the prompt field's buffer (the decoder reads its last 223 tokens) */

typedef struct serve_form {
    char model[128], language[16], temperature[32], response_format[32];
    char prompt[SERVE_FIELD_MAX];
    size_t n_model, n_language, n_temperature, n_response_format, n_prompt;
    bool granularity_segment, granularity_word;
    char stream[8];                /* "true" asks for server-sent events (serve_sse.c) */
    size_t n_stream;
    char granularity_bad[48];      /* a timestamp_granularities[] value that is neither */
    char gran[24];                 /* the value arriving now, */
    size_t n_gran;
    bool gran_open, gran_overflow; /*   since its first piece; longer than any valid one */
    char too_long[40];             /* the field whose value was longer than its buffer, */
    size_t too_long_max;           /*   whose bytes are at most this */
    char duplicate[40];            /* a field given twice */
    char has_nul[40];              /* a field whose value has a NUL byte (the file's aside) */
} serve_form;

/* The close delimiter of a multipart body ("\r\n--BOUNDARY--", RFC 2046 5.1.1) found across
 * the body's pieces: what follows it and its CRLF is an epilogue, which receivers ignore and
 * libmicrohttpd's post processor refuses. */
typedef struct serve_epilogue {
    char delim[80];
    size_t len, matched;           /* len 0: no usable boundary in the header, nothing cut */
    int state;                     /* 0 before the delimiter, 1-2 in its CRLF, 3 past them */
} serve_epilogue;
/* From the request's Content-Type (boundary=B or boundary="B"). */
void serve_epilogue_init(serve_epilogue *ep, const char *content_type);
/* Why LANG is refused, into OUT[N]: not an ISO-639-1 code (a name: its code named), one the
 * multilingual model lacks, or any but en on an English-only one. */
void serve_language_error(const char *lang, const serve_config *cfg, char *out, size_t n);
/* The bytes of DATA (the body's next SIZE) before the epilogue: SIZE until it begins. */
size_t serve_epilogue_cut(serve_epilogue *ep, const char *data, size_t size);

/* An error answer, in OpenAI's shape: {"error": {"message", "type", "param", "code"}}. */
typedef struct serve_error {
    int http_status;
    char message[640];
    const char *type;              /* "invalid_request_error", "authentication_error", ... */
    const char *param;             /* the form field at fault, or NULL (JSON null) */
    const char *code;              /* a short machine-readable code, or NULL */
} serve_error;

void serve_error_set(serve_error *e, int http_status, const char *type, const char *param, const char *code,
                     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Appends one piece of field KEY's value (the post processor hands values over in pieces
 * at offset OFF). Unknown fields are ignored, as OpenAI's API ignores them. */
void serve_form_field(serve_form *f, const char *key, const char *data, uint64_t off, size_t size);
/* The body has ended: the last value is complete. */
void serve_form_end(serve_form *f);

/* The writer of OpenAI's response_format NAME: json (OpenAI's {"text": ...}), text, srt,
 * vtt, verbose_json (the CLI's txt, srt, vtt and json writers); NULL for another name. */
const out_writer *serve_format(const char *name);
/* "json, text, srt, vtt, verbose_json", for messages. */
const char *serve_format_names(void);

/* The request's transcription parameters and response format from F over CFG's defaults
 * (timestamp_granularities[]=word turns word timestamps on): false with E filled (400) for
 * a field given twice, a NUL byte in a value, a temperature that is not a plain decimal
 * from 0 to 1, a value out of range, an unknown format, a model that is not the one served, a language
 * the model lacks, translation on an English-only model, or timestamp granularities with
 * another format than verbose_json, stream neither true nor false, or stream=true with a
 * translation or a format other than json and text. TP's string pointers point into F. */
bool serve_form_check(const serve_form *f, const serve_config *cfg, bool translate, sotto_transcribe_params *tp,
                      const out_writer **format, serve_error *e);

/* Whether F asks for server-sent events (stream=true; serve_form_check has checked it). */
bool serve_form_stream(const serve_form *f);

/* ---- response bodies (malloc'd, *n bytes; NULL when out of memory) ---- */

/* R as FORMAT (of serve_format) writes it: text/srt/vtt exactly as `sotto transcribe -f
 * txt/srt/vtt` writes them, json as OpenAI's {"text": ...} (the text without its leading
 * space), verbose_json as -f json with OpenAI's "task" ("transcribe", or "translate" for
 * TRANSLATE) first and the language by name ("english"). A verbose_json of R made with word
 * timestamps (timestamp_granularities[]=word) is `-f json --word-timestamps`'s with
 * OpenAI's top-level "words" (the json writer's top_words). */
char *serve_render(const sotto_result *r, const out_writer *format, bool translate, size_t *n);
char *serve_error_json(const serve_error *e, size_t *n);
/* LIST: {"object": "list", "data": [{"id": MODEL_ID, "object": "model", ...}]} (GET
 * /v1/models), else the model object alone (GET /v1/models/MODEL_ID) */
char *serve_models_json(const char *model_id, bool list, size_t *n);

/* ---- the request head (serve_head.c): checked before libmicrohttpd reads it ---- */

#define SERVE_HEAD_MAX 16384       /* bytes of a request head: longer ones get 431 */
#define SERVE_HEAD_MAX_TEXT "16384"
enum { SERVE_HEAD_MORE, SERVE_HEAD_OK, SERVE_HEAD_BAD };

typedef struct serve_head {
    int state;                     /* the scanner's; < 0 after a refusal */
    size_t at;                     /* bytes scanned */
    char method[24], version[12], name[32], value[64];
    size_t n_method, n_target, n_version, n_name, n_value;
    bool value_long;               /* the header's value is longer than VALUE holds */
    int minor;                     /* HTTP/1.MINOR */
    int n_host, n_length, n_te;    /* times each header is given */
    bool chunked;
    unsigned long long length;     /* Content-Length's value */
} serve_head;

/* Scans BUF[H->at, N) (the connection's first N bytes; H zeroed before the first call) as
 * an HTTP/1.0 or 1.1 request head (RFC 9112), byte by byte: SERVE_HEAD_MORE while it is
 * valid so far and not complete; SERVE_HEAD_OK at its end (H->at is then its length);
 * SERVE_HEAD_BAD with E filled at the first byte that cannot be part of one: 400 for a
 * request line that is not HTTP (binary bytes), control or NUL bytes in a header, obsolete
 * line folding, whitespace before a header's colon, a Content-Length that is not 1 to 18
 * digits or given twice, Transfer-Encoding given twice, with Content-Length or in
 * HTTP/1.0, an HTTP/1.1 request without exactly one Host; 501 for a transfer coding other
 * than chunked; 505 for another HTTP version; 431 for a head of SERVE_HEAD_MAX bytes. */
int serve_head_scan(serve_head *h, const char *buf, size_t n, serve_error *e);

/* ---- the front door (serve_door.c): a thread between the listening socket and MHD ---- */

struct sockaddr;
typedef struct serve_door serve_door;
/* Takes over FD, a connection whose request head (still unread in the socket) is valid. */
typedef void (*serve_door_pass)(int fd, const struct sockaddr *addr, unsigned addr_len, void *user);

/* Accepts on LISTEN_FD (which it then owns) at most MAX_PENDING connections at a time whose
 * heads are arriving; each head must arrive within TIMEOUT_S of the connection (else 408)
 * and pass serve_head_scan (else its answer), then goes to PASS. NULL when out of memory. */
serve_door *serve_door_start(int listen_fd, int timeout_s, int max_pending, serve_door_pass pass, void *user);
/* Stops accepting (the listening socket is closed); heads already arriving go on. */
void serve_door_close(serve_door *d);
/* Stops the thread and closes every connection it holds. NULL is fine. */
void serve_door_free(serve_door *d);
/* Writes E as a complete HTTP/1.1 answer with Connection: close on FD, without waiting,
 * and shuts FD's sending side: for a connection no HTTP library is answering on. */
bool serve_send_raw(int fd, const serve_error *e);

/* ---- server-sent events (serve_sse.c): the answer to stream=true ---- */

typedef struct serve_sse serve_sse;

/* A stream of events for the connection on socket FD; WAKE(USER) resumes the connection
 * that serve_sse_read suspended. NULL when out of memory. */
serve_sse *serve_sse_new(int fd, void (*wake)(void *user), void *user);
void serve_sse_free(serve_sse *s);
/* Each writes one event (the worker's thread). delta: {"type": "transcript.text.delta",
 * "delta": TEXT}, none for empty text, the leading spaces dropped until one has text, so
 * the deltas join into done's text; done: {"type": "transcript.text.done", "text": TEXT
 * without its leading spaces}; error: OpenAI's {"error": {...}} (which the openai client
 * raises as APIError). After done or error nothing more is written. */
void serve_sse_delta(serve_sse *s, const char *text);
void serve_sse_done(serve_sse *s, const char *text);
void serve_sse_error(serve_sse *s, const serve_error *e);
/* The content reader's part (MHD's thread): up to MAX bytes of the events into OUT, or,
 * with none waiting, 0 after SUSPEND(USER) (the next event wakes it), or -1 at the end. */
ssize_t serve_sse_read(serve_sse *s, char *out, size_t max, void (*suspend)(void *user));
/* The connection is gone (its completion): nothing is woken or written from now on.
 * True when the last event was not written yet: the worker's next serve_sse_gone stops
 * its work. */
bool serve_sse_close(serve_sse *s);
/* Whether the client has left: the connection closed, or its side shut or reset. */
bool serve_sse_gone(serve_sse *s);

/* ---- base64 (serve_b64.c) ---- */

/* Decodes IN[0..n), strict RFC 4648 base64 with padding, into OUT (room for n / 4 * 3
 * bytes): the bytes written, or -1 with *BAD_AT the offset of the first byte at fault (n
 * for a length that is not a multiple of 4). */
long long serve_b64_decode(const char *in, size_t n, unsigned char *out, size_t *bad_at);

/* ---- a Realtime transcription session (serve_rt.c, serve_turn.c) ---- */

typedef struct serve_rt serve_rt;
/* Sends TEXT (a server event, malloc'd: the callee frees it) to the client; any thread. */
typedef void (*serve_rt_send)(void *user, char *text);

/* A session on CFG and POOL, numbered ID, speaking through SEND(USER, ...): OpenAI's
 * defaults (PCM16 at 24 kHz, server VAD when the server has a VAD). NULL when out of memory. */
serve_rt *serve_rt_new(const serve_config *cfg, serve_pool *pool, int id, serve_rt_send send, void *user);
/* session.created */
void serve_rt_start(serve_rt *rt);
/* One text message from the client (N bytes): an event handled, or an error event. */
void serve_rt_message(serve_rt *rt, const char *text, size_t n);
/* OpenAI's error event (invalid_request_error, CODE, PARAM or null) from the transport. */
void serve_rt_error(serve_rt *rt, const char *code, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Whether committed turns are still being transcribed or wait to be. */
bool serve_rt_busy(serve_rt *rt);
/* With ABORT, stops the turn running and drops those waiting (a client gone, a forced stop). */
void serve_rt_stop(serve_rt *rt, bool abort);
/* Stops every turn, waits for a running one to end, frees RT. NULL is fine. */
void serve_rt_free(serve_rt *rt);

/* ---- live sessions over WebSocket (serve_ws.c; serve_nows.c without wslay) ---- */

enum { SERVE_LIVE_DRAIN = 1, SERVE_LIVE_FORCE = 2 };
typedef struct serve_live serve_live;
struct MHD_Connection;
struct MHD_UpgradeResponseHandle;

/* Whether this build has the WebSocket route; when not, what to install. */
bool serve_live_available(const char **missing);
serve_live *serve_live_new(const serve_config *cfg, serve_pool *pool);
/* Sessions open (or upgrading). */
int serve_live_count(serve_live *l);
/* DRAIN: each session answers the turns it has committed, then closes (1001); FORCE: at once. */
void serve_live_stop(serve_live *l, int how);
/* After every session has ended. NULL is fine. */
void serve_live_free(serve_live *l);
/* Checks the upgrade request on C (RFC 6455 4.2.1: intent=transcription, Upgrade,
 * Connection, Sec-WebSocket-Version 13, a 16-byte key, no body) and takes a session slot:
 * 0 with ACCEPT (Sec-WebSocket-Accept) set, or -1 with E filled: 400, 426, or 503 past
 * --max-sessions or while draining. */
int serve_live_handshake(serve_live *l, struct MHD_Connection *c, char accept[29], serve_error *e);
/* Gives back the slot of a handshake whose upgrade never happened. */
void serve_live_cancel(serve_live *l);
/* MHD's upgrade handler's part: the session on FD (EXTRA: bytes read past the head), its
 * thread started; it closes through URH and gives its slot back when done. */
void serve_live_upgraded(serve_live *l, const char *extra, size_t n_extra, int fd,
                         struct MHD_UpgradeResponseHandle *urh);

/* ---- the HTTP server ---- */

/* What serving needs before a model is loaded: a listening socket on CFG's host and port
 * (*LFD), and a directory where uploads can be stored ($TMPDIR, else /tmp). EXIT_OK, or
 * an exit status after a message naming what failed. Warns when it listens beyond
 * loopback without an API key. */
int serve_http_listen(const serve_config *cfg, int *lfd);

/* Answers on LFD (serve_http_listen's) with POOL until SIGTERM, SIGINT or SIGHUP (which
 * the caller has blocked in every thread), then finishes the requests in flight and
 * returns 0; a second signal or CFG's drain timeout stops them (answered 503) and returns
 * 128 + the first signal's number; nonzero with a message when it cannot start. */
int serve_http_run(const serve_config *cfg, serve_pool *pool, int lfd);

/* Whether this build has the HTTP server; when not, what to install. */
bool serve_http_available(const char **missing);

#endif
