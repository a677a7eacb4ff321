/* batch.c — one input of batched transcription, as faster-whisper 1.2.1's
 * BatchedInferencePipeline takes it: the audio read whole and cut into chunks of speech of
 * at most 30 s (sotto_batch_chunks), each chunk's log-mel made from its samples alone
 * (frames past them 0, as its pad_or_trim), and each chunk decoded on its own: no previous
 * text, max_initial_timestamp 0, no fallback and no silence skip, and no sampling: the
 * pipeline hands its first temperature to CTranslate2's generate as sampling_temperature,
 * which with its default sampling_topk of 1 decodes as at temperature 0 (the same text
 * and scores at 0.5, 1 and 2), the segments reporting that temperature (batch_run.c runs
 * the batches). Segments come from the timestamp tokens
 * (_split_segments_by_timestamps) and go back to the file's timeline through the speech
 * intervals (restore_speech_timestamps). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../audio/audio.h"
#include "../audio/mel.h"
#include "../vad/vad_chunks.h"
#include "batch.h"
#include "hallucination.h"
#include "lang.h"
#include "params.h"
#include "prompt.h"
#include "suppress.h"
#include "text.h"

enum { FRAME = 160 };

/* The pipeline's clip_timestamps as chunks: each start, end pair (seconds, int(t * 16000)
 * samples as faster-whisper's) one chunk at its own offset, an odd last start running to
 * the end; the samples past the signal are none, the duration stays the clip's. A clip
 * that starts at or past the signal's end has no audio and gives no chunk (faster-whisper
 * fails on one: "non-negative timestamp expected"; a window of zeros would decode to " ."). */
static sotto_status cut_clips(sotto__brun *r, sotto__bin *in)
{
    const sotto_transcribe_params *p = &in->p;
    const int64_t n = in->n;
    const int k = (p->n_clip_timestamps + 1) / 2;
    in->speech = malloc((size_t)k * sizeof *in->speech), in->chunks = malloc((size_t)k * sizeof *in->chunks);
    if (!in->speech || !in->chunks) return sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    int j = 0;
    for (int i = 0; i < k; i++) {
        int64_t a = (int64_t)(p->clip_timestamps[2 * i] * SOTTO_SAMPLE_RATE);
        int64_t b = 2 * i + 1 < p->n_clip_timestamps ? (int64_t)(p->clip_timestamps[2 * i + 1] * SOTTO_SAMPLE_RATE) : n;
        if (a >= n) continue;
        int64_t b_in = b < n ? b : n;
        in->speech[j] = (sotto_vad_interval){a, b_in > a ? b_in : a};
        in->chunks[j] = (sotto_batch_chunk){.offset = a, .n_samples = b > a ? b - a : 0, .first = j, .n_speech = 1};
        if (b_in - a > 30 * SOTTO_SAMPLE_RATE && p->on_warning) { /* the pipeline's log line, as a warning */
            char w[160];
            snprintf(w, sizeof w, "clip %d (%.3f to %.3f s) is longer than 30 seconds: only its first 30 seconds are "
                     "transcribed", i, (double)a / SOTTO_SAMPLE_RATE, (double)b_in / SOTTO_SAMPLE_RATE);
            p->on_warning(w, p->user_data);
        }
        j++;
    }
    in->n_speech = in->n_chunks = j;
    in->clips = true;
    return SOTTO_OK;
}

/* The cut of the signal: the clips when given, the VAD's chunks, or the whole signal as
 * one chunk when there is no VAD and it is at most 30 s (the pipeline without vad_filter). */
static sotto_status cut(sotto__brun *r, sotto__bin *in)
{
    const sotto_transcribe_params *p = &in->p;
    const int64_t n = in->n;
    if (p->n_clip_timestamps > 0) return cut_clips(r, in);
    if (p->vad) {
        sotto_status st = sotto__batch_chunks(p->vad, in->x, n, p->batch_vad, 30.0, 1, &in->speech, &in->n_speech,
                                              &in->chunks, &in->n_chunks);
        return st ? sotto__ctx_fail(r->ctx, st, "batched: %s", sotto_last_error()) : SOTTO_OK;
    }
    if (n > SOTTO_N_SAMPLES)
        return sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG, "batched: audio over 30 s needs a VAD to cut it "
                               "(sotto_transcribe_params.vad: faster-whisper's, silero-vad-fw.gguf)");
    in->speech = malloc(sizeof *in->speech), in->chunks = malloc(sizeof *in->chunks);
    if (!in->speech || !in->chunks) return sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    in->speech[0] = (sotto_vad_interval){0, n};
    in->chunks[0] = (sotto_batch_chunk){.offset = 0, .n_samples = n, .first = 0, .n_speech = 1};
    in->n_speech = in->n_chunks = n > 0;
    return SOTTO_OK;
}

sotto_status sotto__bin_mel(sotto__brun *r, const sotto__bin *in, const sotto_batch_chunk *c, int64_t skip,
                            float *mel)
{
    int64_t at = 0, pos = 0; /* samples written; the chunk's samples passed */
    for (int64_t k = c->first; k < c->first + c->n_speech && at < SOTTO_N_SAMPLES; k++) {
        int64_t a = in->speech[k].start, len = in->speech[k].end - a;
        if (pos + len <= skip) {
            pos += len;
            continue;
        }
        int64_t before = skip > pos ? skip - pos : 0; /* its samples before SKIP */
        a += before, len -= before, pos += before;
        if (at + len > SOTTO_N_SAMPLES) len = SOTTO_N_SAMPLES - at;
        memcpy(r->audio + at, in->x + a, (size_t)len * sizeof *r->audio);
        at += len, pos += len;
    }
    const int n_mels = r->ctx->model->info.n_mels;
    sotto_status st = sotto__mel_window_on(r->audio, at, n_mels, r->ctx->n_threads, mel);
    if (st) return sotto__ctx_fail(r->ctx, st, "batched: %s", sotto_last_error());
    int64_t frames = at / FRAME; /* feature_extractor(chunk)[..., :-1], then pad_or_trim with zeros */
    for (int b = 0; b < n_mels; b++)
        for (int64_t t = frames; t < SOTTO_N_FRAMES; t++) mel[(size_t)b * SOTTO_N_FRAMES + t] = 0;
    return SOTTO_OK;
}

/* The logit rules, start sequence (DecodingTask.__init__ with the pipeline's options)
 * and decoding options. */
static void setup(sotto__brun *r, sotto__bin *in, int32_t lang)
{
    const sotto_model *m = r->ctx->model;
    const sotto_model_info *h = &m->info;
    const sotto_transcribe_params *p = &in->p;
    in->rules = (sotto__rules){.n_vocab = h->n_vocab, .eot = h->token_eot, .ts_begin = h->token_timestamp_begin,
                               .no_timestamps = h->token_notimestamps, .suppress = in->suppress,
                               .suppress_blank = p->suppress_blank != 0, .blank = m->suppress_begin,
                               .timestamps = p->timestamps != 0, .max_initial = 0,
                               .repetition_penalty = p->repetition_penalty,
                               .no_repeat_ngram = p->no_repeat_ngram_size};
    in->n_sot = 0;
    in->sot_seq[in->n_sot++] = h->token_sot;
    if (h->multilingual) {
        in->sot_seq[in->n_sot++] = lang;
        in->sot_seq[in->n_sot++] = p->translate ? h->token_translate : h->token_transcribe;
    }
    if (!p->timestamps) in->sot_seq[in->n_sot++] = h->token_notimestamps;
    in->o = (sotto__decode_opts){.rules = &in->rules, .prompt = in->prompt, .n_prompt = in->n_prompt,
                                 .hotwords = in->hotwords, .n_hotwords = in->n_hotwords,
                                 .sot_seq = in->sot_seq, .n_sot = in->n_sot,
                                 .temperature = 0, .beam_size = p->beam_size, .best_of = p->best_of,
                                 .patience = p->patience, .ct2_beams = true, /* the pipeline's CTranslate2 */
                                 .use_length_penalty = p->use_length_penalty,
                                 .length_penalty = p->length_penalty,
                                 .sample_len = p->sample_len > 0 && p->sample_len < h->n_text_ctx / 2
                                                   ? p->sample_len
                                                   : h->n_text_ctx / 2,
                                 .max_new_tokens = p->max_new_tokens,
                                 .rng = &in->rng, .skip_above = INFINITY, .stop_ratio_above = INFINITY,
                                 .abort_callback = p->abort_callback, .user_data = p->user_data,
                                 .audio_s = in->res->pub.duration};
    const int most = h->n_text_ctx / 2 - 1; /* sotto__group_begin keeps the prompt's last MOST */
    const int n_prev = in->n_prompt < most ? in->n_prompt : most;
    in->key = in->n_sot + (n_prev || in->n_hotwords ? 1 + in->n_hotwords + n_prev : 0);
}

/* The pipeline's prompt (generate_segment_batched's get_prompt): hotwords as the long-form
 * loop encodes them (" " + the text stripped, at most n_text_ctx / 2 - 1 tokens) and
 * initial_prompt's tokens as written (tokenizer.encode(initial_prompt): no space added);
 * an empty text adds nothing, as an empty string is false there. */
static sotto_status pipeline_prompt(sotto__brun *r, sotto__bin *in)
{
    const sotto_transcribe_params *p = &in->p;
    const int most = r->ctx->model->info.n_text_ctx / 2 - 1;
    sotto_status st = SOTTO_OK;
    if (p->hotwords && p->hotwords[0])
        st = sotto__prompt_tokens(r->ctx, p->hotwords, most, "hotwords", &in->hotwords, &in->n_hotwords);
    if (st || !p->initial_prompt || !p->initial_prompt[0]) return st;
    int need = 0;
    st = sotto_tokenize(r->ctx->model, p->initial_prompt, NULL, 0, &need);
    if (!st && !(in->prompt = malloc((size_t)(need ? need : 1) * sizeof *in->prompt))) st = SOTTO_ERR_NOMEM;
    if (!st) st = sotto_tokenize(r->ctx->model, p->initial_prompt, in->prompt, need, &need);
    if (st)
        return sotto__ctx_fail(r->ctx, st, "initial prompt: %s",
                               st == SOTTO_ERR_NOMEM ? "out of memory" : sotto_last_error());
    in->n_prompt = need;
    return SOTTO_OK;
}

/* faster-whisper's window for the pipeline's language: detect_language(features=) of the
 * chunks' log-mels (feature_extractor(chunk)[..., :-1]) end to end and one frame of -1.5,
 * its first 30 s, zeros after, into MEL. A chunk's log-mel is that of its first 30 s (the
 * longer clip_timestamps chunk's is floored over all of it there). */
static sotto_status language_window(sotto__brun *r, const sotto__bin *in, float *mel)
{
    const int n_mels = r->ctx->model->info.n_mels;
    float *one = malloc((size_t)n_mels * SOTTO_N_FRAMES * sizeof *one);
    if (!one) return sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    memset(mel, 0, (size_t)n_mels * SOTTO_N_FRAMES * sizeof *mel);
    int64_t at = 0;
    sotto_status st = SOTTO_OK;
    for (int64_t k = 0; k < in->n_chunks && at < SOTTO_N_FRAMES && !st; k++) {
        const sotto_batch_chunk *c = &in->chunks[k];
        int64_t n = 0; /* its samples in the signal: a clip may pass its end */
        for (int64_t j = c->first; j < c->first + c->n_speech; j++) n += in->speech[j].end - in->speech[j].start;
        int64_t frames = n / FRAME;
        if (frames > SOTTO_N_FRAMES - at) frames = SOTTO_N_FRAMES - at;
        if (frames <= 0 || (st = sotto__bin_mel(r, in, c, 0, one))) continue;
        for (int b = 0; b < n_mels; b++)
            memcpy(mel + (size_t)b * SOTTO_N_FRAMES + at, one + (size_t)b * SOTTO_N_FRAMES,
                   (size_t)frames * sizeof *mel);
        at += frames;
    }
    for (int b = 0; at < SOTTO_N_FRAMES && b < n_mels; b++) mel[(size_t)b * SOTTO_N_FRAMES + at] = -1.5f;
    free(one);
    return st;
}

/* The language: given, English for an English-only model, else detected as the pipeline
 * detects it (language_window). */
static sotto_status language(sotto__brun *r, sotto__bin *in, int32_t *lang)
{
    const sotto_model *m = r->ctx->model;
    const char *given = in->p.language;
    bool detect = !given || strcasecmp(given, "auto") == 0;
    const char *code = detect ? NULL : sotto_language_code(given);
    *lang = -1;
    if (!detect && !code) return sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG, "unknown language '%s'", given);
    if (!m->info.multilingual || (!detect && m->info.multilingual)) {
        if (!m->info.multilingual && ((!detect && strcmp(code, "en")) || in->p.translate))
            return sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG,
                                   "this model is English-only: no language other than en, no translation");
        snprintf(in->res->lang, sizeof in->res->lang, "%s", code ? code : "en");
        if (!m->info.multilingual) return SOTTO_OK;
        *lang = sotto_language_token(m, code);
        return *lang < 0 ? sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG, "this model has no language '%s'", given)
                         : SOTTO_OK;
    }
    sotto_status st = language_window(r, in, r->mels);
    r->ctx->dec.win = 0;
    if (!st) st = sotto_encode(r->ctx, r->mels, (int64_t)m->info.n_mels * SOTTO_N_FRAMES);
    double prob = 0;
    if (!st) st = sotto__detect_language(r->ctx, lang, &prob);
    if (st) return st;
    sotto__language_code(m, *lang, in->res->lang, sizeof in->res->lang);
    in->res->pub.language_probability = (float)prob;
    in->res->pub.language_detected = 1;
    return SOTTO_OK;
}

/* IN's signal: the item's samples, or its source read whole. */
static sotto_status read_input(sotto__brun *r, sotto__bin *in)
{
    const sotto_batch_item *it = in->item;
    if (!it->source) {
        if (it->n_samples < 0 || (it->n_samples && !it->samples))
            return sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG, "batched: an item without audio");
        in->x = it->samples, in->n = it->n_samples;
        return SOTTO_OK;
    }
    sotto_audio *audio;
    sotto_status st = sotto_audio_open_source(it->source, &audio);
    if (st) return sotto__ctx_fail(r->ctx, st, "%s", sotto_last_error());
    st = sotto__input_read_all(audio, &in->p, &in->owned, &in->n);
    if (st)
        st = sotto__ctx_fail(r->ctx, st, "%s", st == SOTTO_ERR_NOMEM       ? "out of memory"
                                               : st == SOTTO_ERR_CANCELLED ? "batched: cancelled by the caller while "
                                                                             "reading the audio"
                                                                           : sotto_last_error());
    const char *w = sotto_audio_warning(audio);
    if (!st && w[0] && in->p.on_warning) in->p.on_warning(w, in->p.user_data);
    sotto_audio_close(audio);
    in->x = in->owned;
    return st;
}

/* The checks sotto_transcribe makes of P, and those of batching. */
static sotto_status check(sotto__brun *r, const sotto_transcribe_params *p)
{
    sotto_context *ctx = r->ctx;
    sotto__err err = {0};
    if (sotto__transcribe_params_check(p, &err)) return sotto__ctx_fail(ctx, err.status, "transcribe: %s", err.msg);
    if (p->batch_size < 1 || p->batch_size > ctx->max_batch)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "batched: batch_size %d, but the context was made for "
                               "1 .. %d (sotto_context_params.max_batch)", p->batch_size, ctx->max_batch);
    if (p->batch_continue && (!p->timestamps || p->word_timestamps))
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "batched: batch_continue needs timestamps (it goes on "
                               "from the last one), and does not take word timestamps yet");
    if (p->timestamps && ctx->model->info.token_timestamp_begin < 0)
        return sotto__ctx_fail(ctx, SOTTO_ERR_UNSUPPORTED, "transcribe: the vocabulary has no timestamp tokens");
    return SOTTO_OK;
}

sotto_status sotto__bin_prepare(sotto__brun *r, sotto__bin *in)
{
    sotto_context *ctx = r->ctx;
    if (!in->item->params) return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "batched: an item without params");
    in->p = *in->item->params;
    in->rng = in->p.seed;
    sotto_status st = check(r, &in->p);
    if (!st) st = sotto__suppress_list(ctx, &in->p, &in->suppress, &in->suppress_owned);
    if (!st && !(in->res = calloc(1, sizeof *in->res)))
        st = sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    if (!st) st = read_input(r, in);
    if (!st) {
        in->res->pub.language = in->res->lang;
        in->res->pub.duration = in->n / (double)SOTTO_SAMPLE_RATE;
        in->res->pub.word_timestamps = in->p.word_timestamps != 0;
        st = cut(r, in);
        if (!st && in->p.abort_callback && in->p.abort_callback(in->res->pub.duration, in->p.user_data))
            st = sotto__ctx_fail(ctx, SOTTO_ERR_CANCELLED, "batched: cancelled by the caller");
    }
    if (!st) {
        in->map.speech = in->speech, in->map.n_speech = in->clips ? 0 : in->n_speech; /* clips: times as they are */
        if (!sotto__input_map(&in->map)) st = sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    }
    int32_t lang = -1;
    if (!st) st = language(r, in, &lang);
    if (!st && in->res->pub.language_detected && in->p.on_language && /* as sotto_transcribe: detected only */
        in->p.on_language(in->res->lang, in->res->pub.language_probability, in->p.user_data))
        in->res->pub.stopped = 1;
    if (!st) st = pipeline_prompt(r, in);
    if (!st) setup(r, in, lang);
    return st;
}

/* _split_segments_by_timestamps over chunk C's tokens D (time_offset its offset in the
 * speech, segment_duration its length): the pieces into CUR, their count returned. */
static int split(const sotto__bin *r, const sotto_batch_chunk *c, int64_t skip, const sotto__decode_result *d,
                 sotto__wseg *cur)
{
    const int32_t tb = r->rules.ts_begin, *t = d->tokens;
    const int n = d->n_tokens;
    const double offset = (double)(c->offset + skip) / SOTTO_SAMPLE_RATE, precision = 0.02;
    int n_cur = 0, last = 0;
    bool single_ending = n >= 2 && t[n - 2] < tb && t[n - 1] >= tb;
    bool any_pair = false;
    for (int i = 0; tb >= 0 && i + 1 < n; i++) any_pair |= t[i] >= tb && t[i + 1] >= tb;
    if (any_pair) {
        for (int i = 1; i <= n; i++) {
            bool cut_here = i == n ? single_ending : t[i - 1] >= tb && t[i] >= tb;
            if (!cut_here) continue;
            const int32_t *s = t + last;
            int len = i - last;
            cur[n_cur++] = (sotto__wseg){.start = offset + (s[0] - tb) * precision,
                                         .end = offset + (s[len - 1] - tb) * precision, .tokens = s, .n_tokens = len};
            last = i;
        }
        return n_cur;
    }
    double duration = (double)(c->n_samples - skip) / SOTTO_SAMPLE_RATE;
    int32_t last_ts = -1;
    for (int i = 0; tb >= 0 && i < n; i++)
        if (t[i] >= tb) last_ts = t[i];
    if (last_ts >= 0 && last_ts != tb) duration = (last_ts - tb) * precision;
    cur[0] = (sotto__wseg){.start = offset, .end = offset + duration, .tokens = t, .n_tokens = n};
    return 1;
}

/* Chunk C's words back on the file's timeline (restore_speech_timestamps: a word in the
 * chunk of its middle), and the segment S's times from its first and last word. */
static void restore_times(const sotto__bin *in, sotto__wseg *s, double *start, double *end)
{
    *start = sotto__input_original_time(&in->map, s->start, false);
    *end = sotto__input_original_time(&in->map, s->end, true);
    for (int k = 0; k < s->n_words; k++) {
        sotto_word *wd = &s->words[k];
        double middle = (wd->start + wd->end) / 2;
        wd->start = sotto__input_original_time_at(&in->map, wd->start, middle);
        wd->end = sotto__input_original_time_at(&in->map, wd->end, middle);
    }
    if (s->n_words) *start = s->words[0].start, *end = s->words[s->n_words - 1].end;
}

/* The words of CUR [N_CUR], chunk C's segments, aligned in decoder window W; SEEK the
 * chunk's (the words' time offset is seek / 100, as faster-whisper's). */
static sotto_status chunk_words(sotto__brun *r, sotto__bin *in, const sotto_batch_chunk *c, int w, int64_t seek,
                                sotto__wseg *cur, int n_cur)
{
    const sotto_model_info *h = &r->ctx->model->info;
    int32_t sot[3] = {h->token_sot, in->sot_seq[1], in->sot_seq[2]};
    sotto__timing_opts o = {.sot_seq = sot, .n_sot = h->multilingual ? 3 : 1, .seek = seek,
                            .num_frames = (int)(ceil((double)c->n_samples / SOTTO_SAMPLE_RATE) * 100),
                            .prepend = in->p.prepend_punctuations, .append = in->p.append_punctuations};
    r->ctx->dec.win = w;
    sotto_status st = sotto__add_word_timestamps(r->ctx, &o, cur, n_cur, in->last_speech);
    double end;
    if (!st && sotto__segments_end(cur, n_cur, &end)) in->last_speech = end;
    return st;
}

sotto_status sotto__bin_add_chunk(sotto__brun *r, sotto__bin *in, const sotto_batch_chunk *c, int64_t skip, int w,
                                  const sotto__decode_result *d, int32_t lang)
{
    const sotto_transcribe_params *p = &in->p;
    /* int(offset * frames_per_second), the offset in seconds: the segments' seek */
    const int64_t seek = (int64_t)((double)(c->offset + skip) / SOTTO_SAMPLE_RATE * 100);
    char code[16];
    const char *language = in->res->lang; /* the segments': the window's own with multilingual */
    if (lang >= 0 && sotto__language_code(r->ctx->model, lang, code, sizeof code)) language = code;
    sotto__wseg *cur = r->cur;
    int n_cur = split(in, c, skip, d, cur);
    sotto_status st = SOTTO_OK;
    if (!sotto__result_grow(in->res, n_cur)) st = sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    if (!st && p->word_timestamps) st = chunk_words(r, in, c, w, seek, cur, n_cur);
    for (int i = 0; i < n_cur && !st && !in->res->pub.stopped; i++) { /* on_segment may stop at any */
        sotto__wseg *s = &cur[i];
        char *text;
        int32_t *toks;
        if (!sotto__segment_strings(r->ctx->model, s->tokens, s->n_tokens, &text, &toks)) {
            st = sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
            break;
        }
        double start, end;
        restore_times(in, s, &start, &end);
        if (in->clips) start = nearbyint(start * 1000) / 1000, end = nearbyint(end * 1000) / 1000; /* round(x, 3) */
        sotto__result *x = in->res; /* the ratio of the text as decoded, unstripped (forward()) */
        sotto__result_append(x, (sotto_segment){
            .seek = seek, .start = start, .end = end, .text = text, .tokens = toks,
            .n_tokens = s->n_tokens, .temperature = p->temperatures[0], .avg_logprob = d->avg_logprob,
            .compression_ratio = sotto__compression_ratio(text, strlen(text)), .no_speech_prob = d->no_speech_prob,
            .words = p->word_timestamps ? s->words : NULL, .n_words = p->word_timestamps ? s->n_words : 0,
            .language = sotto_language_code(language)});
        s->words = NULL, s->n_words = 0;
        if (p->on_segment && p->on_segment(&x->seg[x->pub.n_segments - 1], p->user_data)) x->pub.stopped = 1;
    }
    for (int i = 0; i < n_cur; i++) sotto__wseg_free(&cur[i]);
    return st;
}

int64_t sotto__bin_next_skip(const sotto__bin *in, const sotto_batch_chunk *c, int64_t skip,
                             const sotto__decode_result *d)
{
    const int32_t tb = in->rules.ts_begin;
    int32_t last = -1;
    for (int i = 0; in->p.batch_continue && in->p.timestamps && tb >= 0 && i < d->n_tokens; i++)
        if (d->tokens[i] > tb && d->tokens[i] > last) last = d->tokens[i];
    if (last < 0) return -1; /* no time past the piece's start: no progress to build on */
    int64_t next = skip + (int64_t)(last - tb) * (SOTTO_SAMPLE_RATE / 50); /* 20 ms a timestamp */
    return c->n_samples - next >= SOTTO_SAMPLE_RATE ? next : -1;
}

void sotto__bin_fail(sotto__brun *r, sotto__bin *in, sotto_status st)
{
    if (in->failed) return;
    in->failed = true;
    in->item->status = st;
    snprintf(in->item->error, sizeof in->item->error, "%s", sotto_context_error(r->ctx));
}

void sotto__bin_finish(sotto__brun *r, sotto__bin *in)
{
    if (!in->failed) {
        if ((in->res->text = sotto__result_joined_text(in->res))) {
            in->res->pub.text = in->res->text;
            in->item->status = SOTTO_OK, in->item->error[0] = 0;
            in->item->result = &in->res->pub;
            in->res = NULL;
        } else {
            sotto__bin_fail(r, in, sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "batched: out of memory"));
        }
    }
    sotto_result_free(in->res ? &in->res->pub : NULL);
    in->map.speech = NULL; /* freed below, with the chunks */
    sotto__input_free(&in->map);
    sotto_free(in->speech), sotto_free(in->chunks);
    free(in->owned), free(in->prompt), free(in->hotwords), free(in->suppress_owned);
    *in = (sotto__bin){.item = in->item, .failed = true};
}
