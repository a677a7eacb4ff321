/* batch.h — `sotto transcribe` over many files: directories and @lists expanded to audio
 * files, N files at once on N contexts of one model, outputs under --output-dir, files
 * whose outputs all exist skipped (they are written whole, through a rename), a summary. */
#ifndef SOTTO_BATCH_H
#define SOTTO_BATCH_H

#include <stdbool.h>

#include "output.h"
#include "sotto.h"

typedef struct batch_job {
    const sotto_model *model;
    sotto_context_params cp;     /* of each context; n_threads the whole run's, shared */
    bool share_threads;          /* n_threads divided among the contexts (no -t given) */
    sotto_transcribe_params tp;  /* the options, the VAD included; callbacks are batch's */
    unsigned formats;            /* bits over out_writers */
    out_lines lines;             /* --max-line-len, --split-on-word (srt, vtt) */
    const char *dir;             /* --output-dir (required) */
    int jobs;                    /* files at once (contexts), >= 1 */
    bool overwrite, quiet;
    const char *const *inputs;   /* files, directories, @lists */
    int n_inputs;
    int channel;                 /* --channel: 0 the mix, N, or CHANNEL_EACH (channels.h) */
} batch_job;

/* Whether the inputs ask for batch mode: -j given (JOBS > 0, -j 1 too), a directory or an
 * @list. */
bool batch_wanted(const char *const *inputs, int n_inputs, int jobs);

/* Runs the job: expands the inputs (a directory: the audio and video files under it by
 * extension, recursively, sorted, their outputs in the same subdirectories of DIR; @FILE:
 * one path per line, blank lines and #comments skipped, outputs as DIR/NAME.EXT), refuses
 * two inputs with one output name, skips inputs whose every output exists (unless
 * overwrite), transcribes the rest on JOBS threads, each with a context of its own, and
 * prints a line per file (unless quiet) and the summary on stderr. Returns the exit
 * status: 0, 1 (bad input list, or some file failed: the others are done), 2 (no
 * context, or an output could not be written: after a full disk, a quota or a read-only
 * file system the files left are not started), 130 (SIGINT) or 143 (SIGTERM: the same
 * stop after the files in progress, the same summary). */
int batch_transcribe(const batch_job *job);

#endif
