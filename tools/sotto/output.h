/* output.h — the transcript writers of `sotto transcribe` and `sotto serve`, one table of
 * formats {name, ext, mime, begin, segment, end}: txt, srt, vtt, tsv and json
 * (openai-whisper's verbose_json), as openai-whisper's utils.py writes them. */
#ifndef SOTTO_OUTPUT_H
#define SOTTO_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "sotto.h"

/* How srt and vtt cut cues (whisper.cpp's -ml / -sow, from word times): with MAX_LEN > 0
 * a segment's words are packed into cues of at most MAX_LEN characters (UTF-8 characters,
 * leading spaces counted), a word that does not fit starting the next cue (with
 * SPLIT_ON_WORD only a word that starts with a space: never inside a word of a language
 * written without spaces); each cue from its first word's start to its last word's end.
 * Segments without words stay whole.
 *
 * openai-whisper's layout instead (its SubtitlesWriter.iterate_result, from word times) when
 * any of MAX_LINE_WIDTH, MAX_WORDS_PER_LINE (> 0) or HIGHLIGHT_WORDS is set: words are
 * joined into lines of at most MAX_LINE_WIDTH characters (a word longer than a line starts
 * one of its own), a cue per segment unless MAX_LINE_COUNT is set too, in which case cues of
 * at most MAX_LINE_COUNT lines run across segments and break at a pause of more than 3 s;
 * MAX_WORDS_PER_LINE cuts a segment into cues of that many words; HIGHLIGHT_WORDS writes a
 * cue for each word of a cue, the word underlined (<u>word</u>), and the cue's plain text
 * over the gaps between words. */
typedef struct out_lines {
    int max_len;
    int split_on_word;
    int max_line_width, max_line_count, max_words_per_line, highlight_words;
} out_lines;

/* A word of a cue being laid out in openai's way, its text at TEXT in out_state's pool. */
typedef struct out_word {
    double start, end;
    int text;
} out_word;

enum { OUT_CUE_WORDS = 512, OUT_CUE_TEXT = 16384 }; /* a cue past either is written then */

/* What one transcript's writer calls share: the options and the writer's own count. */
typedef struct out_state {
    out_lines lines;           /* srt, vtt: how cues are cut (max_len 0: a cue per segment) */
    int top_words;             /* json: OpenAI's top-level "words" ([{"word", "start", "end"}],
                                  each word without its leading space) after the last member,
                                  as sotto serve's verbose_json with word granularity has them */
    const char *task;          /* json: non-NULL for OpenAI's verbose_json, "transcribe" or
                                  "translate": a "task" member first, and the language by
                                  openai-whisper's name ("english") where openai-whisper's
                                  result has its code */
    int index;                 /* srt: the cues written so far */
    /* openai's layout: the cue being built and where its lines stand */
    out_word cue[OUT_CUE_WORDS];
    char pool[OUT_CUE_TEXT];
    int n_cue, pool_used, line_len, line_count;
    int have_last;             /* LAST holds the last word's start */
    double last;
} out_state;

/* One output format. BEGIN goes before the first segment (vtt's header, tsv's column
 * names), SEGMENT writes one segment as it is decoded (false: out of memory), END what
 * the whole result adds (json is written there, whole). Segments with no text are left
 * out of srt and vtt (a cue needs text for their parsers). */
typedef struct out_writer {
    const char *name;          /* what -f calls it */
    const char *ext;           /* of DIR/NAME.EXT */
    const char *mime;          /* the Content-Type sotto serve answers it with */
    void (*begin)(FILE *f, out_state *st);
    bool (*segment)(FILE *f, const sotto_segment *s, out_state *st);
    void (*end)(FILE *f, const sotto_result *r, out_state *st);
} out_writer;

/* The formats, in the order -f all writes them; a set of formats is a bit mask over it
 * (bit I: out_writers[I]). */
extern const out_writer out_writers[];
extern const int out_n_writers;

/* The writer -f calls NAME, or NULL. */
const out_writer *out_find(const char *name);
/* Whether W writes each segment as it is decoded (json writes the whole result at the end). */
bool out_writes_segments(const out_writer *w);
/* The set NAME stands for: one format, or every one for "all"; 0 for an unknown name. */
unsigned out_format(const char *name);
/* The names of every format, "txt, srt, ...", for messages and help. */
const char *out_names(void);

/* R whole into F as W writes it; false on a write error or out of memory. */
bool out_write(FILE *f, const out_writer *w, const sotto_result *r, out_state *st);
/* Where an output named *PATH goes: 0, a regular file or a new one (written through
 * out_temp_open and a rename); 1, what is written straight into (a device, a FIFO,
 * /dev/stdout); -1 with errno set, a directory or a dangling link. A symbolic link's
 * target (written into REAL, room for PATH_MAX bytes) replaces *PATH, so the link stays a
 * link. */
int out_target(const char **path, char *real);

/* R as W writes it (srt and vtt cut as LINES says; NULL: a cue per segment) into PATH:
 * a regular file (or a new one) through out_temp_open and a rename, never a half-written file;
 * a symbolic link's target the same way (the link stays); anything else (a device, a
 * FIFO, /dev/stdout) written straight into. False with errno set on failure. */
bool out_write_file(const char *path, const out_writer *w, const sotto_result *r, const out_lines *lines);

/* The name of the temporary file a regular file PATH is written through, into TMP [N]:
 * PATH.tmp.PID (another process writing PATH has its own; never a file of the user's
 * named PATH.tmp), or DIR/.sotto.tmp.PID where that name's last part would pass NAME_MAX
 * (255 bytes: a file name that fits had been refused for its temporary's), the library's
 * rule for sotto_model_save_gguf. False (ENAMETOOLONG) when it does not fit N. */
bool out_temp_name(const char *path, char *tmp, size_t n);

/* The temporary file out_temp_name names (then renamed over PATH), created exclusively
 * (O_EXCL | O_NOFOLLOW: a file or link already of that name is removed, never followed or
 * truncated, so a link planted in a shared directory cannot redirect the write) and
 * opened for writing in MODE ("w", "wb") with PATH's permissions when it exists (else
 * 0666 under the umask). NULL with errno set. */
FILE *out_temp_open(const char *path, char *tmp, size_t n, const char *mode);

/* The json writer's END (output_json.c): the whole result. */
void out_json_end(FILE *f, const sotto_result *r, out_state *st);

/* S as a JSON string the way the json writer writes strings (Python's json.dump, ensure_ascii). */
void out_json_string(FILE *f, const char *s);
/* X as the json writer writes numbers (Python's repr of a float). */
void out_json_number(FILE *f, double x);

/* seconds as openai's format_timestamp: [HH:]MM:SS.mmm, hours when ALWAYS_HOURS or
 * nonzero, MARKER before the milliseconds. */
void out_timestamp(char *buf, size_t n, double seconds, bool always_hours, char marker);

#endif
