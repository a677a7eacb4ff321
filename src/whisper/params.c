/* params.c — the transcription parameters: openai-whisper's defaults, the command line's
 * temperature schedule, and the one check of every value, which sotto_transcribe runs and
 * the tool, the server and the Python package run before they load or decode anything. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../common.h"

sotto_transcribe_params sotto_transcribe_params_default(void)
{
    return (sotto_transcribe_params){
        .language = NULL, .translate = 0, .timestamps = 1, .beam_size = 5, .best_of = 5, .patience = 1.0f,
        .temperatures = {0.0, 0.2, 0.4, 0.6, 0.8, 1.0}, .n_temperatures = 6,
        .check_compression = 1, .compression_ratio_threshold = 2.4f, .check_logprob = 1, .logprob_threshold = -1.0f,
        .check_no_speech = 1, .no_speech_threshold = 0.6f, .condition_on_previous_text = 1, .suppress_blank = 1,
        .max_initial_timestamp = 1.0f, .seed = 0, .silence_check = 1, .vad_threshold = 0.5f,
        .vad_min_speech_ms = 0, .vad_min_silence_ms = 2000, .vad_speech_pad_ms = 400, .word_timestamps = 0,
        .check_hallucination_silence = 0, .hallucination_silence_threshold = 0,
        .repetition_penalty = 1.0f, .no_repeat_ngram_size = 0,
        .vad_neg_threshold = NAN, .vad_max_speech_s = INFINITY, .prompt_reset_temperature = 0.5};
}

/* openai-whisper cli(): np.arange(t0, 1.0 + 1e-6, increment), whose i-th value is
 * t0 + i * increment, computed in double as numpy does. */
sotto_status sotto_transcribe_params_temperatures(sotto_transcribe_params *p, double t0, double increment)
{
    if (!p) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "temperatures: no parameters"});
    if (!(t0 >= 0 && t0 <= 1) || !(increment >= 0 && isfinite(increment))) {
        sotto__err err;
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "temperature %g with increment %g: the first must be in 0..1, "
                    "the increment a number >= 0", t0, increment);
        return sotto__publish(&err);
    }
    p->n_temperatures = 0;
    for (int i = 0; p->n_temperatures < SOTTO_MAX_TEMPERATURES; i++) {
        double t = t0 + i * increment;
        if (t > 1.0 + 1e-6 && i > 0) break;
        p->temperatures[p->n_temperatures++] = t;
        if (increment <= 0) break;
    }
    return SOTTO_OK;
}

/* A threshold that is on must be a number (NaN would turn its check silently off). */
static sotto_status check_threshold(int on, float v, const char *name, sotto__err *err)
{
    if (on && isnan(v)) return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "%s is not a number", name);
    return SOTTO_OK;
}

static sotto_status check_search(const sotto_transcribe_params *p, sotto__err *err)
{
    if (p->n_temperatures < 1 || p->n_temperatures > SOTTO_MAX_TEMPERATURES)
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "%d temperatures (1..%d)", p->n_temperatures,
                           SOTTO_MAX_TEMPERATURES);
    for (int i = 0; i < p->n_temperatures; i++)
        if (!(p->temperatures[i] >= 0 && isfinite(p->temperatures[i])))
            return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "temperature %g (each a number >= 0)", p->temperatures[i]);
    if (p->beam_size < 1 || p->best_of < 1)
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "beam size %d, best of %d (both >= 1)", p->beam_size,
                           p->best_of);
    if (!(p->patience > 0 && p->patience <= 100)) /* beam_size x patience candidates: an int, memory */
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "patience %g (a number in (0, 100])", p->patience);
    if (isnan(p->prompt_reset_temperature))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "prompt reset temperature NaN (a number)");
    if (p->use_length_penalty && !isfinite(p->length_penalty))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "length penalty %g (a finite number)", p->length_penalty);
    if (p->sample_len < 0)
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "sample length %d (0: the model's default, else >= 1)",
                           p->sample_len);
    if (p->max_new_tokens < 0)
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "max_new_tokens %d (0: none, else >= 1)", p->max_new_tokens);
    if (!(p->repetition_penalty > 0 && isfinite(p->repetition_penalty)))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "repetition penalty %g (a number > 0; 1: none)",
                           p->repetition_penalty);
    if (p->no_repeat_ngram_size < 0)
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "no-repeat n-gram size %d (0: none, else >= 1)",
                           p->no_repeat_ngram_size);
    if (p->n_clip_timestamps < 0 || (p->n_clip_timestamps > 0 && !p->clip_timestamps))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "%d clip timestamps without their array", p->n_clip_timestamps);
    for (int i = 0; i < p->n_clip_timestamps; i++)
        if (!(p->clip_timestamps[i] >= 0 && p->clip_timestamps[i] < 1e9))
            return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "clip timestamp %g (seconds, a number >= 0)",
                               p->clip_timestamps[i]);
    if (isnan(p->max_initial_timestamp))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "max initial timestamp is not a number");
    if (p->n_suppress_tokens < 0 || (p->n_suppress_tokens > 0 && !p->suppress_tokens))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "%d suppress tokens without their array",
                           p->n_suppress_tokens);
    for (int i = 0; p->suppress_tokens && i < p->n_suppress_tokens; i++)
        if (p->suppress_tokens[i] < -1)
            return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "suppress token %d (a token id, or -1: the model's list "
                               "of non-speech symbols)", (int)p->suppress_tokens[i]);
    if (p->n_initial_prompt_tokens < 0 || (p->n_initial_prompt_tokens > 0 && !p->initial_prompt_tokens))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "%d initial prompt tokens without their array",
                           p->n_initial_prompt_tokens);
    if (p->n_initial_prompt_tokens > 0 && p->initial_prompt)
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "an initial prompt as text and as token ids: give one");
    if (p->n_initial_prompt_tokens > 0 && p->batch_size > 0)
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "batched decoding (batch size %d) takes its initial prompt "
                           "as text", p->batch_size);
    return SOTTO_OK;
}

sotto_status sotto__transcribe_params_check(const sotto_transcribe_params *p, sotto__err *err)
{
    sotto_status st = check_search(p, err);
    if (!st) st = check_threshold(p->check_compression, p->compression_ratio_threshold,
                                  "the compression ratio threshold", err);
    if (!st) st = check_threshold(p->check_logprob, p->logprob_threshold, "the logprob threshold", err);
    if (!st) st = check_threshold(p->check_no_speech, p->no_speech_threshold, "the no-speech threshold", err);
    if (st) return st;
    if (p->language && strcasecmp(p->language, "auto") != 0 && !sotto_language_code(p->language))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "unknown language '%s' (a code as de, or openai's name as "
                           "German; auto detects it)", p->language);
    if (p->check_hallucination_silence && !(p->hallucination_silence_threshold >= 0))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "hallucination silence threshold %g (>= 0 s)",
                           p->hallucination_silence_threshold);
    if (p->vad_filter < 0 || p->vad_filter > 2)
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "vad_filter %d (0: off, 1: on, 2: faster-whisper's segments)",
                           p->vad_filter);
    if (p->vad && !(p->vad_threshold > 0 && p->vad_threshold < 1))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "VAD threshold %g (a probability in (0, 1))", p->vad_threshold);
    if (p->vad && (p->vad_min_speech_ms < 0 || p->vad_min_silence_ms < 0 || p->vad_speech_pad_ms < 0))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "VAD durations %d, %d, %d ms (each >= 0)",
                           p->vad_min_speech_ms, p->vad_min_silence_ms, p->vad_speech_pad_ms);
    if (p->vad && !isnan(p->vad_neg_threshold) && !(p->vad_neg_threshold > 0 && p->vad_neg_threshold < 1))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "VAD neg_threshold %g (a probability in (0, 1), or NAN: "
                           "the threshold - 0.15)", p->vad_neg_threshold);
    if (p->vad && !(p->vad_max_speech_s > 0))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "VAD max speech duration %g s (above 0, or INFINITY)",
                           p->vad_max_speech_s);
    if (p->batch_size < 0 || p->batch_size > SOTTO_MAX_BATCH)
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "batch size %d (0: no batching, else 1 .. %d)", p->batch_size,
                           SOTTO_MAX_BATCH);
    if (p->batch_size > 0 && ((p->prefix && *p->prefix) || p->carry_initial_prompt))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "batched decoding (batch size %d) takes no %s: every chunk "
                           "gets the pipeline's one prompt", p->batch_size,
                           p->prefix && *p->prefix ? "prefix" : "carry_initial_prompt");
    const sotto_vad_params *v = p->batch_size > 0 ? p->batch_vad : NULL;
    if (v && !(isfinite(v->threshold) && (!v->use_neg_threshold || isfinite(v->neg_threshold)) &&
               v->max_speech_duration_s > 0 && v->min_speech_duration_ms >= 0 && v->min_silence_duration_ms >= 0 &&
               v->speech_pad_ms >= 0 && v->min_silence_at_max_speech_ms >= 0))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "batched VAD parameters: thresholds must be finite, "
                           "max_speech_duration_s above 0 and the durations >= 0");
    for (int i = 0; p->batch_size > 0 && i + 1 < p->n_clip_timestamps; i += 2)
        if (!(p->clip_timestamps[i] < p->clip_timestamps[i + 1]))
            return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "batched clip %g .. %g s: each chunk's start before its end",
                               p->clip_timestamps[i], p->clip_timestamps[i + 1]);
    return SOTTO_OK;
}

sotto_status sotto_transcribe_params_check(const sotto_transcribe_params *p)
{
    sotto__err err = {0};
    if (!p) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "no transcription parameters"});
    sotto_status st = sotto__transcribe_params_check(p, &err);
    return st ? sotto__publish(&err) : SOTTO_OK;
}
