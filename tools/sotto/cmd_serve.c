/* cmd_serve.c — `sotto serve`: an OpenAI-compatible transcription server. Parses the
 * command line, loads the model (and the Silero VAD where installed, as `sotto transcribe`
 * does) once, makes the worker pool (serve_pool.c) and runs the HTTP front end
 * (serve_http.c) until SIGTERM or SIGINT, which drain the requests in flight. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opt.h"
#include "serve.h"

#define OFF(field) offsetof(serve_opts, field)

typedef struct serve_opts {
    cli_common c;
    int workers, queue, port, max_mb, timeout;
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
    {"--queue", 0, OPT_INT, OFF(queue), 0, 4096, "N", "a count in 0..4096",
     .help = "requests that may wait beyond the workers (default 16)"},
    {"--api-key", 0, OPT_STR, OFF(cfg.api_key), 0, 0, "KEY", "a key",
     .help = "require Authorization: Bearer KEY (default: $SOTTO_API_KEY,\n"
             "which keeps the key out of ps; none: no key asked); a missing\n"
             "or wrong one gets 401"},
    {"--max-upload-mb", 0, OPT_INT, OFF(max_mb), 1, 1 << 20, "N", "megabytes in 1..1048576",
     .help = "larger request bodies get 413, checked as they stream (default 25)"},
    {"--timeout", 0, OPT_INT, OFF(timeout), 1, 86400, "S", "seconds in 1..86400",
     .help = "a connection silent S seconds is closed; a body that takes\n"
             "longer than S seconds to arrive gets 408 (default 30)"},
    {.kind = OPT_INCLUDE, .sub = cli_opt_device, .offset = OFF(c)},
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
             "                                  verbose_json; word turns word timestamps on)\n"
             "  POST /v1/audio/translations     the same, translated into English (multilingual models)\n"
             "  GET  /v1/models                 the model served (any request may also name it whisper-1)\n"
             "  GET  /health                    200 while the server runs (no API key needed)\n"
             "The answer is what `sotto transcribe` writes for the same file and options, byte for\n"
             "byte: text as -f txt, srt, vtt, verbose_json as -f json; json is OpenAI's {\"text\": ...}.\n"
             "With timestamp_granularities[]=word, verbose_json is -f json --word-timestamps (words in\n"
             "every segment) with OpenAI's top-level \"words\": [{\"word\", \"start\", \"end\"}] added\n"
             "last (each word without its leading space), which the openai client reads as .words.\n"
             "Errors come as OpenAI's {\"error\": {\"message\", \"type\", \"param\", \"code\"}}.\n"
             "\n"
             "The model is loaded once and shared by the workers, each a context transcribing one\n"
             "request at a time; more requests wait in a queue, and past it get 503 with Retry-After.\n"
             "\n",
    .opts = options,
    .footer = "\n"
              "Each request is logged on stderr: method, path, status, audio seconds, milliseconds.\n"
              "SIGTERM or SIGINT: no new requests; those in flight are answered; exit 0.\n"
              "\n"
              "examples:\n"
              "  sotto serve -m models/tiny.en.gguf --port 8080\n"
              "  curl -F file=@talk.mp3 -F response_format=srt http://127.0.0.1:8080/v1/audio/transcriptions\n"
              "  python3 -c 'import openai; c = openai.OpenAI(base_url=\"http://127.0.0.1:8080/v1\", api_key=\"-\");\n"
              "    print(c.audio.transcriptions.create(model=\"whisper-1\", file=open(\"talk.mp3\", \"rb\")).text)'\n",
};

static int parse(int argc, char **argv, serve_opts *o)
{
    o->cfg.tp = sotto_transcribe_params_default();
    o->cfg.host = "127.0.0.1";
    o->port = 8080, o->queue = 16, o->max_mb = 25, o->timeout = 30;
    int n_pos;
    int rc = cli_parse(&command, argc, argv, o, &n_pos);
    if (rc) return rc;
    o->cfg.fallback = !o->c.no_fallback;
    if (!o->cfg.fallback) /* one temperature, 0, unless a request names one */
        sotto_transcribe_params_temperatures(&o->cfg.tp, 0, 0);
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
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) cores = 1;
    if (!o->c.threads) o->c.threads = cores < 4 ? cores : 4;
    if (!o->workers) o->workers = cores / o->c.threads > 0 ? cores / o->c.threads : 1;
    if (o->workers * o->c.threads > cores)
        fprintf(stderr, "sotto serve: warning: %d workers x %d threads on %d cores: they will wait for each other\n",
                o->workers, o->c.threads, cores);
    o->cfg.port = o->port, o->cfg.workers = o->workers, o->cfg.queue = o->queue;
    o->cfg.timeout_s = o->timeout;
    o->cfg.max_upload_bytes = (size_t)o->max_mb << 20;
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

/* The VAD as `sotto transcribe` takes it: --vad-model, else the installed one, else none. */
static bool load_vad(serve_opts *o, sotto_vad **vad)
{
    char path[4096];
    *vad = NULL;
    if (!o->cfg.tp.silence_check && !o->c.vad_model) return true;
    if (!cli_vad_model_path(o->c.vad_model, path, sizeof path, o->c.vad_model != NULL)) return o->c.vad_model == NULL;
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
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = o.c.threads;
    cp.device = o.c.device;
    cp.max_sequences = o.cfg.tp.beam_size > o.cfg.tp.best_of ? o.cfg.tp.beam_size : o.cfg.tp.best_of;
    if ((pool = serve_pool_init(model, &cp, o.cfg.workers, o.cfg.queue))) rc = serve_http_run(&o.cfg, pool);
done:
    serve_pool_free(pool);
    sotto_vad_free(vad);
    sotto_model_free(model);
    return rc;
}
