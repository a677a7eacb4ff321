/* cmd_run.c — `sotto run`, the token-level runner (shared/DESIGN.md §4): raw fp32
 * log-mel in, the complete token-id sequence out, optionally checked against a
 * reference sequence. Every list is validated before the model executes. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opt.h"

#define OFF(field) offsetof(opts, field)

typedef struct opts {
    cli_common c;
    const char *mel, *prefix, *prefix_file, *eos, *expected;
    int max_new;
    int suppress;
} opts;

static const cli_opt options[] = {
    {.kind = OPT_INCLUDE, .sub = cli_opt_model, .offset = OFF(c)},
    {"--mel", 0, OPT_STR, OFF(mel), 0, 0, "FILE", "a path",
     .help = "raw little-endian float32 [n_mels, 3000], e.g. from `sotto mel`"},
    {"--prefix", 0, OPT_STR, OFF(prefix), 0, 0, "IDS", "ids",
     .help = "comma-separated ids; default: the model's start sequence\n"
             "(<|startoftranscript|> [language, task] <|notimestamps|>)"},
    {"--prefix-file", 0, OPT_STR, OFF(prefix_file), 0, 0, "FILE", "a path",
     .help = "the prefix as whitespace- or comma-separated ids"},
    {"--eos", 0, OPT_STR, OFF(eos), 0, 0, "IDS", "ids", .help = "comma-separated stop ids (default <|endoftext|>)"},
    {"--max-new-tokens", 0, OPT_INT, OFF(max_new), 0, 1000000, "N", "a decimal integer in 0..1000000",
     .help = "at most N generated ids (default 32), capped by the context left\n"
             "after the prefix; G ids cost 1 prefill + G-1 decoder steps"},
    {"--expected", 0, OPT_STR, OFF(expected), 0, 0, "FILE", "a path",
     .help = "reference sequence; the first difference exits 3"},
    {"--suppress", 0, OPT_TRUE, OFF(suppress),
     .help = "apply the reference decoder's suppress rules (blank and EOT at\n"
             "the first step, non-speech and special tokens always)"},
    {.kind = OPT_INCLUDE, .sub = cli_opt_threads, .offset = OFF(c)},
    {.kind = OPT_INCLUDE, .sub = cli_opt_device, .offset = OFF(c)},
    {0},
};

static const cli_cmd command = {
    .name = "run",
    .usage = "usage: sotto run [-m MODEL] --mel FILE [--prefix IDS | --prefix-file FILE] [--eos IDS]\n"
             "                 [--max-new-tokens N] [--expected FILE] [--suppress] [-t N] [--device DEV]\n"
             "\n"
             "Encodes one raw log-mel window, projects the cross-attention K/V once, prefills the\n"
             "prefix into the static KV cache in one pass and decodes greedily (plain argmax),\n"
             "printing the complete sequence (prefix, generated ids, the EOS if produced) on one\n"
             "line. A line on stderr reports the forward passes and timings.\n"
             "\n",
    .opts = options,
    .footer = "\n"
              "Ids are decimal; items may carry spaces or tabs; files may end lines in LF or CRLF.\n"
              "exit: 0 ok, 1 invalid arguments or input, 2 execution error, 3 mismatch\n"
              "\n"
              "example:\n"
              "  sotto mel clip.wav clip.mel\n"
              "  sotto run -m tiny.en.gguf --mel clip.mel --max-new-tokens 32\n",
    .strings_once = true,
};

static int parse_args(int argc, char **argv, opts *o)
{
    o->max_new = 32;
    int n_pos;
    int rc = cli_parse(&command, argc, argv, o, &n_pos);
    if (rc) return rc;
    if (!o->mel) {
        fprintf(stderr, "sotto run: --mel FILE is required (see sotto run --help)\n");
        return EXIT_INPUT;
    }
    if (o->prefix && o->prefix_file) {
        fprintf(stderr, "sotto run: give --prefix or --prefix-file, not both\n");
        return EXIT_INPUT;
    }
    if (!(o->c.device = cli_device("run", o->c.device))) return EXIT_INPUT;
    return EXIT_OK;
}

/* One id list from a flag value or a file; N_VOCAB 0 checks syntax only. */
static bool load_ids(const char *flag_value, const char *file, const char *flag, int32_t n_vocab, int32_t **ids,
                     int *n)
{
    char msg[512], source[600];
    *ids = NULL;
    *n = 0;
    if (flag_value) {
        snprintf(source, sizeof source, "%s", flag);
        if (cli_parse_ids(flag_value, strlen(flag_value), true, n_vocab, source, ids, n, msg, sizeof msg)) return true;
    } else if (file) {
        size_t len;
        char *text = cli_read_file(file, 16u << 20, &len, msg, sizeof msg);
        snprintf(source, sizeof source, "%s %s", flag, file);
        if (text) {
            bool ok = cli_parse_ids(text, len, false, n_vocab, source, ids, n, msg, sizeof msg);
            free(text);
            if (ok) return true;
        }
    } else {
        return true;
    }
    fprintf(stderr, "sotto run: %s\n", msg);
    return false;
}

typedef struct lists {
    int32_t *prefix, *eos, *expected;
    int n_prefix, n_eos, n_expected;
} lists;

static bool load_lists(const opts *o, int32_t n_vocab, lists *l)
{
    free(l->prefix), free(l->eos), free(l->expected);
    memset(l, 0, sizeof *l);
    return load_ids(o->prefix, o->prefix_file, o->prefix ? "--prefix" : "--prefix-file", n_vocab, &l->prefix,
                    &l->n_prefix) &&
           load_ids(o->eos, NULL, "--eos", n_vocab, &l->eos, &l->n_eos) &&
           load_ids(NULL, o->expected, "--expected", n_vocab, &l->expected, &l->n_expected);
}

static int compare(const int32_t *got, int n_got, const int32_t *want, int n_want)
{
    int n = n_got < n_want ? n_got : n_want;
    for (int i = 0; i < n; i++) {
        if (got[i] != want[i]) {
            fprintf(stderr, "sotto run: mismatch at position %d: expected %d, got %d\n", i, want[i], got[i]);
            return EXIT_MISMATCH;
        }
    }
    if (n_got != n_want) {
        if (n_got > n_want)
            fprintf(stderr, "sotto run: mismatch at position %d: expected the end of the sequence, got %d\n", n,
                    got[n]);
        else
            fprintf(stderr, "sotto run: mismatch at position %d: expected %d, got the end of the sequence\n", n,
                    want[n]);
        return EXIT_MISMATCH;
    }
    return EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
    opts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
    lists l = {0};
    sotto_model *model = NULL;
    sotto_context *ctx = NULL;
    float *mel = NULL;
    int32_t *out = NULL;
    size_t mel_bytes = 0;
    char msg[512], path[4096];
    rc = EXIT_INPUT;
    if (!load_lists(&o, 0, &l) || !cli_model_path(o.c.model, path, sizeof path)) goto done;
    rc = EXIT_EXEC;
    if (!(model = cli_load_model(path))) goto done;
    sotto_model_info info;
    sotto_model_get_info(model, &info);
    rc = EXIT_INPUT;
    if (!load_lists(&o, info.n_vocab, &l)) goto done;
    if (l.prefix && l.n_prefix > info.n_text_ctx) {
        fprintf(stderr, "sotto run: the prefix has %d ids, more than the decoder context of %d\n", l.n_prefix,
                info.n_text_ctx);
        goto done;
    }
    size_t want = (size_t)info.n_mels * SOTTO_N_FRAMES * sizeof(float);
    mel = (float *)cli_read_file(o.mel, want, &mel_bytes, msg, sizeof msg);
    if (!mel || mel_bytes != want) {
        if (mel) snprintf(msg, sizeof msg, "%s: %zu bytes", o.mel, mel_bytes);
        fprintf(stderr, "sotto run: %s; the mel input must be exactly %d x %d float32 values (%zu bytes)\n", msg,
                info.n_mels, SOTTO_N_FRAMES, want);
        goto done;
    }
    for (size_t i = 0; i < want / sizeof(float); i++)
        if (!isfinite(mel[i])) { /* a log-mel is finite: NaN or inf is a broken input, not one to decode */
            fprintf(stderr, "sotto run: %s: value %zu (bin %zu, frame %zu) is %g: the mel input must be finite\n",
                    o.mel, i, i / SOTTO_N_FRAMES, i % SOTTO_N_FRAMES, mel[i]);
            goto done;
        }
    rc = EXIT_EXEC;
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = cli_threads(o.c.threads);
    cp.max_sequences = 1; /* greedy: one KV cache */
    cp.device = o.c.device;
    if (!(ctx = cli_context("run", model, &cp))) goto done;
    out = malloc((size_t)info.n_text_ctx * sizeof *out);
    double t0 = cli_now_ms();
    if (!out || sotto_encode(ctx, mel, (int64_t)(want / sizeof(float))) != SOTTO_OK) {
        fprintf(stderr, "sotto run: %s\n", out ? sotto_context_error(ctx) : "out of memory");
        goto done;
    }
    double enc_ms = cli_now_ms() - t0;
    sotto_greedy_params gp = sotto_greedy_params_default();
    gp.prefix = l.prefix, gp.n_prefix = l.n_prefix, gp.eos = l.eos, gp.n_eos = l.n_eos;
    gp.max_new_tokens = o.max_new, gp.suppress = o.suppress;
    int n_out = 0;
    sotto_decode_stats s;
    if (sotto_greedy(ctx, &gp, out, &n_out, &s) != SOTTO_OK) {
        fprintf(stderr, "sotto run: %s\n", sotto_context_error(ctx));
        goto done;
    }
    for (int i = 0; i < n_out; i++) printf("%s%d", i ? " " : "", out[i]);
    printf("\n");
    fflush(stdout);
    int n_prefix = l.prefix ? l.n_prefix : n_out - (s.n_prefill ? s.n_steps + 1 : 0);
    fprintf(stderr, "sotto run: prefix %d, generated %d, forward passes: prefill %d, steps %d; encoder %.1f ms, "
                    "prefill %.1f ms, steps %.2f ms/step\n",
            n_prefix, n_out - n_prefix, s.n_prefill, s.n_steps, enc_ms, s.prefill_ms,
            s.n_steps ? s.steps_ms / s.n_steps : 0.0);
    rc = l.expected ? compare(out, n_out, l.expected, l.n_expected) : EXIT_OK;
done:
    free(out);
    free(mel);
    free(l.prefix), free(l.eos), free(l.expected);
    sotto_context_free(ctx);
    sotto_model_free(model);
    return rc;
}
