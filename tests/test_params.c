/* test_params.c — the transcription parameters (src/whisper/params.c): the command line's
 * temperature schedule (openai cli(): np.arange(t0, 1.0 + 1e-6, increment)) and
 * sotto_transcribe_params_check on every rule it states, with the value named.
 * usage: test_params */
#include <math.h>
#include <string.h>

#include "check.h"
#include "sotto.h"

static void test_schedule(void)
{
    sotto_transcribe_params p = sotto_transcribe_params_default();
    CHECK(sotto_transcribe_params_temperatures(&p, 0, 0.2) == SOTTO_OK && p.n_temperatures == 6, "0 by 0.2: %d",
          p.n_temperatures);
    for (int i = 0; i < p.n_temperatures; i++) /* double arithmetic, as numpy's */
        CHECK(p.temperatures[i] == 0 + i * 0.2, "temperature %d: %.17g", i, p.temperatures[i]);
    CHECK(p.temperatures[3] != 0.6, "0 + 3 * 0.2 in double, as numpy's arange: not 0.6");
    /* the library's default is openai transcribe()'s tuple (0.0, 0.2, ..., 1.0) of doubles: a
     * segment decoded at 0.8 says 0.8, not float's 0.800000011920929 */
    const sotto_transcribe_params d = sotto_transcribe_params_default();
    const double openai[] = {0.0, 0.2, 0.4, 0.6, 0.8, 1.0};
    CHECK(d.n_temperatures == 6, "default: %d temperatures", d.n_temperatures);
    for (int i = 0; i < 6; i++) CHECK(d.temperatures[i] == openai[i], "default %d: %.17g", i, d.temperatures[i]);
    CHECK(sotto_transcribe_params_temperatures(&p, 0.4, 0.2) == SOTTO_OK && p.n_temperatures == 4 &&
          p.temperatures[0] == 0.4 && p.temperatures[3] == 0.4 + 3 * 0.2, "0.4 by 0.2: %d", p.n_temperatures);
    CHECK(sotto_transcribe_params_temperatures(&p, 0.5, 0) == SOTTO_OK && p.n_temperatures == 1 &&
          p.temperatures[0] == 0.5, "no increment: one");
    CHECK(sotto_transcribe_params_temperatures(&p, 1, 0.5) == SOTTO_OK && p.n_temperatures == 1, "1.0 is last");
    CHECK(sotto_transcribe_params_temperatures(&p, 0, 0.01) == SOTTO_OK && p.n_temperatures == SOTTO_MAX_TEMPERATURES,
          "capped at %d: %d", SOTTO_MAX_TEMPERATURES, p.n_temperatures);
    CHECK(sotto_transcribe_params_temperatures(&p, 0.9, 0.2) == SOTTO_OK && p.n_temperatures == 1, "0.9 + 0.2 > 1");
    sotto_transcribe_params keep = p;
    const double bad[][2] = {{-0.1, 0.2}, {1.5, 0.2}, {NAN, 0.2}, {0, -0.2}, {0, INFINITY}, {0, NAN}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(sotto_transcribe_params_temperatures(&p, bad[i][0], bad[i][1]) == SOTTO_ERR_INVALID_ARG &&
              strstr(sotto_last_error(), "temperature"), "t0 %g, increment %g refused: %s", bad[i][0], bad[i][1],
              sotto_last_error());
        CHECK(memcmp(&p, &keep, sizeof p) == 0, "a refused schedule leaves the parameters");
    }
    CHECK(sotto_transcribe_params_temperatures(NULL, 0, 0) == SOTTO_ERR_INVALID_ARG, "NULL");
}

/* P with one value changed is refused with a message holding WORD. */
static void refused(const sotto_transcribe_params *p, const char *what, const char *word)
{
    sotto_status st = sotto_transcribe_params_check(p);
    CHECK(st == SOTTO_ERR_INVALID_ARG && strstr(sotto_last_error(), word), "%s: %s (%s)", what,
          sotto_status_str(st), sotto_last_error());
}

static void test_check(void)
{
    sotto_transcribe_params d = sotto_transcribe_params_default(), p;
    CHECK(sotto_transcribe_params_check(&d) == SOTTO_OK, "the defaults pass: %s", sotto_last_error());
    CHECK(sotto_transcribe_params_check(NULL) == SOTTO_ERR_INVALID_ARG, "NULL");
    p = d, p.n_temperatures = 0, refused(&p, "no temperature", "temperatures");
    p = d, p.n_temperatures = SOTTO_MAX_TEMPERATURES + 1, refused(&p, "17 temperatures", "temperatures");
    p = d, p.temperatures[2] = -0.2, refused(&p, "negative temperature", "temperature -0.2");
    p = d, p.temperatures[5] = NAN, refused(&p, "NaN temperature", "temperature");
    p = d, p.temperatures[5] = INFINITY, refused(&p, "infinite temperature", "temperature");
    p = d, p.beam_size = 0, refused(&p, "beam 0", "beam size 0");
    p = d, p.best_of = -1, refused(&p, "best of -1", "best of -1");
    p = d, p.patience = 0, refused(&p, "patience 0", "patience");
    p = d, p.patience = NAN, refused(&p, "patience NaN", "patience");
    p = d, p.patience = 1e30f, refused(&p, "patience 1e30 (beam_size x patience overflows an int)", "patience");
    p = d, p.use_length_penalty = 1, p.length_penalty = INFINITY, refused(&p, "length penalty inf", "length penalty");
    p = d, p.sample_len = -1, refused(&p, "sample_len -1", "sample length");
    p = d, p.compression_ratio_threshold = NAN, refused(&p, "compression NaN", "compression");
    p = d, p.logprob_threshold = NAN, refused(&p, "logprob NaN", "logprob");
    p = d, p.no_speech_threshold = NAN, refused(&p, "no-speech NaN", "no-speech");
    p = d, p.max_initial_timestamp = NAN, refused(&p, "max initial timestamp NaN", "initial timestamp");
    p = d, p.prompt_reset_temperature = NAN, refused(&p, "prompt reset temperature NaN", "prompt reset");
    p = d, p.prompt_reset_temperature = -1;
    CHECK(sotto_transcribe_params_check(&p) == SOTTO_OK, "prompt reset below 0: every window");
    CHECK(d.prompt_reset_temperature == 0.5, "openai's prompt reset at 0.5");
    p = d, p.check_hallucination_silence = 1, p.hallucination_silence_threshold = -1,
    refused(&p, "hallucination -1", "hallucination");
    p = d, p.repetition_penalty = 0, refused(&p, "repetition penalty 0", "repetition penalty");
    p = d, p.repetition_penalty = NAN, refused(&p, "repetition penalty NaN", "repetition penalty");
    p = d, p.no_repeat_ngram_size = -1, refused(&p, "no-repeat n-gram -1", "n-gram size");
    int32_t ids[] = {-1, 13, -2};
    p = d, p.n_suppress_tokens = 1, refused(&p, "suppress tokens without their array", "without their array");
    p = d, p.suppress_tokens = ids, p.n_suppress_tokens = -1, refused(&p, "suppress tokens -1", "without their array");
    p = d, p.suppress_tokens = ids, p.n_suppress_tokens = 3, refused(&p, "suppress token -2", "suppress token -2");
    p = d, p.suppress_tokens = ids, p.n_suppress_tokens = 2;
    CHECK(sotto_transcribe_params_check(&p) == SOTTO_OK, "suppress -1, 13: %s", sotto_last_error());
    p = d, p.suppress_tokens = ids, p.n_suppress_tokens = 0;
    CHECK(sotto_transcribe_params_check(&p) == SOTTO_OK, "suppress none: %s", sotto_last_error());
    CHECK(!d.suppress_tokens && !d.n_suppress_tokens, "suppress_tokens default: the model's list");
    int32_t prompt_ids[] = {1770, 13};
    p = d, p.n_initial_prompt_tokens = 2, refused(&p, "prompt ids without their array", "without their array");
    p = d, p.initial_prompt_tokens = prompt_ids, p.n_initial_prompt_tokens = -1;
    refused(&p, "prompt ids -1", "without their array");
    p = d, p.initial_prompt_tokens = prompt_ids, p.n_initial_prompt_tokens = 2, p.initial_prompt = "x";
    refused(&p, "prompt as text and ids", "give one");
    p = d, p.initial_prompt_tokens = prompt_ids, p.n_initial_prompt_tokens = 2, p.batch_size = 2;
    refused(&p, "batched prompt ids", "as text");
    p = d, p.initial_prompt_tokens = prompt_ids, p.n_initial_prompt_tokens = 2;
    CHECK(sotto_transcribe_params_check(&p) == SOTTO_OK, "prompt ids: %s", sotto_last_error());
    CHECK(!d.initial_prompt_tokens && !d.n_initial_prompt_tokens, "initial_prompt_tokens default: none");
    double bad_clip[] = {3, 2};
    p = d, p.batch_size = 2, p.clip_timestamps = bad_clip, p.n_clip_timestamps = 2;
    refused(&p, "batched clip 3 .. 2", "start before its end");
    p = d, p.batch_size = 2, p.prefix = "x", refused(&p, "batched prefix", "takes no prefix");
    p = d, p.batch_size = 2, p.initial_prompt = "x", p.carry_initial_prompt = 1;
    refused(&p, "batched carry_initial_prompt", "takes no carry_initial_prompt");
    sotto_vad_params v = sotto_vad_params_batched(30);
    p = d, p.batch_size = 2, p.hotwords = "x", p.initial_prompt = "y", p.batch_vad = &v;
    CHECK(sotto_transcribe_params_check(&p) == SOTTO_OK, "batched prompt, hotwords, VAD: %s", sotto_last_error());
    v.threshold = NAN, refused(&p, "batched VAD threshold NaN", "batched VAD parameters");
    v = sotto_vad_params_batched(30), v.max_speech_duration_s = 0, refused(&p, "batched max speech 0", "above 0");
    v = sotto_vad_params_batched(30), v.speech_pad_ms = -1, refused(&p, "batched pad -1", ">= 0");
    v = sotto_vad_params_batched(30), v.use_neg_threshold = 1, v.neg_threshold = INFINITY;
    refused(&p, "batched neg threshold inf", "finite");
    p = d, p.batch_size = 2, p.multilingual = 1, bad_clip[0] = 1;
    p.clip_timestamps = bad_clip, p.n_clip_timestamps = 2;
    CHECK(sotto_transcribe_params_check(&p) == SOTTO_OK, "batched clips and multilingual: %s", sotto_last_error());
    p = d;
    CHECK(p.repetition_penalty == 1.0f && p.no_repeat_ngram_size == 0 && !p.carry_initial_prompt, "defaults off");
    p = d, p.vad = (const sotto_vad *)&d, p.vad_threshold = 1, refused(&p, "VAD threshold 1", "VAD threshold");
    p = d, p.vad = (const sotto_vad *)&d, p.vad_speech_pad_ms = -5, refused(&p, "VAD pad -5", "VAD durations");
    CHECK(isnan(d.vad_neg_threshold) && isinf(d.vad_max_speech_s), "VadOptions' neg_threshold unset, no max speech");
    p = d, p.vad = (const sotto_vad *)&d, p.vad_neg_threshold = 0, refused(&p, "VAD neg 0", "neg_threshold");
    p = d, p.vad = (const sotto_vad *)&d, p.vad_neg_threshold = 1, refused(&p, "VAD neg 1", "neg_threshold");
    p = d, p.vad = (const sotto_vad *)&d, p.vad_max_speech_s = 0, refused(&p, "VAD max 0", "max speech");
    p = d, p.vad = (const sotto_vad *)&d, p.vad_max_speech_s = NAN, refused(&p, "VAD max NaN", "max speech");
    p = d, p.vad = (const sotto_vad *)&d, p.vad_neg_threshold = 0.2f, p.vad_max_speech_s = 5;
    CHECK(sotto_transcribe_params_check(&p) == SOTTO_OK, "VAD neg 0.2, max 5 s: %s", sotto_last_error());
    /* what is off is not checked: a NaN threshold whose check is off, a VAD value without a VAD */
    p = d, p.check_compression = 0, p.compression_ratio_threshold = NAN;
    CHECK(sotto_transcribe_params_check(&p) == SOTTO_OK, "compression check off: %s", sotto_last_error());
    p = d, p.vad_threshold = 7, p.length_penalty = NAN, p.hallucination_silence_threshold = -1;
    CHECK(sotto_transcribe_params_check(&p) == SOTTO_OK, "unused values: %s", sotto_last_error());
    p = d, p.max_initial_timestamp = -1, p.sample_len = 0;
    CHECK(sotto_transcribe_params_check(&p) == SOTTO_OK, "any initial timestamp: %s", sotto_last_error());
}

/* openai's names and codes, both ways (lang_names.c): its LANGUAGES' name is a code's, an
 * alias maps to the code but not back. */
static void test_language_names(void)
{
    const char *pairs[][2] = {{"en", "english"}, {"de", "german"}, {"haw", "hawaiian"}, {"ht", "haitian creole"},
                              {"yue", "cantonese"}, {"my", "myanmar"}, {"jw", "javanese"}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        const char *name = sotto_language_name(pairs[i][0]), *code = sotto_language_code(pairs[i][1]);
        CHECK(name && strcmp(name, pairs[i][1]) == 0, "name of %s: %s", pairs[i][0], name ? name : "(null)");
        CHECK(code && strcmp(code, pairs[i][0]) == 0, "code of %s: %s", pairs[i][1], code ? code : "(null)");
    }
    CHECK(strcmp(sotto_language_code("Burmese"), "my") == 0, "an alias's code");
    CHECK(!sotto_language_name("EN") && !sotto_language_name("xx") && !sotto_language_name("") &&
          !sotto_language_name(NULL), "a code is exact, lower case");
}

/* A message is one line of printable text: a path's newline and escape as '?'. */
static void test_messages_printable(void)
{
    sotto_model *m = NULL;
    CHECK(sotto_model_load("/nonexistent/a\nb\x1b[31m.gguf", &m) != SOTTO_OK && !m, "a missing model loads");
    const char *e = sotto_last_error();
    CHECK(!strpbrk(e, "\n\x1b") && strstr(e, "/nonexistent/a?b?[31m.gguf"), "the message: %s", e);
}

int main(void)
{
    test_schedule();
    test_check();
    test_language_names();
    test_messages_printable();
    return check_summary();
}
