/* cmd_mel.c — `sotto mel AUDIO OUT`: the first 30 s window's log-mel, raw little-endian
 * fp32 [n_mels, 3000], the input of `sotto run`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: sotto mel [--n-mels 80|128] AUDIO OUT\n"
    "\n"
    "Writes the log-mel spectrogram of the first 30 s of AUDIO (padded with silence when\n"
    "shorter) to OUT as raw little-endian float32 [n_mels, 3000], bin-major: the --mel\n"
    "input of `sotto run`. AUDIO is any audio or video file FFmpeg reads, or - for\n"
    "standard input, decoded to 16 kHz mono as `sotto transcribe` does (a build without\n"
    "FFmpeg reads 16 kHz mono WAV only). Only the first 30 s are decoded. Use --n-mels 128\n"
    "for large-v3 models.\n";

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
    long n_mels = 80;
    const char *pos[2];
    int n_pos = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(help, stdout);
            return EXIT_OK;
        } else if (strcmp(argv[i], "--n-mels") == 0) {
            if (i + 1 >= argc || !cli_parse_int(argv[++i], 80, 128, &n_mels) || (n_mels != 80 && n_mels != 128)) {
                fprintf(stderr, "sotto mel: --n-mels takes 80 or 128\n");
                return EXIT_INPUT;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "sotto mel: unknown option '%s'\n%s", argv[i], help);
            return EXIT_INPUT;
        } else if (n_pos < 2) {
            pos[n_pos++] = argv[i];
        } else {
            fprintf(stderr, "sotto mel: too many arguments\n%s", help);
            return EXIT_INPUT;
        }
    }
    if (n_pos != 2) {
        fprintf(stderr, "sotto mel: expected AUDIO and OUT\n%s", help);
        return EXIT_INPUT;
    }
    float *pcm;
    int64_t n;
    if (!read_window(pos[0], &pcm, &n)) return EXIT_INPUT;
    size_t count = (size_t)n_mels * SOTTO_N_FRAMES;
    float *mel = malloc(count * sizeof *mel);
    sotto_status st = mel ? sotto_mel_window(pcm, n, (int)n_mels, mel) : SOTTO_ERR_NOMEM;
    free(pcm);
    if (st != SOTTO_OK) {
        fprintf(stderr, "sotto mel: %s\n", mel ? sotto_last_error() : "out of memory");
        free(mel);
        return EXIT_EXEC;
    }
    /* raw little-endian floats: this tool only builds on little-endian hosts */
    bool ok = cli_write_file(pos[1], mel, count * sizeof *mel);
    free(mel);
    if (!ok) {
        fprintf(stderr, "sotto mel: cannot write %s\n", pos[1]);
        return EXIT_EXEC;
    }
    return EXIT_OK;
}
