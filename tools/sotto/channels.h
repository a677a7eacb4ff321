/* channels.h — `sotto transcribe --channel`: which channel of the input is transcribed,
 * and for `--channel each` (whisper.cpp's -di case: a speaker per side of a stereo
 * recording) the transcripts of every channel merged by time into one result, each
 * segment's text labelled with its channel, for every output writer. */
#ifndef SOTTO_CHANNELS_H
#define SOTTO_CHANNELS_H

#include <stdbool.h>

#include "sotto.h"

enum { CHANNEL_EACH = -1, CHANNEL_MAX = 64 };

/* The OPT_CALL parser of --channel into an int: mix 0, left 1, right 2, N in 1..64, each
 * CHANNEL_EACH. */
bool channel_parse(void *field, const char *v, const char **what);

/* The label of channel C (1-based) of N: "left" and "right" for two, else "channel C". */
const char *channel_label(int c, int n, char *buf, size_t cap);

/* A result made of others' segments: the public struct first, then what it owns. */
typedef struct channel_merge {
    sotto_result pub;
    sotto_segment *seg;
    char **texts;
    char *text;
} channel_merge;

/* The segments of RS[0 .. n) (channel i + 1's result each) in one result M, ordered by
 * start time (a tie: the lower channel first), renumbered from 0, each text "[LABEL]"
 * + its text; M's text their texts joined, its language and duration the first's (the
 * longest duration). The segments' tokens and words stay RS's: M lives no longer than
 * they. False when out of memory (M freed). */
bool channel_merge_results(const sotto_result *const *rs, int n, channel_merge *m);
void channel_merge_free(channel_merge *m);

#endif
