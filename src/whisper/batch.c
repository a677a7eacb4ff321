/* batch.c — batched transcription, as faster-whisper 1.2.1's BatchedInferencePipeline:
 * the audio cut into chunks of speech of at most 30 s (sotto_batch_chunks), each chunk's
 * log-mel made from its samples alone (frames past them 0, as its pad_or_trim), and each
 * chunk decoded on its own: no previous text, max_initial_timestamp 0, the first
 * temperature only, no fallback and no silence skip. batch_size chunks go through the
 * encoder as one pass (encoder.c sotto__encoder_forward_batch) and their searches step
 * together (search.h groups): every decoder step is one sotto__decoder_step_batch over
 * the live rows of all of them; a chunk whose search ends leaves the batch. Segments come
 * from the timestamp tokens (_split_segments_by_timestamps) and go back to the file's
 * timeline through the speech intervals (restore_speech_timestamps). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../audio/audio.h"
#include "batch.h"
#include "input.h"
#include "lang.h"
#include "result.h"
#include "hallucination.h"
#include "search.h"
#include "text.h"
#include "timing.h"

enum { FRAME = 160 };

typedef struct batch_run {
    sotto_context *ctx;
    const sotto_transcribe_params *p;
    const float *x;            /* the signal */
    sotto_vad_interval *speech;
    int64_t n_speech;
    sotto_batch_chunk *chunks;
    int64_t n_chunks;
    sotto__input map;          /* the time map over speech (input.h) */
    sotto__rules rules;
    int32_t sot_seq[4];
    int n_sot;
    sotto__result *res;
    float *mels;               /* [batch_size][n_mels, 3000] */
    float *audio;              /* [SOTTO_N_SAMPLES]: one chunk's samples */
    uint64_t rng;
    double last_speech;
} batch_run;

/* The cut of the signal: the VAD's chunks, or the whole signal as one chunk when there is
 * no VAD and it is at most 30 s (the pipeline without vad_filter). */
static sotto_status cut(batch_run *r, int64_t n)
{
    const sotto_transcribe_params *p = r->p;
    if (p->vad) {
        sotto_status st = sotto_batch_chunks(p->vad, r->x, n, 30.0, 1, &r->speech, &r->n_speech, &r->chunks, &r->n_chunks);
        return st ? sotto__ctx_fail(r->ctx, st, "batched: %s", sotto_last_error()) : SOTTO_OK;
    }
    if (n > SOTTO_N_SAMPLES)
        return sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG, "batched: audio over 30 s needs a VAD to cut it "
                               "(sotto_transcribe_params.vad: faster-whisper's, silero-vad-fw.gguf)");
    r->speech = malloc(sizeof *r->speech), r->chunks = malloc(sizeof *r->chunks);
    if (!r->speech || !r->chunks) return sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    r->speech[0] = (sotto_vad_interval){0, n};
    r->chunks[0] = (sotto_batch_chunk){.offset = 0, .n_samples = n, .first = 0, .n_speech = 1};
    r->n_speech = r->n_chunks = n > 0;
    return SOTTO_OK;
}

/* Chunk C's log-mel into MEL: its samples end to end, then the frames past them 0. */
static sotto_status chunk_mel(batch_run *r, const sotto_batch_chunk *c, float *mel)
{
    int64_t at = 0;
    for (int64_t k = c->first; k < c->first + c->n_speech; k++) {
        int64_t len = r->speech[k].end - r->speech[k].start;
        if (at + len > SOTTO_N_SAMPLES) len = SOTTO_N_SAMPLES - at;
        memcpy(r->audio + at, r->x + r->speech[k].start, (size_t)len * sizeof *r->audio);
        at += len;
    }
    const int n_mels = r->ctx->model->info.n_mels;
    sotto_status st = sotto_mel_window(r->audio, at, n_mels, mel);
    if (st) return sotto__ctx_fail(r->ctx, st, "batched: %s", sotto_last_error());
    int64_t frames = at / FRAME; /* feature_extractor(chunk)[..., :-1], then pad_or_trim with zeros */
    for (int b = 0; b < n_mels; b++)
        for (int64_t t = frames; t < SOTTO_N_FRAMES; t++) mel[(size_t)b * SOTTO_N_FRAMES + t] = 0;
    return SOTTO_OK;
}

/* The logit rules and start sequence (DecodingTask.__init__ with the pipeline's options). */
static void setup(batch_run *r, int32_t lang)
{
    const sotto_model *m = r->ctx->model;
    const sotto_model_info *h = &m->info;
    const sotto_transcribe_params *p = r->p;
    r->rules = (sotto__rules){.n_vocab = h->n_vocab, .eot = h->token_eot, .ts_begin = h->token_timestamp_begin,
                              .no_timestamps = h->token_notimestamps, .suppress = m->suppress,
                              .suppress_blank = p->suppress_blank != 0, .blank = m->suppress_begin,
                              .timestamps = p->timestamps != 0, .max_initial = 0};
    r->n_sot = 0;
    r->sot_seq[r->n_sot++] = h->token_sot;
    if (h->multilingual) {
        r->sot_seq[r->n_sot++] = lang;
        r->sot_seq[r->n_sot++] = p->translate ? h->token_translate : h->token_transcribe;
    }
    if (!p->timestamps) r->sot_seq[r->n_sot++] = h->token_notimestamps;
}

/* The language: given, English for an English-only model, else detected from the first
 * chunk (faster-whisper: from the first 30 s of the chunks' features). */
static sotto_status language(batch_run *r, int32_t *lang)
{
    const sotto_model *m = r->ctx->model;
    const char *given = r->p->language;
    bool detect = !given || strcmp(given, "auto") == 0;
    const char *code = detect ? NULL : sotto_language_code(given);
    *lang = -1;
    if (!detect && !code) return sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG, "unknown language '%s'", given);
    if (!m->info.multilingual || (!detect && m->info.multilingual)) {
        if (!m->info.multilingual && ((!detect && strcmp(code, "en")) || r->p->translate))
            return sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG,
                                   "this model is English-only: no language other than en, no translation");
        snprintf(r->res->lang, sizeof r->res->lang, "%s", code ? code : "en");
        if (!m->info.multilingual) return SOTTO_OK;
        *lang = sotto_language_token(m, code);
        return *lang < 0 ? sotto__ctx_fail(r->ctx, SOTTO_ERR_INVALID_ARG, "this model has no language '%s'", given)
                         : SOTTO_OK;
    }
    sotto_status st = SOTTO_OK;
    if (r->n_chunks) st = chunk_mel(r, &r->chunks[0], r->mels);
    else memset(r->mels, 0, (size_t)m->info.n_mels * SOTTO_N_FRAMES * sizeof *r->mels);
    r->ctx->dec.win = 0;
    if (!st) st = sotto_encode(r->ctx, r->mels, (int64_t)m->info.n_mels * SOTTO_N_FRAMES);
    double prob = 0;
    if (!st) st = sotto__detect_language(r->ctx, lang, &prob);
    if (st) return st;
    sotto__language_code(m, *lang, r->res->lang, sizeof r->res->lang);
    r->res->pub.language_probability = (float)prob;
    r->res->pub.language_detected = 1;
    return SOTTO_OK;
}

/* Encodes chunks C0 .. C0 + NB - 1 in one pass and projects each one's cross K/V into
 * decoder window w = c - c0. */
static sotto_status encode(batch_run *r, int64_t c0, int nb)
{
    sotto_context *ctx = r->ctx;
    const size_t mel = (size_t)ctx->model->info.n_mels * SOTTO_N_FRAMES;
    for (int w = 0; w < nb; w++) {
        sotto_status st = chunk_mel(r, &r->chunks[c0 + w], r->mels + (size_t)w * mel);
        if (st) return st;
    }
    ctx->encoded = ctx->have_state = ctx->have_logits = false;
    sotto__encoder_forward_batch(&ctx->enc, r->mels, nb);
    for (int w = 0; w < nb; w++) {
        ctx->dec.win = w;
        sotto__decoder_cross(&ctx->dec, sotto__buf_f32(ctx->enc.out, (size_t)w * ctx->enc.n_ctx * ctx->enc.d),
                             ctx->enc.k, ctx->enc.v);
    }
    return sotto__ctx_sync(ctx, "batched encode");
}

/* The searches of windows 0 .. NB - 1 in lockstep: OUT[w] their results. */
static sotto_status decode(batch_run *r, int nb, const sotto__decode_opts *o, sotto__decode_result *out)
{
    sotto_context *ctx = r->ctx;
    sotto__group *g[SOTTO_MAX_BATCH] = {0};
    int G = o->temperature == 0 ? o->beam_size : o->best_of, live = 0;
    sotto_status st = SOTTO_OK;
    for (int w = 0; w < nb && !st; w++) {
        ctx->dec.win = w;
        st = sotto__group_begin(ctx, o, w * G, &out[w], &g[w]);
        if (!st && !sotto__group_finished(g[w])) sotto__group_advance(g[w]);
    }
    int32_t *toks = malloc((size_t)nb * G * sizeof *toks);
    int *slots = malloc((size_t)nb * G * sizeof *slots), *wins = malloc((size_t)nb * G * sizeof *wins);
    if (!st && (!toks || !slots || !wins)) st = sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    for (int step = 1; !st; step++) {
        int n = 0, pos = 0, row0[SOTTO_MAX_BATCH];
        live = 0;
        for (int w = 0; w < nb; w++) {
            if (sotto__group_finished(g[w])) continue;
            row0[w] = n;
            int k = sotto__group_rows(g[w], toks + n, slots + n);
            for (int i = 0; i < k; i++) wins[n + i] = w;
            n += k, live++;
            pos = sotto__group_pos(g[w]); /* the same for every live group: one token a step each */
        }
        if (!live) break;
        if ((step & 15) == 15 && o->abort_callback && o->abort_callback(o->audio_s, o->user_data)) {
            st = sotto__ctx_fail(ctx, SOTTO_ERR_CANCELLED, "batched: cancelled by the caller");
            break;
        }
        sotto__decoder_step_batch(&ctx->dec, toks, slots, wins, n, pos - 1);
        sotto__decoder_logits_batch(&ctx->dec, n);
        for (int w = 0; w < nb; w++) {
            if (sotto__group_finished(g[w])) continue;
            sotto__group_fetch(g[w], row0[w]);
            sotto__group_advance(g[w]);
        }
    }
    free(toks), free(slots), free(wins);
    for (int w = 0; w < nb; w++) {
        if (g[w] && !st) sotto__group_end(g[w]);
        else sotto__group_free(g[w]);
    }
    return st;
}

/* Room for MORE segments in the result. */
static sotto_status grow(batch_run *r, int more)
{
    sotto__result *x = r->res;
    if (x->pub.n_segments + more <= x->cap_seg) return SOTTO_OK;
    int cap = 2 * (x->pub.n_segments + more) + 16;
    sotto_segment *s = realloc(x->seg, (size_t)cap * sizeof *s);
    if (!s) return sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    x->seg = s, x->cap_seg = cap;
    x->pub.segments = s;
    return SOTTO_OK;
}

/* _split_segments_by_timestamps over chunk C's tokens D (time_offset its offset in the
 * speech, segment_duration its length): the pieces into CUR, their count returned. */
static int split(const batch_run *r, const sotto_batch_chunk *c, const sotto__decode_result *d, sotto__wseg *cur)
{
    const int32_t tb = r->rules.ts_begin, *t = d->tokens;
    const int n = d->n_tokens;
    const double offset = (double)c->offset / SOTTO_SAMPLE_RATE, precision = 0.02;
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
    double duration = (double)c->n_samples / SOTTO_SAMPLE_RATE;
    int32_t last_ts = -1;
    for (int i = 0; tb >= 0 && i < n; i++)
        if (t[i] >= tb) last_ts = t[i];
    if (last_ts >= 0 && last_ts != tb) duration = (last_ts - tb) * precision;
    cur[0] = (sotto__wseg){.start = offset, .end = offset + duration, .tokens = t, .n_tokens = n};
    return 1;
}

/* Chunk C's segments, decoded as D, into the result on the file's timeline; with word
 * timestamps its window W must be the decoder's (their alignment reads its cross K/V). */
static sotto_status add_chunk(batch_run *r, const sotto_batch_chunk *c, int w, const sotto__decode_result *d,
                              sotto__wseg *cur)
{
    const sotto_transcribe_params *p = r->p;
    int n_cur = split(r, c, d, cur);
    sotto_status st = grow(r, n_cur);
    if (!st && p->word_timestamps) {
        const sotto_model_info *h = &r->ctx->model->info;
        int32_t sot[3] = {h->token_sot, r->sot_seq[1], r->sot_seq[2]};
        sotto__timing_opts o = {.sot_seq = sot, .n_sot = h->multilingual ? 3 : 1, .seek = 0,
                                .num_frames = (int)(ceil((double)c->n_samples / SOTTO_SAMPLE_RATE) * 100),
                                .prepend = p->prepend_punctuations, .append = p->append_punctuations};
        r->ctx->dec.win = w;
        st = sotto__add_word_timestamps(r->ctx, &o, cur, n_cur, r->last_speech);
        double end;
        if (!st && sotto__segments_end(cur, n_cur, &end)) r->last_speech = end;
    }
    for (int i = 0; i < n_cur && !st; i++) {
        sotto__wseg *s = &cur[i];
        char *text = sotto__detok(r->ctx->model, s->tokens, s->n_tokens, false);
        int32_t *toks = malloc((size_t)(s->n_tokens ? s->n_tokens : 1) * sizeof *toks);
        if (!text || !toks) {
            free(text), free(toks);
            st = sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
            break;
        }
        memcpy(toks, s->tokens, (size_t)s->n_tokens * sizeof *toks);
        double start = sotto__input_original_time(&r->map, s->start, false);
        double end = sotto__input_original_time(&r->map, s->end, true);
        for (int k = 0; k < s->n_words; k++) { /* restore_speech_timestamps: a word in the chunk of its middle */
            sotto_word *wd = &s->words[k];
            double middle = (wd->start + wd->end) / 2;
            wd->start = sotto__input_original_time_at(&r->map, wd->start, middle);
            wd->end = sotto__input_original_time_at(&r->map, wd->end, middle);
        }
        if (s->n_words) start = s->words[0].start, end = s->words[s->n_words - 1].end;
        size_t a, len;
        sotto__strip(text, strlen(text), &a, &len);
        sotto__result *x = r->res;
        x->seg[x->pub.n_segments] = (sotto_segment){
            .id = x->pub.n_segments, .seek = c->offset / FRAME, .start = start, .end = end, .text = text,
            .tokens = toks, .n_tokens = s->n_tokens, .temperature = d->temperature, .avg_logprob = d->avg_logprob,
            .compression_ratio = sotto__compression_ratio(text + a, len), .no_speech_prob = d->no_speech_prob,
            .words = p->word_timestamps ? s->words : NULL, .n_words = p->word_timestamps ? s->n_words : 0};
        x->pub.n_segments++;
        s->words = NULL, s->n_words = 0;
        if (p->on_segment && p->on_segment(&x->seg[x->pub.n_segments - 1], p->user_data)) x->pub.stopped = 1;
    }
    for (int i = 0; i < n_cur; i++) sotto__wseg_free(&cur[i]);
    return st;
}

/* The chunks, batch_size at a time. */
static sotto_status run_batches(batch_run *r)
{
    const sotto_transcribe_params *p = r->p;
    const sotto_model_info *h = &r->ctx->model->info;
    const int B = p->batch_size;
    const double total_s = r->res->pub.duration;
    sotto__decode_opts o = {.rules = &r->rules, .sot_seq = r->sot_seq, .n_sot = r->n_sot,
                            .temperature = p->temperatures[0], .beam_size = p->beam_size, .best_of = p->best_of,
                            .patience = p->patience, .use_length_penalty = p->use_length_penalty,
                            .length_penalty = p->length_penalty,
                            .sample_len = p->sample_len > 0 && p->sample_len < h->n_text_ctx / 2 ? p->sample_len
                                                                                                : h->n_text_ctx / 2,
                            .rng = &r->rng, .skip_above = INFINITY, .stop_ratio_above = INFINITY,
                            .abort_callback = p->abort_callback, .user_data = p->user_data, .audio_s = total_s};
    sotto__decode_result *d = malloc((size_t)B * sizeof *d);
    sotto__wseg *cur = malloc((SOTTO__MAX_TOKENS + 1) * sizeof *cur);
    sotto_status st = d && cur ? SOTTO_OK : sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    for (int64_t c0 = 0; c0 < r->n_chunks && !st && !r->res->pub.stopped; c0 += B) {
        if (p->abort_callback && p->abort_callback(total_s, p->user_data)) {
            st = sotto__ctx_fail(r->ctx, SOTTO_ERR_CANCELLED, "batched: cancelled by the caller");
            break;
        }
        int nb = r->n_chunks - c0 < B ? (int)(r->n_chunks - c0) : B;
        st = encode(r, c0, nb);
        if (!st) st = decode(r, nb, &o, d);
        for (int w = 0; w < nb && !st && !r->res->pub.stopped; w++) st = add_chunk(r, &r->chunks[c0 + w], w, &d[w], cur);
        int64_t done = c0 + nb < r->n_chunks ? r->speech[r->chunks[c0 + nb].first].start : (int64_t)(total_s * SOTTO_SAMPLE_RATE);
        if (!st && p->on_progress && p->on_progress((double)done / SOTTO_SAMPLE_RATE, total_s, p->user_data))
            r->res->pub.stopped = 1;
    }
    r->ctx->dec.win = 0;
    free(d), free(cur);
    return st;
}

static char *joined_text(const sotto__result *x)
{
    size_t len = 0;
    for (int i = 0; i < x->pub.n_segments; i++) len += strlen(x->seg[i].text);
    char *t = malloc(len + 1);
    if (!t) return NULL;
    size_t at = 0;
    for (int i = 0; i < x->pub.n_segments; i++) {
        size_t k = strlen(x->seg[i].text);
        memcpy(t + at, x->seg[i].text, k);
        at += k;
    }
    t[at] = 0;
    return t;
}

sotto_status sotto__transcribe_batched(sotto_context *ctx, const float *x, int64_t n, const sotto_transcribe_params *p,
                                       sotto_result **out)
{
    *out = NULL;
    if (p->batch_size > ctx->max_batch)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "batched: batch_size %d, but the context was made for %d "
                               "(sotto_context_params.max_batch)", p->batch_size, ctx->max_batch);
    const sotto_model_info *h = &ctx->model->info;
    if (p->timestamps && h->token_timestamp_begin < 0)
        return sotto__ctx_fail(ctx, SOTTO_ERR_UNSUPPORTED, "transcribe: the vocabulary has no timestamp tokens");
    batch_run r = {.ctx = ctx, .p = p, .x = x, .rng = p->seed};
    r.res = calloc(1, sizeof *r.res);
    r.mels = malloc((size_t)p->batch_size * h->n_mels * SOTTO_N_FRAMES * sizeof *r.mels);
    r.audio = malloc(SOTTO_N_SAMPLES * sizeof *r.audio);
    sotto_status st = r.res && r.mels && r.audio ? SOTTO_OK : sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    int32_t lang = -1;
    if (!st) {
        r.res->pub.language = r.res->lang;
        r.res->pub.duration = n / (double)SOTTO_SAMPLE_RATE;
        r.res->pub.word_timestamps = p->word_timestamps != 0;
        st = cut(&r, n);
    }
    if (!st) {
        r.map.speech = r.speech, r.map.n_speech = r.n_speech;
        if (!sotto__input_map(&r.map)) st = sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    }
    if (!st) st = language(&r, &lang);
    if (!st && p->on_language && p->on_language(r.res->lang, r.res->pub.language_probability, p->user_data))
        r.res->pub.stopped = 1;
    if (!st) setup(&r, lang);
    if (!st) st = run_batches(&r);
    if (!st && !(r.res->text = joined_text(r.res))) st = sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    if (!st) r.res->pub.text = r.res->text;
    r.map.speech = NULL; /* freed below, with the chunks */
    sotto__input_free(&r.map);
    sotto_free(r.speech), sotto_free(r.chunks);
    free(r.mels), free(r.audio);
    if (st) {
        sotto_result_free(r.res ? &r.res->pub : NULL);
        return st;
    }
    *out = &r.res->pub;
    return SOTTO_OK;
}

sotto_status sotto__transcribe_batched_source(sotto_context *ctx, const sotto_audio_source *from, const float *samples,
                                              int64_t n_samples, const sotto_transcribe_params *p, sotto_result **out)
{
    if (!from) return sotto__transcribe_batched(ctx, samples, n_samples, p, out);
    sotto_audio *audio;
    sotto_status st = sotto_audio_open_source(from, &audio);
    if (st) return sotto__ctx_fail(ctx, st, "%s", sotto_last_error());
    float *x = NULL;
    int64_t n = 0;
    st = sotto__input_read_all(audio, &x, &n);
    if (st) st = sotto__ctx_fail(ctx, st, "%s", st == SOTTO_ERR_NOMEM ? "out of memory" : sotto_last_error());
    const char *w = sotto_audio_warning(audio);
    if (!st && w[0] && p->on_warning) p->on_warning(w, p->user_data);
    sotto_audio_close(audio);
    if (!st) st = sotto__transcribe_batched(ctx, x, n, p, out);
    free(x);
    return st;
}
