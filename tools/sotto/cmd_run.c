/* cmd_run.c — `sotto run`, the token-level runner (shared/DESIGN.md §4): raw fp32
 * log-mel in, the complete token-id sequence out, optionally checked against a
 * reference sequence. Every list is validated before the model executes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: sotto run [-m MODEL] --mel FILE [--prefix IDS | --prefix-file FILE] [--eos IDS]\n"
    "                 [--max-new-tokens N] [--expected FILE] [--suppress] [-t N] [--device DEV]\n"
    "\n"
    "Encodes one raw log-mel window, projects the cross-attention K/V once, prefills the\n"
    "prefix into the static KV cache in one pass and decodes greedily (plain argmax),\n"
    "printing the complete sequence (prefix, generated ids, the EOS if produced) on one\n"
    "line. A line on stderr reports the forward passes and timings.\n"
    "\n"
    "  -m MODEL             .gguf, CTranslate2 or Hugging Face model (default: see sotto --help)\n"
    "  --mel FILE           raw little-endian float32 [n_mels, 3000], e.g. from `sotto mel`\n"
    "  --prefix IDS         comma-separated ids; default: the model's start sequence\n"
    "                       (<|startoftranscript|> [language, task] <|notimestamps|>)\n"
    "  --prefix-file FILE   the prefix as whitespace- or comma-separated ids\n"
    "  --eos IDS            comma-separated stop ids (default <|endoftext|>)\n"
    "  --max-new-tokens N   at most N generated ids (default 32), capped by the context left\n"
    "                       after the prefix; G ids cost 1 prefill + G-1 decoder steps\n"
    "  --expected FILE      reference sequence; the first difference exits 3\n"
    "  --suppress           apply the reference decoder's suppress rules (blank and EOT at\n"
    "                       the first step, non-speech and special tokens always)\n"
    "  -t, --threads N      worker threads (default: all cores)\n"
    "  --device DEV         cpu, vulkan, vulkan:N or auto (default: $SOTTO_DEVICE, else auto:\n"
    "                       a GPU when the machine has one, else the CPU); stderr names it\n"
    "\n"
    "Ids are decimal; items may carry spaces or tabs; files may end lines in LF or CRLF.\n"
    "exit: 0 ok, 1 invalid arguments or input, 2 execution error, 3 mismatch\n"
    "\n"
    "example:\n"
    "  sotto mel clip.wav clip.mel\n"
    "  sotto run -m tiny.en.gguf --mel clip.mel --max-new-tokens 32\n";

typedef struct opts {
    const char *model, *mel, *prefix, *prefix_file, *eos, *expected, *device;
    long max_new, threads;
    bool suppress;
} opts;

static int parse_args(int argc, char **argv, opts *o)
{
    o->max_new = 32;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(help, stdout);
            return -1;
        }
        if (strcmp(a, "--suppress") == 0) {
            o->suppress = true;
            continue;
        }
        const char **slot = NULL;
        long *num = NULL, lo = 0, hi = 0;
        if (strcmp(a, "-m") == 0 || strcmp(a, "--model") == 0) slot = &o->model;
        else if (strcmp(a, "--mel") == 0) slot = &o->mel;
        else if (strcmp(a, "--prefix") == 0) slot = &o->prefix;
        else if (strcmp(a, "--prefix-file") == 0) slot = &o->prefix_file;
        else if (strcmp(a, "--eos") == 0) slot = &o->eos;
        else if (strcmp(a, "--expected") == 0) slot = &o->expected;
        else if (strcmp(a, "--device") == 0) slot = &o->device;
        else if (strcmp(a, "--max-new-tokens") == 0) num = &o->max_new, lo = 0, hi = 1000000;
        else if (strcmp(a, "-t") == 0 || strcmp(a, "--threads") == 0) num = &o->threads, lo = 1, hi = 256;
        else {
            fprintf(stderr, "sotto run: unknown option '%s' (see sotto run --help)\n", a);
            return EXIT_INPUT;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "sotto run: %s needs a value\n", a);
            return EXIT_INPUT;
        }
        const char *v = argv[++i];
        if (slot) {
            if (*slot) {
                fprintf(stderr, "sotto run: %s given twice\n", a);
                return EXIT_INPUT;
            }
            *slot = v;
        } else if (!cli_parse_int(v, lo, hi, num)) {
            fprintf(stderr, "sotto run: %s takes a decimal integer in %ld..%ld, not '%s'\n", a, lo, hi, v);
            return EXIT_INPUT;
        }
    }
    if (!o->mel) {
        fprintf(stderr, "sotto run: --mel FILE is required (see sotto run --help)\n");
        return EXIT_INPUT;
    }
    if (o->prefix && o->prefix_file) {
        fprintf(stderr, "sotto run: give --prefix or --prefix-file, not both\n");
        return EXIT_INPUT;
    }
    if (!(o->device = cli_device("run", o->device))) return EXIT_INPUT;
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
    if (rc) return rc < 0 ? EXIT_OK : rc;
    lists l = {0};
    if (!load_lists(&o, 0, &l)) return free(l.prefix), free(l.eos), free(l.expected), EXIT_INPUT;
    char path[4096];
    if (!cli_model_path(o.model, path, sizeof path)) return free(l.prefix), free(l.eos), free(l.expected), EXIT_INPUT;
    sotto_model *model = cli_load_model(path);
    if (!model) return free(l.prefix), free(l.eos), free(l.expected), EXIT_EXEC;
    sotto_model_info info;
    sotto_model_get_info(model, &info);
    sotto_context *ctx = NULL;
    float *mel = NULL;
    int32_t *out = NULL;
    size_t mel_bytes = 0;
    char msg[512];
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
    rc = EXIT_EXEC;
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = cli_threads(o.threads);
    cp.max_sequences = 1; /* greedy: one KV cache */
    cp.device = o.device;
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
    gp.max_new_tokens = (int)o.max_new, gp.suppress = o.suppress;
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
