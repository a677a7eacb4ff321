/* test_stream_policy.c — the live session's policy (stream.c) on a scripted decoder
 * (stream.h's seam) instead of the model: a known timeline of words, decoded as any
 * buffer of it would be, so that what the session commits can be checked exactly: no
 * loop committed (the compression-ratio rule), no word lost or committed twice at the
 * trims, the bound and big pushes (a slow machine's steps), timestamps that move from one
 * decoding to the next included.
 *
 * usage: test_stream_policy MODEL.gguf   (the model only for the session's context and
 *                                         its tokenizer: nothing is decoded)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sotto.h"
#include "whisper/stream.h"
#include "whisper/text.h"

#define RATE 16000
#define N_TRUTH 80
#define MAX_SEG 64
#define MAX_WORDS 512

/* The words spoken: word I is " wI", from 0.5 + 0.5 I s for 0.4 s, eight to a sentence. */
typedef struct script {
    double loop_at, loop_from, loop_until; /* buffers ending in [from, until): a loop from loop_at on */
    double jitter;             /* word times move by up to this, differently at every decoding */
    int n_calls;
    char text[MAX_SEG][1024];
    char word_text[MAX_WORDS][16];
    sotto_segment seg[MAX_SEG];
    sotto_word words[MAX_WORDS];
    sotto_result res;
} script;

static double truth_start(int i)
{
    return 0.5 + 0.5 * i;
}

static void truth_text(char *out, size_t n)
{
    out[0] = 0;
    for (int i = 0; i < N_TRUTH; i++) snprintf(out + strlen(out), n - strlen(out), " w%d", i);
}

/* Appends a word to the segment being built (the last of S->res). */
static void add_word(script *s, const char *w, double start, double end)
{
    sotto_segment *g = &s->seg[s->res.n_segments - 1];
    int k = (int)(g->words - s->words) + g->n_words;
    if (k >= MAX_WORDS) return;
    snprintf(s->word_text[k], sizeof s->word_text[k], "%s", w);
    s->words[k] = (sotto_word){s->word_text[k], start, end, 0.9};
    g->n_words++;
    g->end = end;
    strncat(s->text[s->res.n_segments - 1], w, sizeof s->text[0] - strlen(s->text[0]) - 1);
}

static void new_segment(script *s, double start)
{
    if (s->res.n_segments == MAX_SEG) return;
    int first = 0;
    for (int i = 0; i < s->res.n_segments; i++) first += s->seg[i].n_words;
    s->text[s->res.n_segments][0] = 0;
    s->seg[s->res.n_segments] = (sotto_segment){.id = s->res.n_segments, .start = start, .end = start,
                                                .text = s->text[s->res.n_segments], .words = s->words + first};
    s->res.n_segments++;
}

/* The scripted decoding of the buffer [OFFSET, OFFSET + N / RATE): every word of the
 * timeline wholly inside it, a segment per sentence, times relative to the buffer (moved
 * by the jitter); during the loop's steps, a loop segment in place of the words after
 * loop_at, as greedy decoding falls into. */
static const sotto_result *decode(void *user, const float *x, int64_t n, double offset, const sotto_transcribe_params *tp)
{
    (void)x, (void)tp;
    script *s = user;
    double end = offset + (double)n / RATE;
    double shift = s->jitter * sin(1.7 * s->n_calls++);
    bool looping = end >= s->loop_from && end < s->loop_until;
    s->res = (sotto_result){.language = "en", .segments = s->seg, .word_timestamps = 1};
    int last_sentence = -1;
    for (int i = 0; i < N_TRUTH; i++) {
        double a = truth_start(i) + shift, b = a + 0.4;
        if (a < offset - 0.05 || b > end) continue;
        if (looping && truth_start(i) >= s->loop_at) break;
        if (i / 8 != last_sentence) new_segment(s, a - offset), last_sentence = i / 8;
        char w[16];
        snprintf(w, sizeof w, " w%d", i);
        add_word(s, w, fmax(a - offset, 0), b - offset);
    }
    if (looping) {
        new_segment(s, s->loop_at - offset);
        double t = s->loop_at - offset, d = (end - s->loop_at) / 24; /* to the window's end, as they do */
        for (int k = 0; k < 24; k++, t += d) add_word(s, k % 2 ? " on" : " so", t, t + d);
    }
    return &s->res;
}

typedef struct events {
    char text[4096];
    int n_final;
} events;

static int on_event(const sotto_stream_event *e, void *user)
{
    events *v = user;
    if (e->type == SOTTO_STREAM_FINAL)
        strncat(v->text, e->text, sizeof v->text - strlen(v->text) - 1), v->n_final++;
    return 0;
}

/* A session over SECONDS of (silent) audio in pushes of PUSH_S, decoded by SCRIPT: the
 * committed text into V. */
static void run(sotto_context *ctx, sotto_stream_params p, script *sc, double push_s, double seconds, events *v)
{
    p.on_event = on_event, p.user_data = v;
    sotto_stream *s = NULL;
    CHECK(sotto_stream_init(ctx, &p, &s) == SOTTO_OK, "init: %s", sotto_last_error());
    if (!s) return;
    sotto__stream_set_decoder(s, decode, sc);
    int64_t total = (int64_t)(seconds * RATE), chunk = (int64_t)(push_s * RATE);
    float *zeros = calloc((size_t)chunk, sizeof *zeros);
    sotto_status st = SOTTO_OK;
    for (int64_t at = 0; at < total && st == SOTTO_OK; at += chunk)
        st = sotto_stream_push(s, zeros, total - at < chunk ? total - at : chunk);
    if (st == SOTTO_OK) st = sotto_stream_finish(s);
    CHECK(st == SOTTO_OK, "the session: %s", sotto_stream_error(s));
    sotto_stream_free(s);
    free(zeros);
}

/* The loop rule: greedy steps fall into "so on so on ..." for 3 s; two decodings agree
 * on the loop, so without the rule it is committed and the words under it are lost. */
static void test_loop(sotto_context *ctx, const char *truth)
{
    script sc = {.loop_at = 6.0, .loop_from = 6.5, .loop_until = 9.5};
    char loop[256] = "";
    for (int k = 0; k < 24; k++) strcat(loop, k % 2 ? " on" : " so");
    CHECK(sotto__compression_ratio(loop, strlen(loop)) > 2.4, "the loop compresses: %g",
          sotto__compression_ratio(loop, strlen(loop)));
    events v = {0};
    run(ctx, sotto_stream_params_default(), &sc, 0.1, 42, &v);
    CHECK(!strstr(v.text, " so on"), "no loop committed: %s", v.text);
    CHECK(!strcmp(v.text, truth), "every word once, in order:\n  %s\n  %s", v.text, truth);
}

/* Trims at 12 s, the bound at 25 s, pushes from a tenth of a second to 10 s (a machine
 * whose steps take that long), word times that move between decodings: every word of the
 * timeline committed once, in order. */
static void test_trims(sotto_context *ctx, const char *truth)
{
    const double pushes[] = {0.1, 1.0, 3.3, 6.0, 10.0}, jitters[] = {0, 0.15};
    for (int j = 0; j < 2; j++) {
        for (int i = 0; i < 5; i++) {
            script sc = {.loop_from = INFINITY, .jitter = jitters[j]};
            events v = {0};
            sotto_stream_params p = sotto_stream_params_default();
            run(ctx, p, &sc, pushes[i], 42, &v);
            CHECK(!strcmp(v.text, truth), "pushes of %g s, jitter %g: every word once, in order:\n  %s\n  %s",
                  pushes[i], jitters[j], v.text, truth);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_stream_policy MODEL.gguf\n");
        return 2;
    }
    sotto_model *m = NULL;
    sotto_context *ctx = NULL;
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = 1, cp.device = "cpu", cp.max_sequences = 1;
    if (sotto_model_load(argv[1], &m) != SOTTO_OK || sotto_context_init(m, &cp, &ctx) != SOTTO_OK) {
        CHECK(0, "load: %s", sotto_last_error());
    } else {
        char truth[4096];
        truth_text(truth, sizeof truth);
        test_loop(ctx, truth);
        test_trims(ctx, truth);
    }
    sotto_context_free(ctx);
    sotto_model_free(m);
    return check_summary();
}
