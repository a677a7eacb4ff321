/* cmd_convert.c — `sotto convert IN OUT.gguf`: any model sotto reads, written as one
 * self-contained GGUF file with the chosen weight types per half. */
#define _DEFAULT_SOURCE /* realpath */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opt.h"
#include "output.h"

/* The library writes OUT.tmp.PID (out_temp_name) and renames it when complete; an interrupt in between
 * must not leave the partial file behind (hundreds of MB for a large model). */
static char tmp_path[4096 + 32];

static void on_signal(int sig)
{
    unlink(tmp_path); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

#define UNSET ((sotto_type)255) /* no --type for that half */

static bool parse_type(const char *s, sotto_type *t)
{
    if (strcmp(s, "f32") == 0) *t = SOTTO_TYPE_F32;
    else if (strcmp(s, "f16") == 0) *t = SOTTO_TYPE_F16;
    else if (strcmp(s, "q8_0") == 0) *t = SOTTO_TYPE_Q8_0;
    else return false;
    return true;
}

static bool set_type(void *field, const char *v, const char **what)
{
    *what = "f32, f16 or q8_0";
    return parse_type(v, field);
}

/* --type: both halves (FIELD is the whole sotto_convert_params). */
static bool set_both(void *field, const char *v, const char **what)
{
    sotto_convert_params *p = field;
    *what = "f32, f16 or q8_0";
    if (!parse_type(v, &p->encoder_type)) return false;
    p->decoder_type = p->encoder_type;
    return true;
}

static const cli_opt options[] = {
    {"--type", 0, OPT_CALL, 0, 0, 0, "T", .call = set_both,
     .help = "the matrices' type, both halves: f32, f16 or q8_0 (default: the\n"
             "type IN holds, as loaded)"},
    {"--encoder-type", 0, OPT_CALL, offsetof(sotto_convert_params, encoder_type), 0, 0, "T", .call = set_type,
     .help = "the encoder's alone"},
    {"--decoder-type", 0, OPT_CALL, offsetof(sotto_convert_params, decoder_type), 0, 0, "T", .call = set_type,
     .help = "the decoder's alone (the tied token embedding follows it)"},
    {0},
};

static const cli_cmd command = {
    .name = "convert",
    .usage = "usage: sotto convert IN OUT.gguf [--type T] [--encoder-type T] [--decoder-type T]\n"
             "\n"
             "Reads IN (a CTranslate2 or Hugging Face Whisper directory, a whisper.cpp ggml .bin,\n"
             "a .gguf file, or an installed model's name) and writes one self-contained GGUF\n"
             "file: hyper-parameters, tokenizer, special ids, suppress lists and tensors. T is\n"
             "f32, f16 or q8_0 (default: the type IN's matrices hold as loaded: f16 for OpenAI's\n"
             "and CTranslate2's checkpoints, f32 for bf16, q8_0 for ggml's 4- and 5-bit types);\n"
             "--type sets both halves, --encoder-type and --decoder-type set one (the tied token\n"
             "embedding follows the decoder). LayerNorm parameters, biases and position tables\n"
             "stay f32.\n"
             "\n",
    .opts = options,
    .min_args = 2,
    .max_args = 2,
    .args = "IN and OUT.gguf",
};

/* Whether OUT is a file in the folder IN other than a .gguf (its model.bin, config.json,
 * ...: a folder's model is never a .gguf): the rename over it would break the input folder
 * (said, naming it). OUT the input file itself is fine: the rename is atomic, the model
 * read stays mapped (`sotto convert m.gguf m.gguf --type q8_0` converts in place). */
static bool writes_input(const char *in, const char *out)
{
    struct stat si, so;
    size_t n = strlen(out);
    if (stat(out, &so) != 0 || stat(in, &si) != 0 || !S_ISDIR(si.st_mode) || !S_ISREG(so.st_mode) ||
        (n > 5 && strcmp(out + n - 5, ".gguf") == 0))
        return false;
    char dir[PATH_MAX], parent[PATH_MAX + 4], rin[PATH_MAX], rparent[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", out);
    char *slash = strrchr(dir, '/');
    snprintf(parent, sizeof parent, "%s", slash ? (slash == dir ? "/" : (*slash = 0, dir)) : ".");
    bool inside = realpath(parent, rparent) && realpath(in, rin) && strcmp(rparent, rin) == 0;
    if (inside) fprintf(stderr, "sotto convert: %s is a file of the input folder: it would be replaced\n", out);
    return inside;
}

int cmd_convert(int argc, char **argv)
{
    sotto_convert_params p = {UNSET, UNSET}; /* a half not given keeps IN's type */
    int n_pos;
    int rc = cli_parse(&command, argc, argv, &p, &n_pos);
    if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
    const char *pos[2] = {argv[1], argv[2]};
    if (!*pos[1]) {
        fprintf(stderr, "sotto convert: OUT is empty: name the .gguf file to write\n");
        return EXIT_INPUT;
    }
    if (strcmp(pos[1], "-") == 0) { /* a model is mapped from a file: never streamed to stdout */
        fprintf(stderr, "sotto convert: OUT is a file to write the model to, not - (standard output)\n");
        return EXIT_INPUT;
    }
    char real[PATH_MAX];
    struct stat st;
    if (lstat(pos[1], &st) == 0 && S_ISLNK(st.st_mode) && realpath(pos[1], real))
        pos[1] = real; /* its target is written (the library's rule): OUT.tmp.PID beside it */
    if (writes_input(pos[0], pos[1])) return EXIT_INPUT;
    if (!out_temp_name(pos[1], tmp_path, sizeof tmp_path)) { /* the library's name for it */
        fprintf(stderr, "sotto convert: output path too long\n");
        return EXIT_INPUT;
    }
    char in[4096];
    if (!cli_model_path(pos[0], in, sizeof in)) return EXIT_INPUT; /* a name: the installed model */
    sotto_model *m = cli_load_model(in);
    if (!m) return EXIT_EXEC;
    sotto_model_info h;
    sotto_model_get_info(m, &h);
    if (p.encoder_type == UNSET) p.encoder_type = h.encoder_type;
    if (p.decoder_type == UNSET) p.decoder_type = h.decoder_type;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    rc = EXIT_OK;
    if (sotto_model_save_gguf(m, pos[1], &p) != SOTTO_OK) {
        fprintf(stderr, "sotto convert: %s\n", sotto_last_error());
        rc = EXIT_EXEC;
    }
    signal(SIGINT, SIG_DFL), signal(SIGTERM, SIG_DFL), signal(SIGHUP, SIG_DFL);
    if (rc == EXIT_OK && stat(pos[1], &st) == 0) {
        static const char *tn[] = {"f32", "f16", "", "", "", "", "", "", "q8_0"};
        printf("sotto convert: wrote %s (%.1f MB; encoder %s, decoder %s)\n", pos[1], st.st_size / 1e6,
               tn[p.encoder_type], tn[p.decoder_type]);
    }
    sotto_model_free(m);
    return rc;
}
