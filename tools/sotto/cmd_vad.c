/* cmd_vad.c — `sotto vad AUDIO`: the speech intervals of a 16 kHz WAV file found by the
 * Silero VAD with silero-vad's get_speech_timestamps rules (sotto_vad_speech), one
 * "start end" line each in seconds, or with --probs every 32 ms window's probability. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char help[] =
    "usage: sotto vad [--vad-model PATH] [--threshold X] [--neg-threshold X] [--min-speech-ms N]\n"
    "                 [--max-speech-s X] [--min-silence-ms N] [--speech-pad-ms N] [--probs] [-t N] AUDIO\n"
    "\n"
    "Voice activity detection with the Silero VAD (16 kHz): prints the speech intervals of\n"
    "AUDIO (16 kHz mono WAV), one line each, \"start end\" in seconds with 3 decimals, as the\n"
    "silero-vad package's get_speech_timestamps finds them. Defaults are the package's:\n"
    "  --threshold X        speech when a window's probability is >= X (0.5)\n"
    "  --neg-threshold X    speech ends below X (default: threshold - 0.15, at least 0.01)\n"
    "  --min-speech-ms N    shorter speech is dropped (250)\n"
    "  --max-speech-s X     longer speech is split at its longest silence (default: never)\n"
    "  --min-silence-ms N   the silence that ends speech (100)\n"
    "  --speech-pad-ms N    padding on each side (30)\n"
    "  --probs              print every 512-sample (32 ms) window instead: \"start probability\"\n"
    "  -t, --threads N      threads (default: all cores)\n"
    "\n"
    "The model: --vad-model PATH, else $SOTTO_VAD_MODEL, else the one setup installs at\n"
    "${XDG_DATA_HOME:-~/.local/share}/sotto/models/silero-vad.gguf (scripts/setup.sh makes it\n"
    "from the PyPI package silero-vad 6.2.3 with scripts/silero_vad_to_gguf.py).\n";

typedef struct vad_opts {
    const char *model, *audio;
    sotto_vad_params p;
    int probs;
    long threads;
} vad_opts;

/* A finite decimal number in [LO, HI], the whole string. */
static bool parse_num(const char *s, double lo, double hi, double *out)
{
    char *end;
    if (!s || !*s) return false;
    double v = strtod(s, &end);
    if (*end || !isfinite(v) || v < lo || v > hi) return false;
    *out = v;
    return true;
}

static int bad(const char *opt, const char *want, const char *got)
{
    fprintf(stderr, "sotto vad: %s takes %s (got '%s')\n", opt, want, got ? got : "nothing");
    return EXIT_INPUT;
}

/* Parses one option at ARGV[*I] (advancing *I past its value); EXIT_OK or an exit code. */
static int parse_opt(int argc, char **argv, int *i, vad_opts *o)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    long n;
    double x;
    if (!strcmp(a, "--probs")) {
        o->probs = 1;
        return EXIT_OK;
    }
    ++*i;
    if (!strcmp(a, "--vad-model")) {
        if (!v) return bad(a, "a path", v);
        o->model = v;
    } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
        if (!cli_parse_int(v, 1, 256, &o->threads)) return bad(a, "a thread count in 1..256", v);
    } else if (!strcmp(a, "--threshold")) {
        if (!parse_num(v, 0, 1, &o->p.threshold)) return bad(a, "a number in 0..1", v);
    } else if (!strcmp(a, "--neg-threshold")) {
        if (!parse_num(v, 0, 1, &o->p.neg_threshold)) return bad(a, "a number in 0..1", v);
        o->p.use_neg_threshold = 1;
    } else if (!strcmp(a, "--max-speech-s")) {
        if (!parse_num(v, 1e-3, 1e9, &x)) return bad(a, "a number of seconds > 0", v);
        o->p.max_speech_duration_s = x;
    } else if (!strcmp(a, "--min-speech-ms") || !strcmp(a, "--min-silence-ms") || !strcmp(a, "--speech-pad-ms")) {
        if (!cli_parse_int(v, 0, 3600000, &n)) return bad(a, "milliseconds in 0..3600000", v);
        int *slot = !strcmp(a, "--speech-pad-ms")   ? &o->p.speech_pad_ms
                    : !strcmp(a, "--min-speech-ms") ? &o->p.min_speech_duration_ms
                                                    : &o->p.min_silence_duration_ms;
        *slot = (int)n;
    } else {
        --*i;
        fprintf(stderr, "sotto vad: unknown option '%s'\n%s", a, help);
        return EXIT_INPUT;
    }
    return EXIT_OK;
}

static int print_result(const vad_opts *o, const sotto_vad *vad, const float *pcm, int64_t n)
{
    int threads = cli_threads(o->threads);
    sotto_status st;
    if (o->probs) {
        float *probs;
        int64_t n_probs;
        st = sotto_vad_probs(vad, pcm, n, threads, &probs, &n_probs);
        for (int64_t i = 0; !st && i < n_probs; i++)
            printf("%.3f %.6f\n", (double)(i * SOTTO_VAD_WINDOW) / SOTTO_SAMPLE_RATE, probs[i]);
        if (!st) sotto_free(probs);
    } else {
        sotto_vad_interval *iv;
        int64_t n_iv;
        st = sotto_vad_speech(vad, pcm, n, &o->p, threads, &iv, &n_iv);
        for (int64_t i = 0; !st && i < n_iv; i++)
            printf("%.3f %.3f\n", (double)iv[i].start / SOTTO_SAMPLE_RATE, (double)iv[i].end / SOTTO_SAMPLE_RATE);
        if (!st) sotto_free(iv);
    }
    if (st) fprintf(stderr, "sotto vad: %s\n", sotto_last_error());
    return st ? EXIT_EXEC : EXIT_OK;
}

int cmd_vad(int argc, char **argv)
{
    vad_opts o = {.p = sotto_vad_params_default()};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(help, stdout);
            return EXIT_OK;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            int rc = parse_opt(argc, argv, &i, &o);
            if (rc) return rc;
        } else if (!o.audio) {
            o.audio = argv[i];
        } else {
            fprintf(stderr, "sotto vad: one AUDIO file at a time\n%s", help);
            return EXIT_INPUT;
        }
    }
    if (!o.audio) {
        fprintf(stderr, "sotto vad: expected AUDIO\n%s", help);
        return EXIT_INPUT;
    }
    char path[4096];
    if (!cli_vad_model_path(o.model, path, sizeof path, true)) return EXIT_EXEC;
    float *pcm;
    int64_t n;
    if (sotto_wav_read(o.audio, &pcm, &n) != SOTTO_OK) {
        fprintf(stderr, "sotto vad: %s\n", sotto_last_error());
        return EXIT_INPUT;
    }
    sotto_vad *vad;
    if (sotto_vad_load(path, &vad) != SOTTO_OK) {
        fprintf(stderr, "sotto vad: cannot load VAD model: %s\n", sotto_last_error());
        sotto_free(pcm);
        return EXIT_EXEC;
    }
    int rc = print_result(&o, vad, pcm, n);
    sotto_vad_free(vad);
    sotto_free(pcm);
    return rc;
}
