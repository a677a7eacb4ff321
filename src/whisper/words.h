/* words.h — the text half of openai-whisper's word timestamps (tokenizer.py
 * split_to_word_tokens, timing.py merge_punctuations): text tokens grouped into words as
 * the reference groups them, and punctuation merged into its neighbours. Strings are
 * compared the way Python's `in` compares them (as substrings). */
#ifndef SOTTO_WORDS_H
#define SOTTO_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/model.h"

/* One word of an alignment (timing.py WordTiming). */
typedef struct sotto__wtime {
    char *word;                /* UTF-8 (malloc), as tiktoken decodes it: bad bytes as U+FFFD;
                                  "" once merged into a neighbour */
    int n_tokens;              /* its tokens, consecutive in the text */
    double start, end;         /* seconds from the window's start */
    double probability;
} sotto__wtime;

/* The UTF-8 of BYTES[0..N) decoded as Python's bytes.decode("utf-8", "replace") does
 * (each maximal ill-formed subpart one U+FFFD) into code points CP (N of room); returns
 * their number. */
int sotto__utf8_decode(const unsigned char *bytes, size_t n, uint32_t *cp);

/* The tokens TOK[0..N) (find_alignment passes the text tokens and <|endoftext|>) as words
 * (split_tokens_on_spaces, or split_tokens_on_unicode when UNICODE_ONLY: for zh, ja, th,
 * lo, my, yue). *OUT (free with sotto__words_free) gets them, times 0; returns their
 * number, -1 when out of memory. */
int sotto__split_words(const sotto_model *m, const int32_t *tok, int n, bool unicode_only, sotto__wtime **out);

/* merge_punctuations: a word (with its leading space) found in PREPENDED joins the word
 * after it, one found in APPENDED the word before it (the emptied keep their place with
 * word "" and no tokens). False when out of memory (the words are then unchanged or
 * partly merged, all still valid). */
bool sotto__merge_punctuations(sotto__wtime *w, int n, const char *prepended, const char *appended);

/* Python's `needle in hay` for the UTF-8 strings (true for an empty NEEDLE). */
bool sotto__py_in(const char *needle, size_t n_needle, const char *hay);

void sotto__words_free(sotto__wtime *w, int n);

#endif
