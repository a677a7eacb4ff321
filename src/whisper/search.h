/* search.h — one 30 s window decoded as openai/whisper decoding.py's DecodingTask does:
 * the prompt and start sequence prefilled once, then a group of sequences (greedy,
 * best-of-N sampling, or beam search) stepping together through the decoder, each with a
 * KV-cache slot of its own, under the logit rules of logits.h; the best one ranked by
 * its summed log-probability. */
#ifndef SOTTO_SEARCH_H
#define SOTTO_SEARCH_H

#include "context.h"
#include "logits.h"

enum { SOTTO__MAX_TOKENS = 448 }; /* n_text_ctx of every Whisper model */

typedef struct sotto__decode_opts {
    const sotto__rules *rules;
    const int32_t *prompt;     /* previous text (only its last n_text_ctx / 2 - 1 are used) */
    int n_prompt;
    const int32_t *sot_seq;    /* <|startoftranscript|> [language task] [<|notimestamps|>] */
    int n_sot;
    const int32_t *hotwords;   /* faster-whisper's: after <|startofprev|>, before the prompt */
    int n_hotwords;
    const int32_t *prefix;     /* forced after the start sequence; the first sampled tokens */
    int n_prefix;
    int max_new_tokens;        /* > 0: CTranslate2's cap (sotto_transcribe_params.max_new_tokens) */
    double temperature;        /* 0: argmax (greedy or beams); > 0: sampling */
    int beam_size;             /* > 1 at temperature 0: beam search */
    int best_of;               /* samples at temperature > 0 */
    float patience;
    bool ct2_beams;            /* beam search as CTranslate2 4.8 steps it (faster-whisper's):
                                  sotto_transcribe_params.ctranslate2_search, its ranking and
                                  its max_length (sotto__sample_len) */
    bool use_length_penalty;   /* the ranking's (sotto_transcribe_params.length_penalty) */
    float length_penalty;
    int sample_len;            /* most tokens sampled (n_text_ctx / 2) */
    uint64_t *rng;             /* sampling state */
    double stop_ratio_above;   /* sampling: a sequence whose text so far compresses by more
                                  than this stops there (INFINITY: never), as it would fail the
                                  fallback's compression check; see sotto__decode_window */
    double skip_above;         /* a no-speech probability above this ends the decode after the
                                  prefill, with no tokens and SKIPPED set (the silence check:
                                  the window will be skipped whatever is decoded) */
    bool few_logits;           /* greedy at temperature 0 may leave the log-probabilities out
                                  where the backend has few_logits (sum and avg NaN; the same
                                  tokens): the text ids' argmax and the exact logits of that
                                  id and of every special and timestamp, not all of them */
    double logprobs_above;     /* ... but not where the no-speech probability is above this
                                  (the silence check then reads avg_logprob) */
    sotto_abort_callback abort_callback; /* or NULL: polled every 16 steps with AUDIO_S; */
    void *user_data;           /*   nonzero ends the decode with SOTTO_ERR_CANCELLED */
    double audio_s;
} sotto__decode_opts;

typedef struct sotto__decode_result {
    int32_t tokens[SOTTO__MAX_TOKENS]; /* the prefix and what was sampled, without <|endoftext|> */
    int n_tokens;
    double sum_logprob, avg_logprob;   /* avg: sum / (n_tokens + 1) */
    double no_speech_prob;             /* NAN without a <|nospeech|> token */
    double temperature;
    double compression_ratio;          /* of its text: set by the caller */
    bool skipped;                      /* ended after the prefill (skip_above) */
} sotto__decode_result;

/* Decodes the window last encoded on CTX. With sampling and a finite stop_ratio_above,
 * each live sequence's text is compressed after each step: one whose compression ratio
 * already exceeds the bound (a loop: it grows while the loop lasts, and a looping sample
 * runs to sample_len) is stopped as if it had ended there, scored by its tokens so far;
 * the group ends when every sequence has ended or stopped. Ranked best, such a sequence
 * fails the caller's compression check as the whole one would, so the window falls back
 * as openai's rule says, after far fewer steps. */
sotto_status sotto__decode_window(sotto_context *ctx, const sotto__decode_opts *o, sotto__decode_result *res);

/* sotto__decode_window in pieces, for batched decoding (batch.c), which steps the groups
 * of several windows together. A group is one window's sequences in cache slots SLOT0 ..
 * SLOT0 + G - 1, stepped in lockstep with the others: begin prefills it (through the
 * decoder's current window, dec.win) and fetches its first logits; then, until finished,
 * advance applies the logit rules and the search's update to the logits fetched, and
 * the caller steps the rows _rows names (at position _pos - 1) and _fetch-es their logits
 * from dec.logits rows ROW0.. ; end ranks the sequences into RES and frees the group. */
typedef struct sotto__group sotto__group;
sotto_status sotto__group_begin(sotto_context *ctx, const sotto__decode_opts *o, int slot0, sotto__decode_result *res,
                               sotto__group **out);
void sotto__group_advance(sotto__group *g);
bool sotto__group_finished(const sotto__group *g);
int sotto__group_pos(const sotto__group *g);       /* tokens in its caches */
/* the prefix its rows share (the prompt and start sequence): *N positions of cache *SLOT */
void sotto__group_prefix(const sotto__group *g, int *slot, int *n);
int sotto__group_rows(const sotto__group *g, int32_t *toks, int *slots); /* its live rows' last tokens */
void sotto__group_fetch(sotto__group *g, int row0);
void sotto__group_end(sotto__group *g);
void sotto__group_free(sotto__group *g);           /* without a result (on a failure) */

#endif
