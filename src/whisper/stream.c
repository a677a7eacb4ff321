/* stream.c — the live transcription session (sotto_stream_* in sotto.h): pushed samples
 * collect in a buffer on the stream's timeline, sotto_transcribe decodes the buffer with
 * the committed text as prompt, agree.c commits what two decodings agree on, and the
 * Silero VAD (sotto_vad_stream_*) skips silence and commits at pauses. Events go to the
 * caller's callback. After whisper_streaming's OnlineASRProcessor (whisper_online.py). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common.h"
#include "agree.h"
#include "context.h"
#include "stream.h"
#include "text.h"

#define RATE SOTTO_SAMPLE_RATE
#define PROMPT_CHARS 200       /* whisper_streaming's prompt: the last 200 characters */
#define LEAD_S 1.0             /* silence kept before speech the VAD has not heard yet */
#define REPEAT_WINDOW_S 1.0    /* a committed word heard again starts this near where it did */
#define LOOKBACK_S 1.0         /* words ending this long before the last commit are not new */
#define ECHO_WORDS 4           /* a decoding that repeats this many committed words echoes its prompt */

struct sotto_stream {
    sotto_context *ctx;
    sotto_stream_params p;
    sotto_transcribe_params tp; /* every step's decoding */
    char lang[16];             /* the session's language: detected at the first step with words
                                  that heard hold_s of audio, then kept */
    char step_lang[16];        /* the last decoding's (detected anew at each step before) */
    float *buf;                /* the buffer's samples; buf[0] is sample OFF of the stream */
    int64_t n_buf, cap_buf, off;
    int64_t n_total;           /* samples pushed */
    int64_t decoded_to;        /* n_total at the last decoding (or silence skipped) */
    sotto__twords committed;   /* every committed word, in order */
    int in_buffer;             /* committed[in_buffer..] end inside the buffer */
    sotto__twords hyp;         /* the last decoding's words after the committed ones */
    double last_commit;        /* end of the last committed word (s); -inf before one */
    double *seg_end;           /* the last decoding's segment ends (s) */
    int n_seg, cap_seg;
    sotto_vad_stream *vad;
    int64_t vad_pos;           /* samples the VAD has seen, in whole windows */
    bool speech;               /* the VAD heard speech not yet committed at a pause */
    int64_t silence_from;      /* first sample of the current silence, -1 in speech */
    char *text;                /* every committed word, joined */
    size_t n_text, cap_text;
    int n_events, n_steps;
    double decoded_s;
    sotto__stream_decoder decoder; /* a test's, or NULL: sotto_transcribe */
    void *decoder_user;
    bool echoed;               /* a decoding echoed the prompt: none until the next commit */
    bool done, failed;
    char error[SOTTO__ERR_LEN];
};

sotto_stream_params sotto_stream_params_default(void)
{
    return (sotto_stream_params){.beam_size = 5, .min_step_s = 0.5, .trim_s = 12, .max_buffer_s = 25, .hold_s = 2,
                                 .vad_threads = 1, .vad_threshold = 0.5f, .vad_min_silence_ms = 500};
}

sotto_status sotto_stream_params_check(const sotto_stream_params *p)
{
    sotto__err err = {0};
    if (!p) sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "stream: no parameters");
    else if (p->beam_size < 1 || p->beam_size > SOTTO_MAX_SEQUENCES)
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "stream: beam size %d (1..%d)", p->beam_size, SOTTO_MAX_SEQUENCES);
    else if (!(p->min_step_s > 0 && p->min_step_s <= 30))
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "stream: minimum step %g s (above 0, at most 30)", p->min_step_s);
    else if (!(p->max_buffer_s > 0 && p->max_buffer_s <= 30) || !(p->trim_s > 0 && p->trim_s < p->max_buffer_s))
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "stream: trim at %g s, buffer bound %g s (0 < trim < bound <= 30)",
                    p->trim_s, p->max_buffer_s);
    else if (!(p->hold_s >= 0 && p->hold_s < p->max_buffer_s))
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "stream: hold %g s (at least 0, below the buffer bound %g s)",
                    p->hold_s, p->max_buffer_s);
    else if (p->min_step_s >= p->max_buffer_s)
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "stream: minimum step %g s not below the buffer bound %g s",
                    p->min_step_s, p->max_buffer_s);
    else if (p->vad && !(p->vad_threshold > 0 && p->vad_threshold < 1))
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "stream: VAD threshold %g (between 0 and 1)", p->vad_threshold);
    else if (p->vad && (p->vad_min_silence_ms < 0 || p->vad_threads < 0))
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "stream: VAD silence %d ms, %d threads (both >= 0)",
                    p->vad_min_silence_ms, p->vad_threads);
    else if (p->language && strcasecmp(p->language, "auto") && !sotto_language_code(p->language))
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "stream: '%s' is not a language", p->language);
    else
        return SOTTO_OK;
    return sotto__publish(&err);
}

static sotto_status fail(sotto_stream *s, sotto_status st, const char *msg)
{
    snprintf(s->error, sizeof s->error, "%s", msg);
    s->failed = true;
    return st;
}

/* The decoding of every step: the reference's search at temperature 0 alone (a fallback
 * would make successive decodings disagree at random), with word timestamps. */
static void step_params(sotto_stream *s)
{
    sotto_transcribe_params t = sotto_transcribe_params_default();
    t.language = s->p.language, t.translate = s->p.translate;
    t.beam_size = s->p.beam_size, t.best_of = 1;
    t.n_temperatures = 1, t.temperatures[0] = 0;
    t.word_timestamps = 1;
    s->tp = t;
}

sotto_status sotto_stream_init(sotto_context *ctx, const sotto_stream_params *params, sotto_stream **out)
{
    if (!out) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "stream: no output pointer"});
    *out = NULL;
    if (!ctx) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "stream: no context"});
    sotto_status st = sotto_stream_params_check(params);
    if (st != SOTTO_OK) return st;
    sotto__err err = {0};
    if (params->beam_size > ctx->dec.n_slots)
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "stream: beam size above the context's "
                                                                   "max_sequences"});
    const char *code =
        params->language && strcasecmp(params->language, "auto") ? sotto_language_code(params->language) : NULL;
    sotto_model_info info;
    sotto_model_get_info(ctx->model, &info);
    if (code && info.multilingual && sotto_language_token(ctx->model, code) < 0) {
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "stream: the model has no language '%s'", code);
        return sotto__publish(&err);
    }
    if (!info.multilingual && ((code && strcmp(code, "en")) || params->translate)) { /* known now, not at a push */
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "stream: this model is English-only: %s",
                    params->translate ? "it cannot translate" : "no language other than en");
        return sotto__publish(&err);
    }
    sotto_stream *s = calloc(1, sizeof *s);
    if (!s) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "stream: out of memory"});
    s->ctx = ctx, s->p = *params, s->last_commit = -INFINITY, s->silence_from = -1;
    step_params(s);
    if (params->vad && (st = sotto_vad_stream_init(params->vad, params->vad_threads, &s->vad)) != SOTTO_OK) {
        free(s);
        return st;
    }
    *out = s;
    return SOTTO_OK;
}

void sotto_stream_free(sotto_stream *s)
{
    if (!s) return;
    sotto_vad_stream_free(s->vad);
    sotto__twords_free(&s->committed);
    sotto__twords_free(&s->hyp);
    free(s->buf), free(s->seg_end), free(s->text);
    free(s);
}

void sotto__stream_set_decoder(sotto_stream *s, sotto__stream_decoder fn, void *user)
{
    s->decoder = fn, s->decoder_user = user;
}

double sotto_stream_time(const sotto_stream *s)
{
    return s ? (double)s->n_total / RATE : 0;
}

const char *sotto_stream_text(const sotto_stream *s)
{
    return s && s->text ? s->text : "";
}

void sotto_stream_stats(const sotto_stream *s, int *n_steps, double *decoded_s)
{
    if (n_steps) *n_steps = s ? s->n_steps : 0;
    if (decoded_s) *decoded_s = s ? s->decoded_s : 0;
}

const char *sotto_stream_error(const sotto_stream *s)
{
    return s ? s->error : "";
}

/* ---- the buffer ------------------------------------------------------------------ */

static bool append_samples(sotto_stream *s, const float *x, int64_t n)
{
    if (s->n_buf + n > s->cap_buf) {
        int64_t cap = (s->n_buf + n) * 2 + RATE;
        float *b = realloc(s->buf, (size_t)cap * sizeof *b);
        if (!b) return false;
        s->buf = b, s->cap_buf = cap;
    }
    memcpy(s->buf + s->n_buf, x, (size_t)n * sizeof *x);
    s->n_buf += n;
    return true;
}

/* Drops the buffer's audio before T seconds (the stream's timeline), and the committed
 * words that ended there from the ones the buffer holds. */
static void cut_at(sotto_stream *s, double t)
{
    int64_t at = (int64_t)llround(t * RATE);
    if (at <= s->off) return;
    if (at > s->off + s->n_buf) at = s->off + s->n_buf;
    memmove(s->buf, s->buf + (at - s->off), (size_t)(s->off + s->n_buf - at) * sizeof *s->buf);
    s->n_buf -= at - s->off;
    s->off = at;
    while (s->in_buffer < s->committed.n && s->committed.w[s->in_buffer].end <= t + 1e-9) s->in_buffer++;
}

static double buffer_s(const sotto_stream *s)
{
    return (double)s->n_buf / RATE;
}

/* The prompt: the initial prompt and the committed words before the buffer, their last
 * PROMPT_CHARS characters (bytes, cut at a word), without the first word's space; none
 * after a decoding echoed it, until the next commit. */
static char *make_prompt(const sotto_stream *s)
{
    size_t n = 0;
    int i = s->in_buffer;
    if (s->echoed) return calloc(1, 1);
    while (i > 0 && n + strlen(s->committed.w[i - 1].text) <= PROMPT_CHARS) n += strlen(s->committed.w[--i].text);
    const char *init = s->p.initial_prompt && i == 0 ? s->p.initial_prompt : "";
    char *out = malloc(strlen(init) + n + 2);
    if (!out) return NULL;
    strcpy(out, init);
    for (int k = i; k < s->in_buffer; k++) strcat(out, s->committed.w[k].text);
    char *p = out;
    while (*p == ' ') p++;
    memmove(out, p, strlen(p) + 1);
    return out;
}

/* ---- events ---------------------------------------------------------------------- */

static bool text_append(sotto_stream *s, const char *t)
{
    size_t k = strlen(t);
    if (s->n_text + k + 1 > s->cap_text) {
        size_t cap = (s->n_text + k + 1) * 2 + 256;
        char *p = realloc(s->text, cap);
        if (!p) return false;
        s->text = p, s->cap_text = cap;
    }
    memcpy(s->text + s->n_text, t, k + 1);
    s->n_text += k;
    return true;
}

/* Sends W[0..N) as one event of TYPE: its text, its tokens and its words. */
static sotto_status emit(sotto_stream *s, sotto_stream_event_type type, const sotto__tword *w, int n)
{
    size_t len = 1;
    for (int i = 0; i < n; i++) len += strlen(w[i].text);
    char *text = malloc(len);
    sotto_word *words = malloc((size_t)(n > 0 ? n : 1) * sizeof *words);
    int32_t *ids = malloc(len * sizeof *ids); /* at most one id per byte */
    int n_ids = 0;
    if (!text || !words || !ids) {
        free(text), free(words), free(ids);
        return fail(s, SOTTO_ERR_NOMEM, "stream: out of memory");
    }
    text[0] = 0;
    for (int i = 0; i < n; i++) {
        strcat(text, w[i].text);
        words[i] = (sotto_word){w[i].text, w[i].start, w[i].end, w[i].probability};
    }
    if (sotto_tokenize(s->ctx->model, text, ids, (int)len, &n_ids) != SOTTO_OK) n_ids = 0; /* invalid UTF-8 */
    double now = (double)s->n_total / RATE;
    sotto_stream_event e = {.type = type, .start = n ? w[0].start : now, .end = n ? w[n - 1].end : now,
                            .text = text, .tokens = ids, .n_tokens = n_ids, .words = words, .n_words = n,
                            .audio_time = now, .id = s->n_events,
                            .language = s->lang[0] ? s->lang : s->step_lang[0] ? s->step_lang : NULL};
    if (type == SOTTO_STREAM_FINAL) s->n_events++;
    int stop = s->p.on_event ? s->p.on_event(&e, s->p.user_data) : 0;
    free(text), free(words), free(ids);
    if (stop) return fail(s, SOTTO_ERR_CANCELLED, "stream: stopped by the event callback");
    return SOTTO_OK;
}

/* Commits the first N words of the hypothesis: one FINAL event. */
static sotto_status commit(sotto_stream *s, int n)
{
    if (n <= 0) return SOTTO_OK;
    int first = s->committed.n;
    if (!sotto__twords_take(&s->committed, &s->hyp, n)) return fail(s, SOTTO_ERR_NOMEM, "stream: out of memory");
    /* times never run back: a decoding may place a word's start a few hundredths of a
     * second before the end of the word committed before it, from another decoding */
    double prev = first > 0 ? s->committed.w[first - 1].end : 0;
    for (int i = first; i < s->committed.n; i++) {
        if (s->committed.w[i].start < prev) s->committed.w[i].start = prev;
        if (s->committed.w[i].end < s->committed.w[i].start) s->committed.w[i].end = s->committed.w[i].start;
        prev = s->committed.w[i].end;
    }
    for (int i = first; i < s->committed.n; i++)
        if (!text_append(s, s->committed.w[i].text)) return fail(s, SOTTO_ERR_NOMEM, "stream: out of memory");
    s->last_commit = s->committed.w[s->committed.n - 1].end;
    s->echoed = false;
    return emit(s, SOTTO_STREAM_FINAL, s->committed.w + first, n);
}

/* ---- a decoding step ------------------------------------------------------------- */

/* Drops the longest run at the start of CAND (up to 5 words) that repeats the end of the
 * committed words in the buffer, each near the time it was committed at. */
static void drop_repeat(const sotto_stream *s, sotto__twords *cand)
{
    const sotto__twords mine = {s->committed.w + s->in_buffer, s->committed.n - s->in_buffer, 0};
    int rep = sotto__repeat_of_committed(&mine, cand);
    for (int k = 0; k < rep; k++)
        if (fabs(cand->w[k].start - mine.w[mine.n - rep + k].start) > REPEAT_WINDOW_S) rep = 0;
    sotto__twords_drop(cand, rep);
}

/* Drops the words at the start of CAND that are committed already: a run repeating the
 * committed words (drop_repeat), then any whose middle is before the last commit (old
 * audio heard as other words), then a repeat again: old audio heard otherwise ("old
 * -sposed young" for the committed "ill-disposed young...") can end in a word committed
 * as it is ("man.", its middle at the last commit), which two decodings would agree on
 * and commit twice. Times move by a few tenths of a second between decodings, so a cut
 * at the last commit's time alone drops new words or keeps old. */
static void drop_committed(sotto_stream *s, sotto__twords *cand)
{
    drop_repeat(s, cand);
    int old = 0;
    while (old < cand->n && (cand->w[old].start + cand->w[old].end) / 2 < s->last_commit) old++;
    sotto__twords_drop(cand, old);
    if (old) drop_repeat(s, cand);
}

/* T on a millisecond: the stream's times are an offset plus a window's, whose sum in
 * binary is 9.299999999999999 where the window said 9.3. */
static double ms(double t)
{
    return nearbyint(t * 1000) / 1000;
}

/* The words of result R (times shifted to the stream's timeline) that may be new: those
 * ending less than LOOKBACK_S before the last commit, less those drop_committed finds
 * committed, and none from a segment whose text compresses more than the
 * compression-ratio threshold on (a loop, ". . . ." or a phrase over and over, which
 * greedy decoding without fallback falls into) or after it: a loop is never agreed on,
 * so it is never committed. No word without a letter or digit either (" ."): beam
 * search at short steps ranks a few dots above the speech (by mean log-probability),
 * too few to compress past the threshold, and any two of them agree; once committed,
 * the prompt's dots made every later decoding dots. The segment ends go to s->seg_end;
 * *LOOPED tells whether a segment was left out as a loop. */
static sotto_status take_words(sotto_stream *s, const sotto_result *r, sotto__twords *out, bool *looped)
{
    *looped = false;
    double off = (double)s->off / RATE;
    if (r->n_segments > s->cap_seg) {
        double *e = realloc(s->seg_end, (size_t)r->n_segments * sizeof *e);
        if (!e) return fail(s, SOTTO_ERR_NOMEM, "stream: out of memory");
        s->seg_end = e, s->cap_seg = r->n_segments;
    }
    s->n_seg = 0;
    for (int i = 0; i < r->n_segments; i++) {
        const sotto_segment *g = &r->segments[i];
        if (g->text && sotto__compression_ratio(g->text, strlen(g->text)) > s->tp.compression_ratio_threshold) {
            *looped = true;
            break;
        }
        if (g->n_words) s->seg_end[s->n_seg++] = ms(off + g->words[g->n_words - 1].end);
        for (int k = 0; k < g->n_words; k++) {
            const sotto_word *w = &g->words[k];
            if (off + w->end <= s->last_commit - LOOKBACK_S || sotto__word_same(w->word, "")) continue;
            if (!sotto__twords_push(out, w->word, ms(off + w->start), ms(off + w->end), w->probability))
                return fail(s, SOTTO_ERR_NOMEM, "stream: out of memory");
        }
    }
    drop_committed(s, out);
    /* new words that begin by saying the committed text's last ECHO_WORDS or more words
     * again, later in time: the prompt repeated (a decoding with the committed sentence
     * as prompt heard the next speech as that sentence), not speech */
    int echo = sotto__leading_repeat(&s->committed, out, ECHO_WORDS, 32);
    sotto__twords_drop(out, echo);
    if (echo) s->echoed = true; /* the next decodings go without the prompt it echoes */
    /* a phrase said three times running (a word four): from there on a loop too short to
     * compress past the threshold ("Did I do that? Did I do that? Did I do that?") */
    sotto__twords_keep(out, sotto__loop_start(out));
    return SOTTO_OK;
}

/* Decodes the buffer; the new words replace the hypothesis once the prefix they agree on
 * with it is committed (ALL: every word is committed; or, when the decoding fell into a
 * loop or heard no new word, the hypothesis's: at a pause or the end, that decoding
 * would drop the pending words with the audio they were heard in). */
static sotto_status decode_step(sotto_stream *s, bool all)
{
    s->decoded_to = s->n_total;
    if (s->n_buf < RATE / 10 && !s->hyp.n) return SOTTO_OK; /* under 0.1 s: nothing to hear */
    char *prompt = make_prompt(s);
    if (!prompt) return fail(s, SOTTO_ERR_NOMEM, "stream: out of memory");
    s->tp.initial_prompt = *prompt ? prompt : NULL;
    if (s->lang[0]) s->tp.language = s->lang;
    sotto_result *r = NULL;
    const sotto_result *got = NULL;
    sotto_status st = SOTTO_OK;
    if (s->decoder) {
        if (!(got = s->decoder(s->decoder_user, s->buf, s->n_buf, (double)s->off / RATE, &s->tp)))
            st = SOTTO_ERR_INVALID_ARG;
    } else if ((st = sotto__transcribe_window(s->ctx, s->buf, s->n_buf, &s->tp, &r)) == SOTTO_OK) {
        got = r;
    }
    free(prompt);
    s->tp.initial_prompt = NULL;
    if (st != SOTTO_OK) return fail(s, st, s->decoder ? "stream: the decoder failed" : sotto_context_error(s->ctx));
    s->n_steps++, s->decoded_s += buffer_s(s);
    sotto__twords fresh = {0};
    bool looped = false;
    st = take_words(s, got, &fresh, &looped);
    if (st == SOTTO_OK && got->language) snprintf(s->step_lang, sizeof s->step_lang, "%s", got->language);
    /* a language detected from half a second is a guess (German heard as English, French
     * as Chinese): kept once a decoding with words has heard hold_s */
    if (st == SOTTO_OK && !s->lang[0] && fresh.n && got->language && buffer_s(s) >= s->p.hold_s)
        snprintf(s->lang, sizeof s->lang, "%s", got->language);
    sotto_result_free(r);
    if (st != SOTTO_OK) {
        sotto__twords_free(&fresh);
        return st;
    }
    if (all && (looped || !fresh.n)) {
        sotto__twords_free(&fresh);
        return commit(s, s->hyp.n);
    }
    int agreed = all ? fresh.n : sotto__agree_prefix(&fresh, &s->hyp);
    /* an utterance's first words wait for hold_s of audio: decodings of its first second
     * or two mishear them ("round fark" for "brown fox"), and two such agree */
    if (!all && s->in_buffer == s->committed.n && buffer_s(s) < s->p.hold_s) agreed = 0;
    sotto__twords_free(&s->hyp);
    s->hyp = fresh;
    return commit(s, agreed);
}

/* whisper_streaming's chunk_completed_segment: past trim_s, cut at the end of the last
 * segment (not the decoding's last) whose words are all committed. Past max_buffer_s,
 * the words of every segment but the last are committed and cut too; a buffer with no
 * words keeps its last LEAD_S. */
static sotto_status trim(sotto_stream *s)
{
    if (buffer_s(s) <= s->p.trim_s) return SOTTO_OK;
    double cut = -INFINITY, forced = -INFINITY;
    for (int i = 0; i + 1 < s->n_seg; i++) {
        if (s->seg_end[i] <= s->last_commit + 1e-9) cut = s->seg_end[i];
        forced = s->seg_end[i];
    }
    if (cut > -INFINITY) cut_at(s, cut);
    if (buffer_s(s) <= s->p.max_buffer_s) return SOTTO_OK;
    if (forced > -INFINITY && forced > s->last_commit) {
        int n = 0;
        while (n < s->hyp.n && s->hyp.w[n].end <= forced + 1e-9) n++;
        sotto_status st = commit(s, n);
        if (st != SOTTO_OK) return st;
        cut_at(s, forced);
    }
    if (buffer_s(s) <= s->p.max_buffer_s) return SOTTO_OK;
    /* one long segment: commit and cut what ends trim_s before the buffer's end */
    double end = (double)(s->off + s->n_buf) / RATE, keep = s->hyp.n ? s->p.trim_s : LEAD_S;
    int n = 0;
    while (n < s->hyp.n && s->hyp.w[n].end <= end - keep) n++;
    sotto_status st = commit(s, n);
    if (st == SOTTO_OK) cut_at(s, end - keep);
    return st;
}

/* ---- the VAD gate ---------------------------------------------------------------- */

/* Runs the VAD over the samples pushed since it last ran: each window at or above the
 * threshold is speech (pending until a pause commits it); below threshold - 0.15 (the
 * package's end threshold) it starts or continues a silence. */
static sotto_status hear(sotto_stream *s, const float *x, int64_t n)
{
    int64_t cap = (n + SOTTO_VAD_WINDOW - 1) / SOTTO_VAD_WINDOW + 1, n_probs = 0;
    float *probs = malloc((size_t)cap * sizeof *probs);
    if (!probs) return fail(s, SOTTO_ERR_NOMEM, "stream: out of memory");
    sotto_status st = sotto_vad_stream_push(s->vad, x, n, probs, cap, &n_probs);
    if (st != SOTTO_OK) {
        free(probs);
        return fail(s, st, sotto_vad_stream_error(s->vad));
    }
    float off = s->p.vad_threshold - 0.15f > 0.01f ? s->p.vad_threshold - 0.15f : 0.01f;
    for (int64_t i = 0; i < n_probs; i++, s->vad_pos += SOTTO_VAD_WINDOW) {
        if (probs[i] >= s->p.vad_threshold) s->speech = true, s->silence_from = -1;
        else if (probs[i] < off && s->silence_from < 0) s->silence_from = s->vad_pos;
    }
    free(probs);
    return SOTTO_OK;
}

/* Keeps the buffer's last LEAD_S of silence and nothing before it: the start of speech
 * the VAD has not called speech yet. Committed words stay out of it: it starts at the
 * silence at the earliest. */
static void drop_silence(sotto_stream *s)
{
    double end = (double)(s->off + s->n_buf) / RATE, from = end - LEAD_S;
    if (s->silence_from >= 0 && (double)s->silence_from / RATE > from) from = (double)s->silence_from / RATE;
    if (from < s->last_commit) from = s->last_commit;
    cut_at(s, from);
}

/* A pause after speech: one more decoding, everything committed, the silence dropped. */
static sotto_status pause_commit(sotto_stream *s)
{
    sotto_status st = s->decoded_to < s->n_total ? decode_step(s, true) : commit(s, s->hyp.n);
    if (st == SOTTO_OK) st = emit(s, SOTTO_STREAM_TENTATIVE, NULL, 0);
    s->speech = false;
    drop_silence(s);
    return st;
}

/* ---- push and finish --------------------------------------------------------------- */

static sotto_status usable(sotto_stream *s)
{
    if (!s) return SOTTO_ERR_INVALID_ARG;
    if (s->failed) return SOTTO_ERR_INVALID_ARG; /* the message of the failure stays */
    if (s->done) return fail(s, SOTTO_ERR_INVALID_ARG, "stream: finished: it takes no more audio");
    return SOTTO_OK;
}

/* One step, if one is due: the VAD gate first, then min_step_s of new audio. */
static sotto_status step(sotto_stream *s)
{
    if (s->vad && !s->speech) {
        drop_silence(s);
        s->decoded_to = s->n_total;
        return SOTTO_OK;
    }
    if (s->vad && s->silence_from >= 0 &&
        (s->n_total - s->silence_from) * 1000 >= (int64_t)s->p.vad_min_silence_ms * RATE)
        return pause_commit(s);
    if ((double)(s->n_total - s->decoded_to) < s->p.min_step_s * RATE) return SOTTO_OK;
    sotto_status st = decode_step(s, false);
    if (st == SOTTO_OK) st = emit(s, SOTTO_STREAM_TENTATIVE, s->hyp.w, s->hyp.n);
    if (st == SOTTO_OK) st = trim(s);
    return st;
}

sotto_status sotto_stream_push(sotto_stream *s, const float *samples, int64_t n)
{
    sotto_status st = usable(s);
    if (st != SOTTO_OK) return st;
    if (n < 0 || (n > 0 && !samples)) return fail(s, SOTTO_ERR_INVALID_ARG, "stream: a negative count or no samples");
    /* one step over all of it while the buffer stays within max_buffer_s (audio that came
     * in while a slow step ran makes no backlog); past that, a step each time the buffer
     * fills max_buffer_s (at least min_step_s, 0.1 s apart): a step hears the first 30 s
     * of its buffer alone, what trim then cuts would be lost unheard, and a buffer past
     * max_buffer_s at every step commits by force, not by agreement (read5, 302 s pushed
     * whole, greedy: 35.0 % WER filling 30 s, 16.2 % filling max_buffer_s; fed 5 s at a
     * time 13.3 %, and sotto_transcribe 13.5 %) */
    int64_t least = (int64_t)(s->p.min_step_s * RATE), most = (int64_t)(s->p.max_buffer_s * RATE);
    if (least < RATE / 10) least = RATE / 10;
    while (n > 0) {
        int64_t room = most - s->n_buf, k = n <= room ? n : room > least ? room : least;
        if (k > n) k = n;
        if (!append_samples(s, samples, k)) return fail(s, SOTTO_ERR_NOMEM, "stream: out of memory");
        s->n_total += k;
        if (s->vad && (st = hear(s, samples, k)) != SOTTO_OK) return st;
        if ((st = step(s)) != SOTTO_OK) return st;
        samples += k, n -= k;
    }
    return SOTTO_OK;
}

sotto_status sotto_stream_finish(sotto_stream *s)
{
    sotto_status st = usable(s);
    if (st != SOTTO_OK) return st;
    s->done = true;
    if (s->vad) {
        float prob;
        int64_t n_probs = 0;
        if (sotto_vad_stream_flush(s->vad, &prob, &n_probs) == SOTTO_OK && n_probs && prob >= s->p.vad_threshold)
            s->speech = true;
    }
    st = (!s->vad || s->speech) && s->decoded_to < s->n_total ? decode_step(s, true) : commit(s, s->hyp.n);
    if (st == SOTTO_OK) st = emit(s, SOTTO_STREAM_TENTATIVE, NULL, 0);
    return st;
}
