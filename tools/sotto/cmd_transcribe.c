/* cmd_transcribe.c — `sotto transcribe`: audio files in, transcripts out, with
 * openai-whisper's long-form decoding and its command line's defaults (beam 5, best of 5,
 * temperature fallback). Segments go to stdout as each window is decoded; files under
 * --output-dir are written whole, through a temporary name; Ctrl-C stops after the
 * current window and writes no output file for it. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "cli.h"
#include "output.h"

static const char help[] =
    "usage: sotto transcribe [-m MODEL] [options] AUDIO...\n"
    "\n"
    "Transcribes each AUDIO file as openai-whisper's transcribe() does: 30 s windows\n"
    "advanced by the timestamps, beam search, temperature fallback, each window\n"
    "conditioned on the text before it. Segments are printed as they are decoded; with\n"
    "--output-dir every format is written to DIR/NAME.EXT.\n"
    "AUDIO is any audio or video file FFmpeg reads (WAV, FLAC, MP3, Ogg/Opus, M4A/AAC,\n"
    "the first audio track of MP4/MKV/WebM, ...) or - for standard input, decoded as\n"
    "openai-whisper's ffmpeg command does (mono, 16 kHz by libswresample) and streamed:\n"
    "only its log-mel is kept. A build without FFmpeg reads 16 kHz mono WAV only (`sotto\n"
    "--version` says which).\n"
    "\n"
    "  -m, --model MODEL        .gguf, CTranslate2 or Hugging Face model; default: $SOTTO_MODEL,\n"
    "                           else the tiny.en model `make demo` installed\n"
    "  -t, --threads N          worker threads (default: all cores)\n"
    "  --device DEV             cpu, vulkan, vulkan:N or auto (default: $SOTTO_DEVICE, else\n"
    "                           auto: a GPU when there is one, else the CPU)\n"
    "  -l, --language LANG      spoken language (en, de, ...) or auto (default: detect from\n"
    "                           the first 30 s; English-only models: en)\n"
    "  --task TASK              transcribe (default) or translate (into English)\n"
    "  -f, --format F           txt (default), srt, vtt, tsv, json (openai verbose_json) or\n"
    "                           all; repeatable; more than one needs --output-dir\n"
    "  --output-dir DIR         write DIR/NAME.EXT for each input and format\n"
    "  -o, --output FILE        write the one format of the one input to FILE\n"
    "  --beam-size N            beams at temperature 0 (default 5; 1: greedy)\n"
    "  --best-of N              samples at temperature > 0 (default 5)\n"
    "  --patience P             beam search patience (default 1.0)\n"
    "  --length-penalty A       rank by logprob / ((5 + length) / 6)^A (default: / length)\n"
    "  --temperature T          the first temperature (default 0)\n"
    "  --temperature-increment-on-fallback D\n"
    "                           the step to the next ones, up to 1.0 (default 0.2)\n"
    "  --no-fallback            one temperature only\n"
    "  --compression-ratio-threshold X   fall back above it (default 2.4; none: never)\n"
    "  --logprob-threshold X             fall back below it (default -1.0; none: never)\n"
    "  --no-speech-threshold X           silence above it (default 0.6; none: never)\n"
    "  --prompt TEXT            text before the first window (names, spelling, style)\n"
    "  --no-condition           do not feed each window's text to the next (when the text\n"
    "                           loops or skips sentences, as it can on repetitive speech)\n"
    "  --no-timestamps          no timestamp tokens: one segment per 30 s window\n"
    "  --max-initial-timestamp S  the first timestamp at most S seconds (default 1.0)\n"
    "  --seed N                 of the sampling at temperature > 0 (default 0)\n"
    "  --sample-len N           at most N tokens per window (default and most: 224)\n"
    "  --word-timestamps        a time for every word (openai-whisper's word_timestamps: the\n"
    "                           alignment heads' cross-attention aligned by DTW); segment\n"
    "                           times and seeking are refined by them; JSON gets \"words\"\n"
    "  --prepend-punctuations S, --append-punctuations S\n"
    "                           with --word-timestamps: the characters merged into the next and\n"
    "                           the previous word (openai's: \"'“¿([{- and \"'.。,，!！?？:：”)]}、)\n"
    "  --max-line-len N         with --word-timestamps: srt and vtt cues of at most N characters,\n"
    "                           cut between words, each timed by its words (whisper.cpp's -ml)\n"
    "  --split-on-word          cut only before a word that starts with a space (-sow): never\n"
    "                           inside the words of languages written without spaces\n"
    "  --hallucination-silence-threshold S\n"
    "                           with --word-timestamps: skip silences longer than S seconds\n"
    "                           around segments of anomalous words, and those segments (openai's)\n"
    "  --vad                    transcribe only the speech Silero VAD finds (faster-whisper's\n"
    "                           vad_filter; times stay on the file's timeline)\n"
    "  --vad-threshold X, --vad-min-speech-ms N, --vad-min-silence-ms N, --vad-speech-pad-ms N\n"
    "                           its options (faster-whisper's defaults: 0.5, 0, 2000, 400)\n"
    "  --vad-model PATH         the Silero VAD (default: $SOTTO_VAD_MODEL, else the one setup\n"
    "                           installs); with it, a window the model calls silence where the\n"
    "                           VAD hears no speech is skipped (the reference writes \"you\" there)\n"
    "  --no-silence-check       judge silence by the decoder alone, as the reference does\n"
    "  --quiet                  no segments or progress on the terminal\n"
    "\n"
    "Many files: AUDIO may be a directory (its audio and video files, by extension, under\n"
    "it; outputs in the same subdirectories of DIR) or @LIST (a file of paths, one a line).\n"
    "Then, or with -j, every output goes to --output-dir; a file whose outputs all exist is\n"
    "skipped (they are written whole), so a stopped run goes on where it was; a summary\n"
    "line ends the run.\n"
    "  -j, --jobs N             N files at once, each on a context of its own, one model\n"
    "                           (default 1; -t then defaults to cores / N)\n"
    "  --overwrite              transcribe files whose outputs exist, too\n"
    "\n"
    "exit: 0 ok, 1 invalid arguments or an input that could not be read (the others are\n"
    "still transcribed), 2 execution error, 130 interrupted\n"
    "\n"
    "example:\n"
    "  sotto transcribe talk.wav\n"
    "  sotto transcribe -f srt -f vtt --output-dir subs/ talk.wav\n";

typedef struct opts {
    const char *model, *lang, *task, *output, *dir, *vad_model, *device;
    long threads, jobs;
    int formats, n_formats;
    bool quiet, fallback, temps_given, overwrite;
    double t0, t_inc;
    sotto_transcribe_params tp;
    out_lines lines;           /* --max-line-len, --split-on-word */
    const char **files;
    int n_files;
} opts;

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    interrupted = 1;
    signal(sig, SIG_DFL); /* a second Ctrl-C ends the process at once */
}

static bool parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v)) return false;
    *out = v;
    return true;
}

/* A float option's value, or "none" (*ENABLED 0) where NONE_OK. */
static bool parse_float(const char *s, bool none_ok, float *out, int *enabled)
{
    if (none_ok && (strcmp(s, "none") == 0 || strcmp(s, "None") == 0)) {
        *enabled = 0;
        return true;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v)) return false;
    *out = (float)v;
    if (enabled) *enabled = 1;
    return true;
}

static int bad(const char *opt, const char *what, const char *value)
{
    fprintf(stderr, "sotto transcribe: %s takes %s, not '%s'\n", opt, what, value);
    return EXIT_INPUT;
}

/* The options with a value; I is at the option, its value next. */
static int value_opt(opts *o, const char *a, const char *v)
{
    sotto_transcribe_params *p = &o->tp;
    long n;
    int r = cli_search_opt("sotto transcribe", a, v, p);
    if (r) return r < 0 ? EXIT_INPUT : EXIT_OK;
    if (!strcmp(a, "-m") || !strcmp(a, "--model")) o->model = v;
    else if (!strcmp(a, "-l") || !strcmp(a, "--language")) o->lang = v;
    else if (!strcmp(a, "--task")) o->task = v;
    else if (!strcmp(a, "-o") || !strcmp(a, "--output")) o->output = v;
    else if (!strcmp(a, "--output-dir")) o->dir = v;
    else if (!strcmp(a, "--prompt")) p->initial_prompt = v;
    else if (!strcmp(a, "--vad-model")) o->vad_model = v;
    else if (!strcmp(a, "--device")) o->device = v;
    else if (!strcmp(a, "--prepend-punctuations")) p->prepend_punctuations = v;
    else if (!strcmp(a, "--append-punctuations")) p->append_punctuations = v;
    else if (!strcmp(a, "--vad-threshold")) {
        if (!parse_float(v, false, &p->vad_threshold, NULL) || !(p->vad_threshold > 0 && p->vad_threshold < 1))
            return bad(a, "a probability in (0, 1)", v);
    } else if (!strcmp(a, "--vad-min-speech-ms") || !strcmp(a, "--vad-min-silence-ms") ||
               !strcmp(a, "--vad-speech-pad-ms")) {
        if (!cli_parse_int(v, 0, 3600000, &n)) return bad(a, "milliseconds", v);
        *(!strcmp(a, "--vad-min-speech-ms") ? &p->vad_min_speech_ms
          : !strcmp(a, "--vad-min-silence-ms") ? &p->vad_min_silence_ms : &p->vad_speech_pad_ms) = (int)n;
    }
    else if (!strcmp(a, "-f") || !strcmp(a, "--format")) {
        int f = out_format(v);
        if (!f) return bad(a, "txt, srt, vtt, tsv, json or all", v);
        o->formats |= f;
        o->n_formats = __builtin_popcount((unsigned)o->formats);
    } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
        if (!cli_parse_int(v, 1, 256, &o->threads)) return bad(a, "a thread count in 1..256", v);
    } else if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) {
        if (!cli_parse_int(v, 1, 256, &o->jobs)) return bad(a, "a file count in 1..256", v);
    } else if (!strcmp(a, "--seed")) {
        if (!cli_parse_int(v, 0, 2147483647L, &n)) return bad(a, "a decimal integer", v);
        p->seed = (uint64_t)n;
    } else if (!strcmp(a, "--patience")) {
        if (!parse_float(v, false, &p->patience, NULL) || p->patience <= 0) return bad(a, "a number > 0", v);
    } else if (!strcmp(a, "--length-penalty")) {
        if (!parse_float(v, false, &p->length_penalty, &p->use_length_penalty) || p->length_penalty < 0 ||
            p->length_penalty > 1)
            return bad(a, "a number in 0..1", v);
    } else if (!strcmp(a, "--temperature")) {
        if (!parse_double(v, &o->t0) || o->t0 < 0 || o->t0 > 1) return bad(a, "a number in 0..1", v);
        o->temps_given = true;
    } else if (!strcmp(a, "--temperature-increment-on-fallback")) {
        if (!parse_double(v, &o->t_inc) || o->t_inc < 0) return bad(a, "a number >= 0", v);
        o->temps_given = true;
    } else if (!strcmp(a, "--compression-ratio-threshold")) {
        if (!parse_float(v, true, &p->compression_ratio_threshold, &p->check_compression))
            return bad(a, "a number or none", v);
    } else if (!strcmp(a, "--logprob-threshold")) {
        if (!parse_float(v, true, &p->logprob_threshold, &p->check_logprob)) return bad(a, "a number or none", v);
    } else if (!strcmp(a, "--no-speech-threshold")) {
        if (!parse_float(v, true, &p->no_speech_threshold, &p->check_no_speech)) return bad(a, "a number or none", v);
    } else if (!strcmp(a, "--max-line-len")) {
        if (!cli_parse_int(v, 1, 100000, &n)) return bad(a, "a number of characters in 1..100000", v);
        o->lines.max_len = (int)n;
    } else if (!strcmp(a, "--hallucination-silence-threshold")) {
        if (!parse_float(v, false, &p->hallucination_silence_threshold, NULL) || p->hallucination_silence_threshold < 0)
            return bad(a, "seconds >= 0", v);
        p->check_hallucination_silence = 1;
    } else if (!strcmp(a, "--max-initial-timestamp")) {
        if (!parse_float(v, false, &p->max_initial_timestamp, NULL) || p->max_initial_timestamp < 0)
            return bad(a, "seconds >= 0", v);
    } else {
        fprintf(stderr, "sotto transcribe: unknown option '%s' (see sotto transcribe --help)\n", a);
        return EXIT_INPUT;
    }
    return EXIT_OK;
}

static int parse(int argc, char **argv, opts *o)
{
    o->tp = sotto_transcribe_params_default();
    o->task = "transcribe";
    o->fallback = true;
    o->t_inc = 0.2;
    o->files = calloc((size_t)argc, sizeof *o->files);
    if (!o->files) return EXIT_EXEC;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(help, stdout);
            return -1;
        }
        if (!strcmp(a, "--no-fallback")) o->fallback = false;
        else if (!strcmp(a, "--no-condition")) o->tp.condition_on_previous_text = 0;
        else if (!strcmp(a, "--no-timestamps")) o->tp.timestamps = 0;
        else if (!strcmp(a, "--quiet")) o->quiet = true;
        else if (!strcmp(a, "--overwrite")) o->overwrite = true;
        else if (!strcmp(a, "--vad")) o->tp.vad_filter = 1;
        else if (!strcmp(a, "--word-timestamps")) o->tp.word_timestamps = 1;
        else if (!strcmp(a, "--split-on-word")) o->lines.split_on_word = true;
        else if (!strcmp(a, "--no-silence-check")) o->tp.silence_check = 0;
        else if (a[0] == '-' && a[1]) {
            if (i + 1 >= argc) {
                fprintf(stderr, "sotto transcribe: %s needs a value\n", a);
                return EXIT_INPUT;
            }
            int rc = value_opt(o, a, argv[++i]);
            if (rc) return rc;
        } else {
            o->files[o->n_files++] = a;
        }
    }
    if (!o->formats) o->formats = OUT_TXT, o->n_formats = 1;
    if (strcmp(o->task, "translate") && strcmp(o->task, "transcribe")) return bad("--task", "transcribe or translate", o->task);
    o->tp.translate = !strcmp(o->task, "translate");
    if (!o->jobs) o->jobs = 1;
    o->tp.language = o->lang;
    /* the library's default temperatures (openai transcribe()'s tuple), or as openai's
     * command line makes them (t0, t0 + increment, ... up to 1.0) */
    if ((o->temps_given || !o->fallback) &&
        sotto_transcribe_params_temperatures(&o->tp, o->t0, o->fallback ? o->t_inc : 0)) {
        fprintf(stderr, "sotto transcribe: %s\n", sotto_last_error());
        return EXIT_INPUT;
    }
    if (sotto_transcribe_params_check(&o->tp)) { /* once, before a model is loaded */
        fprintf(stderr, "sotto transcribe: %s\n", sotto_last_error());
        return EXIT_INPUT;
    }
    if (o->lines.max_len && !o->tp.word_timestamps) {
        fprintf(stderr, "sotto transcribe: --max-line-len needs --word-timestamps (cues are cut at word times)\n");
        return EXIT_INPUT;
    }
    if (o->lines.split_on_word && !o->lines.max_len) {
        fprintf(stderr, "sotto transcribe: --split-on-word needs --max-line-len\n");
        return EXIT_INPUT;
    }
    if (o->tp.check_hallucination_silence && !o->tp.word_timestamps) {
        fprintf(stderr, "sotto transcribe: --hallucination-silence-threshold needs --word-timestamps\n");
        return EXIT_INPUT;
    }
    if (o->n_files == 0) {
        fprintf(stderr, "sotto transcribe: no AUDIO file given\n%s", help);
        return EXIT_INPUT;
    }
    if (o->n_formats > 1 && !o->dir) {
        fprintf(stderr, "sotto transcribe: %d formats need --output-dir (one format goes to stdout or -o)\n",
                o->n_formats);
        return EXIT_INPUT;
    }
    if (batch_wanted(o->files, o->n_files, (int)o->jobs) && (!o->dir || o->output)) {
        fprintf(stderr, "sotto transcribe: directories, @lists and -j write to --output-dir DIR (not stdout or -o)\n");
        return EXIT_INPUT;
    }
    if (o->output && (o->dir || o->n_files > 1)) {
        fprintf(stderr, "sotto transcribe: -o names one file: one input and no --output-dir\n");
        return EXIT_INPUT;
    }
    return EXIT_OK;
}

/* Output places are checked before any decoding: DIR exists (or is made) and takes a
 * file; -o FILE's directory takes one. */
static bool writable(const opts *o)
{
    char probe[4096];
    if (o->dir) {
        if (mkdir(o->dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "sotto transcribe: cannot create --output-dir %s: %s\n", o->dir, strerror(errno));
            return false;
        }
        snprintf(probe, sizeof probe, "%s/.sotto-write-test-%ld", o->dir, (long)getpid());
    } else if (o->output) {
        snprintf(probe, sizeof probe, "%s.tmp", o->output);
    } else {
        return true;
    }
    FILE *f = fopen(probe, "w");
    if (!f) {
        fprintf(stderr, "sotto transcribe: cannot write %s: %s\n", o->dir ? o->dir : o->output, strerror(errno));
        return false;
    }
    fclose(f);
    remove(probe);
    return true;
}

typedef struct live {
    const opts *o;
    int format, index;         /* what stdout shows as segments arrive */
    bool tty;
    double t0_ms;
} live;

static int on_segment(const sotto_segment *s, void *user)
{
    live *l = user;
    if (l->format) {
        if (!out_segment(stdout, l->format, s, &l->o->lines, &l->index)) {
            fprintf(stderr, "sotto transcribe: out of memory writing a segment\n");
            return 1;
        }
    } else if (!l->o->quiet) { /* files go to --output-dir: the segments are shown as they come */
        char a[32], b[32];
        out_timestamp(a, sizeof a, s->start, false, '.');
        out_timestamp(b, sizeof b, s->end, false, '.');
        printf("[%s --> %s] %s\n", a, b, s->text);
        fflush(stdout);
    }
    return interrupted;
}

static int on_progress(double done, double total, void *user)
{
    live *l = user;
    if (l->tty && !l->o->quiet) {
        double secs = (cli_now_ms() - l->t0_ms) / 1000;
        fprintf(stderr, "\r\033[K  %.0f / %.0f s of audio, %.1fx real time", done, total, secs > 0 ? done / secs : 0);
        if (done >= total) fputc('\n', stderr);
    }
    return interrupted;
}

/* The base name of PATH without its extension, for DIR/NAME.EXT. */
static void base_name(const char *path, char *out, size_t n)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(out, n, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
}

/* Writes every requested format of R for input PATH; false on a write error. */
static bool write_outputs(const opts *o, const char *path, const sotto_result *r)
{
    if (o->output) return out_write_file(o->output, o->formats, r, &o->lines) || (fprintf(stderr, "sotto transcribe: cannot write "
                                                                                   "%s\n", o->output), false);
    if (!o->dir) return true;
    char name[1024], file[4096];
    base_name(path, name, sizeof name);
    for (int f = 1; f <= OUT_JSON; f <<= 1) {
        if (!(o->formats & f)) continue;
        snprintf(file, sizeof file, "%s/%s.%s", o->dir, name, out_ext(f));
        if (!out_write_file(file, f, r, &o->lines)) {
            fprintf(stderr, "sotto transcribe: cannot write %s\n", file);
            return false;
        }
    }
    return true;
}

/* One input: its segments live on stdout (one format without a file destination),
 * then its files. Returns the exit status for it. */
static int one_file(const opts *o, sotto_context *ctx, const char *path, bool header)
{
    live l = {.o = o, .format = !o->dir && !o->output ? o->formats : 0, .tty = isatty(STDERR_FILENO),
              .t0_ms = cli_now_ms()};
    sotto_transcribe_params tp = o->tp;
    tp.on_segment = on_segment, tp.on_progress = on_progress, tp.user_data = &l;
    if (header && l.format) printf("==> %s <==\n", path);
    if (l.format && l.format != OUT_JSON) out_begin(stdout, l.format);
    sotto_result *r = NULL;
    sotto_status st = sotto_transcribe_file(ctx, path, &tp, &r);
    if (st) {
        fprintf(stderr, "sotto transcribe: %s\n", sotto_context_error(ctx));
        return st == SOTTO_ERR_NOMEM ? EXIT_EXEC : EXIT_INPUT;
    }
    if (r->language_detected && !o->quiet)
        fprintf(stderr, "sotto: %s: detected language %s (probability %.2f)\n", path, r->language,
                r->language_probability);
    int rc = EXIT_OK;
    if (r->stopped) rc = 130; /* interrupted: what was printed stays, no file is written */
    else if (l.format == OUT_JSON) out_json(stdout, r);
    else if (!write_outputs(o, path, r)) rc = EXIT_EXEC;
    fflush(stdout);
    sotto_result_free(r);
    return rc;
}

int cmd_transcribe(int argc, char **argv)
{
    opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc) {
        free(o.files);
        return rc < 0 ? EXIT_OK : rc;
    }
    char path[4096];
    if (!(o.device = cli_device("transcribe", o.device)) || !writable(&o) || !cli_model_path(o.model, path, sizeof path)) {
        free(o.files);
        return EXIT_INPUT;
    }
    sotto_model *model = cli_load_model(path);
    if (!model) {
        free(o.files);
        return EXIT_EXEC;
    }
    /* the VAD: asked for with --vad (then it must be there), else used for the silence
     * check where one is installed */
    sotto_vad *vad = NULL;
    char vad_path[4096];
    bool want_vad = o.tp.vad_filter || o.vad_model;
    if ((want_vad || o.tp.silence_check) && cli_vad_model_path(o.vad_model, vad_path, sizeof vad_path, want_vad)) {
        if (sotto_vad_load(vad_path, &vad) != SOTTO_OK) {
            fprintf(stderr, "sotto transcribe: cannot load the VAD model: %s\n", sotto_last_error());
            sotto_model_free(model);
            free(o.files);
            return EXIT_EXEC;
        }
    } else if (want_vad) {
        sotto_model_free(model);
        free(o.files);
        return EXIT_INPUT;
    } else if (o.tp.silence_check && !o.quiet) {
        fprintf(stderr, "sotto: note: no Silero VAD model installed (%s): silence and noise are judged by the "
                        "decoder alone, as the reference does (scripts/setup.sh installs it)\n", vad_path);
    }
    o.tp.vad = vad;
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = cli_threads(o.threads);
    cp.max_sequences = o.tp.beam_size > o.tp.best_of ? o.tp.beam_size : o.tp.best_of;
    cp.device = o.device;
    if (batch_wanted(o.files, o.n_files, (int)o.jobs)) {
        if (!o.threads && o.jobs > 1) cp.n_threads = cp.n_threads / (int)o.jobs > 1 ? cp.n_threads / (int)o.jobs : 1;
        batch_job job = {.model = model, .cp = cp, .tp = o.tp, .formats = o.formats, .lines = o.lines, .dir = o.dir,
                         .jobs = (int)o.jobs, .overwrite = o.overwrite, .quiet = o.quiet,
                         .inputs = o.files, .n_inputs = o.n_files};
        rc = batch_transcribe(&job);
        sotto_vad_free(vad);
        sotto_model_free(model);
        free(o.files);
        return rc;
    }
    sotto_context *ctx = o.quiet ? NULL : cli_context("transcribe", model, &cp);
    if (o.quiet && sotto_context_init(model, &cp, &ctx) != SOTTO_OK) {
        fprintf(stderr, "sotto transcribe: %s\n", sotto_last_error());
        ctx = NULL;
    }
    if (!ctx) {
        sotto_vad_free(vad);
        sotto_model_free(model);
        free(o.files);
        return EXIT_EXEC;
    }
    struct sigaction sa = {.sa_handler = on_sigint};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    int failed = 0;
    rc = EXIT_OK;
    for (int i = 0; i < o.n_files && !interrupted; i++) {
        int r = one_file(&o, ctx, o.files[i], o.n_files > 1);
        if (r == EXIT_INPUT) failed++;
        else if (r != EXIT_OK) rc = r;
    }
    if (interrupted) {
        fprintf(stderr, "sotto transcribe: interrupted; the segments above were decoded, no file was written for the "
                        "input in progress\n");
        rc = 130;
    } else if (failed && rc == EXIT_OK) {
        fprintf(stderr, "sotto transcribe: %d of %d inputs could not be transcribed\n", failed, o.n_files);
        rc = EXIT_INPUT;
    }
    sotto_context_free(ctx);
    sotto_vad_free(vad);
    sotto_model_free(model);
    free(o.files);
    return rc;
}
