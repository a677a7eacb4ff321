/* main.c — the sotto command-line tool: subcommand dispatch and the top-level help; the
 * helpers every subcommand shares are in cli.c, options are parsed by cli_opt.c. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cli_opt.h"

static const char usage[] =
    "sotto " SOTTO_VERSION " - speech recognition with OpenAI Whisper models, in C\n"
    "\n"
    "usage: sotto COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  transcribe [-m MODEL] AUDIO...   print the transcript of audio/video files (- = stdin)\n"
    "  run [-m MODEL] --mel FILE [...]   token-level runner: raw log-mel in, token ids out\n"
    "  mel AUDIO OUT                     write the first 30 s window's log-mel as raw fp32\n"
    "  convert IN OUT.gguf [--type T]    convert a model (CTranslate2 / HF / ggml .bin / GGUF)\n"
    "  info MODEL | --devices            a model's hyper-parameters and sizes; the devices\n"
    "  bench [-m MODEL] [-t N]           machine-readable timings of the engine (JSON)\n"
    "  vad [--vad-model PATH] AUDIO      speech intervals (Silero VAD), or --probs per 32 ms\n"
    "  serve [-m MODEL] [--port N]       HTTP server: OpenAI's /v1/audio/transcriptions\n"
    "  stream [-m MODEL] [INPUT]         live transcription of audio as it arrives (- = stdin)\n"
    "\n"
    "MODEL is a .gguf file, a CTranslate2 Whisper directory, a Hugging Face Whisper\n"
    "directory or a whisper.cpp ggml .bin, or the name of an installed model (-m tiny.en: NAME.gguf in\n"
    "${XDG_DATA_HOME:-~/.local/share}/sotto/models). Without -m, $SOTTO_MODEL or the\n"
    "model `make demo` installed is used.\n"
    "Commands that run the model take --device BACKEND, BACKEND:N (its Nth device) or\n"
    "auto (the default, or $SOTTO_DEVICE: a GPU when the machine has one, else the CPU);\n"
    "this build's backends:%s.\n"
    "Run `sotto COMMAND --help` for the options of a command; `sotto --version` prints the\n"
    "version, the CPU kernels in use and what audio it reads.\n"
    "\n"
    "exit codes: 0 success, 1 invalid arguments or input, 2 execution error (unreadable\n"
    "model, out of memory, an output that cannot be written), 3 mismatch against --expected\n"
    "(sotto run), 130 interrupted (Ctrl-C), 143 terminated (SIGTERM)\n";

/* The top-level help; the backends are the library's registry's, so a new backend is
 * listed without touching the tool. */
static void print_usage(FILE *f)
{
    char names[256] = "";
    for (int i = 0; sotto_backend_name(i); i++) {
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, " %s", sotto_backend_name(i));
    }
    fprintf(f, usage, names);
}

/* SOTTO_KERNELS names a set the library did not take (unknown, or one this CPU lacks). */
static void check_kernels_env(void)
{
    static const char *const sets[] = {"scalar", "avx2", "avx_vnni", "avx512", "neon", "neon_dot", "neon_i8mm"};
    const char *env = getenv("SOTTO_KERNELS");
    if (!env || !*env || strcasecmp(env, sotto_kernels_name()) == 0) return; /* any case; empty: unset */
    bool known = false;
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) known |= strcasecmp(env, sets[i]) == 0;
    fprintf(stderr, "sotto: warning: SOTTO_KERNELS=%s %s (scalar, avx2, avx_vnni, avx512 on x86-64; neon, neon_dot, "
                    "neon_i8mm on ARM; as the CPU allows); using %s\n",
            env, known ? "is not a kernel set this CPU runs" : "names no kernel set", sotto_kernels_name());
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        print_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_INPUT : EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        check_kernels_env(); /* the line below then names the set in use, not the one asked for */
        printf("sotto %s (kernels: %s)\naudio input: %s\n", SOTTO_VERSION, sotto_kernels_name(),
               sotto_audio_formats());
        return EXIT_OK;
    }
    sotto_audio_ffmpeg_log(0); /* FFmpeg's own log: our messages carry what it said */
    static const struct { const char *name; int (*fn)(int, char **); } cmds[] = {
        {"transcribe", cmd_transcribe}, {"run", cmd_run}, {"mel", cmd_mel},
        {"convert", cmd_convert}, {"info", cmd_info}, {"bench", cmd_bench}, {"vad", cmd_vad},
        {"serve", cmd_serve}, {"stream", cmd_stream},
    };
    check_kernels_env();
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
        if (strcmp(argv[1], cmds[i].name) == 0) return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "sotto: unknown command '%s' (see sotto --help)\n", argv[1]);
    return EXIT_INPUT;
}

/* Every command's stdout is checked once more at the end (a full disk, a closed pipe):
 * a transcript that did not reach its place is an error, never exit 0. */
int main(int argc, char **argv)
{
    int rc = dispatch(argc, argv);
    errno = 0;
    bool failed = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !failed) failed = true, e = errno;
    if (failed && rc == EXIT_OK) { /* else the command said what went wrong */
        fprintf(stderr, "sotto: write error: %s\n", e ? strerror(e) : "standard output");
        rc = EXIT_EXEC;
    }
    return rc;
}
