/* cmd_transcribe.c — `sotto transcribe`: WAV files in, transcripts out (greedy decoding
 * with the reference suppress rules, 30 s windows back to back). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char help[] =
    "usage: sotto transcribe [-m MODEL] [-t N] [-l LANG] [--task transcribe|translate]\n"
    "                        [-o OUT.txt] [--device DEV] AUDIO...\n"
    "\n"
    "Prints the transcript of each AUDIO file (16 kHz mono WAV, 16-bit PCM or 32-bit\n"
    "float; convert others with: sox IN -r 16000 -c 1 -b 16 OUT.wav). Long files are\n"
    "decoded in 30 s windows, one after the other.\n"
    "\n"
    "  -m, --model MODEL    .gguf, CTranslate2 or Hugging Face model; default: $SOTTO_MODEL,\n"
    "                       else the tiny.en model `make demo` installed\n"
    "  -t, --threads N      worker threads (default: all cores)\n"
    "  -l, --language LANG  spoken language code for multilingual models (default en)\n"
    "  --task TASK          transcribe (default) or translate (to English; multilingual)\n"
    "  -o, --output FILE    also write the transcript(s) to FILE (written whole, then renamed)\n"
    "  --device DEV         cpu, vulkan, vulkan:N or auto (default: $SOTTO_DEVICE, else auto:\n"
    "                       a GPU when the machine has one, else the CPU); stderr names it\n";

int cmd_transcribe(int argc, char **argv)
{
    const char *model_flag = NULL, *lang = NULL, *task = "transcribe", *output = NULL, *device = NULL;
    long threads = 0;
    const char **files = calloc((size_t)argc, sizeof *files);
    int n_files = 0;
    if (!files) return EXIT_EXEC;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(help, stdout);
            free(files);
            return EXIT_OK;
        }
        if (strcmp(a, "-m") == 0 || strcmp(a, "--model") == 0) slot = &model_flag;
        else if (strcmp(a, "-l") == 0 || strcmp(a, "--language") == 0) slot = &lang;
        else if (strcmp(a, "--task") == 0) slot = &task;
        else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) slot = &output;
        else if (strcmp(a, "--device") == 0) slot = &device;
        else if (strcmp(a, "-t") == 0 || strcmp(a, "--threads") == 0) {
            if (i + 1 >= argc || !cli_parse_int(argv[++i], 1, 256, &threads)) {
                fprintf(stderr, "sotto transcribe: %s takes a thread count in 1..256\n", a);
                free(files);
                return EXIT_INPUT;
            }
            continue;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "sotto transcribe: unknown option '%s' (see sotto transcribe --help)\n", a);
            free(files);
            return EXIT_INPUT;
        } else {
            files[n_files++] = a;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "sotto transcribe: %s needs a value\n", a);
            free(files);
            return EXIT_INPUT;
        }
        *slot = argv[++i];
    }
    bool translate = strcmp(task, "translate") == 0;
    if (!translate && strcmp(task, "transcribe") != 0) {
        fprintf(stderr, "sotto transcribe: --task is transcribe or translate, not '%s'\n", task);
        free(files);
        return EXIT_INPUT;
    }
    if (!(device = cli_device("transcribe", device))) {
        free(files);
        return EXIT_INPUT;
    }
    if (n_files == 0) {
        fprintf(stderr, "sotto transcribe: no AUDIO file given\n%s", help);
        free(files);
        return EXIT_INPUT;
    }
    char path[4096];
    if (!cli_model_path(model_flag, path, sizeof path)) {
        free(files);
        return EXIT_INPUT;
    }
    sotto_model *model = cli_load_model(path);
    if (!model) {
        free(files);
        return EXIT_EXEC;
    }
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = (int)threads;
    cp.device = device;
    sotto_context *ctx = NULL;
    int rc = EXIT_OK;
    char *all = calloc(1, 1);
    size_t all_len = 0;
    if (!all) fprintf(stderr, "sotto transcribe: out of memory\n");
    if (!all || !(ctx = cli_context("transcribe", model, &cp))) rc = EXIT_EXEC;
    sotto_transcribe_params tp = sotto_transcribe_params_default();
    tp.language = lang;
    tp.translate = translate;
    bool tty = isatty(STDERR_FILENO);
    for (int f = 0; f < n_files && rc == EXIT_OK; f++) {
        float *pcm = NULL;
        int64_t n = 0;
        if (sotto_wav_read(files[f], &pcm, &n) != SOTTO_OK) {
            fprintf(stderr, "sotto transcribe: %s\n", sotto_last_error());
            rc = EXIT_INPUT;
            break;
        }
        if (tty) fprintf(stderr, "sotto: %s (%.1f s of audio)...\n", files[f], (double)n / SOTTO_SAMPLE_RATE);
        char *text = NULL;
        sotto_status st = sotto_transcribe(ctx, pcm, n, &tp, &text);
        sotto_free(pcm);
        if (st != SOTTO_OK) {
            fprintf(stderr, "sotto transcribe: %s: %s\n", files[f], sotto_context_error(ctx));
            rc = st == SOTTO_ERR_INVALID_ARG ? EXIT_INPUT : EXIT_EXEC;
            break;
        }
        if (n_files > 1) printf("%s: ", files[f]);
        printf("%s\n", text);
        fflush(stdout);
        size_t len = strlen(text);
        char *p = realloc(all, all_len + len + 2);
        if (p) {
            all = p;
            memcpy(all + all_len, text, len);
            all_len += len;
            all[all_len++] = '\n';
            all[all_len] = 0;
        }
        sotto_free(text);
    }
    if (rc == EXIT_OK && output && !cli_write_file(output, all, all_len)) {
        fprintf(stderr, "sotto transcribe: cannot write %s\n", output);
        rc = EXIT_EXEC;
    }
    free(all);
    free(files);
    sotto_context_free(ctx);
    sotto_model_free(model);
    return rc;
}
