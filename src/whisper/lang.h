/* lang.h — spoken-language detection (openai/whisper decoding.py detect_language). */
#ifndef SOTTO_LANG_H
#define SOTTO_LANG_H

#include "context.h"

/* On the window last encoded on CTX: the language token *TOKEN with the highest
 * probability after <|startoftranscript|> and that probability, the softmax over the
 * language tokens alone. */
sotto_status sotto__detect_language(sotto_context *ctx, int32_t *token, double *prob);
/* sotto__detect_language through cache slot SLOT (sotto__decode_in). */
sotto_status sotto__detect_language_in(sotto_context *ctx, int slot, int32_t *token, double *prob);

/* On the window last encoded on CTX: PROBS[n_languages] the softmax over the language
 * tokens after <|startoftranscript|>, in token order. */
sotto_status sotto__language_probs(sotto_context *ctx, float *probs);

/* The code of language token TOKEN ("en" of <|en|>) into OUT (CAP bytes); false when
 * TOKEN is not one. */
bool sotto__language_code(const sotto_model *m, int32_t token, char *out, size_t cap);

#endif
