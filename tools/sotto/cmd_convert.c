/* cmd_convert.c — `sotto convert IN OUT.gguf`: any model sotto reads, written as one
 * self-contained GGUF file with the chosen weight types per half. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The library writes OUT.tmp and renames it when complete; an interrupt in between must
 * not leave the partial file behind (hundreds of MB for a large model). */
static char tmp_path[4096];

static void on_signal(int sig)
{
    unlink(tmp_path); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

static const char help[] =
    "usage: sotto convert IN OUT.gguf [--type T] [--encoder-type T] [--decoder-type T]\n"
    "\n"
    "Reads IN (a CTranslate2 or Hugging Face Whisper directory, or a .gguf file) and\n"
    "writes one self-contained GGUF file: hyper-parameters, tokenizer, special ids,\n"
    "suppress lists and tensors. T is f32 (default), f16 or q8_0; --type sets both halves,\n"
    "--encoder-type and --decoder-type set one (the tied token embedding follows the\n"
    "decoder). LayerNorm parameters, biases and position tables stay f32.\n";

static bool parse_type(const char *s, sotto_type *t)
{
    if (strcmp(s, "f32") == 0) *t = SOTTO_TYPE_F32;
    else if (strcmp(s, "f16") == 0) *t = SOTTO_TYPE_F16;
    else if (strcmp(s, "q8_0") == 0) *t = SOTTO_TYPE_Q8_0;
    else return false;
    return true;
}

int cmd_convert(int argc, char **argv)
{
    const char *pos[2];
    int n_pos = 0;
    sotto_convert_params p = sotto_convert_params_default();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(help, stdout);
            return EXIT_OK;
        }
        if (strcmp(a, "--type") == 0 || strcmp(a, "--encoder-type") == 0 || strcmp(a, "--decoder-type") == 0) {
            sotto_type t;
            if (i + 1 >= argc || !parse_type(argv[++i], &t)) {
                fprintf(stderr, "sotto convert: %s takes f32, f16 or q8_0\n", a);
                return EXIT_INPUT;
            }
            if (strcmp(a, "--decoder-type") != 0) p.encoder_type = t;
            if (strcmp(a, "--encoder-type") != 0) p.decoder_type = t;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "sotto convert: unknown option '%s'\n%s", a, help);
            return EXIT_INPUT;
        } else if (n_pos < 2) {
            pos[n_pos++] = a;
        } else {
            fprintf(stderr, "sotto convert: too many arguments\n%s", help);
            return EXIT_INPUT;
        }
    }
    if (n_pos != 2) {
        fprintf(stderr, "sotto convert: expected IN and OUT.gguf\n%s", help);
        return EXIT_INPUT;
    }
    sotto_model *m = cli_load_model(pos[0]);
    if (!m) return EXIT_EXEC;
    if (snprintf(tmp_path, sizeof tmp_path, "%s.tmp", pos[1]) >= (int)sizeof tmp_path) {
        fprintf(stderr, "sotto convert: output path too long\n");
        sotto_model_free(m);
        return EXIT_INPUT;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    int rc = EXIT_OK;
    if (sotto_model_save_gguf(m, pos[1], &p) != SOTTO_OK) {
        fprintf(stderr, "sotto convert: %s\n", sotto_last_error());
        rc = EXIT_EXEC;
    }
    signal(SIGINT, SIG_DFL), signal(SIGTERM, SIG_DFL), signal(SIGHUP, SIG_DFL);
    struct stat st;
    if (rc == EXIT_OK && stat(pos[1], &st) == 0) {
        static const char *tn[] = {"f32", "f16", "", "", "", "", "", "", "q8_0"};
        printf("sotto convert: wrote %s (%.1f MB; encoder %s, decoder %s)\n", pos[1], st.st_size / 1e6,
               tn[p.encoder_type], tn[p.decoder_type]);
    }
    sotto_model_free(m);
    return rc;
}
