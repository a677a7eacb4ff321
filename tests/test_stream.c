/* test_stream.c — the live transcription session (sotto_stream_*): LocalAgreement-2's word
 * lists (agree.c), the parameter checks, and tiny.en on LibriVox clips joined with a pause:
 * fed in odd-sized chunks the finals are the transcript in order and near the offline one,
 * fed whole they are the offline decoding, the end flushes the tail, silence costs no
 * decoding under the VAD and a pause commits, and a callback's stop is a clean failure.
 *
 * usage: test_stream                               (the word lists and checks alone)
 *        test_stream MODEL.gguf VAD.gguf CLIPS_DIR
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sotto.h"
#include "whisper/agree.h"
#include "whisper/stream.h"

/* ---- agree.c ------------------------------------------------------------------------- */

static void words_of(sotto__twords *l, const char *const *w, int n)
{
    for (int i = 0; i < n; i++) sotto__twords_push(l, w[i], i, i + 0.5, 1);
}

static void test_agree(void)
{
    CHECK(sotto__word_same(" Hello,", "hello"), "case and punctuation are not the word");
    CHECK(sotto__word_same(" don't", " Dont."), "an apostrophe neither");
    CHECK(!sotto__word_same(" cat", " cats"), "a letter is");
    CHECK(sotto__word_same(" caf\xc3\xa9", "Caf\xc3\xa9!"), "UTF-8 bytes count");
    CHECK(!sotto__word_same(" 1999", " 1998"), "digits count");

    const char *a[] = {" The", " quick", " brown", " fox"}, *b[] = {" the", " quick", " brown,", " box", " jumps"};
    sotto__twords la = {0}, lb = {0}, empty = {0};
    words_of(&la, a, 4), words_of(&lb, b, 5);
    CHECK(sotto__agree_prefix(&la, &lb) == 3, "%d", sotto__agree_prefix(&la, &lb));
    CHECK(sotto__agree_prefix(&la, &empty) == 0, "nothing agrees with nothing");

    const char *c[] = {" a", " b", " a"}, *d[] = {" a", " b", " a", " c"}, *e[] = {" x", " y"};
    sotto__twords lc = {0}, ld = {0}, le = {0};
    words_of(&lc, c, 3), words_of(&ld, d, 4), words_of(&le, e, 2);
    CHECK(sotto__repeat_of_committed(&lc, &ld) == 3, "the longest repeat: %d", sotto__repeat_of_committed(&lc, &ld));
    CHECK(sotto__repeat_of_committed(&lc, &le) == 0, "none");
    CHECK(sotto__twords_take(&lc, &ld, 2) && lc.n == 5 && ld.n == 2 && !strcmp(ld.w[0].text, " a"), "take moves");
    sotto__twords_drop(&lc, 4);
    CHECK(lc.n == 1 && !strcmp(lc.w[0].text, " b"), "drop");
    sotto__twords_free(&la), sotto__twords_free(&lb), sotto__twords_free(&lc), sotto__twords_free(&ld);
    sotto__twords_free(&le);

    /* the prompt echoed: 4 or more of the committed words' last again */
    const char *said[] = {" so", " he", " might", " even", " have", " been", " made"},
               *echo[] = {" He", " might", " even", " have", " been", " made.", " For"};
    sotto__twords ls = {0}, lx = {0};
    words_of(&ls, said, 7), words_of(&lx, echo, 7);
    CHECK(sotto__leading_repeat(&ls, &lx, 4, 32) == 6, "the echo: %d", sotto__leading_repeat(&ls, &lx, 4, 32));
    CHECK(sotto__leading_repeat(&ls, &lx, 7, 32) == 0, "shorter than asked");
    sotto__twords_drop(&ls, 4); /* " have been made" are 3 */
    CHECK(sotto__leading_repeat(&ls, &lx, 4, 32) == 0, "three words are no echo");
    sotto__twords_free(&ls), sotto__twords_free(&lx);

    /* loops too short to compress: a phrase three times running, a word four times */
    struct {
        const char *w[12];
        int n, at;
    } loops[] = {
        {{" Did", " I", " do", " that?", " Did", " I", " do", " that?", " Did", " I", " do", " that?"}, 12, 0},
        {{" Did", " I", " do", " that?", " did", " I", " do", " that", " Did", " I"}, 10, 10},
        {{" So", " did", " I", " do", " that?", " Did", " I", " do", " that?", " Did"}, 10, 10},
        {{" ok", " did", " I", " did", " I", " did", " I", " then"}, 8, 1},
        {{" no", " no", " no", " yes"}, 4, 4},
        {{" no", " no", " no", " no", " yes"}, 5, 0},
        {{" a", " b", " c", " d", " e", " f", " g", " h", " a", " b"}, 10, 10},
    };
    for (size_t i = 0; i < sizeof loops / sizeof *loops; i++) {
        sotto__twords l = {0};
        words_of(&l, loops[i].w, loops[i].n);
        CHECK(sotto__loop_start(&l) == loops[i].at, "loop %zu: %d, not %d", i, sotto__loop_start(&l), loops[i].at);
        sotto__twords_free(&l);
    }
    const char *eight[] = {" a", " b", " c", " d", " e", " f", " g", " h"};
    sotto__twords l8 = {0};
    for (int k = 0; k < 3; k++) words_of(&l8, eight, 8);
    CHECK(sotto__loop_start(&l8) == 0, "eight words three times: %d", sotto__loop_start(&l8));
    sotto__twords_free(&l8);
}

static void test_params(void)
{
    sotto_stream_params p = sotto_stream_params_default();
    CHECK(sotto_stream_params_check(&p) == SOTTO_OK, "the defaults pass: %s", sotto_last_error());
    p.min_step_s = 0;
    CHECK(sotto_stream_params_check(&p) == SOTTO_ERR_INVALID_ARG && strstr(sotto_last_error(), "minimum step"),
          "%s", sotto_last_error());
    p = sotto_stream_params_default(), p.max_buffer_s = 31;
    CHECK(sotto_stream_params_check(&p) == SOTTO_ERR_INVALID_ARG && strstr(sotto_last_error(), "bound"), "%s",
          sotto_last_error());
    p = sotto_stream_params_default(), p.trim_s = 25;
    CHECK(sotto_stream_params_check(&p) == SOTTO_ERR_INVALID_ARG, "trim at the bound");
    p = sotto_stream_params_default(), p.beam_size = 0;
    CHECK(sotto_stream_params_check(&p) == SOTTO_ERR_INVALID_ARG && strstr(sotto_last_error(), "beam"), "%s",
          sotto_last_error());
    p = sotto_stream_params_default(), p.language = "klingon";
    CHECK(sotto_stream_params_check(&p) == SOTTO_ERR_INVALID_ARG && strstr(sotto_last_error(), "klingon"), "%s",
          sotto_last_error());
    CHECK(sotto_stream_params_check(NULL) == SOTTO_ERR_INVALID_ARG, "NULL");
}

/* ---- sessions on tiny.en ------------------------------------------------------------------ */

typedef struct events {
    char text[8192];           /* the finals' text joined */
    int n_final, n_tentative, bad_order, last_tentative_empty, last_was_tentative, stop_after;
    double last_end;
    char before_pause[1024];   /* the finals' text made before 8.6 s of audio */
} events;

static int on_event(const sotto_stream_event *e, void *user)
{
    events *v = user;
    if (e->type == SOTTO_STREAM_FINAL) {
        if (e->id != v->n_final) v->bad_order++;
        for (int i = 0; i < e->n_words; i++) {
            if (e->words[i].start < v->last_end - 0.11 || e->words[i].end < e->words[i].start) v->bad_order++;
            v->last_end = e->words[i].end;
        }
        if (e->audio_time < 8.6)
            strncat(v->before_pause, e->text, sizeof v->before_pause - strlen(v->before_pause) - 1);
        v->n_final++;
        strncat(v->text, e->text, sizeof v->text - strlen(v->text) - 1);
        v->last_was_tentative = 0;
        if (!e->n_tokens) v->bad_order++;
    } else {
        v->n_tentative++;
        v->last_was_tentative = 1;
        v->last_tentative_empty = !e->text[0] && !e->n_words;
    }
    return v->stop_after && v->n_final >= v->stop_after;
}

/* The words of TEXT, lower-case letters and digits alone, into W (at most CAP). */
static int norm_words(const char *text, char w[][32], int cap)
{
    int n = 0, k = 0;
    for (const char *p = text;; p++) {
        char c = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (k < 31 && n < cap) w[n][k++] = c;
        } else if ((c == ' ' || !c) && k) {
            w[n++][k] = 0, k = 0;
        }
        if (!c || n >= cap) return n;
    }
}

/* Word error rate of HYP against REF (Levenshtein over normalized words). */
static double wer(const char *ref, const char *hyp)
{
    static char r[512][32], h[512][32];
    int nr = norm_words(ref, r, 512), nh = norm_words(hyp, h, 512);
    int *prev = malloc((size_t)(nh + 1) * sizeof *prev), *cur = malloc((size_t)(nh + 1) * sizeof *cur);
    for (int j = 0; j <= nh; j++) prev[j] = j;
    for (int i = 1; i <= nr; i++) {
        cur[0] = i;
        for (int j = 1; j <= nh; j++) {
            int sub = prev[j - 1] + (strcmp(r[i - 1], h[j - 1]) != 0);
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (size_t)(nh + 1) * sizeof *cur);
    }
    double e = nr ? (double)prev[nh] / nr : 0;
    free(prev), free(cur);
    return e;
}

/* Clips 0870 and 0880 with 1.5 s of silence after each: 13.1 s. */
static float *joined_clips(const char *dir, int64_t *n)
{
    const char *names[] = {"librivox-0870.wav", "librivox-0880.wav"};
    float *all = NULL;
    *n = 0;
    for (int i = 0; i < 2; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        float *x = NULL;
        int64_t k = 0;
        if (sotto_wav_read(path, &x, &k) != SOTTO_OK) return NULL;
        all = realloc(all, (size_t)(*n + k + 24000) * sizeof *all);
        memcpy(all + *n, x, (size_t)k * sizeof *x);
        memset(all + *n + k, 0, 24000 * sizeof *all);
        *n += k + 24000;
        sotto_free(x);
    }
    return all;
}

/* Runs one session over X in chunks of CHUNK samples (0: one push); events into V. */
static sotto_status run(sotto_context *ctx, const sotto_stream_params *p, const float *x, int64_t n, int64_t chunk,
                        events *v, int *n_steps)
{
    sotto_stream_params q = *p;
    q.on_event = on_event, q.user_data = v;
    sotto_stream *s = NULL;
    sotto_status st = sotto_stream_init(ctx, &q, &s);
    if (st != SOTTO_OK) return st;
    for (int64_t i = 0; i < n && st == SOTTO_OK; i += chunk ? chunk : n)
        st = sotto_stream_push(s, x + i, (chunk && n - i > chunk) ? chunk : n - i);
    if (st == SOTTO_OK) st = sotto_stream_finish(s);
    if (st == SOTTO_OK) CHECK(!strcmp(sotto_stream_text(s), v->text), "the text is the finals'");
    if (st == SOTTO_OK) CHECK(sotto_stream_push(s, x, 1) == SOTTO_ERR_INVALID_ARG, "no audio after the finish");
    sotto_stream_stats(s, n_steps, NULL);
    sotto_stream_free(s);
    return st;
}

static int count_windows(double done_s, double total_s, void *user)
{
    (void)done_s, (void)total_s;
    ++*(int *)user;
    return 0;
}

/* Each step's decoding (stream.h): the buffer as one window, its unfinished segment kept,
 * where openai's loop may decode the tail after the last timestamp again as a window of
 * its own (a second encoder pass: 184 windows for 123 steps of a minute of long.wav).
 * X[0..N) ends mid-sentence. */
static void test_one_window(sotto_context *ctx, const float *x, int64_t n, const sotto_transcribe_params *tp)
{
    sotto_transcribe_params p = *tp;
    int loop_windows = 0, windows = 0;
    sotto_result *full = NULL, *one = NULL;
    p.on_progress = count_windows, p.user_data = &loop_windows;
    CHECK(sotto_transcribe(ctx, x, n, &p, &full) == SOTTO_OK, "%s", sotto_context_error(ctx));
    p.user_data = &windows;
    CHECK(sotto__transcribe_window(ctx, x, n, &p, &one) == SOTTO_OK, "%s", sotto_context_error(ctx));
    CHECK(loop_windows >= 1 && windows == 1, "one window: %d (the loop: %d)", windows, loop_windows);
    if (full && one && full->n_segments && one->n_segments) {
        const sotto_segment *last = &one->segments[one->n_segments - 1];
        CHECK(!strcmp(one->segments[0].text, full->segments[0].text), "the same first decoding:\n  %s\n  %s",
              one->segments[0].text, full->segments[0].text);
        CHECK(last->n_words && last->words[last->n_words - 1].end > (double)n / 16000 - 1.5,
              "the unfinished segment kept, to the end (%.2f s): %s", (double)n / 16000, last->text);
        CHECK(wer(full->text, one->text) < 0.2, "near the loop's text:\n  %s\n  %s", one->text, full->text);
    }
    sotto_result_free(full), sotto_result_free(one);
}

static void test_sessions(sotto_context *ctx, const sotto_vad *vad, const char *clips)
{
    int64_t n = 0;
    float *x = joined_clips(clips, &n);
    CHECK(x != NULL, "the clips read");
    if (!x) return;
    const char *ref = "and mister john dashwood had then leisure to consider how much there might be prudently in "
                      "his power to do for them he was not an ill disposed young man";
    sotto_transcribe_params tp = sotto_transcribe_params_default();
    tp.beam_size = 1, tp.best_of = 1, tp.n_temperatures = 1, tp.word_timestamps = 1;
    sotto_result *off = NULL;
    CHECK(sotto_transcribe(ctx, x, n, &tp, &off) == SOTTO_OK, "offline: %s", sotto_context_error(ctx));
    test_one_window(ctx, x, 16000 * 53 / 10, &tp);
    sotto_stream_params p = sotto_stream_params_default();
    p.min_step_s = 1.5; /* the test's time: the default 0.5 s decodes three times as often */
    p.beam_size = 1, p.hold_s = 0; /* greedy, as the offline decoding it is held to */

    events whole = {0};
    int steps = 0;
    CHECK(run(ctx, &p, x, n, 0, &whole, &steps) == SOTTO_OK, "whole");
    CHECK(off && !strcmp(whole.text, off->text), "fed whole, the offline decoding:\n  %s\n  %s", whole.text,
          off ? off->text : "");
    CHECK(steps == 1, "one step for one push: %d", steps);

    int steps_plain = 0;
    for (int with_vad = 0; with_vad < 2; with_vad++) {
        p.vad = with_vad ? vad : NULL;
        events v = {0};
        CHECK(run(ctx, &p, x, n, 3217, &v, &steps) == SOTTO_OK, "chunks of 3217, vad %d", with_vad);
        double e = wer(ref, v.text), e_off = wer(ref, off ? off->text : "");
        printf("vad %d: %d finals, %d tentatives, %d steps, WER %.3f (offline %.3f): %s\n", with_vad, v.n_final,
               v.n_tentative, steps, e, e_off, v.text);
        CHECK(v.n_final >= 2 && !v.bad_order, "%d finals in order (%d out of order)", v.n_final, v.bad_order);
        CHECK(e <= e_off + 0.05, "streamed WER %.3f, offline %.3f", e, e_off);
        CHECK(v.last_was_tentative && v.last_tentative_empty, "the end flushes the tail");
        if (with_vad) {
            CHECK(strstr(v.before_pause, "them"), "the pause (7.1 .. 8.6 s) commits the first clip: '%s'",
                  v.before_pause);
            CHECK(steps < steps_plain, "less decoding with the VAD: %d steps, %d without", steps, steps_plain);
        }
        steps_plain = steps;
    }

    /* silence alone, under the VAD: no decoding, nothing committed */
    float *zeros = calloc(16000 * 6, sizeof *zeros);
    events z = {0};
    p.vad = vad;
    CHECK(run(ctx, &p, zeros, 16000 * 6, 1600, &z, &steps) == SOTTO_OK && steps == 0 && !z.n_final,
          "6 s of silence: %d steps, %d finals", steps, z.n_final);
    free(zeros);

    /* a callback's stop */
    events st = {.stop_after = 1};
    p.vad = NULL;
    CHECK(run(ctx, &p, x, n, 8000, &st, &steps) == SOTTO_ERR_CANCELLED && st.n_final == 1, "stopped: %d finals",
          st.n_final);
    sotto_result_free(off);
    free(x);
}

static void test_model(const char *model_path, const char *vad_path, const char *clips)
{
    sotto_model *m = NULL;
    sotto_vad *vad = NULL;
    sotto_context *ctx = NULL;
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = 2, cp.device = "cpu", cp.max_sequences = 1;
    if (sotto_model_load(model_path, &m) != SOTTO_OK || sotto_vad_load(vad_path, &vad) != SOTTO_OK ||
        sotto_context_init(m, &cp, &ctx) != SOTTO_OK) {
        CHECK(0, "load: %s", sotto_last_error());
    } else {
        sotto_stream_params p = sotto_stream_params_default();
        sotto_stream *s = NULL;
        p.beam_size = 5;
        CHECK(sotto_stream_init(ctx, &p, &s) == SOTTO_ERR_INVALID_ARG && strstr(sotto_last_error(), "max_sequences"),
              "a beam past the context: %s", sotto_last_error());
        test_sessions(ctx, vad, clips);
    }
    sotto_context_free(ctx);
    sotto_vad_free(vad);
    sotto_model_free(m);
}

int main(int argc, char **argv)
{
    test_agree();
    test_params();
    if (argc == 4) test_model(argv[1], argv[2], argv[3]);
    return check_summary();
}
