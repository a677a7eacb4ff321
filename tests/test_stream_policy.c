/* test_stream_policy.c — the live session's policy (stream.c) on a scripted decoder
 * (stream.h's seam) instead of the model: a known timeline of words, decoded as any
 * buffer of it would be, so that what the session commits can be checked exactly: no
 * loop committed (the compression-ratio rule), no word lost or committed twice at the
 * trims, the bound and big pushes (a slow machine's steps), timestamps that move from one
 * decoding to the next included, and old audio heard as other words.
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
    bool dots;                 /* the loop is " . . . . ." (beam search's), not "so on so on" */
    double silent_from;        /* buffers ending from here on decode to no words */
    double mishear_s;          /* the first word is " x0" while heard with less after its start */
    double jitter;             /* word times move by up to this, differently at every decoding */
    double echo_from, echo_until; /* buffers ending in [from, until), with a prompt, once a
                                  sentence is committed: the words after it heard as it */
    const char *committed;     /* the session's committed text (the echo's condition, the words late heard otherwise) */
    bool short_loop;           /* the loop is " so on" three times: too short to compress */
    double late;               /* two decodings running in four hear every word this much later and
                                  the committed words (but the last) as others */
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
 * loop_at, as greedy decoding falls into (with dots, beam search's; and every decoding's
 * once the prompt holds dots). */
static const sotto_result *decode(void *user, const float *x, int64_t n, double offset, const sotto_transcribe_params *tp)
{
    (void)x;
    script *s = user;
    double end = offset + (double)n / RATE;
    double shift = s->jitter * sin(1.7 * s->n_calls++);
    bool other = s->late > 0 && s->n_calls / 2 % 2 == 0; /* old audio heard otherwise */
    if (other) shift += s->late;
    const char *lw = s->committed ? strrchr(s->committed, 'w') : NULL;
    int last_committed = lw ? atoi(lw + 1) : -1;
    bool looping = end >= s->loop_from && end < s->loop_until;
    /* dots in the prompt make dots: once committed, beam search hears nothing else */
    if (s->dots && tp->initial_prompt && strstr(tp->initial_prompt, ". .")) looping = true;
    s->res = (sotto_result){.language = "en", .segments = s->seg, .word_timestamps = 1};
    if (end >= s->silent_from) return &s->res;
    int last_sentence = -1, last = -1;
    const char *cw = s->committed ? strrchr(s->committed, 'w') : NULL;
    if (cw && end >= s->echo_from && end < s->echo_until && tp->initial_prompt && atoi(cw + 1) % 8 == 7)
        last = atoi(cw + 1); /* the echo: what follows the sentence is heard as it, whole */
    for (int i = 0; i < N_TRUTH; i++) {
        double a = truth_start(i) + shift, b = a + 0.4;
        if (a < offset - 0.05 || b > end) continue;
        if (looping && truth_start(i) >= s->loop_at) break;
        if (last >= 0 && i > last) {
            new_segment(s, a - offset);
            for (int k = 0; k < 8; k++) {
                char w[16];
                snprintf(w, sizeof w, " w%d", last - 7 + k);
                add_word(s, w, a - offset + k * (end - a) / 8, a - offset + (k + 1) * (end - a) / 8);
            }
            break;
        }
        if (i / 8 != last_sentence) new_segment(s, a - offset), last_sentence = i / 8;
        char w[16];
        snprintf(w, sizeof w, other && i < last_committed ? " y%d" : i == 0 && end - truth_start(i) < s->mishear_s
                                                                       ? " x%d" : " w%d", i);
        add_word(s, w, fmax(a - offset, 0), b - offset);
    }
    if (looping) {
        double at = fmax(s->loop_at, offset);
        int n_loop = s->dots ? 5 : s->short_loop ? 6 : 24;
        new_segment(s, at - offset);
        double t = at - offset, d = (end - at) / n_loop; /* to the window's end, as they do */
        for (int k = 0; k < n_loop; k++, t += d) add_word(s, s->dots ? " ." : k % 2 ? " on" : " so", t, t + d);
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
    script sc = {.loop_at = 6.0, .loop_from = 6.5, .loop_until = 9.5, .silent_from = INFINITY};
    char loop[256] = "";
    for (int k = 0; k < 24; k++) strcat(loop, k % 2 ? " on" : " so");
    CHECK(sotto__compression_ratio(loop, strlen(loop)) > 2.4, "the loop compresses: %g",
          sotto__compression_ratio(loop, strlen(loop)));
    events v = {0};
    run(ctx, sotto_stream_params_default(), &sc, 0.1, 42, &v);
    CHECK(!strstr(v.text, " so on"), "no loop committed: %s", v.text);
    CHECK(!strcmp(v.text, truth), "every word once, in order:\n  %s\n  %s", v.text, truth);
}

/* A loop too short to compress past the threshold (" so on so on so on", as "Did I do
 * that? Did I do that? Did I do that?" of tiny.en with beam 5 at 0.5 s steps): two
 * decodings agree on it unless the session cuts a phrase said three times running. */
static void test_short_loop(sotto_context *ctx, const char *truth)
{
    script sc = {.loop_at = 6.0, .loop_from = 6.5, .loop_until = 9.5, .silent_from = INFINITY, .short_loop = true};
    CHECK(sotto__compression_ratio(" so on so on so on", 18) < 2.4, "the short loop does not compress");
    events v = {0};
    run(ctx, sotto_stream_params_default(), &sc, 0.1, 42, &v);
    CHECK(!strstr(v.text, " on"), "no loop committed: %s", v.text);
    CHECK(!strcmp(v.text, truth), "every word once, in order:\n  %s\n  %s", v.text, truth);
}

/* The prompt echoed: with the committed sentence as prompt, decodings hear the next
 * sentence as that one again (tiny.en, beam 5, real time: "He might even have been made
 * amiable himself." committed five times over the next clip's speech). The echo is not
 * committed, and the decodings after it go without the prompt, which hear right. */
static void test_echo(sotto_context *ctx, const char *truth)
{
    script sc = {.loop_from = INFINITY, .silent_from = INFINITY, .echo_from = 13, .echo_until = 17};
    events v = {0};
    sc.committed = v.text;
    run(ctx, sotto_stream_params_default(), &sc, 0.1, 42, &v);
    CHECK(!strcmp(v.text, truth), "every word once, in order:\n  %s\n  %s", v.text, truth);
}

/* Beam search's loop: at short steps a beam of " ." tokens outranks the speech (its mean
 * log-probability is high), and too few of them compress past the threshold. Two
 * decodings agree on dots (they have no letters to differ in); committed, they enter the
 * prompt, and every decoding after them is dots: the speech is lost (tiny.en, beam 5 at
 * 0.5 s steps, committed 161 of 338 words of long125.wav). Words without a letter or
 * digit are not words to commit. */
static void test_dots(sotto_context *ctx, const char *truth)
{
    script sc = {.loop_at = 6.0, .loop_from = 6.5, .loop_until = 8.0, .dots = true, .silent_from = INFINITY};
    events v = {0};
    run(ctx, sotto_stream_params_default(), &sc, 0.1, 42, &v);
    CHECK(!strstr(v.text, " ."), "no dots committed: %s", v.text);
    CHECK(!strcmp(v.text, truth), "every word once, in order:\n  %s\n  %s", v.text, truth);
}

/* The last decoding (at a pause or the end, which commits all it hears) falls into a loop
 * or hears nothing (a window skipped as no speech): the pending words are committed from
 * the decoding before it, not lost with the audio (tiny.en, beam 5 at 0.5 s steps: a whole
 * sentence of long125.wav, held as tentative, was dropped at the pause after it). */
static void test_last_decoding(sotto_context *ctx, const char *truth)
{
    for (int k = 0; k < 2; k++) {
        script sc = {.loop_at = 39.0, .loop_from = k ? INFINITY : 40.55, .loop_until = INFINITY,
                     .silent_from = k ? 40.55 : INFINITY};
        events v = {0};
        run(ctx, sotto_stream_params_default(), &sc, 0.1, 40.6, &v);
        CHECK(!strcmp(v.text, truth), "the last decoding %s: every word once, in order:\n  %s\n  %s",
              k ? "hears nothing" : "loops", v.text, truth);
    }
}

/* hold_s: the first word is misheard by decodings that hear under 1.5 s from its start
 * (as tiny.en's "round fark" for "brown fox" at a clip's start), and two of them agree on
 * it; with a hold of 2 s the first commit waits for a decoding that hears it right. */
static void test_hold(sotto_context *ctx, const char *truth)
{
    for (int k = 0; k < 2; k++) {
        script sc = {.loop_from = INFINITY, .silent_from = INFINITY, .mishear_s = 1.5};
        events v = {0};
        sotto_stream_params p = sotto_stream_params_default();
        p.hold_s = k ? 2.0 : 0;
        run(ctx, p, &sc, 0.1, 42, &v);
        if (k) CHECK(!strcmp(v.text, truth), "hold 2 s: every word once, heard right:\n  %s\n  %s", v.text, truth);
        else CHECK(!strncmp(v.text, " x0 w1", 6), "no hold: the misheard first word committed: %.40s", v.text);
    }
    sotto_stream_params p = sotto_stream_params_default();
    p.hold_s = p.max_buffer_s;
    CHECK(sotto_stream_params_check(&p) == SOTTO_ERR_INVALID_ARG, "a hold at the buffer bound is refused");
}

/* Old audio heard otherwise: two decodings running in four hear the committed words but
 * the last as other words (tiny.en's "old -sposed young" for the committed "ill-disposed
 * young...") and every word 0.25 s later, so the last committed word, heard as it was, has
 * its middle past the last commit: it is the committed word, not a new one ("man." was
 * committed twice, 2.42-2.58 and 2.44-2.72, at steps of 0.05 s). */
static void test_reheard(sotto_context *ctx, const char *truth)
{
    script sc = {.loop_from = INFINITY, .silent_from = INFINITY, .late = 0.25};
    events v = {0};
    sc.committed = v.text;
    run(ctx, sotto_stream_params_default(), &sc, 0.1, 42, &v);
    CHECK(!strcmp(v.text, truth), "old audio heard otherwise: every word once, in order:\n  %s\n  %s", v.text, truth);
}

/* Trims at 12 s, the bound at 25 s, pushes from a tenth of a second to 10 s (a machine
 * whose steps take that long), word times that move between decodings: every word of the
 * timeline committed once, in order. */
static void test_trims(sotto_context *ctx, const char *truth)
{
    const double pushes[] = {0.1, 1.0, 3.3, 6.0, 10.0}, jitters[] = {0, 0.15};
    for (int j = 0; j < 2; j++) {
        for (int i = 0; i < 5; i++) {
            script sc = {.loop_from = INFINITY, .jitter = jitters[j], .silent_from = INFINITY};
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
    cp.n_threads = 1, cp.device = "cpu", cp.max_sequences = 5; /* the default beams: nothing decodes */
    if (sotto_model_load(argv[1], &m) != SOTTO_OK || sotto_context_init(m, &cp, &ctx) != SOTTO_OK) {
        CHECK(0, "load: %s", sotto_last_error());
    } else {
        char truth[4096];
        truth_text(truth, sizeof truth);
        test_loop(ctx, truth);
        test_dots(ctx, truth);
        test_short_loop(ctx, truth);
        test_echo(ctx, truth);
        test_last_decoding(ctx, truth);
        test_hold(ctx, truth);
        test_trims(ctx, truth);
        test_reheard(ctx, truth);
    }
    sotto_context_free(ctx);
    sotto_model_free(m);
    return check_summary();
}
