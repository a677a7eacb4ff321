/* cmd_bench.c — `sotto bench`: machine-readable timings of the engine alone (model load,
 * encoder per 30 s window, decoder prefill and per-step cost, peak RSS), medians over
 * repeated runs, as one JSON object on stdout. bench/ compares them with peers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"

static const char help[] =
    "usage: sotto bench [-m MODEL] [-t N] [--runs N] [--tokens N] [--audio FILE.wav] [--device DEV]\n"
    "\n"
    "Times the engine alone and prints one JSON object: model load, encoder per 30 s\n"
    "window, decoder prefill (the 4-token multilingual or 2-token English prefix) and\n"
    "per-token step cost (plain argmax over N tokens, EOS ignored), each the median of\n"
    "--runs runs (default 5), and the peak resident set size. The window is the first\n"
    "30 s of --audio, or silence. --device as for sotto run (the JSON names it).\n";

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int cmd_bench(int argc, char **argv)
{
    const char *model_flag = NULL, *audio = NULL, *device = NULL;
    long threads = 0, runs = 5, tokens = 32;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(help, stdout);
            return EXIT_OK;
        }
        bool has = i + 1 < argc;
        if ((strcmp(a, "-m") == 0 || strcmp(a, "--model") == 0) && has) model_flag = argv[++i];
        else if (strcmp(a, "--audio") == 0 && has) audio = argv[++i];
        else if (strcmp(a, "--device") == 0 && has) device = argv[++i];
        else if ((strcmp(a, "-t") == 0 || strcmp(a, "--threads") == 0) && has && cli_parse_int(argv[i + 1], 1, 256, &threads)) i++;
        else if (strcmp(a, "--runs") == 0 && has && cli_parse_int(argv[i + 1], 1, 1000, &runs)) i++;
        else if (strcmp(a, "--tokens") == 0 && has && cli_parse_int(argv[i + 1], 2, 400, &tokens)) i++;
        else {
            fprintf(stderr, "sotto bench: bad option or value '%s' (see sotto bench --help)\n", a);
            return EXIT_INPUT;
        }
    }
    char path[4096];
    if (!(device = cli_device("bench", device))) return EXIT_INPUT;
    if (!cli_model_path(model_flag, path, sizeof path)) return EXIT_INPUT;
    double t0 = cli_now_ms();
    sotto_model *model = cli_load_model(path);
    if (!model) return EXIT_EXEC;
    double load_ms = cli_now_ms() - t0;
    sotto_model_info h;
    sotto_model_get_info(model, &h);
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = cli_threads(threads);
    cp.max_sequences = 1; /* the greedy engine alone, as the peers are timed */
    cp.device = device;
    sotto_context *ctx = NULL;
    size_t n_mel = (size_t)h.n_mels * SOTTO_N_FRAMES;
    float *mel = calloc(n_mel, sizeof *mel), *pcm = NULL;
    int64_t n_pcm = 0;
    double *enc = malloc((size_t)runs * sizeof *enc), *pre = malloc((size_t)runs * sizeof *pre),
           *step = malloc((size_t)runs * sizeof *step);
    int32_t *ids = malloc((size_t)h.n_text_ctx * sizeof *ids);
    int rc = EXIT_EXEC;
    if (!mel || !enc || !pre || !step || !ids) {
        fprintf(stderr, "sotto bench: out of memory\n");
        goto done;
    }
    if (!(ctx = cli_context("bench", model, &cp))) goto done;
    if (audio && sotto_wav_read(audio, &pcm, &n_pcm) != SOTTO_OK) {
        fprintf(stderr, "sotto bench: %s\n", sotto_last_error());
        rc = EXIT_INPUT;
        goto done;
    }
    sotto_mel_window(pcm, n_pcm, h.n_mels, mel);
    int32_t never = -1;
    sotto_greedy_params gp = sotto_greedy_params_default();
    gp.eos = &never, gp.n_eos = 1, gp.max_new_tokens = (int)tokens, gp.suppress = 0;
    int n_out = 0;
    for (long r = 0; r < runs; r++) {
        double t = cli_now_ms();
        sotto_encode(ctx, mel, (int64_t)n_mel);
        enc[r] = cli_now_ms() - t;
        sotto_decode_stats s;
        if (sotto_greedy(ctx, &gp, ids, &n_out, &s) != SOTTO_OK) {
            fprintf(stderr, "sotto bench: %s\n", sotto_context_error(ctx));
            goto done;
        }
        pre[r] = s.prefill_ms;
        step[r] = s.n_steps ? s.steps_ms / s.n_steps : 0;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const char *tn[] = {"f32", "f16", "", "", "", "", "", "", "q8_0"};
    printf("{\"engine\": \"sotto\", \"version\": \"%s\", \"model\": \"%s\", \"encoder_type\": \"%s\", "
           "\"decoder_type\": \"%s\", \"device\": \"%s\", \"kernels\": \"%s\", \"threads\": %ld, \"runs\": %ld, \"load_ms\": %.2f, \"encode_ms\": %.2f, "
           "\"prefill_ms\": %.3f, \"prefill_tokens\": %d, \"step_ms\": %.3f, \"step_tokens\": %ld, "
           "\"peak_rss_mb\": %.1f}\n",
           SOTTO_VERSION, path, tn[h.encoder_type], tn[h.decoder_type], sotto_context_device(ctx), sotto_kernels_name(), (long)cp.n_threads, runs, load_ms, median(enc, (int)runs),
           median(pre, (int)runs), h.multilingual ? 4 : 2, median(step, (int)runs), tokens - 1,
           ru.ru_maxrss / 1024.0);
    rc = EXIT_OK;
done:
    free(mel), free(pcm), free(enc), free(pre), free(step), free(ids);
    sotto_context_free(ctx);
    sotto_model_free(model);
    return rc;
}
