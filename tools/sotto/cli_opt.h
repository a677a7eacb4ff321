/* cli_opt.h — the option tables of the sotto tool's subcommands: one row per option
 * ({long, short, kind, offset, lo, hi, ...}), one parser and one --help writer over them
 * (cli_opt.c), and the rows several subcommands share, defined once. */
#ifndef SOTTO_CLI_OPT_H
#define SOTTO_CLI_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_kind {
    OPT_END = 0,  /* ends a table */
    OPT_TRUE,     /* no value: the int at OFFSET becomes 1 */
    OPT_FALSE,    /* no value: the int at OFFSET becomes 0 */
    OPT_STR,      /* const char *: the value itself (argv's string) */
    OPT_INT,      /* int: a strict decimal integer in [lo, hi] */
    OPT_U64,      /* uint64_t: the same */
    OPT_FLOAT,    /* float: a finite number in [lo, hi] (see CLI_LO_OPEN, CLI_HI_OPEN) */
    OPT_DOUBLE,   /* double: the same */
    OPT_CALL,     /* CALL parses the value into OFFSET */
    OPT_INCLUDE,  /* the rows of SUB, their offsets counted from OFFSET */
    OPT_TEXT,     /* no option: HELP is printed as it is where the row stands */
} cli_kind;

enum {
    CLI_LO_OPEN = 1,  /* a number must be > lo, not >= */
    CLI_HI_OPEN = 2,  /* a number must be < hi, not <= */
    CLI_ON = 4,       /* a value given sets the int at ON to 1 */
    CLI_NONE = 8,     /* "none" (or "None") is a value too: it sets the int at ON to 0 */
};

typedef struct cli_opt cli_opt;
struct cli_opt {
    const char *name;        /* "--threads" */
    char short_name;         /* 't' for -t; 0: none */
    cli_kind kind;
    size_t offset;           /* of the target in the subcommand's option struct */
    double lo, hi;           /* the range of a number */
    const char *arg;         /* what --help calls the value ("N", "MODEL") */
    const char *what;        /* what a value must be, for messages: "a thread count in 1..256" */
    const char *help;        /* --help's text, lines after the first indented under it; for an
                                OPT_INCLUDE of one row, replaces that row's text */
    unsigned flags;          /* CLI_* */
    size_t on;               /* with CLI_ON / CLI_NONE: the int that says a value was given */
    /* OPT_CALL: parses V into FIELD (the target at OFFSET); false with *WHAT saying what a
     * value must be (NULL: the row's WHAT) */
    bool (*call)(void *field, const char *v, const char **what);
    const char *(*help_fn)(void); /* when set: --help's text, made when it is shown */
    const cli_opt *sub;      /* OPT_INCLUDE */
};

/* A subcommand: its name (messages are "sotto NAME: ..."), the help before and after the
 * options, and its table. */
typedef struct cli_cmd {
    const char *name;
    const char *usage;       /* --help before the options: usage line and description */
    const cli_opt *opts;
    const char *footer;      /* --help after them: exit codes, examples; may be NULL */
    bool strings_once;       /* a string option given twice is refused (sotto run) */
    int min_args, max_args;  /* positional arguments it takes (0, 0: none) */
    bool many_args;          /* or any number of them, at least MIN_ARGS (AUDIO...) */
    const char *args;        /* what they are, for "expected ARGS": "AUDIO and OUT" */
} cli_cmd;

enum { CLI_HELP = -1 };

/* Parses ARGV[1..ARGC-1] into OPTS by CMD's table: `--name value`, `--name=value`, `-x value`;
 * `-` alone, anything not starting with '-' and every argument after `--` are positional
 * (`-- -x.wav`), and on success ARGV[1..*N_POS]
 * hold them in order. -h and --help print the help on stdout and return CLI_HELP. Returns 0,
 * or EXIT_INPUT after a message naming the command, the option and the value: an unknown
 * option, a missing value, a value out of range or not of its kind, a value given to an
 * option that takes none, more or fewer positional arguments than CMD takes (then with
 * the help on stderr). */
int cli_parse(const cli_cmd *cmd, int argc, char **argv, void *opts, int *n_pos);

/* CMD's --help: usage, the options (rows in table order, help at column 27), footer. */
void cli_help(const cli_cmd *cmd, FILE *f);

/* ---- what several subcommands share ---- */

/* The fields the shared rows below write: a subcommand's option struct holds one. */
typedef struct cli_common {
    const char *model;       /* -m */
    const char *device;      /* --device */
    const char *vad_model;   /* --vad-model */
    int threads;             /* -t; 0: not given */
    int no_fallback;         /* --no-fallback */
} cli_common;

/* Each a table of one row over a cli_common (include it at the offset of the subcommand's
 * cli_common): -m/--model, -t/--threads (1..256), --device, --vad-model, --no-fallback. */
extern const cli_opt cli_opt_model[], cli_opt_threads[], cli_opt_device[], cli_opt_vad_model[],
    cli_opt_no_fallback[];

/* The decoding options transcribe and serve share, over a sotto_transcribe_params:
 * --beam-size and --best-of (1..SOTTO_MAX_SEQUENCES), --sample-len (1..448). */
extern const cli_opt cli_opts_search[];
/* --no-silence-check, over a sotto_transcribe_params. */
extern const cli_opt cli_opt_no_silence_check[];
/* --task transcribe|translate, over an int (translate: 1): include it at the offset of
 * the params' translate. */
extern const cli_opt cli_opt_task[];

/* Seconds given as "0,5.5,8" (--clip-timestamps). */
enum { CLI_MAX_TIMES = 256 };
typedef struct cli_times {
    double t[CLI_MAX_TIMES];
    int n;
} cli_times;

/* An OPT_CALL parser into a cli_times: comma-separated finite numbers >= 0, at most
 * CLI_MAX_TIMES of them, no empty item. */
bool cli_parse_times(void *field, const char *v, const char **what);

enum { CLI_MAX_IDS = 8192 };
typedef struct cli_ids {
    int32_t v[CLI_MAX_IDS];
    int n;
    bool given;
} cli_ids;

/* An OPT_CALL parser into a cli_ids: openai-whisper's --suppress_tokens, token ids >= -1
 * separated by commas (blanks around each allowed, as Python's int() takes them), at
 * most CLI_MAX_IDS; "" is the empty list. */
bool cli_parse_suppress(void *field, const char *v, const char **what);

/* Strict decimal integer in [lo, hi]; false for anything else ("12abc", "", "+1"). */
bool cli_parse_int(const char *s, long lo, long hi, long *out);

#endif
