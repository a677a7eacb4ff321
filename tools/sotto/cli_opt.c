/* cli_opt.c — the one option parser and --help writer of the sotto tool (cli_opt.h): a
 * subcommand's table of rows is walked to find an option, check and store its value, and
 * to print its help; and the rows several subcommands share. */
#include "cli_opt.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define HELP_COLUMN 27

const cli_opt cli_opt_model[] = {
    {"--model", 'm', OPT_STR, offsetof(cli_common, model), 0, 0, "MODEL", "a path",
     .help = ".gguf, CTranslate2 or Hugging Face model, whisper.cpp .bin, or an\n"
             "installed model's name; default: $SOTTO_MODEL, else the tiny.en\n"
             "model `make demo` installed"},
    {0},
};
const cli_opt cli_opt_threads[] = {
    {"--threads", 't', OPT_INT, offsetof(cli_common, threads), 0, 256, "N", "a thread count in 0..256",
     .help = "worker threads (0, the default: every core this process may use)"},
    {0},
};
const cli_opt cli_opt_device[] = {
    {"--device", 0, OPT_STR, offsetof(cli_common, device), 0, 0, "DEV", "a device",
     .help = "a backend, BACKEND:N (its Nth device) or auto (default:\n"
             "$SOTTO_DEVICE, else auto: a GPU when there is one, else the\n"
             "CPU); `sotto info --devices` lists them; stderr names it"},
    {0},
};
const cli_opt cli_opt_vad_model[] = {
    {"--vad-model", 0, OPT_STR, offsetof(cli_common, vad_model), 0, 0, "PATH", "a path",
     .help = "the Silero VAD (default: $SOTTO_VAD_MODEL, else the one setup\n"
             "installs: ${XDG_DATA_HOME:-~/.local/share}/sotto/models/\n"
             "silero-vad.gguf)"},
    {0},
};
const cli_opt cli_opt_no_fallback[] = {
    {"--no-fallback", 0, OPT_TRUE, offsetof(cli_common, no_fallback), .help = "one temperature only"},
    {0},
};
const cli_opt cli_opts_search[] = {
    {"--beam-size", 0, OPT_INT, offsetof(sotto_transcribe_params, beam_size), 1, SOTTO_MAX_SEQUENCES, "N",
     "a beam count in 1..16", .help = "beams at temperature 0, 1..16 (default 5; 1: greedy)"},
    {"--best-of", 0, OPT_INT, offsetof(sotto_transcribe_params, best_of), 1, SOTTO_MAX_SEQUENCES, "N",
     "a sample count in 1..16", .help = "samples at temperature > 0, 1..16 (default 5)"},
    {"--sample-len", 0, OPT_INT, offsetof(sotto_transcribe_params, sample_len), 1, 224, "N",
     "a token count in 1..224", .help = "at most N tokens per window (default and most: 224, n_text_ctx / 2)"},
    {0},
};
static bool set_task(void *field, const char *v, const char **what)
{
    *what = "transcribe or translate";
    if (strcmp(v, "translate") && strcmp(v, "transcribe")) return false;
    *(int *)field = !strcmp(v, "translate");
    return true;
}
const cli_opt cli_opt_task[] = {
    {"--task", 0, OPT_CALL, 0, 0, 0, "TASK", .call = set_task,
     .help = "transcribe (default) or translate (into English)"},
    {0},
};
const cli_opt cli_opt_no_silence_check[] = {
    {"--no-silence-check", 0, OPT_FALSE, offsetof(sotto_transcribe_params, silence_check),
     .help = "judge silence by the decoder alone, as the reference does"},
    {0},
};

bool cli_parse_int(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s) return false;
    long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        if (v > (hi - (*p - '0')) / 10) return false;
        v = v * 10 + (*p - '0');
    }
    if (v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool cli_parse_times(void *field, const char *v, const char **what)
{
    cli_times *t = field;
    *what = "seconds >= 0 separated by commas (0,5.5,8,12), at most 256";
    t->n = 0;
    for (const char *p = v;; p++) {
        char *end;
        errno = 0;
        double x = strtod(p, &end);
        if (end == p || errno || !(x >= 0 && x < 1e9) || t->n == CLI_MAX_TIMES || (*end && *end != ',')) return false;
        t->t[t->n++] = x;
        if (!*end) return true;
        p = end;
    }
}

bool cli_parse_suppress(void *field, const char *v, const char **what)
{
    cli_ids *ids = field;
    *what = "token ids separated by commas (-1: the model's list of non-speech symbols), or \"\"";
    ids->n = 0;
    ids->given = true;
    const char *p = v;
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) return true; /* "": none but the special tokens */
    for (p = v;; p++) {
        char *end;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (end == p || errno || x < -1 || x > INT32_MAX || ids->n == CLI_MAX_IDS) return false;
        while (*end == ' ' || *end == '\t') end++;
        if (*end && *end != ',') return false;
        ids->v[ids->n++] = (int32_t)x;
        if (!*end) return true;
        p = end;
    }
}

/* A finite number, the whole of S, in R's range. */
static bool parse_number(const cli_opt *r, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v)) return false;
    if ((r->flags & CLI_LO_OPEN) ? !(v > r->lo) : !(v >= r->lo)) return false;
    if ((r->flags & CLI_HI_OPEN) ? !(v < r->hi) : !(v <= r->hi)) return false;
    *out = v;
    return true;
}

/* The row of option A (LEN bytes of it) in table T, whose offsets count from BASE; *AT
 * gets the target's offset in the whole struct. NULL when no row has that name. */
static const cli_opt *find(const cli_opt *t, size_t base, const char *a, size_t len, size_t *at, size_t *on)
{
    for (; t->kind != OPT_END; t++) {
        if (t->kind == OPT_INCLUDE) {
            const cli_opt *r = find(t->sub, base + t->offset, a, len, at, on);
            if (r) return r;
            continue;
        }
        if (!t->name) continue;
        bool is_long = strlen(t->name) == len && strncmp(t->name, a, len) == 0;
        bool is_short = t->short_name && len == 2 && a[0] == '-' && a[1] == t->short_name;
        if (is_long || is_short) {
            *at = base + t->offset;
            *on = base + t->on;
            return t;
        }
    }
    return NULL;
}

static int bad_value(const cli_cmd *cmd, const char *a, const char *what, const char *v)
{
    /* openai-whisper's None where sotto has a switch for it */
    const bool fallback_none = !strcmp(v, "None") && !strcmp(a, "--temperature-increment-on-fallback");
    fprintf(stderr, "sotto %s: %s takes %s, not '%s'%s\n", cmd->name, a, what, v,
            fallback_none ? " (openai's None: --no-fallback)" : "");
    return EXIT_INPUT;
}

/* Stores V, the value of option A (row R), at offset AT of OPTS (ON: the row's flag). */
static int store(const cli_cmd *cmd, const cli_opt *r, const char *a, const char *v, char *opts, size_t at,
                 size_t on)
{
    void *field = opts + at;
    long n;
    double x;
    if ((r->flags & CLI_NONE) && (strcmp(v, "none") == 0 || strcmp(v, "None") == 0)) {
        *(int *)(opts + on) = 0;
        return 0;
    }
    switch (r->kind) {
    case OPT_STR:
        if (cmd->strings_once && *(const char **)field) {
            fprintf(stderr, "sotto %s: %s given twice\n", cmd->name, a);
            return EXIT_INPUT;
        }
        *(const char **)field = v;
        break;
    case OPT_INT:
    case OPT_U64:
        if (!cli_parse_int(v, (long)r->lo, (long)r->hi, &n)) return bad_value(cmd, a, r->what, v);
        if (r->kind == OPT_INT) *(int *)field = (int)n;
        else *(uint64_t *)field = (uint64_t)n;
        break;
    case OPT_FLOAT:
    case OPT_DOUBLE:
        if (!parse_number(r, v, &x)) return bad_value(cmd, a, r->what, v);
        if (r->kind == OPT_FLOAT && (isinf((float)x) || (x != 0 && (float)x == 0))) { /* 1e39, 1e-300 */
            fprintf(stderr, "sotto %s: %s takes %s, not '%s' (beyond a float's range)\n", cmd->name, a, r->what, v);
            return EXIT_INPUT;
        }
        if (r->kind == OPT_FLOAT) *(float *)field = (float)x;
        else *(double *)field = x;
        break;
    case OPT_CALL: {
        const char *what = NULL;
        if (!r->call(field, v, &what)) return bad_value(cmd, a, what ? what : r->what, v);
        break;
    }
    default:
        return EXIT_INPUT; /* value-less kinds never get here */
    }
    if (r->flags & (CLI_ON | CLI_NONE)) *(int *)(opts + on) = 1;
    return 0;
}

/* " (sotto spells it --x-y)" into HINT for an unknown option A (LEN bytes) that is
 * openai-whisper's spelling of one of CMD's: underscores for dashes (--word_timestamps),
 * or a name of its own (--initial_prompt, --output_format); what to do instead for
 * openai's options that sotto has not (--fp16, --verbose, --model_dir); else "". */
static void spelling_hint(const cli_cmd *cmd, const char *a, size_t len, char *hint, size_t n)
{
    static const char *const renamed[][2] = {{"--initial-prompt", "--prompt"}, {"--output-format", "--format"},
                                             {"--condition-on-previous-text", "--no-condition (for False)"}};
    static const char *const instead[][2] = {
        {"--fp16", ": sotto has no half-precision switch (its CPU math is openai's --fp16 False): leave it out"},
        {"--verbose", ": --quiet is openai's --verbose False (segments are printed by default)"},
        {"--model-dir", ": -m takes a model's path or an installed model's name"},
    };
    char dashed[64];
    size_t at, on;
    hint[0] = 0;
    if (len >= sizeof dashed || strncmp(a, "--", 2) != 0) return;
    for (size_t i = 0; i < len; i++) dashed[i] = a[i] == '_' ? '-' : a[i];
    dashed[len] = 0;
    const char *known = NULL;
    for (size_t i = 0; i < sizeof renamed / sizeof *renamed && !known; i++)
        if (!strcmp(dashed, renamed[i][0]) && find(cmd->opts, 0, renamed[i][1], strcspn(renamed[i][1], " "), &at, &on))
            known = renamed[i][1];
    if (!known && memchr(a, '_', len) && find(cmd->opts, 0, dashed, len, &at, &on)) known = dashed;
    if (known) snprintf(hint, n, ": sotto spells it %s", known);
    for (size_t i = 0; i < sizeof instead / sizeof *instead && !known; i++)
        if (!strcmp(dashed, instead[i][0])) snprintf(hint, n, "%s", instead[i][1]);
}

int cli_parse(const cli_cmd *cmd, int argc, char **argv, void *opts, int *n_pos)
{
    *n_pos = 0;
    bool options = true; /* until "--": after it every argument is an operand ("--" -x.wav) */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options && !strcmp(a, "--")) {
            options = false;
            continue;
        }
        if (!options || a[0] != '-' || !a[1]) {
            argv[++*n_pos] = argv[i]; /* never ahead of I: the arguments not yet read stay */
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            cli_help(cmd, stdout);
            return CLI_HELP;
        }
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        size_t len = eq ? (size_t)(eq - a) : strlen(a), at = 0, on = 0;
        const cli_opt *r = find(cmd->opts, 0, a, len, &at, &on);
        if (!r && eq && len == 6 && strncmp(a, "--help", 6) == 0) {
            fprintf(stderr, "sotto %s: --help takes no value (in '%s')\n", cmd->name, a);
            return EXIT_INPUT;
        }
        if (!r) {
            char hint[160];
            spelling_hint(cmd, a, len, hint, sizeof hint);
            fprintf(stderr, "sotto %s: unknown option '%s'%s (see sotto %s --help)\n", cmd->name, a, hint, cmd->name);
            return EXIT_INPUT;
        }
        if (r->kind == OPT_TRUE || r->kind == OPT_FALSE) {
            if (eq) {
                fprintf(stderr, "sotto %s: %s takes no value (in '%s')\n", cmd->name, r->name, a);
                return EXIT_INPUT;
            }
            /* openai's command line writes its switches with a value: --word_timestamps True */
            const char *next = i + 1 < argc ? argv[i + 1] : "";
            if ((!strcmp(next, "True") || !strcmp(next, "False")) && access(next, F_OK) != 0) {
                fprintf(stderr, "sotto %s: %s takes no value ('%s %s': %s alone is on, without it off)\n",
                        cmd->name, r->name, a, next, r->name);
                return EXIT_INPUT;
            }
            *(int *)((char *)opts + at) = r->kind == OPT_TRUE;
            continue;
        }
        if (!eq && i + 1 >= argc) {
            fprintf(stderr, "sotto %s: %s needs a value\n", cmd->name, a);
            return EXIT_INPUT;
        }
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)len, a);
        int rc = store(cmd, r, name, eq ? eq + 1 : argv[++i], opts, at, on);
        if (rc) return rc;
    }
    if (!cmd->many_args && *n_pos > cmd->max_args) {
        fprintf(stderr, "sotto %s: unexpected argument '%s'%s%s%s (see sotto %s --help)\n", cmd->name,
                argv[cmd->max_args + 1], cmd->max_args ? ": it takes " : "", cmd->max_args ? cmd->args : "",
                cmd->max_args ? " only" : "", cmd->name);
        return EXIT_INPUT;
    }
    if (*n_pos < cmd->min_args) {
        fprintf(stderr, "sotto %s: expected %s\n", cmd->name, cmd->args);
        cli_help(cmd, stderr);
        return EXIT_INPUT;
    }
    return 0;
}

/* One row's help: the option and its value's name, then the text at HELP_COLUMN. */
static void help_row(const cli_opt *r, const char *text, FILE *f)
{
    char left[128];
    int n = r->short_name ? snprintf(left, sizeof left, "  -%c, %s", r->short_name, r->name)
                          : snprintf(left, sizeof left, "  %s", r->name);
    if (r->arg) n += snprintf(left + n, sizeof left - (size_t)n, " %s", r->arg);
    fputs(left, f);
    if (n > HELP_COLUMN - 2) fprintf(f, "\n%*s", HELP_COLUMN, "");
    else fprintf(f, "%*s", HELP_COLUMN - n, "");
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t k = nl ? (size_t)(nl - p) : strlen(p);
        fprintf(f, "%.*s\n", (int)k, p);
        if (!nl) break;
        p = nl + 1;
        if (*p) fprintf(f, "%*s", HELP_COLUMN, "");
    }
}

static void help_rows(const cli_opt *t, const char *override, FILE *f)
{
    for (; t->kind != OPT_END; t++) {
        if (t->kind == OPT_TEXT) fputs(t->help, f);
        else if (t->kind == OPT_INCLUDE) help_rows(t->sub, t->help, f);
        else help_row(t, override ? override : t->help_fn ? t->help_fn() : t->help, f);
    }
}

void cli_help(const cli_cmd *cmd, FILE *f)
{
    fputs(cmd->usage, f);
    help_rows(cmd->opts, NULL, f);
    if (cmd->footer) fputs(cmd->footer, f);
}
