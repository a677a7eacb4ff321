/* cmd_vad.c — `sotto vad AUDIO`: the speech intervals of an audio file (read as transcribe
 * reads it: any format FFmpeg reads, - for stdin) found by the
 * Silero VAD with silero-vad's get_speech_timestamps rules (sotto_vad_speech), one
 * "start end" line each in seconds, or with --probs every 32 ms window's probability. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_opt.h"

#define OFF(field) offsetof(vad_opts, field)

typedef struct vad_opts {
    cli_common c;
    sotto_vad_params p;
    int probs;
} vad_opts;

static const cli_opt options[] = {
    {"--threshold", 0, OPT_DOUBLE, OFF(p.threshold), 0, 1, "X", "a number in 0..1",
     .help = "speech when a window's probability is >= X (0.5)"},
    {"--neg-threshold", 0, OPT_DOUBLE, OFF(p.neg_threshold), 0, 1, "X", "a number in 0..1",
     .help = "speech ends below X (default: threshold - 0.15, at least 0.01)", .flags = CLI_ON,
     .on = OFF(p.use_neg_threshold)},
    {"--min-speech-ms", 0, OPT_INT, OFF(p.min_speech_duration_ms), 0, 3600000, "N", "milliseconds in 0..3600000",
     .help = "shorter speech is dropped (250)"},
    {"--max-speech-s", 0, OPT_DOUBLE, OFF(p.max_speech_duration_s), 0, HUGE_VAL, "X",
     "a finite number of seconds > 0 (without it: never)",
     .help = "longer speech is split at its longest silence (default: never)", .flags = CLI_LO_OPEN},
    {"--min-silence-ms", 0, OPT_INT, OFF(p.min_silence_duration_ms), 0, 3600000, "N", "milliseconds in 0..3600000",
     .help = "the silence that ends speech (100)"},
    {"--speech-pad-ms", 0, OPT_INT, OFF(p.speech_pad_ms), 0, 3600000, "N", "milliseconds in 0..3600000",
     .help = "padding on each side (30)"},
    {"--probs", 0, OPT_TRUE, OFF(probs),
     .help = "print every 512-sample (32 ms) window instead: \"start probability\""},
    {.kind = OPT_INCLUDE, .sub = cli_opt_threads, .offset = OFF(c), .help = "threads (default: every core this process may use)"},
    {.kind = OPT_INCLUDE, .sub = cli_opt_vad_model, .offset = OFF(c)},
    {0},
};

static const cli_cmd command = {
    .name = "vad",
    .usage = "usage: sotto vad [--vad-model PATH] [--threshold X] [--neg-threshold X] [--min-speech-ms N]\n"
             "                 [--max-speech-s X] [--min-silence-ms N] [--speech-pad-ms N] [--probs] [-t N] AUDIO\n"
             "\n"
             "Voice activity detection with the Silero VAD (16 kHz): prints the speech intervals of\n"
             "AUDIO (any file FFmpeg reads, or - for standard input, decoded to 16 kHz mono as sotto\n"
             "transcribe does), one line each, \"start end\" in seconds with 3 decimals, as the\n"
             "silero-vad package's get_speech_timestamps finds them. Defaults are the package's:\n",
    .opts = options,
    .min_args = 1,
    .many_args = true, /* more than one is refused with the message below */
    .args = "AUDIO",
    .footer = "\n"
              "The model (--vad-model) is made by scripts/setup.sh from the PyPI package silero-vad\n"
              "6.2.3 with scripts/silero_vad_to_gguf.py.\n",
};

static int print_result(const vad_opts *o, const sotto_vad *vad, const float *pcm, int64_t n)
{
    int threads = cli_threads(o->c.threads);
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
    int n_pos;
    int rc = cli_parse(&command, argc, argv, &o, &n_pos);
    if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
    if (n_pos > 1) {
        fprintf(stderr, "sotto vad: one AUDIO file at a time\n");
        return EXIT_INPUT;
    }
    char path[4096];
    float *pcm = NULL;
    int64_t n;
    sotto_vad *vad = NULL;
    if (!cli_vad_model_path(o.c.vad_model, path, sizeof path, true)) return EXIT_INPUT; /* as transcribe --vad */
    rc = EXIT_INPUT;
    if (sotto_audio_load(argv[1], &pcm, &n) != SOTTO_OK) { /* as transcribe reads audio */
        fprintf(stderr, "sotto vad: %s\n", sotto_last_error());
        goto done;
    }
    rc = EXIT_EXEC;
    if (sotto_vad_load(path, &vad) != SOTTO_OK) {
        fprintf(stderr, "sotto vad: cannot load VAD model: %s\n", sotto_last_error());
        goto done;
    }
    rc = print_result(&o, vad, pcm, n);
done:
    sotto_vad_free(vad);
    sotto_free(pcm);
    return rc;
}
