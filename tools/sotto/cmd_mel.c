/* cmd_mel.c — `sotto mel AUDIO OUT`: the first 30 s window's log-mel, raw little-endian
 * fp32 [n_mels, 3000], the input of `sotto run`. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opt.h"

typedef struct mel_opts {
    int n_mels;
} mel_opts;

static bool set_n_mels(void *field, const char *v, const char **what)
{
    *what = "80 or 128";
    if (strcmp(v, "80") && strcmp(v, "128")) return false;
    *(int *)field = atoi(v);
    return true;
}

static const cli_opt options[] = {
    {"--n-mels", 0, OPT_CALL, offsetof(mel_opts, n_mels), 0, 0, "N", .call = set_n_mels,
     .help = "mel bins: 80 (default), 128 for large-v3 models"},
    {0},
};

static const cli_cmd command = {
    .name = "mel",
    .usage = "usage: sotto mel [--n-mels 80|128] AUDIO OUT\n"
             "\n"
             "Writes the log-mel spectrogram of the first 30 s of AUDIO (padded with silence when\n"
             "shorter) to OUT as raw little-endian float32 [n_mels, 3000], bin-major: the --mel\n"
             "input of `sotto run`. AUDIO is any audio or video file FFmpeg reads, or - for\n"
             "standard input, decoded to 16 kHz mono as `sotto transcribe` does (a build without\n"
             "FFmpeg reads 16 kHz mono WAV only). Only the first 30 s are decoded. OUT - is\n"
             "standard output; a device or FIFO is written into, a link's target replaced.\n"
             "\n",
    .opts = options,
    .min_args = 2,
    .max_args = 2,
    .args = "AUDIO and OUT",
};

/* The first 30 s window of PATH (the rest is not decoded): *pcm (malloc'd) holds *n
 * samples. Prints the message and returns false on failure. */
static bool read_window(const char *path, float **pcm, int64_t *n)
{
    sotto_audio *a;
    *pcm = NULL;
    *n = 0;
    if (sotto_audio_open(path, &a) != SOTTO_OK) {
        fprintf(stderr, "sotto mel: %s\n", sotto_last_error());
        return false;
    }
    float *buf = malloc(SOTTO_N_SAMPLES * sizeof *buf);
    int64_t k = 0, got = 1;
    sotto_status st = buf ? SOTTO_OK : SOTTO_ERR_NOMEM;
    while (st == SOTTO_OK && k < SOTTO_N_SAMPLES && got > 0) {
        st = sotto_audio_read(a, buf + k, SOTTO_N_SAMPLES - k, &got);
        k += got;
    }
    if (st == SOTTO_OK && sotto_audio_warning(a)[0]) fprintf(stderr, "sotto mel: warning: %s\n", sotto_audio_warning(a));
    sotto_audio_close(a);
    if (st != SOTTO_OK) {
        fprintf(stderr, "sotto mel: %s\n", buf ? sotto_last_error() : "out of memory");
        free(buf);
        return false;
    }
    *pcm = buf;
    *n = k;
    return true;
}

int cmd_mel(int argc, char **argv)
{
    mel_opts o = {.n_mels = 80};
    int n_pos;
    int rc = cli_parse(&command, argc, argv, &o, &n_pos);
    if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
    float *pcm = NULL, *mel = NULL;
    int64_t n;
    size_t count = (size_t)o.n_mels * SOTTO_N_FRAMES;
    rc = EXIT_INPUT;
    if (!read_window(argv[1], &pcm, &n)) goto done;
    rc = EXIT_EXEC;
    mel = malloc(count * sizeof *mel);
    sotto_status st = mel ? sotto_mel_window(pcm, n, o.n_mels, mel) : SOTTO_ERR_NOMEM;
    if (st != SOTTO_OK) {
        fprintf(stderr, "sotto mel: %s\n", mel ? sotto_last_error() : "out of memory");
        goto done;
    }
    /* raw little-endian floats: this tool only builds on little-endian hosts */
    if (!cli_write_file(argv[2], mel, count * sizeof *mel)) {
        fprintf(stderr, "sotto mel: cannot write %s: %s\n", argv[2], strerror(errno));
        goto done;
    }
    rc = EXIT_OK;
done:
    free(pcm);
    free(mel);
    return rc;
}
