/* tokenizer.h — internals of the BPE encoder (tokenizer.c), exposed for the unit tests:
 * UTF-8 validation, the character classes and the regex pre-split. */
#ifndef SOTTO_TOKENIZER_H
#define SOTTO_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "unicode_tables.h"

/* Class of code point CP for the pre-split regex: SOTTO__UC_LETTER (\p{L}),
 * SOTTO__UC_NUMBER (\p{N}), SOTTO__UC_SPACE (\s, White_Space) or SOTTO__UC_OTHER. */
int sotto__uc_class(uint32_t cp);

/* Offset of the first byte of S[0..N) that does not start a well-formed UTF-8 sequence
 * (stray or missing continuation byte, overlong form, surrogate, above U+10FFFF, cut off
 * at the end), or N when all of it is valid. */
size_t sotto__utf8_check(const uint8_t *s, size_t n);

/* End of the pre-split piece that starts at POS < N in valid UTF-8 S: the leftmost-first
 * match at POS of 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * (openai-whisper tokenizer.py). Pieces tile the text: the next one starts at the end. */
size_t sotto__pretok_next(const uint8_t *s, size_t n, size_t pos);

#endif
