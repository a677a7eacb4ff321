/* agree.h — LocalAgreement-2, the text half of a streaming session (whisper_streaming's
 * HypothesisBuffer, whisper_online.py): timed words of successive decodings, the prefix two
 * of them agree on, and the committed words a new decoding repeats at its start.
 * Pure functions over word lists; stream.c owns the audio and the decoding. */
#ifndef SOTTO_AGREE_H
#define SOTTO_AGREE_H

#include <stdbool.h>

/* One timed word on the stream's timeline. */
typedef struct sotto__tword {
    char *text;                /* UTF-8 (malloc) with its leading space, as the decoder gave it */
    double start, end;         /* seconds from the stream's first sample */
    double probability;
} sotto__tword;

/* A growable list of words; {0} is empty. */
typedef struct sotto__twords {
    sotto__tword *w;
    int n, cap;
} sotto__twords;

/* Appends a copy of TEXT with its times; false when out of memory (L unchanged). */
bool sotto__twords_push(sotto__twords *l, const char *text, double start, double end, double probability);
/* Moves the first N words of FROM to the end of TO (they leave FROM); false when out of
 * memory (both unchanged). */
bool sotto__twords_take(sotto__twords *to, sotto__twords *from, int n);
/* Drops the first N words. */
void sotto__twords_drop(sotto__twords *l, int n);
void sotto__twords_clear(sotto__twords *l);
/* Keeps the first N words of L (all when N >= its count), freeing the rest. */
void sotto__twords_keep(sotto__twords *l, int n);
void sotto__twords_free(sotto__twords *l);

/* True when A and B are the same word to the agreement: equal once case is folded (ASCII)
 * and everything but letters, digits and bytes >= 0x80 is skipped (" Hello," is "hello"). */
bool sotto__word_same(const char *a, const char *b);

/* The number of leading words on which A and B agree (sotto__word_same, pairwise). */
int sotto__agree_prefix(const sotto__twords *a, const sotto__twords *b);

/* How many leading words of NEW repeat the end of the committed words COMMITTED (the
 * longest run of 1..5 words, as whisper_streaming's insert): NEW's first I words equal
 * COMMITTED's last I, compared with sotto__word_same. 0 when none. */
int sotto__repeat_of_committed(const sotto__twords *committed, const sotto__twords *new_words);

/* The same for runs of LEAST..MOST words: the longest, or 0. */
int sotto__leading_repeat(const sotto__twords *committed, const sotto__twords *new_words, int least, int most);

enum { SOTTO__LOOP_MAX_WORDS = 8 };

/* Where W's first loop starts: the first of three consecutive equal runs of 2..8 words
 * (of four of one word), the earliest such; W->n when there is none. */
int sotto__loop_start(const sotto__twords *w);

#endif
