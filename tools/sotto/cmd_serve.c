/* cmd_serve.c — `sotto serve`: an OpenAI-compatible transcription server. Parses the
 * command line, loads the model (and the Silero VAD where installed, as `sotto transcribe`
 * does) once, makes the worker pool (serve_pool.c) and runs the HTTP front end
 * (serve_http.c) until SIGTERM or SIGINT, which drain the requests in flight. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "serve.h"

static const char help[] =
    "usage: sotto serve [-m MODEL] [options]\n"
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
    "\n"
    "  -m, --model MODEL        .gguf, CTranslate2 or Hugging Face model; default: $SOTTO_MODEL,\n"
    "                           else the tiny.en model `make demo` installed\n"
    "  --host ADDR              address to listen on (default 127.0.0.1: this machine only;\n"
    "                           0.0.0.0 or :: for every interface: then set an API key)\n"
    "  --port N                 TCP port (default 8080; 0: any free one, printed at start)\n"
    "  --workers N              requests transcribed at once (default: cores / threads)\n"
    "  -t, --threads N          threads of each worker (default: 4, at most the cores)\n"
    "  --queue N                requests that may wait beyond the workers (default 16)\n"
    "  --api-key KEY            require Authorization: Bearer KEY (default: $SOTTO_API_KEY,\n"
    "                           which keeps the key out of ps; none: no key asked); a missing\n"
    "                           or wrong one gets 401\n"
    "  --max-upload-mb N        larger request bodies get 413, checked as they stream (default 25)\n"
    "  --timeout S              a connection silent S seconds is closed; a body that takes\n"
    "                           longer than S seconds to arrive gets 408 (default 30)\n"
    "  --device DEV             cpu, vulkan, vulkan:N or auto (as sotto transcribe)\n"
    "  --beam-size N, --best-of N, --sample-len N, --no-fallback, --vad-model PATH,\n"
    "  --no-silence-check       the decoding of every request, as sotto transcribe's flags\n"
    "                           (defaults: openai-whisper's, beam 5, best of 5, fallback on)\n"
    "\n"
    "Each request is logged on stderr: method, path, status, audio seconds, milliseconds.\n"
    "SIGTERM or SIGINT: no new requests; those in flight are answered; exit 0.\n"
    "\n"
    "examples:\n"
    "  sotto serve -m models/tiny.en.gguf --port 8080\n"
    "  curl -F file=@talk.mp3 -F response_format=srt http://127.0.0.1:8080/v1/audio/transcriptions\n"
    "  python3 -c 'import openai; c = openai.OpenAI(base_url=\"http://127.0.0.1:8080/v1\", api_key=\"-\");\n"
    "    print(c.audio.transcriptions.create(model=\"whisper-1\", file=open(\"talk.mp3\", \"rb\")).text)'\n";

typedef struct serve_opts {
    const char *model, *device, *vad_model;
    long threads, workers, queue, port, max_mb, timeout;
    serve_config cfg;
} serve_opts;

static int bad(const char *opt, const char *what, const char *value)
{
    fprintf(stderr, "sotto serve: %s takes %s, not '%s'\n", opt, what, value);
    return EXIT_INPUT;
}

static int value_opt(serve_opts *o, const char *a, const char *v)
{
    sotto_transcribe_params *p = &o->cfg.tp;
    int r = cli_search_opt("sotto serve", a, v, p);
    if (r) return r < 0 ? EXIT_INPUT : EXIT_OK;
    if (!strcmp(a, "-m") || !strcmp(a, "--model")) o->model = v;
    else if (!strcmp(a, "--host")) o->cfg.host = v;
    else if (!strcmp(a, "--api-key")) o->cfg.api_key = v;
    else if (!strcmp(a, "--device")) o->device = v;
    else if (!strcmp(a, "--vad-model")) o->vad_model = v;
    else if (!strcmp(a, "--port")) {
        if (!cli_parse_int(v, 0, 65535, &o->port)) return bad(a, "a port in 0..65535", v);
    } else if (!strcmp(a, "--workers")) {
        if (!cli_parse_int(v, 1, 256, &o->workers)) return bad(a, "a count in 1..256", v);
    } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
        if (!cli_parse_int(v, 1, 256, &o->threads)) return bad(a, "a thread count in 1..256", v);
    } else if (!strcmp(a, "--queue")) {
        if (!cli_parse_int(v, 0, 4096, &o->queue)) return bad(a, "a count in 0..4096", v);
    } else if (!strcmp(a, "--max-upload-mb")) {
        if (!cli_parse_int(v, 1, 1 << 20, &o->max_mb)) return bad(a, "megabytes, at least 1", v);
    } else if (!strcmp(a, "--timeout")) {
        if (!cli_parse_int(v, 1, 86400, &o->timeout)) return bad(a, "seconds in 1..86400", v);
    } else {
        fprintf(stderr, "sotto serve: unknown option '%s' (see sotto serve --help)\n", a);
        return EXIT_INPUT;
    }
    return EXIT_OK;
}

static int parse(int argc, char **argv, serve_opts *o)
{
    o->cfg.tp = sotto_transcribe_params_default();
    o->cfg.host = "127.0.0.1";
    o->cfg.fallback = true;
    o->port = 8080, o->queue = 16, o->max_mb = 25, o->timeout = 30;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(help, stdout);
            return -1;
        }
        if (!strcmp(a, "--no-fallback")) o->cfg.fallback = false;
        else if (!strcmp(a, "--no-silence-check")) o->cfg.tp.silence_check = 0;
        else if (a[0] == '-' && i + 1 < argc) {
            int rc = value_opt(o, a, argv[++i]);
            if (rc) return rc;
        } else {
            fprintf(stderr, a[0] == '-' ? "sotto serve: %s needs a value\n"
                                        : "sotto serve: unexpected argument '%s' (see sotto serve --help)\n", a);
            return EXIT_INPUT;
        }
    }
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
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) cores = 1;
    if (!o->threads) o->threads = cores < 4 ? cores : 4;
    if (!o->workers) o->workers = cores / o->threads > 0 ? cores / o->threads : 1;
    if (o->workers * o->threads > cores)
        fprintf(stderr, "sotto serve: warning: %ld workers x %ld threads on %ld cores: they will wait for each other\n",
                o->workers, o->threads, cores);
    o->cfg.port = (int)o->port, o->cfg.workers = (int)o->workers, o->cfg.queue = (int)o->queue;
    o->cfg.timeout_s = (int)o->timeout;
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
    if (!o->cfg.tp.silence_check && !o->vad_model) return true;
    if (!cli_vad_model_path(o->vad_model, path, sizeof path, o->vad_model != NULL)) return o->vad_model == NULL;
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
    if (rc) return rc < 0 ? EXIT_OK : rc;
    const char *missing;
    if (!serve_http_available(&missing)) {
        fprintf(stderr, "sotto serve: %s\n", missing);
        return EXIT_EXEC;
    }
    char path[4096], id[4096];
    if (!(o.device = cli_device("serve", o.device)) || !cli_model_path(o.model, path, sizeof path)) return EXIT_INPUT;
    sotto_model *model = cli_load_model(path);
    if (!model) return EXIT_EXEC;
    sotto_model_info info;
    sotto_model_get_info(model, &info);
    model_id(path, id, sizeof id);
    o.cfg.model = model, o.cfg.model_id = id, o.cfg.multilingual = info.multilingual;
    sotto_vad *vad = NULL;
    if (!load_vad(&o, &vad)) {
        sotto_model_free(model);
        return EXIT_EXEC;
    }
    /* every thread from here on (workers, their thread pools, MHD's) inherits this mask:
     * the signals reach serve_http_run's sigwait alone */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = (int)o.threads;
    cp.device = o.device;
    cp.max_sequences = o.cfg.tp.beam_size > o.cfg.tp.best_of ? o.cfg.tp.beam_size : o.cfg.tp.best_of;
    serve_pool *pool = serve_pool_init(model, &cp, o.cfg.workers, o.cfg.queue);
    rc = pool ? serve_http_run(&o.cfg, pool) : EXIT_EXEC;
    serve_pool_free(pool);
    sotto_vad_free(vad);
    sotto_model_free(model);
    return rc;
}
