/* text.h — token ids to text as the reference's tokenizer.decode makes it, and the
 * compression ratio the temperature fallback tests. */
#ifndef SOTTO_TEXT_H
#define SOTTO_TEXT_H

#include "../model/model.h"

/* The UTF-8 bytes of IDS into a new string (free with free): text tokens always, the
 * special tokens between <|endoftext|> and the timestamps (their literal text) when
 * SPECIALS, timestamps never. NULL when out of memory. */
char *sotto__detok(const sotto_model *m, const int32_t *ids, int n, bool specials);

/* TEXT (N bytes) with leading and trailing ASCII whitespace cut: *START, *LEN. */
void sotto__strip(const char *text, size_t n, size_t *start, size_t *len);

/* len(text) / len(zlib.compress(text)) (openai/whisper utils.py compression_ratio);
 * 0 for an empty text or when zlib fails. */
double sotto__compression_ratio(const char *text, size_t n);

#endif
