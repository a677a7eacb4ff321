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

/* What goes before the first segment (vtt's header, tsv's column names), one segment as
 * it is decoded (INDEX counts the segments written so far, for srt), and what ends the
 * file; json is written whole by out_json. Segments with no text are left out of srt
 * and vtt (a cue needs text for their parsers). */
void out_begin(FILE *f, int format);
void out_segment(FILE *f, int format, const sotto_segment *s, int *index);
void out_json(FILE *f, const sotto_result *r);
/* S as a JSON string the way out_json writes strings (Python's json.dump, ensure_ascii). */
void out_json_string(FILE *f, const char *s);

/* FORMAT of R into PATH through PATH.tmp and a rename: never a half-written file. */
bool out_write_file(const char *path, int format, const sotto_result *r);

/* seconds as openai's format_timestamp: [HH:]MM:SS.mmm, hours when ALWAYS_HOURS or
 * nonzero, MARKER before the milliseconds. */
void out_timestamp(char *buf, size_t n, double seconds, bool always_hours, char marker);

#endif
