/* cmd_bench.c — `sotto bench`: machine-readable timings of the engine alone (model load,
 * encoder per 30 s window, decoder prefill and per-step cost, peak RSS), medians over
 * repeated runs, as one JSON object on stdout. bench/ compares them with peers. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "cli_opt.h"
#include "output.h"

typedef struct bench_opts {
    cli_common c;
    const char *audio;
    int runs, tokens;
} bench_opts;

static const cli_opt options[] = {
    {.kind = OPT_INCLUDE, .sub = cli_opt_model, .offset = offsetof(bench_opts, c)},
    {.kind = OPT_INCLUDE, .sub = cli_opt_threads, .offset = offsetof(bench_opts, c)},
    {"--runs", 0, OPT_INT, offsetof(bench_opts, runs), 1, 1000, "N", "a run count in 1..1000",
     .help = "runs of each measure, 1..1000; the median is printed (default 5)"},
    {"--tokens", 0, OPT_INT, offsetof(bench_opts, tokens), 2, 400, "N", "a token count in 2..400",
     .help = "tokens decoded per run, 2..400 (default 32): the first from the\n"
             "prefill, the N - 1 steps after it timed (step_tokens)"},
    {"--audio", 0, OPT_STR, offsetof(bench_opts, audio), 0, 0, "AUDIO", "a path",
     .help = "the window is its first 30 s: any file FFmpeg reads, - for stdin (default: silence)"},
    {.kind = OPT_INCLUDE, .sub = cli_opt_device, .offset = offsetof(bench_opts, c),
     .help = "as for sotto run (the JSON names it)"},
    {0},
};

/* The first 30 s of PATH as transcribe reads audio (sotto_audio_*: any format, "-" for
 * stdin) into *PCM (malloc'd) and *N; false with a message printed. */
static bool first_window(const char *path, float **pcm, int64_t *n)
{
    sotto_audio *a = NULL;
    *pcm = malloc((size_t)SOTTO_N_SAMPLES * sizeof **pcm);
    *n = 0;
    sotto_status st = *pcm ? sotto_audio_open(path, &a) : SOTTO_ERR_NOMEM;
    for (int64_t got = 1; !st && got > 0 && *n < SOTTO_N_SAMPLES; *n += got)
        st = sotto_audio_read(a, *pcm + *n, SOTTO_N_SAMPLES - *n, &got);
    sotto_audio_close(a);
    if (st) fprintf(stderr, "sotto bench: %s\n", st == SOTTO_ERR_NOMEM ? "out of memory" : sotto_last_error());
    return !st;
}

static const cli_cmd command = {
    .name = "bench",
    .usage = "usage: sotto bench [-m MODEL] [-t N] [--runs N] [--tokens N] [--audio AUDIO] [--device DEV]\n"
             "\n"
             "Times the engine alone and prints one JSON object: model load, encoder per 30 s\n"
             "window, decoder prefill (the 4-token multilingual or 2-token English prefix) and\n"
             "per-token step cost (plain argmax over the N - 1 steps after the prefill, EOS\n"
             "ignored), each the median of --runs runs (default 5), and the peak resident set\n"
             "size. The window is the first 30 s of --audio (read as sotto transcribe reads\n"
             "audio), or silence.\n"
             "\n",
    .opts = options,
};

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
    bench_opts o = {.runs = 5, .tokens = 32};
    int n_pos;
    int rc = cli_parse(&command, argc, argv, &o, &n_pos);
    if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
    const char *device = cli_device("bench", o.c.device);
    long threads = o.c.threads, runs = o.runs, tokens = o.tokens;
    char path[4096];
    if (!device || !cli_model_path(o.c.model, path, sizeof path)) return EXIT_INPUT;
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
    rc = EXIT_EXEC;
    if (!mel || !enc || !pre || !step || !ids) {
        fprintf(stderr, "sotto bench: out of memory\n");
        goto done;
    }
    if (!(ctx = cli_context("bench", model, &cp))) goto done;
    if (o.audio && !first_window(o.audio, &pcm, &n_pcm)) {
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
        sotto_greedy_params first = gp;
        first.max_new_tokens = 1; /* untimed: the first argmax makes the CPU's vocabulary proxy, once per model */
        if ((r == 0 && sotto_greedy(ctx, &first, ids, &n_out, NULL) != SOTTO_OK) ||
            sotto_greedy(ctx, &gp, ids, &n_out, &s) != SOTTO_OK) {
            fprintf(stderr, "sotto bench: %s\n", sotto_context_error(ctx));
            goto done;
        }
        pre[r] = s.prefill_ms;
        step[r] = s.n_steps ? s.steps_ms / s.n_steps : 0;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const char *tn[] = {"f32", "f16", "", "", "", "", "", "", "q8_0"};
    printf("{\"engine\": \"sotto\", \"version\": \"%s\", \"model\": ", SOTTO_VERSION);
    out_json_string(stdout, path); /* a path may hold quotes, backslashes, control bytes */
    printf(", \"encoder_type\": \"%s\", "
           "\"decoder_type\": \"%s\", \"device\": \"%s\", \"kernels\": \"%s\", \"threads\": %ld, \"runs\": %ld, \"load_ms\": %.2f, \"encode_ms\": %.2f, "
           "\"prefill_ms\": %.3f, \"prefill_tokens\": %d, \"step_ms\": %.3f, \"step_tokens\": %ld, "
           "\"peak_rss_mb\": %.1f}\n",
           tn[h.encoder_type], tn[h.decoder_type], sotto_context_device(ctx), sotto_kernels_name(), (long)cp.n_threads, runs, load_ms, median(enc, (int)runs),
           median(pre, (int)runs), h.multilingual ? 4 : 2, median(step, (int)runs), tokens - 1,
           ru.ru_maxrss / 1024.0);
    rc = EXIT_OK;
done:
    free(mel), free(pcm), free(enc), free(pre), free(step), free(ids);
    sotto_context_free(ctx);
    sotto_model_free(model);
    return rc;
}
