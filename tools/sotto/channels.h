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

/* A transcription as --channel asks: RESULT is the one to write (ONE's, or MERGE's). */
typedef struct channel_run {
    sotto_result *one;         /* the mix, or one channel */
    sotto_result *rs[CHANNEL_MAX]; /* --channel each: channel i + 1's */
    int n;
    channel_merge merge;       /* --channel each: RS merged */
    const sotto_result *result;
    char error[1024];          /* why it failed */
} channel_run;

/* PATH transcribed on CTX with TP as --channel CHANNEL says: the mix (0), channel N alone
 * (sotto_audio_source.channel), or with CHANNEL_EACH every channel of the file alone, in
 * order (a line on stderr for each unless QUIET; TP's on_warning dropped), merged by time
 * (channel_merge_results); a channel whose result is stopped (a callback) is the last,
 * and the merge is stopped too. The status (R->error says why: the file, the context's
 * message, or out of memory); R is freed with channel_run_free either way. */
sotto_status channel_transcribe(sotto_context *ctx, const char *path, int channel, const sotto_transcribe_params *tp,
                                bool quiet, channel_run *r);
void channel_run_free(channel_run *r);

#endif
