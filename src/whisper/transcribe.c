/* transcribe.c — long-form transcription, mirroring openai/whisper 20250625 transcribe.py:
 * the whole file's log-mel (melfile.c), 30 s windows advanced by the timestamp tokens
 * (segments cut at consecutive timestamps; a single timestamp at the end finishes the
 * window, else the next window starts at the last timestamp), each window decoded with
 * temperature fallback (search.c), skipped as silence by the no-speech rule, and
 * conditioned on the text before it; with word timestamps (timing.c) its segments get
 * words, the seek moves to the last word's end and hallucination.c may drop segments.
 * Each window is encoded once; fallback decodes and the word pass reuse its resident
 * cross-attention K/V. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../audio/melfile.h"
#include "batch.h"
#include "search.h"
#include "suppress.h"
#include "stream.h"
#include "input.h"
#include "lang.h"
#include "text.h"
#include "hallucination.h"
#include "params.h"
#include "result.h"
#include "prompt.h"
#include "timing.h"

typedef sotto__result result; /* result.h */


enum { ONE_WINDOW_REST = 200 }; /* frames (2 s) */

/* The state of one transcription: the openai loop's variables. */
typedef struct run {
    sotto_context *ctx;
    const sotto_transcribe_params *p;
    const sotto__melfile *mf;
    const sotto__input *in;
    result *res;
    sotto__rules rules;
    int32_t sot_seq[4];
    int n_sot;
    int32_t *all;              /* all_tokens: every segment's tokens, the initial prompt first */
    int n_all, cap_all, n_initial;
    int prompt_reset_since;
    uint64_t rng;
    float *mel;                /* [n_mels, 3000] */
    sotto__wseg *cur;          /* current_segments: the window's, before they are kept */
    int n_cur;
    double last_speech;        /* last_speech_timestamp (word timestamps) */
    int32_t *hotwords, *prefix; /* faster-whisper's (prompt.h), or NULL */
    int n_hotwords, n_prefix;
    sotto__i32list suppress;   /* the suppressed ids (suppress.h), in SUPPRESS_OWNED or the model */
    int32_t *suppress_owned;
    char win_lang[16];         /* the language of the window being decoded */
    bool one_window;           /* sotto__transcribe_window: windows whole, the first alone */
} run;

static bool push_tokens(run *r, const int32_t *t, int n)
{
    if (r->n_all + n > r->cap_all) {
        int cap = (r->n_all + n) * 2 + 64;
        int32_t *p = realloc(r->all, (size_t)cap * sizeof *p);
        if (!p) return false;
        r->all = p, r->cap_all = cap;
    }
    memcpy(r->all + r->n_all, t, (size_t)n * sizeof *t);
    r->n_all += n;
    return true;
}

/* The VAD hears no speech in the window of SIZE frames at SEEK: with the silence check
 * on, a no-speech probability above the threshold then skips it (never without a VAD,
 * never under vad_filter, whose windows are all speech). */
static bool vad_silent(const run *r, int64_t seek, int size)
{
    const sotto_transcribe_params *p = r->p;
    return p->silence_check && p->vad && !p->vad_filter &&
           !sotto__input_has_speech(r->in, seek * 160, (seek + size) * 160, p->vad_threshold);
}

/* Whether a sample at temperature index I may stop once its text fails the compression
 * check: only when a later temperature follows (the window then falls back either way;
 * at the last temperature openai keeps whatever the sample gives, so it runs to its end).
 * SOTTO_FALLBACK_STOP=0 never stops (for comparison: the same results either way). */
static bool may_stop_early(const sotto_transcribe_params *p, int i)
{
    const char *env = getenv("SOTTO_FALLBACK_STOP");
    return p->check_compression && p->temperatures[i] > 0 && i + 1 < p->n_temperatures && !(env && !strcmp(env, "0"));
}

/* The window's prompt into *PROMPT, *N: the tokens since the last reset; with
 * carry_initial_prompt openai's rule instead: the initial prompt, then what follows it
 * (from the reset on) cut as all_tokens[nignored:][-remaining:] (remaining = n_text_ctx / 2
 * - 1 less the initial prompt: Python's slice, so 0 keeps all and -k drops the first k).
 * *OWNED is what to free (NULL when it points into r->all). */
static sotto_status window_prompt(run *r, const int32_t **prompt, int *n, int32_t **owned)
{
    *owned = NULL;
    *prompt = r->all + r->prompt_reset_since, *n = r->n_all - r->prompt_reset_since;
    if (!r->p->carry_initial_prompt || r->n_initial == 0) return SOTTO_OK; /* the same tokens then */
    int from = r->n_initial > r->prompt_reset_since ? r->n_initial : r->prompt_reset_since;
    int len = r->n_all - from, remaining = r->ctx->model->info.n_text_ctx / 2 - 1 - r->n_initial;
    int skip = remaining > 0 ? (len > remaining ? len - remaining : 0) : remaining < 0 ? -remaining : 0;
    if (skip > len) skip = len;
    int32_t *t = malloc((size_t)(r->n_initial + len - skip + 1) * sizeof *t);
    if (!t) return sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "transcribe: out of memory");
    memcpy(t, r->all, (size_t)r->n_initial * sizeof *t);
    if (len - skip > 0) memcpy(t + r->n_initial, r->all + from + skip, (size_t)(len - skip) * sizeof *t);
    *prompt = *owned = t, *n = r->n_initial + len - skip;
    return SOTTO_OK;
}

/* D, a decode that failed, becomes *BEST (faster-whisper's choice: within the compression
 * ratio threshold first, then the highest avg_logprob, the first of equals). */
static void keep_best(const sotto_transcribe_params *p, const sotto__decode_result *d, sotto__decode_result *best,
                      bool *have, bool *best_under)
{
    bool under = !(p->check_compression && d->compression_ratio > p->compression_ratio_threshold);
    if (!*have || (under && !*best_under) || (under == *best_under && d->avg_logprob > best->avg_logprob))
        *best = *d, *best_under = under, *have = true;
}

/* decode_with_fallback: temperatures in order until one passes the checks; a window the
 * silence check skips ends after the first prefill (*SILENT). When all fail, the last
 * decode, or with fallback_best faster-whisper's best of them at the last temperature. */
static sotto_status decode_with_fallback(run *r, sotto__decode_result *out, int64_t seek, int size, bool *silent)
{
    const double skip_above = vad_silent(r, seek, size) ? r->p->no_speech_threshold : INFINITY;
    const sotto_transcribe_params *p = r->p;
    const sotto_model_info *h = &r->ctx->model->info;
    const int32_t *prompt;
    int n_prompt;
    int32_t *owned;
    sotto_status pst = window_prompt(r, &prompt, &n_prompt, &owned);
    if (pst) return pst;
    sotto__decode_result *best = NULL;
    bool have = false, best_under = false, passed = false;
    if (p->fallback_best && p->n_temperatures > 1 && !(best = malloc(sizeof *best)))
        return free(owned), sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "transcribe: out of memory");
    for (int i = 0; i < p->n_temperatures; i++) {
        double t = p->temperatures[i];
        sotto__decode_opts o = {.rules = &r->rules, .prompt = prompt, .n_prompt = n_prompt, .sot_seq = r->sot_seq,
                                .n_sot = r->n_sot, .temperature = t,
                                .hotwords = seek == 0 && r->n_prefix ? NULL : r->hotwords,
                                .n_hotwords = seek == 0 && r->n_prefix ? 0 : r->n_hotwords,
                                .prefix = seek == 0 ? r->prefix : NULL, .n_prefix = seek == 0 ? r->n_prefix : 0,
                                .max_new_tokens = p->max_new_tokens, .beam_size = t > 0 ? 1 : p->beam_size,
                                .best_of = t > 0 ? p->best_of : 1, .patience = p->patience,
                                .ct2_beams = p->ctranslate2_search != 0,
                                .use_length_penalty = p->use_length_penalty, .length_penalty = p->length_penalty,
                                .sample_len = p->sample_len > 0 && p->sample_len < h->n_text_ctx / 2
                                                  ? p->sample_len : h->n_text_ctx / 2,
                                .rng = &r->rng, .skip_above = skip_above,
                                .few_logits = p->without_logprobs && p->n_temperatures == 1,
                                .logprobs_above = p->check_no_speech && p->check_logprob ? p->no_speech_threshold
                                                                                         : INFINITY,
                                .stop_ratio_above = may_stop_early(p, i) ? p->compression_ratio_threshold : INFINITY,
                                .abort_callback = p->abort_callback, .user_data = p->user_data,
                                .audio_s = r->res->pub.duration};
        sotto_status st = sotto__decode_window(r->ctx, &o, out);
        if (st || (*silent = out->skipped)) return free(owned), free(best), st;
        char *text = sotto__detok(r->ctx->model, out->tokens, out->n_tokens, true);
        if (!text)
            return free(owned), free(best), sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "transcribe: out of memory");
        size_t a, n;
        sotto__strip(text, strlen(text), &a, &n);
        out->compression_ratio = sotto__compression_ratio(text + a, n);
        free(text);
        bool fallback = (p->check_compression && out->compression_ratio > p->compression_ratio_threshold) ||
                        (p->check_logprob && out->avg_logprob < p->logprob_threshold);
        if (p->check_no_speech && out->no_speech_prob > p->no_speech_threshold && p->check_logprob &&
            out->avg_logprob < p->logprob_threshold)
            fallback = false; /* silence */
        if (!fallback) {
            passed = true;
            break;
        }
        if (best) keep_best(p, out, best, &have, &best_under);
    }
    if (!passed && have) {
        double last = out->temperature;
        *out = *best, out->temperature = last;
    }
    free(owned), free(best);
    return SOTTO_OK;
}

/* Room for MORE segments in the result. */
static sotto_status grow(run *r, int more)
{
    if (sotto__result_grow(r->res, more)) return SOTTO_OK;
    return sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "transcribe: out of memory");
}

/* Appends S, its fields and D's scores, to the result. */
static void append(run *r, sotto_segment s, int64_t seek, const sotto__decode_result *d)
{
    s.seek = seek, s.temperature = d->temperature, s.avg_logprob = d->avg_logprob;
    s.compression_ratio = d->compression_ratio, s.no_speech_prob = d->no_speech_prob;
    s.language = sotto_language_code(r->win_lang);
    sotto__result_append(r->res, s);
}

/* With vad_filter, the words of C [I0, I1) as a segment of their own (C crossed a silence
 * the VAD dropped): its text their text, its tokens that text's (no timestamps), its
 * times theirs; the words go with it under word_timestamps, else they are freed. */
static sotto_status add_piece(run *r, int64_t seek, sotto__wseg *c, int i0, int i1, double start, double end,
                              const sotto__decode_result *d)
{
    size_t len = 0;
    for (int i = i0; i < i1; i++) len += strlen(c->words[i].word);
    char *text = malloc(len + 1);
    int need = 0;
    sotto_status st = text ? SOTTO_OK : SOTTO_ERR_NOMEM;
    if (!st) {
        text[0] = 0;
        for (int i = i0; i < i1; i++) strcat(text, c->words[i].word);
        st = sotto_tokenize(r->ctx->model, text, NULL, 0, &need);
    }
    int32_t *toks = st ? NULL : malloc((size_t)(need ? need : 1) * sizeof *toks);
    sotto_word *words = r->p->word_timestamps ? malloc((size_t)(i1 - i0) * sizeof *words) : NULL;
    if (!st && (!toks || (r->p->word_timestamps && !words))) st = SOTTO_ERR_NOMEM;
    if (!st) st = sotto_tokenize(r->ctx->model, text, toks, need, &need);
    if (st) {
        free(text), free(toks), free(words);
        return sotto__ctx_fail(r->ctx, st, "transcribe: %s", st == SOTTO_ERR_NOMEM ? "out of memory" : sotto_last_error());
    }
    sotto_segment s = {.start = start, .end = end, .text = text, .tokens = toks,
                       .n_tokens = need, .words = words, .n_words = words ? i1 - i0 : 0};
    for (int i = i0; i < i1; i++) {
        if (words) words[i - i0] = c->words[i];
        else free((void *)c->words[i].word);
        c->words[i].word = NULL;
    }
    append(r, s, seek, d);
    return SOTTO_OK;
}

/* Keeps the window's segment C (new_segment, then cleared when instantaneous or blank):
 * its words move into the result. With vad_filter 1 a segment whose words lie in more than
 * one speech chunk is cut between them, so no segment spans a silence the VAD dropped
 * (the window's text and all_tokens stay the segment's whole tokens); 2 keeps it whole, as
 * faster-whisper does. */
static sotto_status add_segment(run *r, int64_t seek, sotto__wseg *c, const sotto__decode_result *d)
{
    int n = c->n_tokens, n_pieces = 1;
    sotto_status st = grow(r, c->n_words > 1 ? c->n_words : 1);
    if (st) return st;
    char *text;
    int32_t *toks;
    if (!sotto__segment_strings(r->ctx->model, c->tokens, n, &text, &toks))
        return sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "transcribe: out of memory");
    size_t a, len;
    sotto__strip(text, strlen(text), &a, &len);
    if (c->start == c->end || len == 0) text[0] = 0, n = 0, sotto__wseg_free(c); /* instantaneous or blank */
    if (!push_tokens(r, toks, n)) st = sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "transcribe: out of memory");
    /* the chunk of each word's middle, on the kept timeline */
    int64_t *chunk = c->n_words ? malloc((size_t)c->n_words * sizeof *chunk) : NULL;
    if (c->n_words && !chunk) st = sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "transcribe: out of memory");
    for (int i = 0; i < c->n_words && chunk; i++) {
        chunk[i] = sotto__input_chunk(r->in, (c->words[i].start + c->words[i].end) / 2);
        n_pieces += i > 0 && chunk[i] != chunk[i - 1];
    }
    /* on the original timeline (faster-whisper restore_speech_timestamps: a word in the
     * chunk of its middle, a segment with words from its first and last word) */
    double start = sotto__input_original_time(r->in, c->start, false);
    double end = sotto__input_original_time(r->in, c->end, true);
    for (int i = 0; i < c->n_words; i++) {
        sotto_word *w = &c->words[i];
        double middle = (w->start + w->end) / 2;
        w->start = sotto__input_original_time_at(r->in, w->start, middle);
        w->end = sotto__input_original_time_at(r->in, w->end, middle);
    }
    /* a segment timed by its words; without word timestamps (words found only to place it)
     * its decoded start or end stays where it lies in the chunk of its first or last words,
     * so it meets its neighbours as their decoded times do */
    const bool placed = !r->p->word_timestamps && c->n_words > 0 && chunk;
    const bool keep_start = placed && sotto__input_chunk(r->in, c->start) == chunk[0];
    const bool keep_end = placed && sotto__input_end_chunk(r->in, c->end) == chunk[c->n_words - 1];
    if (!st && r->p->vad_filter == 1 && n_pieces > 1) {
        for (int i0 = 0, i = 1; !st && i <= c->n_words; i++)
            if (i == c->n_words || chunk[i] != chunk[i - 1]) {
                double t0 = i0 == 0 && keep_start ? start : c->words[i0].start;
                double t1 = i == c->n_words && keep_end ? end : c->words[i - 1].end;
                st = add_piece(r, seek, c, i0, i, t0, t1 > t0 ? t1 : t0, d), i0 = i;
            }
    } else if (!st) {
        if (c->n_words > 0 && r->p->vad_filter) {
            if (!keep_start) start = c->words[0].start;
            if (!keep_end) end = c->words[c->n_words - 1].end;
            if (end < start) end = start;
        }
        if (!r->p->word_timestamps) sotto__wseg_free(c); /* timed only for the chunks (chunk_words) */
        append(r, (sotto_segment){.start = start, .end = end, .text = text, .tokens = toks, .n_tokens = n,
                                  .words = c->words, .n_words = c->n_words}, seek, d);
        c->words = NULL, c->n_words = 0;
        text = NULL, toks = NULL;
    }
    sotto__wseg_free(c);
    free(chunk), free(text), free(toks);
    return st;
}

static void pend(run *r, double start, double end, const int32_t *tokens, int n)
{
    r->cur[r->n_cur++] = (sotto__wseg){.start = start, .end = end, .tokens = tokens, .n_tokens = n};
}

/* The segments of one decoded window starting at frame SEEK of SIZE frames into r->cur;
 * the frames to advance into *ADVANCE, whether it ends in a single timestamp into
 * *SINGLE. */
static void cut_segments(run *r, int64_t seek, int size, const sotto__decode_result *d, int64_t *advance,
                         bool *single)
{
    const int32_t tb = r->rules.ts_begin;
    const int32_t *t = d->tokens;
    const int n = d->n_tokens;
    const double time_offset = (double)(seek * 160) / 16000.0, precision = 2 * 160 / 16000.0;
    bool single_ending = n >= 2 && t[n - 2] < tb && t[n - 1] >= tb;
    int cuts[SOTTO__MAX_TOKENS + 1], n_cuts = 0;
    for (int i = 0; i + 1 < n; i++)
        if (t[i] >= tb && t[i + 1] >= tb) cuts[n_cuts++] = i + 1;
    r->n_cur = 0;
    *single = single_ending;
    if (n_cuts > 0) {
        if (single_ending) cuts[n_cuts++] = n;
        int last = 0;
        for (int c = 0; c < n_cuts; c++) {
            const int32_t *s = t + last;
            int len = cuts[c] - last;
            pend(r, time_offset + (s[0] - tb) * precision, time_offset + (s[len - 1] - tb) * precision, s, len);
            last = cuts[c];
        }
        /* one window: the unfinished segment's text stays, to the window's end */
        if (r->one_window && !single_ending && n - last > 1)
            pend(r, time_offset + (t[last] - tb) * precision, time_offset + size * 160 / 16000.0, t + last, n - last);
        /* a single timestamp at the end: no speech after it; else resume at the last pair */
        *advance = single_ending ? size : (int64_t)(t[last - 1] - tb) * 2;
        return;
    }
    double duration = size * 160 / 16000.0;
    int32_t last_ts = -1;
    for (int i = 0; i < n; i++)
        if (t[i] >= tb) last_ts = t[i];
    if (last_ts >= 0 && last_ts != tb) duration = (last_ts - tb) * precision;
    *advance = size;
    pend(r, time_offset, time_offset + duration, t, n);
}

/* The word alignment of the window at SEEK (SIZE frames) over its segments r->cur. */
static sotto_status align_words(run *r, int64_t seek, int size)
{
    const sotto_model_info *h = &r->ctx->model->info;
    const sotto_transcribe_params *p = r->p;
    static const char *const unicode_langs[] = {"zh", "ja", "th", "lo", "my", "yue"};
    bool unicode_only = false;
    for (size_t i = 0; i < sizeof unicode_langs / sizeof *unicode_langs; i++)
        unicode_only |= strcmp(r->win_lang, unicode_langs[i]) == 0;
    int32_t sot[3] = {h->token_sot, r->sot_seq[1], r->sot_seq[2]};
    sotto__timing_opts o = {.sot_seq = sot, .n_sot = h->multilingual ? 3 : 1, .seek = seek, .num_frames = size,
                            .prepend = p->prepend_punctuations, .append = p->append_punctuations,
                            .unicode_only = unicode_only};
    return sotto__add_word_timestamps(r->ctx, &o, r->cur, r->n_cur, r->last_speech);
}

/* With vad_filter and no word timestamps: words for the segments of the window that span
 * more than one speech chunk, so add_segment can cut them at the silence between and time
 * them by their words (a timestamp token in the padding of a chunk before or after maps
 * across the silence); the other segments and the seek stay as decoded. */
static sotto_status chunk_words(run *r, int64_t seek, int size)
{
    bool crosses = false;
    for (int i = 0; i < r->n_cur; i++)
        crosses |= sotto__input_chunk(r->in, r->cur[i].start) != sotto__input_chunk(r->in, r->cur[i].end);
    if (!crosses) return SOTTO_OK;
    double *times = malloc((size_t)(2 * r->n_cur) * sizeof *times);
    if (!times) return sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "transcribe: out of memory");
    for (int i = 0; i < r->n_cur; i++) times[2 * i] = r->cur[i].start, times[2 * i + 1] = r->cur[i].end;
    sotto_status st = align_words(r, seek, size);
    for (int i = 0; i < r->n_cur; i++) {
        r->cur[i].start = times[2 * i], r->cur[i].end = times[2 * i + 1];
        bool keep = sotto__input_chunk(r->in, r->cur[i].start) != sotto__input_chunk(r->in, r->cur[i].end);
        if (!keep) sotto__wseg_free(&r->cur[i]); /* not cut: as before, timed by its tokens */
    }
    free(times);
    return st;
}

/* Word timestamps of the window at SEEK (SIZE frames), the seek they refine in *NEXT
 * (the one chosen so far) and the hallucination rule (transcribe.py, after
 * add_word_timestamps); *DROP when that rule drops the whole window. */
static sotto_status window_words(run *r, int64_t seek, int size, bool single, int64_t *next, bool *drop)
{
    const sotto_transcribe_params *p = r->p;
    sotto_status st = align_words(r, seek, size);
    if (st) return st;
    const double time_offset = (double)(seek * 160) / 16000.0;
    double end;
    if (!single && sotto__segments_end(r->cur, r->n_cur, &end) && end > time_offset) *next = (int64_t)llrint(end * 100);
    *drop = false;
    if (p->check_hallucination_silence) {
        sotto__hal_window w = {.threshold = p->hallucination_silence_threshold, .seek = seek, .size = size,
                               .content_frames = sotto__melfile_content_frames(r->mf),
                               .last_speech = r->last_speech, .single = single};
        if ((*drop = sotto__skip_hallucinations(&w, r->cur, &r->n_cur, next))) return SOTTO_OK;
    }
    if (sotto__segments_end(r->cur, r->n_cur, &end)) r->last_speech = end;
    return SOTTO_OK;
}

/* The logit rules and start sequence of this transcription (DecodingTask.__init__). */
static sotto_status setup(run *r, int32_t lang)
{
    const sotto_model *m = r->ctx->model;
    const sotto_model_info *h = &m->info;
    const sotto_transcribe_params *p = r->p;
    r->rules = (sotto__rules){.n_vocab = h->n_vocab, .eot = h->token_eot, .ts_begin = h->token_timestamp_begin,
                              .no_timestamps = h->token_notimestamps, .suppress = r->suppress,
                              .suppress_blank = p->suppress_blank != 0, .blank = m->suppress_begin,
                              .timestamps = p->timestamps != 0, .max_initial = -1,
                              .repetition_penalty = p->repetition_penalty,
                              .no_repeat_ngram = p->no_repeat_ngram_size};
    if (p->max_initial_timestamp >= 0) r->rules.max_initial = (int)lrint(p->max_initial_timestamp / 0.02);
    if (p->timestamps && h->token_timestamp_begin < 0)
        return sotto__ctx_fail(r->ctx, SOTTO_ERR_UNSUPPORTED, "transcribe: the vocabulary has no timestamp tokens");
    r->n_sot = 0;
    r->sot_seq[r->n_sot++] = h->token_sot;
    if (h->multilingual) {
        r->sot_seq[r->n_sot++] = lang;
        r->sot_seq[r->n_sot++] = p->translate ? h->token_translate : h->token_transcribe;
    }
    if (!p->timestamps) r->sot_seq[r->n_sot++] = h->token_notimestamps;
    return SOTTO_OK;
}

/* The language to transcribe: given, or detected from the first 30 s. */
static sotto_status language(run *r, int32_t *lang)
{
    const sotto_model *m = r->ctx->model;
    const char *given = r->p->language;
    bool detect = !given || strcasecmp(given, "auto") == 0;
    const char *code = detect ? NULL : sotto_language_code(given); /* "de" or "German" */
    *lang = -1;
    if (!detect && !code) return sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG, "unknown language '%s'", given);
    if (!m->info.multilingual) {
        if ((!detect && strcmp(code, "en") != 0) || r->p->translate)
            return sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG,
                                   "this model is English-only: no language other than en, no translation");
        snprintf(r->res->lang, sizeof r->res->lang, "en");
        return SOTTO_OK;
    }
    if (!detect) {
        *lang = sotto_language_token(m, code);
        if (*lang < 0) return sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG, "this model has no language '%s'", given);
        snprintf(r->res->lang, sizeof r->res->lang, "%s", code);
        return SOTTO_OK;
    }
    sotto__melfile_window(r->mf, 0, SOTTO_N_FRAMES, r->mel);
    sotto_status st = sotto_encode(r->ctx, r->mel, (int64_t)m->info.n_mels * SOTTO_N_FRAMES);
    double prob = 0;
    if (!st) st = sotto__detect_language(r->ctx, lang, &prob);
    if (st) return st;
    sotto__language_code(m, *lang, r->res->lang, sizeof r->res->lang);
    r->res->pub.language_probability = (float)prob;
    r->res->pub.language_detected = 1;
    if (r->p->on_language && r->p->on_language(r->res->lang, (float)prob, r->p->user_data)) r->res->pub.stopped = 1;
    return SOTTO_OK;
}

/* The initial prompt's tokens (" " + the text stripped), first in all_tokens; faster-whisper's
 * hotwords and prefix, at most n_text_ctx / 2 - 1 tokens each (get_prompt). */
static sotto_status prompt_texts(run *r)
{
    const sotto_transcribe_params *p = r->p;
    const int most = r->ctx->model->info.n_text_ctx / 2 - 1;
    sotto_status st = SOTTO_OK;
    /* "" is none, as faster-whisper's `if hotwords` and `if prefix` (and openai's prefix) take it */
    if (p->hotwords && *p->hotwords)
        st = sotto__prompt_tokens(r->ctx, p->hotwords, most, "hotwords", &r->hotwords, &r->n_hotwords);
    if (!st && p->prefix && *p->prefix)
        st = sotto__prompt_tokens(r->ctx, p->prefix, most, "prefix", &r->prefix, &r->n_prefix);
    if (!st && r->n_prefix && p->timestamps) { /* <|0.00|> before it (get_prompt) */
        int32_t *t = realloc(r->prefix, (size_t)(r->n_prefix + 1) * sizeof *t);
        if (!t) return sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "prefix: out of memory");
        memmove(t + 1, t, (size_t)r->n_prefix * sizeof *t);
        t[0] = r->rules.ts_begin;
        r->prefix = t, r->n_prefix++;
    }
    if (!st && p->n_initial_prompt_tokens > 0) { /* faster-whisper's ids: all_tokens.extend(initial_prompt) */
        const int32_t n_vocab = r->ctx->model->info.n_vocab;
        for (int i = 0; i < p->n_initial_prompt_tokens; i++)
            if (p->initial_prompt_tokens[i] < 0 || p->initial_prompt_tokens[i] >= n_vocab)
                return sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG, "initial prompt token %d (at %d): not an id "
                                       "of the model's vocabulary (0..%d)", (int)p->initial_prompt_tokens[i], i,
                                       n_vocab - 1);
        if (!push_tokens(r, p->initial_prompt_tokens, p->n_initial_prompt_tokens))
            return sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "initial prompt: out of memory");
        r->n_initial = p->n_initial_prompt_tokens;
        return SOTTO_OK;
    }
    if (st || !p->initial_prompt) return st;
    int32_t *ids = NULL;
    int n = 0;
    st = sotto__prompt_tokens(r->ctx, p->initial_prompt, -1, "initial prompt", &ids, &n);
    if (!st && !push_tokens(r, ids, n)) st = sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "initial prompt: out of memory");
    free(ids);
    r->n_initial = n;
    return st;
}

/* A callback stopped the run at segment KEEP - 1: the window's later segments, never
 * shown to it, leave the result (and the text: sotto__result_joined_text). */
static void drop_after(run *r, int keep)
{
    result *x = r->res;
    for (int i = x->pub.n_segments - 1; i >= keep; i--) sotto__segment_free(&x->seg[i]);
    x->pub.n_segments = keep;
    x->dropped = true;
}

/* With multilingual, the language of the window just encoded (faster-whisper's
 * generate_segments: detect_language on its encoder output) into the start sequence. */
static sotto_status window_language(run *r)
{
    const sotto_model *m = r->ctx->model;
    if (!r->p->multilingual || !m->info.multilingual) return SOTTO_OK;
    int32_t lang = -1;
    double prob = 0;
    sotto_status st = sotto__detect_language(r->ctx, &lang, &prob);
    if (st) return st;
    r->sot_seq[1] = lang;
    sotto__language_code(m, lang, r->win_lang, sizeof r->win_lang);
    return SOTTO_OK;
}

/* The seek loop over the windows of the finished log-mel. */
static sotto_status seek_loop(run *r)
{
    const sotto_model_info *h = &r->ctx->model->info;
    const sotto_transcribe_params *p = r->p;
    const int64_t content = sotto__melfile_content_frames(r->mf);
    const double total_s = content * 160 / 16000.0;
    sotto__clip *clips = NULL;
    int n_clips = 0, clip = 0;
    sotto_status st = sotto__clips(r->ctx, p->clip_timestamps, p->n_clip_timestamps, content, &clips, &n_clips);
    sotto__decode_result *d = st ? NULL : malloc(sizeof *d);
    if (!st && !d) st = sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "transcribe: out of memory");
    int64_t seek = clips ? clips[0].start : 0;
    for (int size; !st && !r->res->pub.stopped && (size = sotto__clip_window(clips, n_clips, &clip, content, &seek)) > 0;) {
        if (p->abort_callback && p->abort_callback(total_s, p->user_data)) {
            st = sotto__ctx_fail(r->ctx, SOTTO_ERR_CANCELLED, "transcribe: cancelled by the caller at %.2f s", seek / 100.0);
            break;
        }
        sotto__melfile_window(r->mf, seek, size, r->mel);
        st = sotto_encode(r->ctx, r->mel, (int64_t)h->n_mels * SOTTO_N_FRAMES);
        if (!st) st = window_language(r);
        bool silent = false;
        if (!st) st = decode_with_fallback(r, d, seek, size, &silent);
        if (st) break;
        bool skip = p->check_no_speech && d->no_speech_prob > p->no_speech_threshold;
        if (p->check_logprob && d->avg_logprob > p->logprob_threshold) skip = false;
        skip |= silent;
        int first = r->res->pub.n_segments;
        int64_t advance = size, next;
        bool single = false, drop = false;
        if (!skip) cut_segments(r, seek, size, d, &advance, &single);
        next = seek + advance;
        if (!skip && p->word_timestamps) st = window_words(r, seek, size, single, &next, &drop);
        else if (!skip && p->vad_filter == 1) st = chunk_words(r, seek, size);
        skip |= drop;
        for (int i = 0; i < r->n_cur && !skip && !st; i++) st = add_segment(r, seek, &r->cur[i], d);
        for (int i = 0; i < r->n_cur; i++) sotto__wseg_free(&r->cur[i]);
        r->n_cur = 0;
        /* no prompt after a high temperature (a skipped window changes nothing) */
        if (!st && !skip && (!p->condition_on_previous_text || d->temperature > p->prompt_reset_temperature))
            r->prompt_reset_since = r->n_all;
        for (int i = first; i < r->res->pub.n_segments && p->on_segment && !r->res->pub.stopped; i++)
            if (p->on_segment(&r->res->seg[i], p->user_data)) r->res->pub.stopped = 1, drop_after(r, i + 1);
        /* one window, but for an early end: its words end ONE_WINDOW_REST before the audio
         * does (word timestamps: the seek is there), which openai's loop decodes next */
        seek = r->one_window && (!p->word_timestamps || single || skip || content - next < ONE_WINDOW_REST) ? content
                                                                                                            : next;
        if (p->on_progress && p->on_progress((seek < content ? seek : content) * 160 / 16000.0, total_s, p->user_data))
            r->res->pub.stopped = 1;
    }
    free(d), free(clips);
    return st;
}

/* The transcription of the signal IN holds (transcribe.py's transcribe()). */
static sotto_status transcribe_input(sotto_context *ctx, const sotto__input *in, const sotto_transcribe_params *params,
                                     bool one_window, sotto_result **out)
{
    *out = NULL;
    sotto_transcribe_params p = params ? *params : sotto_transcribe_params_default();
    run r = {.ctx = ctx, .p = &p, .mf = in->mf, .in = in, .rng = p.seed, .one_window = one_window};
    r.res = calloc(1, sizeof *r.res);
    r.mel = malloc((size_t)ctx->model->info.n_mels * SOTTO_N_FRAMES * sizeof *r.mel);
    r.cur = malloc((SOTTO__MAX_TOKENS + 1) * sizeof *r.cur);
    sotto_status st = r.res && r.mel && r.cur ? SOTTO_OK : sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "transcribe: out of memory");
    int32_t lang = -1;
    if (!st) st = sotto__suppress_list(ctx, &p, &r.suppress, &r.suppress_owned);
    if (!st) {
        r.res->pub.language = r.res->lang;
        r.res->pub.duration = in->n_samples / (double)SOTTO_SAMPLE_RATE;
        r.res->pub.word_timestamps = p.word_timestamps != 0;
        st = language(&r, &lang);
    }
    if (!st) snprintf(r.win_lang, sizeof r.win_lang, "%s", r.res->lang);
    if (!st) st = setup(&r, lang);
    if (!st) st = prompt_texts(&r);
    if (!st) st = seek_loop(&r);
    if (!st) {
        r.res->text = r.res->dropped ? sotto__result_joined_text(r.res)
                                     : sotto__detok(ctx->model, r.all + r.n_initial, r.n_all - r.n_initial, false);
        if (!r.res->text) st = sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "transcribe: out of memory");
        r.res->pub.text = r.res->text;
    }
    free(r.mel);
    free(r.all);
    free(r.cur);
    free(r.hotwords), free(r.prefix), free(r.suppress_owned);
    if (st) {
        sotto_result_free(r.res ? &r.res->pub : NULL);
        return st;
    }
    *out = &r.res->pub;
    return SOTTO_OK;
}

/* Reads FROM (or the SAMPLES) as P says (log-mel, VAD) and transcribes it. */
static sotto_status transcribe_input_of(sotto_context *ctx, const sotto_audio_source *from, const float *samples,
                                        int64_t n_samples, const sotto_transcribe_params *params, bool one_window,
                                        sotto_result **out)
{
    *out = NULL;
    ctx->error[0] = 0; /* a failure's message says this call's, never an earlier one's */
    sotto_transcribe_params p = params ? *params : sotto_transcribe_params_default();
    sotto__input in;
    sotto__err err = {0};
    if (sotto__transcribe_params_check(&p, &err)) /* before a sample is read */
        return sotto__ctx_fail(ctx, err.status, "transcribe: %s", err.msg);
    if (p.batch_size > 0) return sotto__transcribe_batched_source(ctx, from, samples, n_samples, &p, out);
    for (int i = 0; i < p.n_temperatures; i++) { /* the searches' sequences: known before a sample is read */
        int g = p.temperatures[i] == 0 ? p.beam_size : p.best_of;
        if (g > ctx->dec.n_slots)
            return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "transcribe: %s %d, but the context was made for %d "
                                   "sequences (sotto_context_params.max_sequences)",
                                   p.temperatures[i] == 0 ? "beam size" : "best of", g, ctx->dec.n_slots);
    }
    sotto_status st = sotto__input_read(from, samples, n_samples, ctx->model->info.n_mels, ctx->n_threads, &p, &in,
                                        &err);
    if (st) return sotto__ctx_fail(ctx, st, "%s", err.msg);
    st = transcribe_input(ctx, &in, &p, one_window, out);
    sotto__input_free(&in);
    return st;
}

sotto_status sotto_transcribe(sotto_context *ctx, const float *samples, int64_t n_samples,
                              const sotto_transcribe_params *params, sotto_result **out)
{
    if (!ctx || !out || n_samples < 0 || (n_samples && !samples))
        return sotto__ctx_args(ctx, "transcribe: %s", !ctx ? "no context" : !out ? "no place for the result"
                                                                         : "a negative count, or no samples for one");
    return transcribe_input_of(ctx, NULL, samples, n_samples, params, false, out);
}

sotto_status sotto__transcribe_window(sotto_context *ctx, const float *samples, int64_t n_samples,
                                      const sotto_transcribe_params *params, sotto_result **out)
{
    if (!ctx || !out || n_samples < 0 || (n_samples && !samples))
        return sotto__ctx_args(ctx, "transcribe: no context, result or samples");
    return transcribe_input_of(ctx, NULL, samples, n_samples, params, n_samples <= (int64_t)SOTTO_N_FRAMES * 160, out);
}

sotto_status sotto_transcribe_file(sotto_context *ctx, const char *path, const sotto_transcribe_params *params,
                                   sotto_result **out)
{
    if (!ctx || !out || !path)
        return sotto__ctx_args(ctx, "transcribe_file: %s", !ctx ? "no context" : !out ? "no place for the result"
                                                                              : "no path");
    return sotto_transcribe_source(ctx, &(sotto_audio_source){.kind = SOTTO_SOURCE_PATH, .path = path}, params, out);
}

sotto_status sotto_transcribe_source(sotto_context *ctx, const sotto_audio_source *source,
                                     const sotto_transcribe_params *params, sotto_result **out)
{
    if (!ctx || !out || !source)
        return sotto__ctx_args(ctx, "transcribe_source: %s", !ctx ? "no context" : !out ? "no place for the result"
                                                                                  : "no source");
    return transcribe_input_of(ctx, source, NULL, 0, params, false, out);
}
