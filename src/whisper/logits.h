/* logits.h — the reference decoder's logit filters as pure functions over (tokens,
 * logits) (openai/whisper decoding.py: SuppressBlank, SuppressTokens,
 * ApplyTimestampRules), and the log-probabilities the searches need, on the row math of
 * a backend BE (backend.h row_max, row_exp_sum: any backend gives the same bits). */
#ifndef SOTTO_LOGITS_H
#define SOTTO_LOGITS_H

#include <stdbool.h>
#include <stdint.h>

#include "../backend.h"
#include "../tensor.h"

typedef struct sotto__rules {
    int n_vocab;
    int32_t eot;               /* <|endoftext|>: text tokens are the ids below it */
    int32_t ts_begin;          /* <|0.00|>: timestamp tokens are the ids from it on */
    int32_t no_timestamps;     /* <|notimestamps|>, or -1 */
    sotto__i32list suppress;   /* SuppressTokens: -inf at every step */
    bool suppress_blank;       /* SuppressBlank: BLANK -inf at the first sampled step */
    sotto__i32list blank;      /*   (" " and <|endoftext|>) */
    bool timestamps;           /* ApplyTimestampRules */
    int max_initial;           /*   the first timestamp at most <|0.00|> + this; < 0: any */
    float repetition_penalty;  /* CTranslate2's RepetitionPenalty; 1 (or 0): off */
    int no_repeat_ngram;       /* CTranslate2's NoRepeatNgram size; 0: off */
} sotto__rules;

/* Applies the filters in the reference's order to LOGITS [n_vocab] of a sequence whose
 * sampled tokens so far (after the prompt and start sequence) are SAMPLED[0 .. n).
 * PREFIXED: they follow a forced prefix (faster-whisper's prefix, with <|0.00|> in front
 * when timestamps are on), which is not in SAMPLED, and the rules are CTranslate2 4.8's
 * (its sample_begin after the prefix): SuppressBlank at the first token after it, and of
 * the timestamp rules only <|notimestamps|>'s there, all of them from the next on, over
 * the tokens after the prefix. Returns the largest of the filtered row, as row_max gives
 * it, where the timestamp rules found it on their way (the maxima of the text and of the
 * timestamps), else NAN: the search then need not pass over the row again for it. */
float sotto__rules_apply(sotto__backend *be, const sotto__rules *r, const int32_t *sampled, int n, bool prefixed,
                         float *logits);

/* CTranslate2 4.8's RepetitionPenalty and NoRepeatNgram (decoding_utils.cc), which run
 * before every other filter, on LOGITS [n_vocab] of a sequence whose generated tokens
 * (CTranslate2's alive_seq: after the prompt, start sequence and prefix) are GEN[0 .. n):
 * each distinct token x of GEN gets x < 0 ? x * penalty : x / penalty; a token that would
 * complete an n-gram already in GEN (its last n - 1 tokens seen before, then that token)
 * gets -inf. Nothing when N is 0 or both are off. */
void sotto__penalties_apply(const sotto__rules *r, const int32_t *gen, int n, float *logits);

/* log(sum exp X[i]) over N values, in double; -inf when all are -inf. */
double sotto__logsumexp(sotto__backend *be, const float *x, int n);

/* The same for a row whose row_max M is known (NAN: not known, found here). */
double sotto__logsumexp_max(sotto__backend *be, const float *x, int n, float m);

/* W[i] = e^((X[i] - max X) SCALE) (float, about 2 ulp; 0 below e^-87) for i < N, and
 * their sum in double (sampling at temperature 1 / SCALE > 0); all 0 when every X is -inf. */
double sotto__exp_weights(sotto__backend *be, const float *x, int n, float scale, float *w);

/* The index of the largest of X[0 .. n), the first of equal maxima (0 when all are -inf
 * or N is 0). */
int sotto__argmax(sotto__backend *be, const float *x, int n);

/* The same for a row whose row_max M is known (NAN: not known, found here). */
int sotto__argmax_max(sotto__backend *be, const float *x, int n, float m);

/* softmax(X)[i] in double. */
double sotto__softmax_at(sotto__backend *be, const float *x, int n, int i);

#endif
