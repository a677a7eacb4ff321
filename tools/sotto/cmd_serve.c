/* cmd_serve.c — `sotto serve`: an OpenAI-compatible transcription server. Parses the
 * command line, loads the model (and the Silero VAD where installed, as `sotto transcribe`
 * does) once, makes the worker pool (serve_pool.c) and runs the HTTP front end
 * (serve_http.c) until SIGTERM, SIGINT or SIGHUP, which drain the requests in flight. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opt.h"
#include "serve.h"

#define OFF(field) offsetof(serve_opts, field)

typedef struct serve_opts {
    cli_common c;
    int workers, queue, port, max_mb, timeout, queue_timeout, max_audio, drain_timeout;
    int max_sessions, session_timeout, max_message_kb, live_buffer;
    int batch_window;
    serve_config cfg;
} serve_opts;

static const cli_opt options[] = {
    {.kind = OPT_INCLUDE, .sub = cli_opt_model, .offset = OFF(c)},
    {"--host", 0, OPT_STR, OFF(cfg.host), 0, 0, "ADDR", "an address",
     .help = "address to listen on (default 127.0.0.1: this machine only;\n"
             "0.0.0.0 or :: for every interface: then set an API key)"},
    {"--port", 0, OPT_INT, OFF(port), 0, 65535, "N", "a port in 0..65535",
     .help = "TCP port (default 8080; 0: any free one, printed at start)"},
    {"--workers", 0, OPT_INT, OFF(workers), 1, 256, "N", "a count in 1..256",
     .help = "requests transcribed at once (default: cores / threads)"},
    {.kind = OPT_INCLUDE, .sub = cli_opt_threads, .offset = OFF(c),
     .help = "threads of each worker (default: 4, at most the cores)"},
    {"--queue", 0, OPT_INT, OFF(queue), 0, 32768, "N", "a count in 0..32768",
     .help = "requests that may wait beyond the workers; past them, 503\n"
             "(default: what half the available memory holds at about\n"
             "400 kB a waiting request, at most half the open-file limit:\n"
             "each holds a socket and its upload in $TMPDIR, up to\n"
             "--max-upload-mb of disk; printed at start). Size it as\n"
             "the burst to absorb; the wait is bounded by --queue-timeout"},
    {"--queue-timeout", 0, OPT_INT, OFF(queue_timeout), 1, 86400, "S", "seconds in 1..86400",
     .help = "a request that waited S seconds for a worker gets 503 with\n"
             "Retry-After (default 300)"},
    {"--api-key", 0, OPT_STR, OFF(cfg.api_key), 0, 0, "KEY", "a key",
     .help = "require Authorization: Bearer KEY (default: $SOTTO_API_KEY,\n"
             "which keeps the key out of ps; none: no key asked); a missing\n"
             "or wrong one gets 401"},
    {"--cors", 0, OPT_STR, OFF(cfg.cors), 0, 0, "ORIGINS", "origins",
     .help = "let web pages of ORIGINS call the server from a browser: \"*\" (any)\n"
             "or origins separated by commas (http://localhost:3000): their\n"
             "answers carry Access-Control-Allow-Origin, and a browser's\n"
             "OPTIONS preflight is answered 204 without the API key\n"
             "(default: none; a browser keeps other origins' pages out)"},
    {"--max-upload-mb", 0, OPT_INT, OFF(max_mb), 1, 1 << 20, "N", "megabytes in 1..1048576",
     .help = "larger request bodies get 413, checked as they stream (default 25)"},
    {"--max-audio-s", 0, OPT_INT, OFF(max_audio), 1, 1000000000, "S", "seconds, at least 1",
     .help = "longer audio gets 413, found as it is decoded, and a longer\n"
             "live turn a failed transcription (default: the upload limit at\n"
             "16 kbit/s: 13107 s for 25 MB)"},
    {"--timeout", 0, OPT_INT, OFF(timeout), 1, 86400, "S", "seconds in 1..86400",
     .help = "a request head must arrive within S seconds, its body within\n"
             "S more and 1 s for each 8 kB it brings (64 kbit/s), else 408;\n"
             "a connection silent S seconds is closed (default 30)"},
    {"--drain-timeout", 0, OPT_INT, OFF(drain_timeout), 1, 86400, "S", "seconds in 1..86400",
     .help = "after SIGTERM, SIGINT or SIGHUP, the requests still in flight after S\n"
             "seconds are stopped and answered 503 (default 60)"},
    {"--max-sessions", 0, OPT_INT, OFF(max_sessions), 0, 4096, "N", "a count in 0..4096",
     .help = "live WebSocket sessions open at once (GET /v1/realtime); past\n"
             "them the upgrade gets 503 (default 16; 0: none). Each holds a\n"
             "thread, its input buffer and, server VAD on, a VAD stream; its\n"
             "turns are transcribed by the workers, as requests are"},
    {"--session-timeout", 0, OPT_INT, OFF(session_timeout), 1, 86400, "S", "seconds in 1..86400",
     .help = "a live session whose client sends nothing for S seconds (while\n"
             "no turn of it is being transcribed) gets an error event and is\n"
             "closed (default 120)"},
    {"--max-message-kb", 0, OPT_INT, OFF(max_message_kb), 1, 1 << 20, "N", "kilobytes in 1..1048576",
     .help = "a larger WebSocket message gets an error event and is dropped;\n"
             "past twice N the connection is closed (1009) (default 15360:\n"
             "OpenAI's 15 MiB for an append)"},
    {"--live-buffer-s", 0, OPT_INT, OFF(live_buffer), 1, 3600, "S", "seconds in 1..3600",
     .help = "audio a live session's input buffer may hold before it is\n"
             "committed; with server VAD the turn is committed there and the\n"
             "speech goes on as a new one, else appends past it get an error\n"
             "event (default 300)"},
    {.kind = OPT_INCLUDE, .sub = cli_opt_device, .offset = OFF(c)},
    {"--batch-size", 0, OPT_INT, OFF(cfg.batch_size), 1, SOTTO_MAX_BATCH, "N", "a count in 1..64",
     .help = "batched transcription (sotto transcribe --batch-size N, faster-\n"
             "whisper's BatchedInferencePipeline): each request cut by faster-\n"
             "whisper's Silero VAD into chunks, each chunk decoded on its own\n"
             "(a request's prompt begins every chunk's, as the pipeline's\n"
             "initial_prompt; the first temperature only; no timestamp tokens,\n"
             "a segment a chunk), and a worker runs\n"
             "the chunks of up to N waiting requests together, N at a time.\n"
             "Each answer is `sotto transcribe --batch-size N`'s for that\n"
             "file. The VAD as sotto transcribe --batch-size finds it"},
    {"--batch-window-ms", 0, OPT_INT, OFF(batch_window), 0, 10000, "MS", "milliseconds in 0..10000",
     .help = "with --batch-size: a worker that finds fewer than N requests\n"
             "waiting waits up to MS for more before it starts (default 20)"},
    {.kind = OPT_TEXT,
     .help = "\nThe decoding of every request, as sotto transcribe's flags (defaults: openai-whisper's):\n"},
    {.kind = OPT_INCLUDE, .sub = cli_opts_search, .offset = OFF(cfg.tp)},
    {.kind = OPT_INCLUDE, .sub = cli_opt_no_fallback, .offset = OFF(c)},
    {.kind = OPT_INCLUDE, .sub = cli_opt_vad_model, .offset = OFF(c)},
    {.kind = OPT_INCLUDE, .sub = cli_opt_no_silence_check, .offset = OFF(cfg.tp)},
    {0},
};

static const cli_cmd command = {
    .name = "serve",
    .usage = "usage: sotto serve [-m MODEL] [options]\n"
             "\n"
             "Serves OpenAI's audio API over HTTP, so OpenAI's clients and anything that speaks it\n"
             "(curl, the openai Python package with base_url) transcribe with sotto:\n"
             "  POST /v1/audio/transcriptions   multipart/form-data: file (any audio or video FFmpeg\n"
             "                                  reads), model, language, prompt, temperature,\n"
             "                                  response_format (json, text, srt, vtt, verbose_json),\n"
             "                                  timestamp_granularities[] (segment, word: with\n"
             "                                  verbose_json; word turns word timestamps on),\n"
             "                                  stream=true (server-sent events: a\n"
             "                                  transcript.text.delta per segment as it is decoded,\n"
             "                                  then transcript.text.done with the whole text)\n"
             "  POST /v1/audio/translations     the same, translated into English (multilingual models;\n"
             "                                  no stream=true: answered whole)\n"
             "  GET  /v1/realtime?intent=transcription\n"
             "                                  a WebSocket speaking the transcription subset of OpenAI's\n"
             "                                  Realtime protocol: session.update (PCM16 at 24 or 16 kHz,\n"
             "                                  language, prompt, turn_detection server_vad or null),\n"
             "                                  input_audio_buffer.append/commit/clear; answered with\n"
             "                                  conversation.item.input_audio_transcription.delta and\n"
             "                                  .completed, and OpenAI's error events\n"
             "  GET  /v1/models                 the model served (any request may also name it whisper-1)\n"
             "  GET  /v1/models/ID              that model (its name or whisper-1; another ID: 404)\n"
             "  GET  /health                    200 while the server runs (no API key needed)\n"
             "The answer is what `sotto transcribe` writes for the same file and options, byte for\n"
             "byte: srt, vtt, verbose_json as -f json with OpenAI's \"task\" first and the language\n"
             "by name (\"english\", where -f json has \"en\"); json is OpenAI's {\"text\": ...}, text\n"
             "its text alone (one paragraph, not a line a segment as -f txt).\n"
             "With timestamp_granularities[]=word, verbose_json is -f json --word-timestamps (words in\n"
             "every segment) with OpenAI's top-level \"words\": [{\"word\", \"start\", \"end\"}] added\n"
             "last (each word without its leading space), which the openai client reads as .words.\n"
             "Errors come as OpenAI's {\"error\": {\"message\", \"type\", \"param\", \"code\"}}.\n"
             "\n"
             "The model is loaded once and shared by the workers, each a context transcribing one\n"
             "request at a time; more requests wait in a queue, and past it get 503 with Retry-After.\n"
             "A request takes its place only once its whole body is in. Each request head is checked\n"
             "before it is read (RFC 9112: ambiguous framing, a missing Host, NUL bytes: 400), and\n"
             "every answer closes its connection.\n"
             "\n",
    .opts = options,
    .footer = "\n"
              "Each request is logged on stderr: method, path, status, audio seconds, milliseconds,\n"
              "and for an error its code and message (a stream's error event too, after its 200).\n"
              "SIGTERM, SIGINT or SIGHUP: no new requests; those in flight are answered; exit 0. A second\n"
              "signal, or --drain-timeout, stops the work still in flight (answered 503); exit 128 +\n"
              "the first signal's number. A request whose client leaves has its work stopped.\n"
              "\n"
              "examples:\n"
              "  sotto serve -m models/tiny.en.gguf --port 8080\n"
              "  curl -F file=@talk.mp3 -F response_format=srt http://127.0.0.1:8080/v1/audio/transcriptions\n"
              "  python3 -c 'import openai; c = openai.OpenAI(base_url=\"http://127.0.0.1:8080/v1\", api_key=\"-\");\n"
              "    print(c.audio.transcriptions.create(model=\"whisper-1\", file=open(\"talk.mp3\", \"rb\")).text)'\n",
};

/* Connections the server may hold: each takes a socket and, uploading, a temporary file,
 * so half the open-file limit (raised to its hard limit) less a margin for the rest. */
static int max_connections(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 256;
    rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) getrlimit(RLIMIT_NOFILE, &rl);
    }
    rlim_t n = rl.rlim_cur == RLIM_INFINITY ? 65536 : rl.rlim_cur;
    return n < 128 ? 16 : (int)((n - 64) / 2 < 32768 ? (n - 64) / 2 : 32768);
}

/* Bytes of memory one waiting request holds: its MHD connection (the memory limit
 * serve_http.c sets), its state, and the kernel's socket buffers. */
#define SERVE_WAITING_BYTES ((size_t)(2 * SERVE_HEAD_MAX + 65536) + sizeof(serve_form) + 262144)

/* The default --queue: the waiting requests half the available memory holds
 * (SERVE_WAITING_BYTES each), at most what the connection limit leaves beside the workers
 * and 32768. Their uploads wait on disk ($TMPDIR), not in memory. */
static int default_queue(int max_connections, int workers)
{
    long long avail = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &avail) == 1) {
            avail *= 1024;
            break;
        }
    if (f) fclose(f);
    if (avail <= 0) avail = (long long)sysconf(_SC_AVPHYS_PAGES) * sysconf(_SC_PAGESIZE);
    long long q = avail / 2 / (long long)SERVE_WAITING_BYTES, by_conn = max_connections - workers;
    if (q > by_conn) q = by_conn;
    if (q > 32768) q = 32768;
    return q < 0 ? 0 : (int)q;
}

static int parse(int argc, char **argv, serve_opts *o)
{
    o->cfg.tp = sotto_transcribe_params_default();
    o->cfg.host = "127.0.0.1";
    o->max_sessions = 16, o->session_timeout = 120, o->max_message_kb = 15360, o->live_buffer = 300;
    o->port = 8080, o->queue = -1, o->max_mb = 25, o->timeout = 30, o->queue_timeout = 300, o->drain_timeout = 60;
    o->batch_window = -1;
    int n_pos;
    int rc = cli_parse(&command, argc, argv, o, &n_pos);
    if (rc) return rc;
    o->cfg.fallback = !o->c.no_fallback;
    if (!o->cfg.fallback) /* one temperature, 0, unless a request names one */
        sotto_transcribe_params_temperatures(&o->cfg.tp, 0, 0);
    if (o->batch_window >= 0 && !o->cfg.batch_size) {
        fprintf(stderr, "sotto serve: --batch-window-ms goes with --batch-size\n");
        return EXIT_INPUT;
    }
    o->cfg.batch_window_ms = o->batch_window >= 0 ? o->batch_window : 20;
    o->cfg.tp.batch_size = o->cfg.batch_size;
    if (o->cfg.batch_size) o->cfg.tp.timestamps = 0; /* faster-whisper's default: a segment a chunk */
    if (sotto_transcribe_params_check(&o->cfg.tp)) { /* once, before a model is loaded */
        fprintf(stderr, "sotto serve: %s\n", sotto_last_error());
        return EXIT_INPUT;
    }
    if (!o->cfg.api_key) {
        const char *env = getenv("SOTTO_API_KEY");
        if (env && *env) o->cfg.api_key = env;
    }
    if (o->cfg.api_key && !*o->cfg.api_key) {
        fprintf(stderr, "sotto serve: --api-key is empty\n");
        return EXIT_INPUT;
    }
    for (const char *c = o->cfg.api_key; c && *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f) { /* a bearer token has none (RFC 6750's b64token) */
            fprintf(stderr, "sotto serve: the API key (%s) holds a %s at character %d: no Authorization "
                    "header could match it (a trailing newline from a file?)\n",
                    o->cfg.api_key == getenv("SOTTO_API_KEY") ? "SOTTO_API_KEY" : "--api-key",
                    *c == ' ' ? "space" : *c == '\n' ? "newline" : *c == '\t' ? "tab" : "control character",
                    (int)(c - o->cfg.api_key) + 1);
            return EXIT_INPUT;
        }
    if (o->cfg.cors && !o->cfg.cors[strspn(o->cfg.cors, ", ")]) {
        fprintf(stderr, "sotto serve: --cors names no origin (\"*\" allows any)\n");
        return EXIT_INPUT;
    }
    int cores = sotto_cpu_count();
    if (!o->c.threads) o->c.threads = cores < 4 ? cores : 4;
    if (!o->workers) o->workers = cores / o->c.threads > 0 ? cores / o->c.threads : 1;
    if (o->workers * o->c.threads > cores)
        fprintf(stderr, "sotto serve: warning: %d workers x %d threads on %d cores: they will wait for each other\n",
                o->workers, o->c.threads, cores);
    o->cfg.port = o->port, o->cfg.workers = o->workers, o->cfg.queue = o->queue;
    o->cfg.timeout_s = o->timeout;
    o->cfg.max_upload_bytes = (size_t)o->max_mb << 20;
    o->cfg.max_connections = max_connections();
    if (o->queue < 0) o->cfg.queue = default_queue(o->cfg.max_connections, o->cfg.workers);
    if (o->cfg.queue > o->cfg.max_connections - o->cfg.workers)
        fprintf(stderr, "sotto serve: warning: --queue %d: only %d connections may be open at once (the open-file "
                "limit)\n", o->cfg.queue, o->cfg.max_connections);
    o->cfg.queue_timeout_s = o->queue_timeout, o->cfg.drain_timeout_s = o->drain_timeout;
    o->cfg.max_sessions = o->max_sessions, o->cfg.session_timeout_s = o->session_timeout;
    o->cfg.max_message_bytes = (size_t)o->max_message_kb << 10, o->cfg.live_buffer_s = o->live_buffer;
    /* default: an upload limit's worth of 16 kbit/s audio (speech at its lowest usual bitrate) */
    o->cfg.max_audio_s = o->max_audio ? (double)o->max_audio : (double)(o->cfg.max_upload_bytes / 2000);
    return EXIT_OK;
}

/* The name /v1/models gives the model: its file or directory name without the extension. */
static void model_id(const char *path, char *out, size_t n)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    size_t len = strlen(tmp);
    while (len > 1 && tmp[len - 1] == '/') tmp[--len] = 0;
    const char *b = strrchr(tmp, '/');
    snprintf(out, n, "%s", b ? b + 1 : tmp);
    char *dot = strrchr(out, '.');
    if (dot && (!strcmp(dot, ".gguf") || !strcmp(dot, ".bin"))) *dot = 0;
}

/* The VAD as `sotto transcribe` takes it: --vad-model, else the installed one, else none;
 * with --batch-size, as `sotto transcribe --batch-size` (faster-whisper's export, needed). */
static bool load_vad(serve_opts *o, sotto_vad **vad)
{
    char path[4096];
    *vad = NULL;
    if (o->cfg.batch_size) {
        if (!cli_vad_model_path_of(o->c.vad_model, "SOTTO_BATCH_VAD_MODEL", "silero-vad-fw.gguf", path, sizeof path,
                                   true))
            return false;
    } else {
        if (!o->cfg.tp.silence_check && !o->c.vad_model) return true;
        if (!cli_vad_model_path(o->c.vad_model, path, sizeof path, o->c.vad_model != NULL))
            return o->c.vad_model == NULL;
    }
    if (sotto_vad_load(path, vad) != SOTTO_OK) {
        fprintf(stderr, "sotto serve: cannot load the VAD model: %s\n", sotto_last_error());
        return false;
    }
    o->cfg.tp.vad = *vad;
    return true;
}

int cmd_serve(int argc, char **argv)
{
    serve_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
    const char *missing;
    if (!serve_http_available(&missing)) {
        fprintf(stderr, "sotto serve: %s\n", missing);
        return EXIT_EXEC;
    }
    char path[4096], id[4096];
    if (!(o.c.device = cli_device("serve", o.c.device)) || !cli_model_path(o.c.model, path, sizeof path))
        return EXIT_INPUT;
    int lfd; /* the address and the upload directory before a model's load (seconds, for a large one) */
    if ((rc = serve_http_listen(&o.cfg, &lfd)) != EXIT_OK) return rc;
    sotto_vad *vad = NULL;
    serve_pool *pool = NULL;
    sotto_model *model = cli_load_model(path);
    rc = EXIT_EXEC;
    if (!model || !load_vad(&o, &vad)) goto done;
    sotto_model_info info;
    sotto_model_get_info(model, &info);
    model_id(path, id, sizeof id);
    o.cfg.model = model, o.cfg.model_id = id, o.cfg.multilingual = info.multilingual;
    /* every thread from here on (workers, their thread pools, MHD's) inherits this mask:
     * the signals reach serve_http_run's sigwait alone */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = o.c.threads;
    cp.device = o.c.device;
    cp.max_sequences = o.cfg.tp.beam_size > o.cfg.tp.best_of ? o.cfg.tp.beam_size : o.cfg.tp.best_of;
    cp.max_batch = o.cfg.batch_size > 0 ? o.cfg.batch_size : 1;
    pool = serve_pool_init(model, &cp, o.cfg.workers, o.cfg.queue, cp.max_batch, o.cfg.batch_window_ms);
    if (pool) rc = serve_http_run(&o.cfg, pool, lfd), lfd = -1;
done:
    if (lfd >= 0) close(lfd);
    serve_pool_free(pool);
    sotto_vad_free(vad);
    sotto_model_free(model);
    return rc;
}
