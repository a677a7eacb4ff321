/* cmd_stream.c — `sotto stream [INPUT]`: live transcription of audio as it arrives
 * (stream_input.c) through a sotto_stream session: committed segments printed once, the
 * tentative tail rewritten on one terminal line, or one JSON object per event (--jsonl);
 * the committed transcript written in any format at the end (output.c). Ctrl-C ends it
 * with what was committed, exit 130 (SIGTERM as Ctrl-C: 143). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opt.h"
#include "output.h"
#include "stream_input.h"

#define OFF(field) offsetof(opts, field)
#define SP(field) offsetof(opts, sp.field)

typedef struct opts {
    cli_common c;
    sotto_stream_params sp;
    const char *lang, *format, *output, *dir;
    int rate, rate_given, realtime, jsonl, no_vad, quiet, trim_given, push_given;
    double push_s;
    unsigned formats;
} opts;

static bool add_format(void *field, const char *v, const char **what)
{
    static char names[300];
    snprintf(names, sizeof names, "%s or all", out_names());
    *what = names;
    unsigned f = out_format(v);
    *(unsigned *)field |= f;
    return f != 0;
}

static bool set_raw(void *field, const char *v, const char **what)
{
    *what = "s16le or f32le (raw PCM in; -f/--output-format chooses the transcript's format)";
    *(const char **)field = v;
    return stream_input_format_ok(v);
}

static const cli_opt options[] = {
    {.kind = OPT_INCLUDE, .sub = cli_opt_model, .offset = OFF(c)},
    {.kind = OPT_INCLUDE, .sub = cli_opt_threads, .offset = OFF(c)},
    {.kind = OPT_INCLUDE, .sub = cli_opt_device, .offset = OFF(c)},
    {"--language", 'l', OPT_STR, OFF(lang), 0, 0, "LANG", "a language",
     .help = "spoken language: a code or openai's name (default: detected at the\n"
             "first words); an English-only model transcribes English whatever LANG\n"
             "says, with a warning"},
    {.kind = OPT_INCLUDE, .sub = cli_opt_task, .offset = OFF(sp.translate)},
    {"--format", 0, OPT_CALL, OFF(format), 0, 0, "RAW", .call = set_raw,
     .help = "INPUT is raw PCM, mono: s16le or f32le (default: any file or\n"
             "container FFmpeg reads, probed)"},
    {"--rate", 0, OPT_INT, OFF(rate), 8000, 192000, "R", "a sample rate in 8000..192000",
     .help = "the raw PCM's sample rate (default 16000; resampled to 16 kHz)", .flags = CLI_ON, .on = OFF(rate_given)},
    {"--realtime", 0, OPT_TRUE, OFF(realtime),
     .help = "read INPUT no faster than real time (a file as if it were spoken\n"
             "now: for demos, tests and latency figures)"},
    {"--push", 0, OPT_DOUBLE, OFF(push_s), 0.01, 60, "S", "seconds in 0.01..60",
     .help = "without --realtime, give the session S seconds of a file at a time\n"
             "(default 0.1): S of a step's duration replays a machine that slow,\n"
             "the same events at every run (bench/stream.py --simulate)",
     .flags = CLI_ON, .on = OFF(push_given)},
    {"--jsonl", 0, OPT_TRUE, OFF(jsonl),
     .help = "one JSON object per event on stdout: {\"type\": \"tentative\" or\n"
             "\"final\", \"start\", \"end\", \"text\", \"words\", \"emission_time\"\n"
             "(wall seconds since the start), \"audio_time\" (audio read by then)};\n"
             "a tentative event replaces the last, an empty one: none pending"},
    {"--output-format", 'f', OPT_CALL, OFF(formats), 0, 0, "F", .call = add_format,
     .help = "the committed transcript at the end: txt, srt, vtt, tsv, json,\n"
             "lrc or all; repeatable; more than one needs --output-dir"},
    {"--output", 'o', OPT_STR, OFF(output), 0, 0, "FILE", "a path", .help = "write the transcript's one format to FILE"},
    {"--output-dir", 0, OPT_STR, OFF(dir), 0, 0, "DIR", "a directory",
     .help = "write DIR/NAME.EXT for each format (NAME: INPUT's, or stream)"},
    {"--beam-size", 0, OPT_INT, SP(beam_size), 1, SOTTO_MAX_SEQUENCES, "N", "a beam count in 1..16",
     .help = "beams of each decoding (default 5; 1: greedy, less work,\n"
             "more words misheard)"},
    {"--min-step", 0, OPT_DOUBLE, SP(min_step_s), 0.05, 10, "S", "seconds in 0.05..10",
     .help = "audio between two decodings (default 0.5): less is sooner text\n"
             "and more work"},
    {"--hold", 0, OPT_DOUBLE, SP(hold_s), 0, 29, "S", "seconds in 0..29",
     .help = "commit an utterance's first words only once the buffer holds S\n"
             "of audio (default 2; 0: none; below --max-buffer): later first\n"
             "words, fewer misheard"},
    {"--trim", 0, OPT_DOUBLE, SP(trim_s), 1, 29, "S", "seconds in 1..29",
     .help = "cut the buffer at a committed segment's end past S (default 12,\n"
             "or half --max-buffer when that is 24 or less; below it)",
     .flags = CLI_ON, .on = OFF(trim_given)},
    {"--max-buffer", 0, OPT_DOUBLE, SP(max_buffer_s), 2, 30, "S", "seconds in 2..30",
     .help = "the buffer bound: past it pending words are committed (default 25)"},
    {"--prompt", 0, OPT_STR, SP(initial_prompt), 0, 0, "TEXT", "a text", .help = "text before the stream"},
    {"--no-vad", 0, OPT_TRUE, OFF(no_vad),
     .help = "no Silero VAD: decode every step, silence too (default: the VAD\n"
             "gates decoding when its model is found; a pause commits)"},
    {.kind = OPT_INCLUDE, .sub = cli_opt_vad_model, .offset = OFF(c)},
    {"--vad-threshold", 0, OPT_FLOAT, SP(vad_threshold), 0, 1, "X", "a probability in (0, 1)",
     .help = "speech above it (default 0.5)", .flags = CLI_LO_OPEN | CLI_HI_OPEN},
    {"--vad-min-silence-ms", 0, OPT_INT, SP(vad_min_silence_ms), 0, 60000, "N", "milliseconds in 0..60000",
     .help = "the pause that commits what is pending (default 500)"},
    {"--quiet", 0, OPT_TRUE, OFF(quiet), .help = "nothing on stdout (with -o or --output-dir)"},
    {0},
};

static const cli_cmd command = {
    .name = "stream",
    .usage = "usage: sotto stream [-m MODEL] [options] [INPUT]\n"
             "\n"
             "Transcribes audio live, as it arrives. INPUT is a file (with --realtime: read at the\n"
             "pace it plays), - for standard input (any container FFmpeg reads, or raw PCM with\n"
             "--format and --rate), default -. Every --min-step of new audio the latest audio is\n"
             "decoded with the committed text as prompt; words two successive decodings agree on\n"
             "are committed (LocalAgreement-2) and printed once, each committed segment a line\n"
             "\"[start --> end] text\"; on a terminal the uncommitted rest is rewritten in place.\n"
             "The Silero VAD skips silence and commits at a pause. The end of the input commits\n"
             "everything; Ctrl-C (or SIGTERM) stops with what was committed (exit 130; 143).\n"
             "\n",
    .opts = options,
    .max_args = 1,
    .args = "one INPUT",
    .footer = "\n"
              "exit status: 0 done, 1 bad options or input, 2 decoding failed or an output that\n"
              "cannot be written, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM)\n"
              "\n"
              "examples:\n"
              "  sotto stream --realtime talk.wav\n"
              "  ffmpeg -loglevel quiet -i URL -f s16le -ac 1 -ar 16000 - | sotto stream --format s16le -\n"
              "  arecord -q -f S16_LE -c 1 -r 16000 | sotto stream --format s16le --rate 16000\n"
              "  sotto stream --jsonl --realtime talk.wav > events.jsonl\n"
              "  sotto stream -f srt -o talk.srt talk.mp3\n",
};

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    interrupted = sig;
    signal(sig, SIG_DFL); /* a second one ends the process at once */
}

/* ---- the committed transcript ---------------------------------------------------- */

typedef struct transcript {
    sotto_segment *seg;
    int n, cap;
} transcript;

static char *dup_str(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    return d ? strcpy(d, s) : NULL;
}

/* Whether TEXT ends a sentence: in ".", "?" or "!", but for a title or an initial before
 * a name ("Mr.", "Dr.", "J."), which a commit often ends at. */
static bool ends_sentence(const char *text, size_t n)
{
    static const char *const titles[] = {"Mr.", "Mrs.", "Ms.", "Dr.", "Prof.", "St.", "Mt.", "Jr.", "Sr.",
                                         "vs.", "e.g.", "i.e."};
    if (!n || !strchr(".?!", text[n - 1])) return false;
    size_t a = n;
    while (a > 0 && text[a - 1] != ' ') a--;
    const char *word = text + a;
    size_t len = n - a;
    if (len == 2 && word[0] >= 'A' && word[0] <= 'Z' && word[1] == '.') return false; /* an initial */
    for (size_t i = 0; i < sizeof titles / sizeof *titles; i++)
        if (strlen(titles[i]) == len && !memcmp(word, titles[i], len)) return false;
    return true;
}

/* Whether the final E continues segment S in the files: S does not end a sentence, E
 * follows within a second and S is short enough to read as one subtitle. */
static bool continues(const sotto_segment *s, const sotto_stream_event *e)
{
    size_t n = strlen(s->text);
    return n && !ends_sentence(s->text, n) && e->start - s->end < 1.0 && n + strlen(e->text) < 120;
}

/* Appends the final E to segment S (its text, tokens and words). */
static bool extend(sotto_segment *s, const sotto_stream_event *e)
{
    char *text = realloc((void *)s->text, strlen(s->text) + strlen(e->text) + 1);
    if (text) s->text = text;
    int32_t *tok = realloc((void *)s->tokens, (size_t)(s->n_tokens + e->n_tokens + 1) * sizeof *tok);
    if (tok) s->tokens = tok;
    sotto_word *w = realloc((void *)s->words, (size_t)(s->n_words + e->n_words + 1) * sizeof *w);
    if (w) s->words = w;
    if (!text || !tok || !w) return false;
    for (int i = 0; i < e->n_words; i++) {
        w[s->n_words] = e->words[i];
        if (!(w[s->n_words].word = dup_str(e->words[i].word))) return false;
        s->n_words++;
    }
    strcat(text, e->text);
    memcpy(tok + s->n_tokens, e->tokens, (size_t)e->n_tokens * sizeof *tok);
    s->n_tokens += e->n_tokens;
    s->end = e->end;
    return true;
}

/* Keeps a copy of the final event E: a segment of its own, or the end of the last one
 * (the session commits a few words at a time; the files get sentences). */
static bool keep(transcript *t, const sotto_stream_event *e)
{
    if (t->n && continues(&t->seg[t->n - 1], e)) return extend(&t->seg[t->n - 1], e);
    if (t->n == t->cap) {
        int cap = t->cap * 2 + 16;
        sotto_segment *s = realloc(t->seg, (size_t)cap * sizeof *s);
        if (!s) return false;
        t->seg = s, t->cap = cap;
    }
    sotto_segment s = {.id = t->n, .start = e->start, .end = e->end, .n_tokens = e->n_tokens, .n_words = e->n_words};
    char *text = dup_str(e->text);
    int32_t *tok = malloc((size_t)(e->n_tokens + 1) * sizeof *tok);
    sotto_word *w = calloc((size_t)e->n_words + 1, sizeof *w);
    bool ok = text && tok && w;
    for (int i = 0; ok && i < e->n_words; i++) {
        w[i] = e->words[i];
        ok = (w[i].word = dup_str(e->words[i].word)) != NULL;
    }
    if (!ok) {
        for (int i = 0; w && i < e->n_words; i++) free((void *)w[i].word);
        free(text), free(tok), free(w);
        return false;
    }
    memcpy(tok, e->tokens, (size_t)e->n_tokens * sizeof *tok);
    s.text = text, s.tokens = tok, s.words = w;
    t->seg[t->n++] = s;
    return true;
}

static void transcript_free(transcript *t)
{
    for (int i = 0; i < t->n; i++) {
        for (int k = 0; k < t->seg[i].n_words; k++) free((void *)t->seg[i].words[k].word);
        free((void *)t->seg[i].text), free((void *)t->seg[i].tokens), free((void *)t->seg[i].words);
    }
    free(t->seg);
}

/* ---- events on stdout ------------------------------------------------------------ */

typedef struct live {
    const opts *o;
    transcript t;
    bool tty, shown;           /* a tentative line is on the terminal */
    bool failed;               /* out of memory or stdout failed */
    double t0_ms;              /* the stream's start on the wall clock */
    char lang[16];             /* the last final's language ("" before one) */
    bool say_lang;             /* a multilingual model: a detected language is said */
} live;

static void json_event(const sotto_stream_event *e, double emitted)
{
    printf("{\"type\": \"%s\", \"start\": ", e->type == SOTTO_STREAM_FINAL ? "final" : "tentative");
    out_json_number(stdout, e->start);
    fputs(", \"end\": ", stdout);
    out_json_number(stdout, e->end);
    fputs(", \"text\": ", stdout);
    out_json_string(stdout, e->text);
    fputs(", \"words\": [", stdout);
    for (int i = 0; i < e->n_words; i++) {
        fputs(i ? ", {\"word\": " : "{\"word\": ", stdout);
        out_json_string(stdout, e->words[i].word);
        fputs(", \"start\": ", stdout);
        out_json_number(stdout, e->words[i].start);
        fputs(", \"end\": ", stdout);
        out_json_number(stdout, e->words[i].end);
        fputs(", \"probability\": ", stdout);
        out_json_number(stdout, e->words[i].probability);
        fputs("}", stdout);
    }
    fputs("], \"emission_time\": ", stdout);
    out_json_number(stdout, emitted);
    fputs(", \"audio_time\": ", stdout);
    out_json_number(stdout, e->audio_time);
    if (e->language) {
        fputs(", \"language\": ", stdout);
        out_json_string(stdout, e->language);
    }
    fputs("}\n", stdout);
}

/* The terminal's width, for a tentative line that must not wrap. */
static int columns(void)
{
    struct winsize w;
    return ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 10 ? w.ws_col : 80;
}

/* The last WIDTH - 1 bytes of TEXT at most, from a UTF-8 character's start. */
static const char *tail_fitting(const char *text, int width)
{
    size_t n = strlen(text), k = (size_t)width - 1;
    if (n <= k) return text;
    const char *p = text + n - k;
    while (*p && ((unsigned char)*p & 0xC0) == 0x80) p++;
    return p;
}

static int on_event(const sotto_stream_event *e, void *user)
{
    live *l = user;
    const opts *o = l->o;
    if (e->type == SOTTO_STREAM_FINAL && !keep(&l->t, e)) l->failed = true;
    /* a detected language is said when the finals first come in it, and again if a later
     * one is in another (the session keeps one once it has heard --hold seconds) */
    if (e->type == SOTTO_STREAM_FINAL && e->language && strcmp(e->language, l->lang) != 0) {
        snprintf(l->lang, sizeof l->lang, "%s", e->language);
        if (cli_auto_language(o->lang) && !o->quiet && l->say_lang)
            fprintf(stderr, "sotto stream: detected language %s\n", l->lang);
    }
    if (o->quiet) return l->failed;
    double emitted = (cli_now_ms() - l->t0_ms) / 1000;
    if (o->jsonl) {
        json_event(e, emitted);
    } else if (e->type == SOTTO_STREAM_FINAL || l->tty) {
        if (l->shown) fputs("\r\033[K", stdout);
        l->shown = false;
        if (e->type == SOTTO_STREAM_FINAL) {
            char a[32], b[32];
            out_timestamp(a, sizeof a, e->start, false, '.');
            out_timestamp(b, sizeof b, e->end, false, '.');
            printf("[%s --> %s]%s%s\n", a, b, e->text[0] == ' ' ? "" : " ", e->text); /* "-hearted" too */
        } else if (e->text[0]) {
            printf("\033[2m%s\033[0m", tail_fitting(e->text, columns()));
            l->shown = true;
        }
    }
    if (fflush(stdout) != 0 || ferror(stdout)) l->failed = true;
    return l->failed;
}

/* ---- the transcript's files ------------------------------------------------------- */

static void base_name(const char *path, char *out, size_t n)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (!strcmp(path, "-") || !*b) b = "stream";
    snprintf(out, n, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
}

static bool write_outputs(const opts *o, const char *input, const transcript *t, const char *text, double duration,
                          const char *lang)
{
    sotto_result r = {.text = text, .language = lang, .duration = duration, .segments = t->seg, .n_segments = t->n,
                      .word_timestamps = 1};
    char file[4096], name[1024];
    base_name(input, name, sizeof name);
    for (int i = 0; i < out_n_writers; i++) {
        if (!(o->formats & 1u << i)) continue;
        if (o->output) snprintf(file, sizeof file, "%s", o->output);
        else snprintf(file, sizeof file, "%s/%s.%s", o->dir, name, out_writers[i].ext);
        errno = 0;
        if (!out_write_file(file, &out_writers[i], &r, NULL)) {
            fprintf(stderr, "sotto stream: cannot write %s: %s\n", file, errno ? strerror(errno) : "error");
            return false;
        }
    }
    return true;
}

/* ---- the run ------------------------------------------------------------------------ */

static int parse(int argc, char **argv, opts *o, const char **input)
{
    o->sp = sotto_stream_params_default();
    o->rate = SOTTO_SAMPLE_RATE;
    o->push_s = 0.1;
    int n_pos;
    int rc = cli_parse(&command, argc, argv, o, &n_pos);
    if (rc) return rc;
    *input = n_pos ? argv[1] : "-";
    const char *why = NULL;
    if (o->rate_given && !o->format) why = "--rate is the raw PCM's: it needs --format s16le or f32le";
    else if (o->output && o->dir) why = "-o and --output-dir: give one";
    else if ((o->output || o->dir) && !o->formats) o->formats = out_format("txt");
    if (!why && o->output && __builtin_popcount(o->formats) > 1) why = "-o FILE takes one format: more need --output-dir";
    if (!why && o->formats && !o->output && !o->dir) why = "-f needs -o FILE or --output-dir DIR";
    if (!why && o->push_given && (o->realtime || o->format))
        why = "--push paces a file read as fast as it decodes: not with --realtime or raw --format";
    if (!why && o->quiet && !o->output && !o->dir) why = "--quiet leaves nothing on stdout: it needs -o FILE or --output-dir DIR";
    if (!why && strstr(*input, "://")) why = "INPUT is a URL: this build reads files and standard input; pipe it in:\n"
                                             "  ffmpeg -loglevel quiet -i URL -f s16le -ac 1 -ar 16000 - | "
                                             "sotto stream --format s16le -";
    if (!why && (!strncmp(*input, "alsa:", 5) || !strncmp(*input, "pulse:", 6)))
        why = "capture devices need libavdevice, which this build lacks (install libavdevice-dev and rebuild);\n"
              "  or pipe one in: arecord -q -f S16_LE -c 1 -r 16000 | sotto stream --format s16le -";
    if (!o->trim_given && o->sp.trim_s >= o->sp.max_buffer_s) o->sp.trim_s = o->sp.max_buffer_s / 2;
    if (!why && o->sp.trim_s >= o->sp.max_buffer_s) why = "--trim must be below --max-buffer";
    if (!why && o->sp.hold_s >= o->sp.max_buffer_s) why = "--hold must be below --max-buffer";
    if (why) {
        fprintf(stderr, "sotto stream: %s\n", why);
        return EXIT_INPUT;
    }
    o->sp.language = o->lang;
    if (sotto_stream_params_check(&o->sp) != SOTTO_OK) {
        fprintf(stderr, "sotto %s\n", sotto_last_error());
        return EXIT_INPUT;
    }
    return 0;
}

/* Feeds the input to the session until it ends or Ctrl-C; the exit status. */
static int feed(stream_input *in, sotto_stream *s, live *l)
{
    char msg[1024];
    /* in real time (paced, or raw PCM as it comes) all the audio there is goes in at once,
     * so a slow step never leaves a backlog; a file read as fast as it decodes comes in
     * tenths of a second (--push), as if spoken (the same steps on any machine) */
    int64_t max = l->o->realtime || l->o->format ? (int64_t)SOTTO_SAMPLE_RATE * 3600
                                                 : (int64_t)llround(l->o->push_s * SOTTO_SAMPLE_RATE);
    for (;;) {
        const float *x;
        int64_t n;
        if (stream_input_read(in, &x, &n, max, &interrupted, msg, sizeof msg) != 0) {
            fprintf(stderr, "sotto stream: %s\n", msg);
            return EXIT_INPUT;
        }
        if (interrupted) return 128 + interrupted;
        sotto_status st = n ? sotto_stream_push(s, x, n) : sotto_stream_finish(s);
        if (l->failed) {
            fprintf(stderr, "sotto stream: cannot write the output: %s\n", strerror(errno ? errno : EIO));
            return EXIT_EXEC;
        }
        if (st != SOTTO_OK) {
            fprintf(stderr, "sotto stream: %s\n", sotto_stream_error(s));
            return EXIT_EXEC;
        }
        if (!n) return interrupted ? 128 + interrupted : EXIT_OK;
        if (interrupted) return 128 + interrupted;
    }
}

static int run(const opts *o, const char *input, sotto_context *ctx, bool multilingual)
{
    char msg[1024];
    stream_in_opts io = {.path = input, .format = o->format, .rate = o->rate, .realtime = o->realtime};
    stream_input *in = stream_input_open(&io, msg, sizeof msg);
    if (!in) {
        fprintf(stderr, "sotto stream: %s\n", msg);
        return EXIT_INPUT;
    }
    live l = {.o = o, .tty = isatty(STDOUT_FILENO) && !o->jsonl, .t0_ms = cli_now_ms(), .say_lang = multilingual};
    sotto_stream_params sp = o->sp;
    sp.on_event = on_event, sp.user_data = &l;
    sotto_stream *s = NULL;
    int rc = EXIT_EXEC;
    if (sotto_stream_init(ctx, &sp, &s) != SOTTO_OK) {
        fprintf(stderr, "sotto stream: %s\n", sotto_last_error());
        rc = EXIT_INPUT;
    } else {
        struct sigaction sa = {.sa_handler = on_sigint};
        sigaction(SIGINT, &sa, NULL); /* no SA_RESTART: a wait for input wakes up */
        sigaction(SIGTERM, &sa, NULL); /* as Ctrl-C: systemd, docker stop, timeout keep the transcript */
        rc = feed(in, s, &l);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (l.shown) fputs("\r\033[K", stdout), fflush(stdout);
        bool stopped = rc == 128 + SIGINT || rc == 128 + SIGTERM;
        if (stopped && o->jsonl && !o->quiet) { /* the last event of every stream: none pending */
            double now = sotto_stream_time(s);
            sotto_stream_event e = {.type = SOTTO_STREAM_TENTATIVE, .start = now, .end = now, .text = "",
                                    .audio_time = now};
            json_event(&e, (cli_now_ms() - l.t0_ms) / 1000);
            fflush(stdout);
        }
        if (stopped)
            fprintf(stderr, "sotto stream: %s after %.1f s: committed:%s\n",
                    rc == 128 + SIGTERM ? "terminated (SIGTERM)" : "interrupted", sotto_stream_time(s),
                    sotto_stream_text(s));
        if ((rc == EXIT_OK || stopped) && (o->output || o->dir) &&
            !write_outputs(o, input, &l.t, sotto_stream_text(s), sotto_stream_time(s),
                           l.lang[0] ? l.lang : o->lang && sotto_language_code(o->lang) ? sotto_language_code(o->lang)
                                                                                     : "en"))
            rc = EXIT_EXEC;
    }
    sotto_stream_free(s);
    transcript_free(&l.t);
    stream_input_close(in);
    return rc;
}

int cmd_stream(int argc, char **argv)
{
    opts o = {0};
    const char *input = NULL;
    int rc = parse(argc, argv, &o, &input);
    if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
    char path[4096], vad_path[4096];
    sotto_model *model = NULL;
    sotto_vad *vad = NULL;
    sotto_context *ctx = NULL;
    rc = EXIT_INPUT;
    if (!(o.c.device = cli_device("stream", o.c.device)) || !cli_model_path(o.c.model, path, sizeof path)) goto done;
    rc = EXIT_EXEC; /* an output that cannot be written: known now, not after the whole stream */
    if (!cli_output_writable("stream", o.dir, o.output)) goto done;
    if (!(model = cli_load_model(path))) goto done;
    rc = EXIT_INPUT;
    if (!cli_language_fits("stream", model, &o.lang, o.sp.translate)) goto done;
    o.sp.language = o.lang;
    rc = EXIT_EXEC;
    if (!o.no_vad && cli_vad_model_path(o.c.vad_model, vad_path, sizeof vad_path, o.c.vad_model != NULL)) {
        if (sotto_vad_load(vad_path, &vad) != SOTTO_OK) {
            fprintf(stderr, "sotto stream: cannot load VAD model: %s\n", sotto_last_error());
            goto done;
        }
    } else if (!o.no_vad) {
        if (o.c.vad_model) goto done;
        fprintf(stderr, "sotto stream: no Silero VAD model found: every step decodes (--vad-model PATH)\n");
    }
    o.sp.vad = vad;
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = cli_threads(o.c.threads);
    cp.max_sequences = o.sp.beam_size;
    cp.device = o.c.device;
    if (!(ctx = cli_context("stream", model, &cp))) goto done;
    sotto_model_info mi;
    sotto_model_get_info(model, &mi);
    rc = run(&o, input, ctx, mi.multilingual);
done:
    sotto_context_free(ctx);
    sotto_vad_free(vad);
    sotto_model_free(model);
    return rc;
}
