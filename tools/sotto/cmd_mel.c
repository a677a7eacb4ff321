/* cmd_mel.c — `sotto mel AUDIO OUT`: the first 30 s window's log-mel, raw little-endian
 * fp32 [n_mels, 3000], the input of `sotto run`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: sotto mel [--n-mels 80|128] AUDIO OUT\n"
    "\n"
    "Writes the log-mel spectrogram of the first 30 s of AUDIO (16 kHz mono WAV, padded\n"
    "with silence when shorter) to OUT as raw little-endian float32 [n_mels, 3000],\n"
    "bin-major: the --mel input of `sotto run`. Use --n-mels 128 for large-v3 models.\n";

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
    if (sotto_wav_read(pos[0], &pcm, &n) != SOTTO_OK) {
        fprintf(stderr, "sotto mel: %s\n", sotto_last_error());
        return EXIT_INPUT;
    }
    size_t count = (size_t)n_mels * SOTTO_N_FRAMES;
    float *mel = malloc(count * sizeof *mel);
    sotto_status st = mel ? sotto_mel_window(pcm, n, (int)n_mels, mel) : SOTTO_ERR_NOMEM;
    sotto_free(pcm);
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
