/* test_batch.c — batched transcription (faster-whisper's BatchedInferencePipeline): the
 * chunk boundaries identical to faster-whisper 1.2.1's (tests/golden/batch, made by
 * scripts/golden_batch_chunks.py).
 *
 * Batched decoding: every chunk's tokens in a batch of B equal those of the same chunk in
 * a batch of its own (the engine's row independence: one encoder pass of B x 1500 rows,
 * decoder steps over every live row of every chunk), greedy and beam 5, with and without
 * timestamps; and the checks of batch_size and max_batch.
 *
 * usage: test_batch chunks VAD.gguf GOLDEN_DIR DIR...   (each golden NAME.chunks read
 *        against NAME.wav in the first DIR that has it)
 *        test_batch decode MODEL VAD.gguf AUDIO B [SECONDS]   (the first SECONDS of AUDIO)
 *        test_batch pool MODEL CLIP...   (sotto_transcribe_batch: at least 3 clips of <= 30 s)
 *        test_batch continue MODEL VAD.gguf AUDIO   (batch_continue, beam 5, timestamps)
 *
 * batch_continue: a chunk whose decoding stops early goes on from its last timestamp (a
 * segment whose seek is no chunk's start), batch 5 equal to batches of 1; refused without
 * timestamps.
 *
 * Pooled items (sotto_transcribe_batch, as `sotto serve --batch-size` runs requests): each
 * item's segments equal its transcription alone, with and without timestamps in one call;
 * an item with bad audio, bad params or an abort callback that fires fails alone.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sotto.h"

/* The WAV NAME.wav from the first of DIRS that has it. */
static int load(const char *name, char **dirs, int n_dirs, float **x, int64_t *n)
{
    for (int i = 0; i < n_dirs; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.wav", dirs[i], name);
        if (access(path, R_OK) == 0) return sotto_wav_read(path, x, n) == SOTTO_OK ? 0 : -1;
    }
    return -1;
}

/* Our rows for a signal, in the golden's format. */
static char *our_rows(const sotto_vad *vad, const float *x, int64_t n)
{
    sotto_vad_interval *sp;
    sotto_batch_chunk *ch;
    int64_t n_sp, n_ch;
    if (sotto_batch_chunks(vad, x, n, 30.0, 1, &sp, &n_sp, &ch, &n_ch)) return NULL;
    size_t cap = 64 + (size_t)(n_sp + n_ch) * 48, at = 0;
    char *s = malloc(cap);
    for (int64_t i = 0; s && i < n_sp; i++)
        at += (size_t)snprintf(s + at, cap - at, "speech %" PRId64 " %" PRId64 "\n", sp[i].start, sp[i].end);
    for (int64_t i = 0; s && i < n_ch; i++) {
        int64_t len = 0; /* the chunk's audio: its intervals end to end */
        for (int64_t k = ch[i].first; k < ch[i].first + ch[i].n_speech; k++) len += sp[k].end - sp[k].start;
        CHECK(len == ch[i].n_samples, "chunk %" PRId64 ": %" PRId64 " samples, its intervals hold %" PRId64, i,
              ch[i].n_samples, len);
        at += (size_t)snprintf(s + at, cap - at, "chunk %" PRId64 " %" PRId64 "\n", ch[i].offset, ch[i].n_samples);
    }
    sotto_free(sp), sotto_free(ch);
    return s;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

static void test_chunks(const char *vad_path, const char *golden, char **dirs, int n_dirs)
{
    sotto_vad *vad;
    CHECK(sotto_vad_load(vad_path, &vad) == SOTTO_OK, "%s", sotto_last_error());
    DIR *d = opendir(golden);
    CHECK(d != NULL, "%s", golden);
    int n_files = 0;
    for (struct dirent *e; vad && d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 8 || strcmp(e->d_name + len - 7, ".chunks")) continue;
        char name[256], path[4096];
        snprintf(name, sizeof name, "%.*s", (int)(len - 7), e->d_name);
        snprintf(path, sizeof path, "%s/%s", golden, e->d_name);
        char *want = slurp(path);
        float *x = NULL;
        int64_t n = 0;
        CHECK(want && load(name, dirs, n_dirs, &x, &n) == 0, "%s: no golden or no audio", name);
        char *body = want ? strchr(want, '\n') : NULL; /* after the comment line */
        char *got = x ? our_rows(vad, x, n) : NULL;
        CHECK(got && body && strcmp(body + 1, got) == 0, "%s: chunks differ from faster-whisper's:\n%s--- ours:\n%s",
              name, body ? body + 1 : "", got ? got : "(none)");
        n_files++;
        free(want), free(got), sotto_free(x);
    }
    CHECK(n_files >= 3, "%d golden files in %s", n_files, golden);
    if (d) closedir(d);
    /* no speech: no chunk; a bad chunk length refused */
    float zeros[16000] = {0};
    sotto_vad_interval *sp;
    sotto_batch_chunk *ch;
    int64_t n_sp = -1, n_ch = -1;
    CHECK(vad && sotto_batch_chunks(vad, zeros, 16000, 30, 1, &sp, &n_sp, &ch, &n_ch) == SOTTO_OK && n_sp == 0 &&
              n_ch == 0 && !ch,
          "silence: %" PRId64 " intervals, %" PRId64 " chunks", n_sp, n_ch);
    CHECK(vad && sotto_batch_chunks(vad, zeros, 16000, 31, 1, &sp, &n_sp, &ch, &n_ch) == SOTTO_ERR_INVALID_ARG &&
              strstr(sotto_last_error(), "chunk length"),
          "a 31 s chunk length: %s", sotto_last_error());
    sotto_vad_free(vad);
}

/* AUDIO transcribed with batch_size B on a context of max_batch B. */
static sotto_result *batched(const sotto_model *m, const sotto_vad *vad, const float *x, int64_t n, int B, int beam,
                             int timestamps, int words)
{
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = 2, cp.device = "cpu", cp.max_batch = B;
    sotto_context *ctx;
    sotto_result *r = NULL;
    CHECK(sotto_context_init(m, &cp, &ctx) == SOTTO_OK, "context of %d: %s", B, sotto_last_error());
    sotto_transcribe_params p = sotto_transcribe_params_default();
    p.vad = vad, p.batch_size = B, p.beam_size = beam, p.timestamps = timestamps, p.word_timestamps = words;
    CHECK(ctx && sotto_transcribe(ctx, x, n, &p, &r) == SOTTO_OK, "batch %d: %s", B, sotto_context_error(ctx));
    sotto_context_free(ctx);
    return r;
}

static bool same_segments(const sotto_result *a, const sotto_result *b)
{
    if (!a || !b || a->n_segments != b->n_segments) return false;
    for (int i = 0; i < a->n_segments; i++) {
        const sotto_segment *x = &a->segments[i], *y = &b->segments[i];
        if (x->n_tokens != y->n_tokens || memcmp(x->tokens, y->tokens, (size_t)x->n_tokens * sizeof *x->tokens) ||
            x->start != y->start || x->end != y->end || x->avg_logprob != y->avg_logprob || strcmp(x->text, y->text))
            return false;
    }
    return true;
}

static void test_decode(const char *model, const char *vad_path, const char *audio, int B, double seconds)
{
    sotto_model *m;
    sotto_vad *vad;
    float *x;
    int64_t n;
    if (sotto_model_load(model, &m) || sotto_vad_load(vad_path, &vad) || sotto_wav_read(audio, &x, &n)) {
        CHECK(0, "inputs: %s", sotto_last_error());
        return;
    }
    if (seconds > 0 && n > (int64_t)(seconds * 16000)) n = (int64_t)(seconds * 16000);
    /* beam, timestamps, word timestamps; with fewer windows than chunks a window whose
     * chunk ends takes the next while the others decode on (batch_run.c) */
    static const int modes[][3] = {{1, 0, 0}, {5, 0, 0}, {5, 1, 0}, {5, 1, 1}};
    for (size_t k = 0; k < sizeof modes / sizeof *modes; k++) {
        sotto_result *rb = batched(m, vad, x, n, B, modes[k][0], modes[k][1], modes[k][2]);
        sotto_result *r1 = batched(m, vad, x, n, 1, modes[k][0], modes[k][1], modes[k][2]);
        CHECK(rb && rb->n_segments >= 2, "beam %d: %d segments", modes[k][0], rb ? rb->n_segments : -1);
        CHECK(same_segments(rb, r1), "beam %d timestamps %d words %d: batch %d differs from batches of 1:\n%s\n---\n%s",
              modes[k][0], modes[k][1], modes[k][2], B, rb ? rb->text : "", r1 ? r1->text : "");
        for (int i = 1; rb && i < rb->n_segments; i++)
            CHECK(rb->segments[i].start >= rb->segments[i - 1].start && rb->segments[i].end <= n / 16000.0 + 0.02,
                  "segment %d at %.2f .. %.2f", i, rb->segments[i].start, rb->segments[i].end);
        if (k == 0 && rb) printf("batch %d greedy: %d segments, %s\n", B, rb->n_segments, rb->text);
        sotto_result_free(rb), sotto_result_free(r1);
    }
    /* a batch larger than the context's, and max_batch out of range, refused with a message */
    sotto_context_params cp = sotto_context_params_default();
    cp.device = "cpu", cp.n_threads = 1;
    sotto_context *ctx = NULL;
    sotto_result *r = NULL;
    CHECK(sotto_context_init(m, &cp, &ctx) == SOTTO_OK, "%s", sotto_last_error());
    sotto_transcribe_params p = sotto_transcribe_params_default();
    p.vad = vad, p.batch_size = 2;
    CHECK(ctx && sotto_transcribe(ctx, x, n, &p, &r) == SOTTO_ERR_INVALID_ARG && strstr(sotto_context_error(ctx), "max_batch"),
          "batch 2 on a context of 1: %s", sotto_context_error(ctx));
    p.vad = NULL, p.batch_size = 1;
    CHECK(ctx && sotto_transcribe(ctx, x, n, &p, &r) == SOTTO_ERR_INVALID_ARG && strstr(sotto_context_error(ctx), "VAD"),
          "over 30 s without a VAD: %s", sotto_context_error(ctx));
    sotto_context_free(ctx);
    cp.max_batch = 100;
    CHECK(sotto_context_init(m, &cp, &ctx) == SOTTO_ERR_INVALID_ARG && strstr(sotto_last_error(), "max_batch"), "%s",
          sotto_last_error());
    cp.max_batch = 64, cp.max_sequences = 16;
    CHECK(sotto_context_init(m, &cp, &ctx) == SOTTO_ERR_INVALID_ARG && strstr(sotto_last_error(), "at most 28"), "%s",
          sotto_last_error());
    sotto_free(x);
    sotto_vad_free(vad);
    sotto_model_free(m);
}

static int abort_now(double audio_s, void *user)
{
    (void)audio_s;
    return *(int *)user;
}

static int count_language(const char *lang, float prob, void *user)
{
    (void)lang, (void)prob;
    ++*(int *)user;
    return 0;
}

static void test_pool(const char *model, char **clips, int n_clips)
{
    sotto_model *m;
    CHECK(sotto_model_load(model, &m) == SOTTO_OK, "%s", sotto_last_error());
    if (!m) return;
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = 2, cp.device = "cpu", cp.max_batch = 4, cp.max_sequences = 1;
    sotto_context *ctx;
    CHECK(sotto_context_init(m, &cp, &ctx) == SOTTO_OK, "%s", sotto_last_error());
    sotto_transcribe_params p = sotto_transcribe_params_default(), pt, pbad;
    int n_lang = 0; /* as sotto_transcribe: called for a detected language only, none with tiny.en */
    p.batch_size = 4, p.beam_size = 1, p.best_of = 1, p.timestamps = 0;
    p.on_language = count_language, p.user_data = &n_lang;
    pt = p, pt.timestamps = 1;
    pbad = p, pbad.batch_size = 8; /* more than the context's max_batch */
    enum { EXTRA = 4 };
    sotto_batch_item it[16 + EXTRA]; /* 12 in the prompts' pool below */
    sotto_audio_source src[16];
    int n = n_clips < 16 ? n_clips : 16, yes = 1;
    memset(it, 0, sizeof it);
    for (int i = 0; i < n; i++) {
        src[i] = (sotto_audio_source){.kind = SOTTO_SOURCE_PATH, .path = clips[i]};
        it[i] = (sotto_batch_item){.source = &src[i], .params = i == 1 ? &pt : &p};
    }
    sotto_transcribe_params pa = p; /* an abort callback that fires */
    pa.abort_callback = abort_now, pa.user_data = &yes;
    sotto_audio_source missing = {.kind = SOTTO_SOURCE_PATH, .path = "/nonexistent/clip.wav"};
    it[n] = (sotto_batch_item){.source = &src[0], .params = &pa};
    it[n + 1] = (sotto_batch_item){.source = &missing, .params = &p};
    it[n + 2] = (sotto_batch_item){.source = &src[0], .params = &pbad};
    it[n + 3] = (sotto_batch_item){.samples = NULL, .n_samples = 5, .params = &p};
    sotto_status st = ctx ? sotto_transcribe_batch(ctx, it, n + EXTRA) : SOTTO_ERR_INVALID_ARG;
    CHECK(st == SOTTO_ERR_CANCELLED, "the first failed item's status: %s", sotto_status_str(st));
    for (int i = 0; ctx && i < n; i++) {
        sotto_result *alone = NULL;
        CHECK(it[i].status == SOTTO_OK && it[i].result, "clip %d: %s", i, it[i].error);
        CHECK(sotto_transcribe_source(ctx, &src[i], it[i].params, &alone) == SOTTO_OK, "%s", sotto_context_error(ctx));
        CHECK(same_segments(it[i].result, alone), "clip %d pooled differs from alone:\n%s\n---\n%s", i,
              it[i].result ? it[i].result->text : "", alone ? alone->text : "");
        CHECK(alone && alone->n_segments > 0 && strlen(alone->text) > 10, "clip %d: no text", i);
        sotto_result_free(alone), sotto_result_free(it[i].result);
    }
    /* polled while its audio is read, as sotto_transcribe polls it: it stops there */
    CHECK(it[n].status == SOTTO_ERR_CANCELLED && !it[n].result && strstr(it[n].error, "while reading the audio"), "%s",
          it[n].error);
    CHECK(it[n + 1].status == SOTTO_ERR_IO && !it[n + 1].result && it[n + 1].error[0], "%s %s",
          sotto_status_str(it[n + 1].status), it[n + 1].error);
    CHECK(it[n + 2].status == SOTTO_ERR_INVALID_ARG && strstr(it[n + 2].error, "max_batch"), "%s", it[n + 2].error);
    CHECK(it[n + 3].status == SOTTO_ERR_INVALID_ARG && strstr(it[n + 3].error, "without audio"), "%s", it[n + 3].error);
    CHECK(n_lang == 0, "on_language called %d times for an English-only model", n_lang);
    CHECK(sotto_transcribe_batch(ctx, it, 0) == SOTTO_ERR_INVALID_ARG, "no items");

    /* the pipeline's prompts: twelve items, each with a prompt of another length (twelve
     * groups of one prompt length; hotwords on the first), pooled: each equals itself alone,
     * and its prompt changed the decoding of at least one */
    enum { NP = 12 };
    sotto_transcribe_params pp[NP];
    char prompts[NP][128]; /* "Norland" and up to 11 " Dashwood" */
    memset(it, 0, sizeof it);
    for (int i = 0; i < NP; i++) {
        prompts[i][0] = 0;
        for (int w = 0; w <= i; w++) strcat(prompts[i], w ? " Dashwood" : "Norland");
        pp[i] = p, pp[i].on_language = NULL, pp[i].initial_prompt = prompts[i];
        if (i == 0) pp[i].hotwords = "Marianne";
        it[i] = (sotto_batch_item){.source = &src[i % n], .params = &pp[i]};
    }
    st = ctx ? sotto_transcribe_batch(ctx, it, NP) : SOTTO_ERR_INVALID_ARG;
    CHECK(st == SOTTO_OK, "prompted pool: %s", sotto_status_str(st));
    int changed = 0;
    for (int i = 0; ctx && i < NP; i++) {
        sotto_result *alone = NULL, *plain = NULL;
        CHECK(it[i].status == SOTTO_OK && it[i].result, "prompted item %d: %s", i, it[i].error);
        CHECK(sotto_transcribe_source(ctx, it[i].source, &pp[i], &alone) == SOTTO_OK, "%s", sotto_context_error(ctx));
        CHECK(sotto_transcribe_source(ctx, it[i].source, &p, &plain) == SOTTO_OK, "%s", sotto_context_error(ctx));
        CHECK(same_segments(it[i].result, alone), "prompted item %d pooled differs from alone:\n%s\n---\n%s", i,
              it[i].result ? it[i].result->text : "", alone ? alone->text : "");
        changed += !same_segments(alone, plain);
        sotto_result_free(alone), sotto_result_free(plain), sotto_result_free(it[i].result);
    }
    CHECK(changed > 0, "no prompt changed a decoding");
    sotto_context_free(ctx);
    sotto_model_free(m);
}

static void test_continue(const char *model, const char *vad_path, const char *audio)
{
    sotto_model *m;
    sotto_vad *vad;
    float *x;
    int64_t n;
    if (sotto_model_load(model, &m) || sotto_vad_load(vad_path, &vad) || sotto_wav_read(audio, &x, &n)) {
        CHECK(0, "inputs: %s", sotto_last_error());
        return;
    }
    sotto_result *r[2] = {0};
    const int B[2] = {5, 1};
    for (int k = 0; k < 2; k++) {
        sotto_context_params cp = sotto_context_params_default();
        cp.n_threads = 2, cp.device = "cpu", cp.max_batch = B[k];
        sotto_context *ctx;
        CHECK(sotto_context_init(m, &cp, &ctx) == SOTTO_OK, "%s", sotto_last_error());
        sotto_transcribe_params p = sotto_transcribe_params_default();
        p.vad = vad, p.batch_size = B[k], p.timestamps = 1, p.batch_continue = 1;
        CHECK(ctx && sotto_transcribe(ctx, x, n, &p, &r[k]) == SOTTO_OK, "%s", sotto_context_error(ctx));
        if (k == 1) {
            p.timestamps = 0;
            sotto_result *bad = NULL;
            CHECK(ctx && sotto_transcribe(ctx, x, n, &p, &bad) == SOTTO_ERR_INVALID_ARG &&
                      strstr(sotto_context_error(ctx), "batch_continue needs timestamps"),
                  "without timestamps: %s", sotto_context_error(ctx));
        }
        sotto_context_free(ctx);
    }
    CHECK(same_segments(r[0], r[1]), "batch 5 differs from batches of 1 with batch_continue:\n%s\n---\n%s",
          r[0] ? r[0]->text : "", r[1] ? r[1]->text : "");
    sotto_vad_interval *sp;
    sotto_batch_chunk *ch;
    int64_t n_sp, n_ch, continued = 0;
    CHECK(sotto_batch_chunks(vad, x, n, 30.0, 1, &sp, &n_sp, &ch, &n_ch) == SOTTO_OK, "%s", sotto_last_error());
    for (int i = 0; r[0] && i < r[0]->n_segments; i++) {
        bool start = false;
        for (int64_t c = 0; c < n_ch && !start; c++) start = r[0]->segments[i].seek == ch[c].offset / 160;
        continued += !start;
    }
    CHECK(continued > 0, "no segment of a continued piece among %d", r[0] ? r[0]->n_segments : 0);
    printf("batch_continue: %d segments, %" PRId64 " from continued pieces\n", r[0] ? r[0]->n_segments : 0,
           continued);
    sotto_free(sp), sotto_free(ch);
    sotto_result_free(r[0]), sotto_result_free(r[1]);
    sotto_free(x);
    sotto_vad_free(vad);
    sotto_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "chunks")) test_chunks(argv[2], argv[3], argv + 4, argc - 4);
    else if ((argc == 6 || argc == 7) && !strcmp(argv[1], "decode"))
        test_decode(argv[2], argv[3], argv[4], atoi(argv[5]), argc == 7 ? atof(argv[6]) : 0);
    else if (argc >= 6 && !strcmp(argv[1], "pool")) test_pool(argv[2], argv + 3, argc - 3);
    else if (argc == 5 && !strcmp(argv[1], "continue")) test_continue(argv[2], argv[3], argv[4]);
    else {
        fprintf(stderr, "usage: test_batch chunks VAD.gguf GOLDEN_DIR DIR... | decode MODEL VAD.gguf AUDIO B "
                        "[SECONDS] | pool MODEL CLIP... | continue MODEL VAD.gguf AUDIO\n");
        return 2;
    }
    return check_summary();
}
