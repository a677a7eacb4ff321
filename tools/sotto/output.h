/* output.h — the transcript writers of `sotto transcribe`: txt, srt, vtt, tsv and json
 * (openai-whisper's verbose_json), as openai-whisper's utils.py writes them. */
#ifndef SOTTO_OUTPUT_H
#define SOTTO_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "sotto.h"

enum { OUT_TXT = 1, OUT_SRT = 2, OUT_VTT = 4, OUT_TSV = 8, OUT_JSON = 16, OUT_ALL = 31 };

/* The format bit of NAME ("txt", ..., "all": every one); 0 for an unknown name. */
int out_format(const char *name);
/* The file extension of a single format bit. */
const char *out_ext(int format);

/* How srt and vtt cut cues (whisper.cpp's -ml / -sow, from word times): with MAX_LEN > 0
 * a segment's words are packed into cues of at most MAX_LEN characters (UTF-8 characters,
 * leading spaces counted), a word that does not fit starting the next cue (with
 * SPLIT_ON_WORD only a word that starts with a space: never inside a word of a language
 * written without spaces); each cue from its first word's start to its last word's end.
 * Segments without words stay whole. */
typedef struct out_lines {
    int max_len;
    int split_on_word;
} out_lines;

/* What goes before the first segment (vtt's header, tsv's column names), one segment as
 * it is decoded (INDEX counts the segments written so far, for srt), and what ends the
 * file; json is written whole by out_json. Segments with no text are left out of srt
 * and vtt (a cue needs text for their parsers). */
void out_begin(FILE *f, int format);
bool out_segment(FILE *f, int format, const sotto_segment *s, const out_lines *lines, int *index); /* false: out of memory */
void out_json(FILE *f, const sotto_result *r);
/* S as a JSON string the way out_json writes strings (Python's json.dump, ensure_ascii). */
void out_json_string(FILE *f, const char *s);
/* X as out_json writes numbers (Python's repr of a float). */
void out_json_number(FILE *f, double x);

/* FORMAT of R (srt and vtt cut as LINES says; NULL: a cue per segment) into PATH through PATH.tmp and a rename: never a half-written file. */
bool out_write_file(const char *path, int format, const sotto_result *r, const out_lines *lines);

/* seconds as openai's format_timestamp: [HH:]MM:SS.mmm, hours when ALWAYS_HOURS or
 * nonzero, MARKER before the milliseconds. */
void out_timestamp(char *buf, size_t n, double seconds, bool always_hours, char marker);

#endif
