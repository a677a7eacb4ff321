/* cmd_transcribe.c — `sotto transcribe`: audio files in, transcripts out, with
 * openai-whisper's long-form decoding and its command line's defaults (beam 5, best of 5,
 * temperature fallback). Segments go to stdout as each window is decoded; files under
 * --output-dir are written whole, through a temporary name; Ctrl-C stops at the next
 * check (a chunk of audio read, a window begun, 16 decoder steps) and writes no output
 * file for the input in progress. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "channels.h"
#include "cli.h"
#include "cli_opt.h"
#include "output.h"

#define OFF(field) offsetof(opts, field)
#define TP(field) offsetof(opts, tp.field)

typedef struct opts {
    cli_common c;
    const char *lang, *output, *dir;
    int jobs;
    unsigned formats;          /* bits over out_writers */
    int n_formats;
    int quiet, temps_given, overwrite, batch_timestamps, batch_continue;
    int vad_given;             /* a --vad-* option was given */
    int max_speech_given;      /* --vad-max-speech-s was given */
    sotto_vad_params batch_vad; /* --batch-size's cut when one was */
    double t0, t_inc;
    sotto_transcribe_params tp;
    out_lines lines;           /* --max-line-len, --split-on-word */
    cli_times clips;           /* --clip-timestamps */
    cli_ids suppress;          /* --suppress-tokens */
    int channel;               /* --channel: 0 the mix, N, or CHANNEL_EACH */
    const char **files;
    int n_files;
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

static const char *format_help(void)
{
    static char text[400];
    snprintf(text, sizeof text, "%s (json: openai's verbose_json) or all;\n"
                                "repeatable (default txt); more than one needs --output-dir", out_names());
    return text;
}

static const cli_opt options[] = {
    {.kind = OPT_INCLUDE, .sub = cli_opt_model, .offset = OFF(c)},
    {.kind = OPT_INCLUDE, .sub = cli_opt_threads, .offset = OFF(c)},
    {.kind = OPT_INCLUDE, .sub = cli_opt_device, .offset = OFF(c)},
    {"--language", 'l', OPT_STR, OFF(lang), 0, 0, "LANG", "a language",
     .help = "spoken language: a code (en, de, ...), openai's name (English, german,\n"
             "...) or auto (default: detect from the first 30 s); an English-only model\n"
             "transcribes English whatever LANG says, with a warning"},
    {.kind = OPT_INCLUDE, .sub = cli_opt_task, .offset = TP(translate)},
    {"--format", 'f', OPT_CALL, OFF(formats), 0, 0, "F", .call = add_format, .help_fn = format_help},
    {"--output-dir", 0, OPT_STR, OFF(dir), 0, 0, "DIR", "a directory", .help = "write DIR/NAME.EXT for each input and format"},
    {"--output", 'o', OPT_STR, OFF(output), 0, 0, "FILE", "a path", .help = "write the one format of the one input to FILE (through a\n"
                                                                          "temporary name; a device or FIFO written into; -: stdout);\n"
                                                                          "without -f, the format its extension names (talk.srt)"},
    {.kind = OPT_INCLUDE, .sub = cli_opts_search, .offset = OFF(tp)},
    {"--patience", 0, OPT_FLOAT, TP(patience), 0, 100, "P", "a number in (0, 100]",
     .help = "beam search patience, (0, 100] (default 1.0)", .flags = CLI_LO_OPEN},
    {"--length-penalty", 0, OPT_FLOAT, TP(length_penalty), 0, 1, "A", "a number in 0..1",
     .help = "rank by logprob / ((5 + length) / 6)^A (default: / length)", .flags = CLI_ON, .on = TP(use_length_penalty)},
    {"--temperature", 0, OPT_DOUBLE, OFF(t0), 0, 1, "T", "a number in 0..1", .help = "the first temperature (default 0)",
     CLI_ON, OFF(temps_given)},
    {"--temperature-increment-on-fallback", 0, OPT_DOUBLE, OFF(t_inc), 0, HUGE_VAL, "D", "a number >= 0",
     .help = "the step to the next ones, up to 1.0 (default 0.2)", .flags = CLI_ON, .on = OFF(temps_given)},
    {.kind = OPT_INCLUDE, .sub = cli_opt_no_fallback, .offset = OFF(c)},
    {"--compression-ratio-threshold", 0, OPT_FLOAT, TP(compression_ratio_threshold), -HUGE_VAL, HUGE_VAL, "X",
     "a number or none", .help = "fall back above it (default 2.4; none: never)", .flags = CLI_NONE, .on = TP(check_compression)},
    {"--logprob-threshold", 0, OPT_FLOAT, TP(logprob_threshold), -HUGE_VAL, HUGE_VAL, "X", "a number or none",
     .help = "fall back below it (default -1.0; none: never)", .flags = CLI_NONE, .on = TP(check_logprob)},
    {"--no-speech-threshold", 0, OPT_FLOAT, TP(no_speech_threshold), -HUGE_VAL, HUGE_VAL, "X", "a number or none",
     .help = "silence above it (default 0.6; none: never)", .flags = CLI_NONE, .on = TP(check_no_speech)},
    {"--prompt", 0, OPT_STR, TP(initial_prompt), 0, 0, "TEXT", "a text",
     .help = "text before the first window (names, spelling, style)"},
    {"--carry-initial-prompt", 0, OPT_TRUE, TP(carry_initial_prompt),
     .help = "begin every window's prompt with --prompt, the previous text\n"
             "after it (openai's --carry_initial_prompt)"},
    {"--hotwords", 0, OPT_STR, TP(hotwords), 0, 0, "TEXT", "a text",
     .help = "hint words in every window's prompt, before the previous text\n"
             "(faster-whisper's hotwords; not in the window --prefix starts)"},
    {"--prefix", 0, OPT_STR, TP(prefix), 0, 0, "TEXT", "a text",
     .help = "the text the transcript starts with, forced (faster-whisper's)"},
    {"--repetition-penalty", 0, OPT_FLOAT, TP(repetition_penalty), 0, HUGE_VAL, "P", "a number > 0",
     .help = "divide the logit of every token the window has already sampled\n"
             "by P (multiply a negative one), CTranslate2's; > 1 discourages\n"
             "repeats (faster-whisper's repetition_penalty; default 1: off)", .flags = CLI_LO_OPEN},
    {"--no-repeat-ngram-size", 0, OPT_INT, TP(no_repeat_ngram_size), 0, 448, "N", "a decimal integer in 0..448",
     .help = "never sample the same N tokens twice in a window (faster-whisper's\n"
             "no_repeat_ngram_size; default 0: off)"},
    {"--suppress-tokens", 0, OPT_CALL, OFF(suppress), 0, 0, "LIST", .call = cli_parse_suppress,
     .help = "token ids never sampled, separated by commas; -1 (the default)\n"
             "stands for the model's non-speech symbols, \"\" for none; the\n"
             "special tokens always (openai's --suppress_tokens)"},
    {"--multilingual", 0, OPT_TRUE, TP(multilingual),
     .help = "detect the language of every window, for a recording that\n"
             "switches language (faster-whisper's; multilingual models)"},
    {"--clip-timestamps", 0, OPT_CALL, OFF(clips), 0, 0, "LIST", .call = cli_parse_times,
     .help = "transcribe only these clips: start,end,start,end,... in seconds\n"
             "(openai's --clip_timestamps; an odd count: the last to the end)"},
    {"--channel", 0, OPT_CALL, OFF(channel), 0, 0, "C", .call = channel_parse,
     .help = "left, right or N (1..64): that channel alone; each: every channel\n"
             "transcribed alone, the segments merged by time and labelled\n"
             "[left] / [right] (a speaker per side: whisper.cpp's -di); mix\n"
             "(default): the channels down-mixed, as openai-whisper hears them"},
    {"--no-condition", 0, OPT_FALSE, TP(condition_on_previous_text),
     .help = "do not feed each window's text to the next (when the text\n"
             "loops or skips sentences, as it can on repetitive speech)"},
    {"--no-timestamps", 0, OPT_FALSE, TP(timestamps), .help = "no timestamp tokens: one segment per 30 s window"},
    {"--max-initial-timestamp", 0, OPT_FLOAT, TP(max_initial_timestamp), 0, HUGE_VAL, "S", "seconds >= 0",
     .help = "the first timestamp at most S seconds (default 1.0)"},
    {"--seed", 0, OPT_U64, TP(seed), 0, 2147483647.0, "N", "a decimal integer in 0..2147483647",
     .help = "of the sampling at temperature > 0 (default 0)"},
    {"--word-timestamps", 0, OPT_TRUE, TP(word_timestamps),
     .help = "a time for every word (openai-whisper's word_timestamps: the\n"
             "alignment heads' cross-attention aligned by DTW); segment\n"
             "times and seeking are refined by them; JSON gets \"words\""},
    {"--prepend-punctuations", 0, OPT_STR, TP(prepend_punctuations), 0, 0, "S", "characters",
     .help = "with --word-timestamps: the characters merged into the next\n"
             "word (openai's: \"'“¿([{-)"},
    {"--append-punctuations", 0, OPT_STR, TP(append_punctuations), 0, 0, "S", "characters",
     .help = "with --word-timestamps: the characters merged into the previous\n"
             "word (openai's: \"'.。,，!！?？:：”)]}、)"},
    {"--max-line-len", 0, OPT_INT, OFF(lines.max_len), 1, 100000, "N", "a number of characters in 1..100000",
     .help = "with --word-timestamps: srt and vtt cues of at most N characters,\n"
             "cut between words, each timed by its words (whisper.cpp's -ml)"},
    {"--split-on-word", 0, OPT_TRUE, OFF(lines.split_on_word),
     .help = "cut only before a word that starts with a space (-sow): never\n"
             "inside the words of languages written without spaces"},
    {"--max-line-width", 0, OPT_INT, OFF(lines.max_line_width), 1, 100000, "N", "a number of characters in 1..100000",
     .help = "with --word-timestamps: srt and vtt lines of at most N characters,\n"
             "broken between words, a cue a segment (openai-whisper's option)"},
    {"--max-line-count", 0, OPT_INT, OFF(lines.max_line_count), 1, 100000, "N", "a number of lines in 1..100000",
     .help = "with --max-line-width: cues of at most N lines, which run on across\n"
             "segments and break at a pause of more than 3 s (openai's)"},
    {"--max-words-per-line", 0, OPT_INT, OFF(lines.max_words_per_line), 1, 100000, "N", "a number of words in 1..100000",
     .help = "with --word-timestamps: a cue for every N words of a segment\n"
             "(openai's; no effect with --max-line-width)"},
    {"--highlight-words", 0, OPT_TRUE, OFF(lines.highlight_words),
     .help = "with --word-timestamps: a cue for each word as it is spoken, the\n"
             "word underlined (<u>word</u>) in the cue's text (openai's)"},
    {"--hallucination-silence-threshold", 0, OPT_FLOAT, TP(hallucination_silence_threshold), 0, HUGE_VAL, "S",
     "seconds >= 0",
     .help = "with --word-timestamps: skip silences longer than S seconds\n"
             "around segments of anomalous words, and those segments (openai's)",
     .flags = CLI_ON, .on = TP(check_hallucination_silence)},
    {"--vad", 0, OPT_TRUE, TP(vad_filter),
     .help = "transcribe only the speech Silero VAD finds (faster-whisper's\n"
             "vad_filter; times stay on the file's timeline)"},
    {"--vad-threshold", 0, OPT_FLOAT, TP(vad_threshold), 0, 1, "X", "a probability in (0, 1)",
     .help = "with --vad or --batch-size: speech above it (faster-whisper's\n"
             "default: 0.5)",
     .flags = CLI_LO_OPEN | CLI_HI_OPEN | CLI_ON, .on = OFF(vad_given)},
    {"--vad-neg-threshold", 0, OPT_FLOAT, TP(vad_neg_threshold), 0, 1, "X", "a probability in (0, 1)",
     .help = "with --vad or --batch-size: speech ends below it (default: the\n"
             "threshold - 0.15, at least 0.01)",
     .flags = CLI_LO_OPEN | CLI_HI_OPEN | CLI_ON, .on = OFF(vad_given)},
    {"--vad-max-speech-s", 0, OPT_FLOAT, TP(vad_max_speech_s), 0, HUGE_VAL, "S", "seconds above 0",
     .help = "with --vad: longer speech is split at its last silence over\n"
             "98 ms (default: never; --batch-size's chunks are at most 30 s)",
     .flags = CLI_LO_OPEN | CLI_ON, .on = OFF(max_speech_given)},
    {"--vad-min-speech-ms", 0, OPT_INT, TP(vad_min_speech_ms), 0, 3600000, "N", "milliseconds in 0..3600000",
     .help = "with --vad or --batch-size: shorter speech is dropped (default 0)", .flags = CLI_ON,
     .on = OFF(vad_given)},
    {"--vad-min-silence-ms", 0, OPT_INT, TP(vad_min_silence_ms), 0, 3600000, "N", "milliseconds in 0..3600000",
     .help = "with --vad or --batch-size: the silence that ends speech\n"
             "(default 2000; --batch-size alone cuts at 160)",
     .flags = CLI_ON, .on = OFF(vad_given)},
    {"--vad-speech-pad-ms", 0, OPT_INT, TP(vad_speech_pad_ms), 0, 3600000, "N", "milliseconds in 0..3600000",
     .help = "with --vad or --batch-size: padding on each side of speech\n(default 400)", .flags = CLI_ON,
     .on = OFF(vad_given)},
    {.kind = OPT_INCLUDE, .sub = cli_opt_vad_model, .offset = OFF(c),
     .help = "the Silero VAD (default: $SOTTO_VAD_MODEL, else the one setup\n"
             "installs); with it, a window the model calls silence where the\n"
             "VAD hears no speech is skipped (the reference writes \"you\" there)"},
    {.kind = OPT_INCLUDE, .sub = cli_opt_no_silence_check, .offset = OFF(tp)},
    {"--quiet", 0, OPT_TRUE, OFF(quiet), .help = "no segments or progress on the terminal"},
    {.kind = OPT_TEXT,
     .help = "\n"
             "Several inputs to stdout: each one's output after a line \"==> PATH <==\".\n"
             "Many files: AUDIO may be a directory (its audio and video files, by extension, under\n"
             "it; outputs in the same subdirectories of DIR) or @LIST (a file of paths, one a line).\n"
             "Then, or with -j, every output goes to --output-dir; a file whose outputs all exist is\n"
             "skipped (they are written whole), so a stopped run goes on where it was; a summary\n"
             "line ends the run.\n"},
    {.kind = OPT_TEXT,
     .help = "\n"
             "Batched (faster-whisper's BatchedInferencePipeline): the speech cut by faster-whisper's\n"
             "Silero VAD into chunks of at most 30 s, each decoded on its own (no previous text, the\n"
             "first temperature only), N chunks encoded and decoded together; --vad-* cut as the\n"
             "pipeline's vad_parameters do (the others at faster-whisper's VadOptions defaults then);\n"
             "--prompt and --hotwords begin every chunk's prompt (the pipeline's initial_prompt,\n"
             "encoded as written: no space is added before it); with --clip-timestamps each\n"
             "start,end pair is a chunk instead (the pipeline's clip_timestamps: of one longer\n"
             "than 30 s only the first 30 s, with a warning), with --multilingual each chunk's\n"
             "language is its own.\n"},
    {"--batch-size", 0, OPT_INT, TP(batch_size), 1, SOTTO_MAX_BATCH, "N", "a chunk count in 1..64",
     .help = "decode N chunks at once (more throughput; memory grows with N:\n"
             "a batch too large for it is refused, naming what fits). The VAD:\n"
             "--vad-model, else $SOTTO_BATCH_VAD_MODEL, else silero-vad-fw.gguf\n"
             "where setup installs the models"},
    {"--timestamps", 0, OPT_TRUE, OFF(batch_timestamps),
     .help = "with --batch-size: timestamp tokens, segments cut at them\n"
             "(default without: one segment per chunk, as faster-whisper)"},
    {"--batch-continue", 0, OPT_TRUE, OFF(batch_continue),
     .help = "with --batch-size --timestamps: a chunk whose decoding stops a\n"
             "second or more before its speech ends is decoded again from its\n"
             "last timestamp (no --word-timestamps yet)"},
    {"--jobs", 'j', OPT_INT, OFF(jobs), 1, 256, "N", "a file count in 1..256",
     .help = "N files at once, each on a context of its own, one model\n"
             "(default 1; -t then defaults to cores / N)"},
    {"--overwrite", 0, OPT_TRUE, OFF(overwrite), .help = "transcribe files whose outputs exist, too"},
    {0},
};

static const cli_cmd command = {
    .name = "transcribe",
    .usage = "usage: sotto transcribe [-m MODEL] [options] AUDIO...\n"
             "\n"
             "Transcribes each AUDIO file as openai-whisper's transcribe() does: 30 s windows\n"
             "advanced by the timestamps, beam search, temperature fallback, each window\n"
             "conditioned on the text before it. Segments are printed as they are decoded; with\n"
             "--output-dir each format of -f (txt without it; all: every one) is written to\n"
             "DIR/NAME.EXT.\n"
             "AUDIO is any audio or video file FFmpeg reads (WAV, FLAC, MP3, Ogg/Opus, M4A/AAC,\n"
             "the first audio track of MP4/MKV/WebM, ...) or - for standard input, decoded as\n"
             "openai-whisper's ffmpeg command does (mono, 16 kHz by libswresample) and streamed:\n"
             "only its log-mel is kept. A build without FFmpeg reads 16 kHz mono WAV only (`sotto\n"
             "--version` says which).\n"
             "\n",
    .opts = options,
    .min_args = 1,
    .many_args = true,
    .args = "an AUDIO file",
    .footer = "\n"
              "Progress: on a terminal a line rewritten after each window (audio done, share, speed,\n"
              "time left); where stderr is a file or pipe (nohup, a service's log) the same as a line\n"
              "every $SOTTO_PROGRESS_S seconds (default 60); --quiet: none.\n"
              "\n"
              "exit: 0 ok, 1 invalid arguments or an input that could not be read (the others are\n"
              "still transcribed), 2 execution error (an output or stdout that cannot be written:\n"
              "the message says why), 130 interrupted (Ctrl-C: the work stops at the end of the\n"
              "encoder pass or 16 decoder steps in progress, the files done kept; a second Ctrl-C\n"
              "ends it at once), 143 terminated (SIGTERM: the same stop, the same summary)\n"
              "\n"
              "example:\n"
              "  sotto transcribe talk.wav\n"
              "  sotto transcribe -f srt -f vtt --output-dir subs/ talk.wav\n",
};

static volatile sig_atomic_t interrupted; /* SIGINT or SIGTERM once one came, else 0 */
static int write_errno;                   /* stdout failed (ENOSPC, EPIPE, ...): nothing more can go there */
static int full_errno;                    /* an output file met ENOSPC, EDQUOT or EROFS: the next ones would too */
/* The segments of the input in progress decoded so far (-1: none in progress; -2: one is,
 * its segments not counted: --channel each), and whether they went to stdout: what the
 * message after Ctrl-C says was done. */
static int segments_decoded = -1;
static bool segments_shown;
static bool whole_at_end; /* stdout's format is written whole at the input's end (json) */

static void on_sigint(int sig)
{
    interrupted = sig;
    signal(sig, SIG_DFL); /* a second one ends the process at once */
}

/* Whether stdout took everything so far; else its errno is kept in write_errno. */
static bool stdout_ok(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout)) return true;
    if (!write_errno) write_errno = errno ? errno : EIO;
    return false;
}

static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sotto transcribe: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_INPUT;
}

/* The base name of PATH without its extension, for DIR/NAME.EXT. */
static void base_name(const char *path, char *out, size_t n)
{
    if (strcmp(path, "-") == 0) { /* standard input: DIR/stdin.txt, not DIR/-.txt */
        snprintf(out, n, "stdin");
        return;
    }
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(out, n, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
}

/* Two inputs that would write one DIR/NAME.EXT (d1/a.wav and d2/a.wav): refused, as batch
 * mode refuses them, before anything is decoded; the same file given twice is dropped the
 * second time, with batch mode's note. */
static bool name_clash(opts *o)
{
    char a[1024], b[1024];
    for (int i = 0; i < o->n_files; i++)
        for (int j = i + 1; j < o->n_files; j++) {
            base_name(o->files[i], a, sizeof a);
            base_name(o->files[j], b, sizeof b);
            if (strcmp(a, b) == 0 && strcmp(o->files[i], "-") != 0 && cli_same_file(o->files[i], o->files[j])) {
                fprintf(stderr, "sotto transcribe: note: %s is %s again: transcribed once\n", o->files[j],
                        o->files[i]);
                memmove(&o->files[j], &o->files[j + 1], (size_t)(o->n_files - j - 1) * sizeof *o->files);
                o->n_files--, j--;
                continue;
            }
            if (strcmp(a, b) == 0) {
                size_t n = strlen(o->dir);
                while (n > 1 && o->dir[n - 1] == '/') n--;
                fprintf(stderr, "sotto transcribe: %s and %s would both write %.*s/%s.*: rename one or transcribe "
                                "them into different --output-dir\n", o->files[i], o->files[j], (int)n, o->dir, a);
                return true;
            }
        }
    return false;
}

/* The options the command line gives and how they go together; ARGV's positional
 * arguments are the inputs. */
static int parse(int argc, char **argv, opts *o)
{
    o->tp = sotto_transcribe_params_default();
    o->t_inc = 0.2;
    int rc = cli_parse(&command, argc, argv, o, &o->n_files);
    if (rc) return rc;
    o->files = (const char **)argv + 1;
    bool foreign_ext = false; /* -o's extension names no format (talk.wav) */
    if (o->output) { /* -o talk.srt: the format its extension names */
        const char *dot = strrchr(o->output, '.'), *slash = strrchr(o->output, '/');
        char ext[8];
        size_t n = dot && (!slash || dot > slash) ? strlen(dot + 1) : 0;
        if (n > 0 && n < sizeof ext) {
            for (size_t i = 0; i <= n; i++) ext[i] = (char)tolower((unsigned char)dot[1 + i]);
            unsigned named = strcmp(ext, "all") != 0 ? out_format(ext) : 0;
            if (o->formats && named && named != o->formats && __builtin_popcount(o->formats) == 1)
                fprintf(stderr, "sotto transcribe: note: -o %s gets %s, as -f says (not %s)\n", o->output,
                        out_writers[__builtin_ctz(o->formats)].name, ext);
            foreign_ext = !named;
            if (!o->formats && !(o->formats = named)) /* talk.docx: written as txt, and said */
                fprintf(stderr, "sotto transcribe: note: -o %s: .%s names no format of -f's, so it gets txt "
                        "(-f chooses)\n", o->output, ext);
        }
    }
    if (!o->formats) o->formats = out_format("txt");
    o->n_formats = __builtin_popcount(o->formats);
    o->tp.without_logprobs = !(o->formats & out_format("json")); /* the one output that has avg_logprob */
    o->tp.language = o->lang;
    o->tp.clip_timestamps = o->clips.n ? o->clips.t : NULL;
    o->tp.n_clip_timestamps = o->clips.n;
    for (int i = 0; !o->tp.batch_size && i + 1 < o->clips.n; i += 2) /* openai skips them: so do we, saying so */
        if (!(o->clips.t[i] < o->clips.t[i + 1]))
            fprintf(stderr, "sotto transcribe: note: --clip-timestamps: the clip %g,%g ends where it starts or "
                    "before: nothing of it is transcribed\n", o->clips.t[i], o->clips.t[i + 1]);
    if (o->suppress.given) o->tp.suppress_tokens = o->suppress.v, o->tp.n_suppress_tokens = o->suppress.n;
    if (o->output && strcmp(o->output, "-") == 0) o->output = NULL; /* -o -: stdout */
    /* the library's default temperatures (openai transcribe()'s tuple), or as openai's
     * command line makes them (t0, t0 + increment, ... up to 1.0) */
    if ((o->temps_given || o->c.no_fallback) &&
        sotto_transcribe_params_temperatures(&o->tp, o->t0, o->c.no_fallback ? 0 : o->t_inc)) {
        fprintf(stderr, "sotto transcribe: %s\n", sotto_last_error());
        return EXIT_INPUT;
    }
    if (sotto_transcribe_params_check(&o->tp)) { /* once, before a model is loaded */
        fprintf(stderr, "sotto transcribe: %s\n", sotto_last_error());
        return EXIT_INPUT;
    }
    if (o->batch_timestamps && !o->tp.batch_size) return refuse("--timestamps goes with --batch-size");
    if (o->tp.batch_size) o->tp.timestamps = o->batch_timestamps;
    if (o->batch_continue && (!o->tp.batch_size || !o->batch_timestamps || o->tp.word_timestamps))
        return refuse("--batch-continue goes with --batch-size and --timestamps, without --word-timestamps");
    o->tp.batch_continue = o->batch_continue;
    if (o->tp.batch_size && (o->tp.vad_filter || o->tp.prefix || o->tp.carry_initial_prompt))
        return refuse("--batch-size cuts by VAD itself (--vad-* set how) and gives every chunk one prompt: "
                      "no --vad, --prefix or --carry-initial-prompt");
    if (o->vad_given && !o->tp.vad_filter && !o->tp.batch_size)
        return refuse("--vad-threshold, --vad-neg-threshold, --vad-min-speech-ms, --vad-min-silence-ms and "
                      "--vad-speech-pad-ms go with --vad or --batch-size");
    if (o->max_speech_given && !o->tp.vad_filter)
        return refuse("--vad-max-speech-s goes with --vad (--batch-size's chunks are at most 30 s of speech)");
    if (o->tp.batch_size && o->vad_given) { /* the pipeline's vad_parameters: VadOptions' defaults, these set */
        o->batch_vad = sotto_vad_params_batched(30);
        o->batch_vad.threshold = o->tp.vad_threshold;
        o->batch_vad.use_neg_threshold = !isnan(o->tp.vad_neg_threshold);
        if (o->batch_vad.use_neg_threshold) o->batch_vad.neg_threshold = o->tp.vad_neg_threshold;
        o->batch_vad.min_speech_duration_ms = o->tp.vad_min_speech_ms;
        o->batch_vad.min_silence_duration_ms = o->tp.vad_min_silence_ms;
        o->batch_vad.speech_pad_ms = o->tp.vad_speech_pad_ms;
        o->tp.batch_vad = &o->batch_vad;
    }
    if (o->tp.translate && o->tp.word_timestamps) /* openai-whisper's warning */
        fprintf(stderr, "sotto transcribe: warning: word-level timestamps on translations may not be reliable\n");
    if (o->lines.max_len && !o->tp.word_timestamps)
        return refuse("--max-line-len needs --word-timestamps (cues are cut at word times)");
    if (o->lines.split_on_word && !o->lines.max_len) return refuse("--split-on-word needs --max-line-len");
    const out_lines *ln = &o->lines;
    const char *openai = ln->max_line_width ? "--max-line-width" : ln->max_line_count ? "--max-line-count"
                         : ln->max_words_per_line ? "--max-words-per-line" : ln->highlight_words ? "--highlight-words"
                                                                                   : NULL;
    if (openai && !o->tp.word_timestamps) /* openai-whisper's parser error */
        return refuse("%s needs --word-timestamps (cues are laid out from word times)", openai);
    if (openai && ln->max_len)
        return refuse("--max-line-len (whisper.cpp's) or %s (openai-whisper's): one way to cut cues", openai);
    if (ln->max_line_count && !ln->max_line_width) /* openai-whisper's warnings */
        fprintf(stderr, "sotto transcribe: warning: --max-line-count has no effect without --max-line-width\n");
    if (ln->max_words_per_line && ln->max_line_width)
        fprintf(stderr, "sotto transcribe: warning: --max-words-per-line has no effect with --max-line-width\n");
    if (o->tp.check_hallucination_silence && !o->tp.word_timestamps)
        return refuse("--hallucination-silence-threshold needs --word-timestamps");
    if (o->n_formats > 1 && !o->dir) {
        fprintf(stderr, "sotto transcribe: %d formats need --output-dir (one format goes to stdout or -o)\n",
                o->n_formats);
        return EXIT_INPUT;
    }
    if (batch_wanted(o->files, o->n_files, o->jobs) && (!o->dir || o->output))
        return refuse("directories, @lists and -j write to --output-dir DIR (not stdout or -o)");
    if (o->output && (o->dir || o->n_files > 1)) return refuse("-o names one file: one input and no --output-dir");
    struct stat in, out;
    if (o->output && o->n_files == 1 && stat(o->output, &out) == 0 && stat(o->files[0], &in) == 0 &&
        S_ISREG(out.st_mode) && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
        fprintf(stderr, "sotto transcribe: -o %s is the input: the transcript would replace the audio\n", o->output);
        return EXIT_INPUT;
    }
    if (o->output && foreign_ext && stat(o->output, &out) == 0 && S_ISREG(out.st_mode) && out.st_size > 0) {
        /* talk.wav beside talk.m4a: a slip that would replace a recording */
        fprintf(stderr, "sotto transcribe: -o %s exists and its extension is no transcript's (%s): the transcript "
                "would replace that file; name a transcript (talk.txt, talk.srt) or remove it first\n", o->output,
                out_names());
        return EXIT_INPUT;
    }
    int stdin_given = 0;
    for (int i = 0; i < o->n_files; i++) stdin_given += strcmp(o->files[i], "-") == 0;
    if (stdin_given > 1) return refuse("- (standard input) can be read once: give it once");
    if (stdin_given && o->channel == CHANNEL_EACH) return refuse("--channel each reads its input once per channel: not -");
    return o->dir && !batch_wanted(o->files, o->n_files, o->jobs) && name_clash(o) ? EXIT_INPUT : EXIT_OK;
}

typedef struct live {
    const opts *o;
    const char *path;
    const char *header;        /* "==> PATH <==" still to print before its first output, or NULL */
    bool begun;                /* the writer's begin (and the header) went out */
    bool progress;             /* a progress line is on the terminal */
    const out_writer *w;       /* what stdout shows as segments arrive, or NULL */
    out_state st;
    bool tty;
    int n_progress;            /* progress callbacks so far */
    double t0_ms;
    double logged_ms;          /* when the last progress line went to a stderr that is no
                                  terminal (t0_ms before the first) */
} live;

/* What goes to stdout before an input's first output: its header (several inputs) and
 * the writer's begin; only once it has something to show, so an input that fails shows
 * nothing. */
static void begin_stdout(live *l)
{
    if (l->begun) return;
    l->begun = true;
    if (l->header) printf("==> %s <==\n", l->header);
    if (l->w) l->w->begin(stdout, &l->st);
}

static int on_segment(const sotto_segment *s, void *user)
{
    live *l = user;
    if (l->progress) fputs("\r\033[K", stderr), l->progress = false; /* the segment starts a clean line */
    segments_decoded++;
    segments_shown = l->w ? out_writes_segments(l->w) : !l->o->quiet;
    whole_at_end = l->w && !out_writes_segments(l->w); /* json on stdout: written at the end */
    if (l->w) {
        begin_stdout(l);
        if (!l->w->segment(stdout, s, &l->st)) {
            fprintf(stderr, "sotto transcribe: out of memory writing a segment\n");
            return 1;
        }
        fflush(stdout);
    } else if (!l->o->quiet) { /* files go to --output-dir: the segments are shown as they come */
        char a[32], b[32];
        out_timestamp(a, sizeof a, s->start, false, '.');
        out_timestamp(b, sizeof b, s->end, false, '.');
        printf("[%s --> %s] %s\n", a, b, s->text);
    }
    return !stdout_ok() || interrupted;
}

/* The detected language, before the first segment (as openai's "Detected language"). */
static int on_language(const char *lang, float probability, void *user)
{
    live *l = user;
    if (!l->o->quiet) {
        fflush(stdout);
        fprintf(stderr, "sotto transcribe: %s: detected language %s (probability %.2f)\n", l->path, lang,
                probability);
    }
    return interrupted;
}

/* "26 / 313 s of audio (8 %), 8.5x real time, about 34 s left" into LINE. */
static void progress_text(const live *l, double done, double total, char *line, size_t n)
{
    double secs = (cli_now_ms() - l->t0_ms) / 1000, speed = secs > 0 ? done / secs : 0;
    int k = snprintf(line, n, "%.0f / %.0f s of %s (%.0f %%), %.1fx real time", done, total,
                     l->o->tp.vad && l->o->tp.vad_filter ? "speech (the VAD's)" : "audio",
                     total > 0 ? 100 * done / total : 100.0, speed);
    if (k > 0 && (size_t)k < n && speed > 0 && done < total && secs >= 2) {
        double left = (total - done) / speed;
        if (left >= 60) snprintf(line + k, n - (size_t)k, ", about %.0f min left", ceil(left / 60));
        else snprintf(line + k, n - (size_t)k, ", about %.0f s left", ceil(left));
    }
}

/* Interval of the progress lines where stderr is no terminal (a log, nohup): ms,
 * $SOTTO_PROGRESS_S seconds (default 60). */
static double progress_log_ms(void)
{
    static bool warned;
    const char *v = getenv("SOTTO_PROGRESS_S");
    char *end;
    double s = v && *v ? strtod(v, &end) : 60;
    if (v && *v && (*end || !(s >= 0 && s <= 86400))) {
        if (!warned) fprintf(stderr, "sotto transcribe: warning: SOTTO_PROGRESS_S=%s is no number of seconds in "
                                     "0..86400: a progress line a minute\n", v);
        warned = true;
        return 60000.0;
    }
    return 1000.0 * s;
}

static int on_progress(double done, double total, void *user)
{
    live *l = user;
    l->n_progress++;
    if (l->o->quiet) return interrupted;
    char line[160];
    if (l->tty) {
        progress_text(l, done, total, line, sizeof line);
        fprintf(stderr, "\r\033[K  %s", line);
        l->progress = done < total;
        if (done >= total) fputc('\n', stderr);
    } else if (done < total && cli_now_ms() - l->logged_ms >= progress_log_ms()) { /* a line a minute */
        progress_text(l, done, total, line, sizeof line);
        fprintf(stderr, "sotto transcribe: %s: %s\n", l->path, line);
        l->logged_ms = cli_now_ms();
    }
    return interrupted;
}

/* Polled while the audio is read, then before each window and every 16 decoder steps
 * (the progress callback answers only after a window): Ctrl-C during a long file's
 * reading, its VAD pass or a long window stops there. */
static int on_abort(double audio_s, void *user)
{
    live *l = user;
    /* before the first window: the input is being read whole (its log-mel kept, about
     * 115 MB an hour), said where stderr is no terminal as the decoding's progress is, so a
     * long or endless pipe shows how far it has got */
    if (!l->tty && !l->o->quiet && l->n_progress == 0 && cli_now_ms() - l->logged_ms >= progress_log_ms()) {
        fprintf(stderr, "sotto transcribe: %s: %.0f s of audio read\n", l->path, audio_s);
        l->logged_ms = cli_now_ms();
    }
    return interrupted;
}

/* Input read around (a truncated WAV): said on stderr, the transcription goes on. */
static void on_warning(const char *message, void *user)
{
    (void)user;
    fprintf(stderr, "sotto transcribe: warning: %s\n", message);
}

/* The one writer of a set of one format. */
static const out_writer *only(unsigned formats)
{
    return &out_writers[__builtin_ctz(formats)];
}

/* Writes every requested format of R for input PATH; false on a write error. */
static bool write_outputs(const opts *o, const char *path, const sotto_result *r)
{
    if (o->output) {
        errno = 0;
        if (out_write_file(o->output, only(o->formats), r, &o->lines)) return true;
        fprintf(stderr, "sotto transcribe: cannot write %s: %s\n", o->output, errno ? strerror(errno) : "error");
        return false;
    }
    if (!o->dir) return true;
    char name[1024], file[4096];
    base_name(path, name, sizeof name);
    for (int i = 0; i < out_n_writers; i++) {
        if (!(o->formats & 1u << i)) continue;
        size_t n = strlen(o->dir);
        while (n > 1 && o->dir[n - 1] == '/') n--;
        snprintf(file, sizeof file, "%.*s/%s.%s", (int)n, o->dir, name, out_writers[i].ext);
        errno = 0;
        if (!out_write_file(file, &out_writers[i], r, &o->lines)) {
            int e = errno;
            fprintf(stderr, "sotto transcribe: cannot write %s: %s\n", file, e ? strerror(e) : "error");
            if (e == ENOSPC || e == EDQUOT || e == EROFS) full_errno = e;
            return false;
        }
    }
    return true;
}

/* PATH's channel CHANNEL (0: the mix) transcribed. */
static sotto_status transcribe_channel(sotto_context *ctx, const char *path, int channel,
                                       const sotto_transcribe_params *tp, sotto_result **r)
{
    sotto_audio_source src = {.kind = SOTTO_SOURCE_PATH, .path = path, .channel = channel};
    return sotto_transcribe_source(ctx, &src, tp, r);
}

/* --channel each: every channel of PATH alone, merged by time (channels.c), then written
 * as one transcript. Returns the exit status for it. */
static int each_channel(const opts *o, sotto_context *ctx, const char *path, bool header)
{
    channel_run run;
    sotto_status st = channel_transcribe(ctx, path, CHANNEL_EACH, &o->tp, o->quiet, &run);
    int rc = EXIT_OK;
    if (st) {
        fprintf(stderr, "sotto transcribe: %s\n", run.error);
        rc = st == SOTTO_ERR_NOMEM ? EXIT_EXEC : EXIT_INPUT;
    } else if (interrupted) {
        rc = 128 + interrupted;
    } else if (!o->dir && !o->output) {
        out_state os = {.lines = o->lines};
        if (header) printf("==> %s <==\n", path);
        if (!out_write(stdout, only(o->formats), run.result, &os) || !stdout_ok()) rc = EXIT_EXEC;
    } else if (!write_outputs(o, path, run.result)) {
        rc = EXIT_EXEC;
    }
    channel_run_free(&run);
    return rc;
}

/* One input: its segments live on stdout (one format without a file destination),
 * then its files. Returns the exit status for it. */
static int one_file(const opts *o, sotto_context *ctx, const char *path, bool header)
{
    segments_decoded = o->channel == CHANNEL_EACH ? -2 : 0, segments_shown = false, whole_at_end = false;
    if (o->channel == CHANNEL_EACH) return each_channel(o, ctx, path, header);
    live l = {.o = o, .path = path, .header = header ? path : NULL, .w = !o->dir && !o->output ? only(o->formats) : NULL, .st = {.lines = o->lines},
              .tty = isatty(STDERR_FILENO), .t0_ms = cli_now_ms(), .logged_ms = cli_now_ms()};
    sotto_transcribe_params tp = o->tp;
    tp.on_segment = on_segment, tp.on_progress = on_progress, tp.on_language = on_language, tp.user_data = &l;
    tp.abort_callback = on_abort;
    sotto_result *r = NULL;
    /* --vad reads the whole input for its speech before the first window: said meanwhile
     * (an hour of audio takes seconds), overwritten by the first progress or segment */
    if (l.tty && !o->quiet && tp.vad && tp.vad_filter && !tp.batch_size)
        fputs("  finding the speech first (Silero VAD)", stderr), l.progress = true;
    sotto_status st = o->channel ? transcribe_channel(ctx, path, o->channel, &tp, &r)
                                 : sotto_transcribe_file(ctx, path, &tp, &r);
    if (st == SOTTO_ERR_CANCELLED && interrupted) { /* what was printed stays, no file */
        if (l.progress) fputc('\n', stderr);
        return 128 + interrupted;
    }
    if (l.progress && (st || l.n_progress == 0)) fputs("\r\033[K", stderr), l.progress = false;
    if (st) {
        fprintf(stderr, "sotto transcribe: %s\n", sotto_context_error(ctx));
        return st == SOTTO_ERR_NOMEM ? EXIT_EXEC : EXIT_INPUT;
    }
    int rc = EXIT_OK;
    if (l.w && !r->stopped) begin_stdout(&l), l.w->end(stdout, r, &l.st);
    if (!stdout_ok()) rc = EXIT_EXEC; /* reported once by the caller */
    else if (r->stopped) rc = 128 + (interrupted ? interrupted : SIGINT); /* what was printed stays, no file */
    else if (!l.w && !write_outputs(o, path, r)) rc = EXIT_EXEC;
    sotto_result_free(r);
    return rc;
}

/* The VAD: asked for with --vad or --vad-model (then it must be there), else used for
 * the silence check where one is installed. False (message printed) when it cannot be
 * had; *VAD stays NULL where none is wanted or installed. */
static bool load_vad(const opts *o, sotto_vad **vad, int *rc)
{
    char path[4096];
    if (o->tp.batch_size) { /* faster-whisper's own Silero export: its chunks */
        *vad = NULL;
        *rc = EXIT_INPUT;
        if (!cli_vad_model_path_of(o->c.vad_model, "SOTTO_BATCH_VAD_MODEL", "silero-vad-fw.gguf", path, sizeof path,
                                   true))
            return false;
        if (sotto_vad_load(path, vad) == SOTTO_OK) return true;
        fprintf(stderr, "sotto transcribe: cannot load the VAD model: %s\n", sotto_last_error());
        *rc = EXIT_EXEC;
        return false;
    }
    bool want = o->tp.vad_filter || o->c.vad_model;
    *vad = NULL;
    if ((want || o->tp.silence_check) && cli_vad_model_path(o->c.vad_model, path, sizeof path, want)) {
        if (sotto_vad_load(path, vad) == SOTTO_OK) return true;
        fprintf(stderr, "sotto transcribe: cannot load the VAD model: %s\n", sotto_last_error());
        *rc = EXIT_EXEC;
        return false;
    }
    if (want) {
        *rc = EXIT_INPUT;
        return false;
    }
    if (o->tp.silence_check && !o->quiet)
        fprintf(stderr, "sotto transcribe: note: no Silero VAD model installed (%s): silence and noise are "
                        "judged by the decoder alone, as the reference does (sotto's scripts/setup.sh installs it; "
                        "--vad-model PATH names one; --no-silence-check: no note)\n", path);
    return true;
}

/* The inputs one after the other on one context; the exit status. */
static int transcribe_files(const opts *o, const sotto_model *model, const sotto_context_params *cp)
{
    /* from here Ctrl-C stops at the next check and says what was done (before: at once) */
    struct sigaction sa = {.sa_handler = on_sigint};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL); /* as Ctrl-C */
    sotto_context *ctx = o->quiet ? NULL : cli_context("transcribe", model, cp);
    if (o->quiet && sotto_context_init(model, cp, &ctx) != SOTTO_OK) {
        fprintf(stderr, "sotto transcribe: %s\n", sotto_last_error());
        ctx = NULL;
    }
    if (!ctx) return EXIT_EXEC;
    int failed = 0, rc = EXIT_OK, done = 0;
    int i = 0;
    for (; i < o->n_files && !interrupted && !write_errno && !full_errno; i++) {
        int r = one_file(o, ctx, o->files[i], o->n_files > 1);
        if (r == EXIT_OK || r == EXIT_INPUT) done++, segments_decoded = -1; /* no longer in progress */
        if (r == EXIT_INPUT) failed++;
        else if (r != EXIT_OK) rc = r;
    }
    if (full_errno && i < o->n_files) {
        fprintf(stderr, "sotto transcribe: stopped: %s; the %d input%s left %s not transcribed\n", strerror(full_errno),
                o->n_files - i, o->n_files - i == 1 ? "" : "s", o->n_files - i == 1 ? "was" : "were");
        rc = EXIT_EXEC;
    } else if (write_errno) {
        fprintf(stderr, "sotto transcribe: write error: %s\n", strerror(write_errno));
        rc = EXIT_EXEC;
    } else if (interrupted) {
        const char *how = interrupted == SIGTERM ? "terminated (SIGTERM)" : "interrupted";
        const int n = segments_decoded;
        if (n == -2)
            fprintf(stderr, "sotto transcribe: %s; no file was written for the input in progress\n", how);
        else if (n < 0 && done == 0)
            fprintf(stderr, "sotto transcribe: %s before the first input; nothing was written\n", how);
        else if (n < 0) /* between inputs: each one done was written (or could not be read) */
            fprintf(stderr, "sotto transcribe: %s after %d of %d inputs%s\n", how, done, o->n_files,
                    failed ? " (some could not be transcribed)" : "");
        else if (n == 0)
            fprintf(stderr, "sotto transcribe: %s before the first segment of the input in progress; no file "
                            "was written for it\n", how);
        else
            fprintf(stderr, "sotto transcribe: %s; %s%d segment%s of the input in progress %s decoded%s, %s\n", how,
                    segments_shown ? "the " : "", n, n == 1 ? "" : "s", n == 1 ? "was" : "were",
                    segments_shown ? " (above)" : "",
                    whole_at_end ? "none written: json is written whole when an input ends"
                                 : "no file was written for it");
        rc = 128 + interrupted;
    } else if (failed && rc == EXIT_OK) {
        fprintf(stderr, "sotto transcribe: %d of %d inputs could not be transcribed\n", failed, o->n_files);
        rc = EXIT_INPUT;
    }
    sotto_context_free(ctx);
    return rc;
}

/* -l and --task against the model (cli_language_fits: en for an English-only one);
 * --multilingual on an English-only one warns, as faster-whisper's does. */
static bool language_fits(opts *o, const sotto_model *model)
{
    if (!cli_language_fits("transcribe", model, &o->lang, o->tp.translate)) return false;
    o->tp.language = o->lang;
    sotto_model_info mi;
    sotto_model_get_info(model, &mi);
    if (!mi.multilingual && o->tp.multilingual && !o->quiet) /* faster-whisper's warning, and its False */
        fprintf(stderr, "sotto transcribe: this model is English-only: --multilingual does nothing\n");
    return true;
}

/* The decoder's sequences a window can need (sotto_context_params.max_sequences): beam_size
 * at temperature 0, best_of above it, over the schedule; so greedy without fallback keeps
 * one KV cache instead of five (about 11 MB less resident with tiny.en, whose other four
 * caches would be zeroed before every window). */
static int sequences_needed(const sotto_transcribe_params *tp)
{
    int n = 1;
    for (int i = 0; i < tp->n_temperatures; i++) {
        int k = tp->temperatures[i] > 0 ? tp->best_of : tp->beam_size;
        if (k > n) n = k;
    }
    return n;
}

int cmd_transcribe(int argc, char **argv)
{
    opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
    char path[4096];
    sotto_model *model = NULL;
    sotto_vad *vad = NULL;
    rc = EXIT_INPUT;
    if (!(o.c.device = cli_device("transcribe", o.c.device))) goto done;
    rc = EXIT_EXEC; /* an output that cannot be written, as when it fails later */
    if (!cli_output_writable("transcribe", o.dir, o.output)) goto done;
    rc = EXIT_INPUT;
    if (!cli_model_path(o.c.model, path, sizeof path)) goto done;
    struct stat in; /* one input not there: said before the model loads (seconds, for a large one) */
    if (o.n_files == 1 && !batch_wanted(o.files, o.n_files, o.jobs) && strcmp(o.files[0], "-") &&
        !strstr(o.files[0], "://") && stat(o.files[0], &in) != 0 &&
        (errno == ENOENT || errno == ENOTDIR)) {
        fprintf(stderr, "sotto transcribe: %s: cannot open: %s\n", o.files[0], strerror(errno));
        goto done;
    }
    rc = EXIT_EXEC;
    if (!(model = cli_load_model(path))) goto done;
    rc = EXIT_INPUT;
    if (!language_fits(&o, model)) goto done;
    rc = EXIT_EXEC;
    if (!load_vad(&o, &vad, &rc)) goto done;
    o.tp.vad = vad;
    o.tp.on_warning = on_warning;
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = cli_threads(o.c.threads);
    cp.max_sequences = sequences_needed(&o.tp);
    cp.device = o.c.device;
    cp.max_batch = o.tp.batch_size > 0 ? o.tp.batch_size : 1;
    if (batch_wanted(o.files, o.n_files, o.jobs)) {
        batch_job job = {.model = model, .cp = cp, .share_threads = !o.c.threads, .tp = o.tp, .formats = o.formats, .lines = o.lines, .dir = o.dir,
                         .jobs = o.jobs ? o.jobs : 1, .overwrite = o.overwrite, .quiet = o.quiet,
                         .inputs = o.files, .n_inputs = o.n_files, .channel = o.channel};
        rc = batch_transcribe(&job);
    } else {
        rc = transcribe_files(&o, model, &cp);
    }
done:
    sotto_vad_free(vad);
    sotto_model_free(model);
    return rc;
}
