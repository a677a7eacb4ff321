/* melfile.h — the whole-file log-mel of long-form transcription, built from samples
 * pushed in chunks (melfile.c). */
#ifndef SOTTO_MELFILE_H
#define SOTTO_MELFILE_H

#include "../common.h"

typedef struct sotto__melfile sotto__melfile;

/* An empty file log-mel of N_MELS (80 or 128) bins; free with sotto__melfile_free. Errors
 * in sotto_last_error. */
sotto_status sotto__melfile_new(int n_mels, sotto__melfile **out);
void sotto__melfile_free(sotto__melfile *m);

/* Appends N 16 kHz samples; makes every frame whose samples are all known. */
sotto_status sotto__melfile_push(sotto__melfile *m, const float *x, int64_t n);

/* Ends the input: the remaining frames (the 30 s of zeros after the samples) and the
 * global maximum. No push after it. */
sotto_status sotto__melfile_finish(sotto__melfile *m);

/* After finish: frames of content (samples / 160), and samples pushed. */
int64_t sotto__melfile_content_frames(const sotto__melfile *m);
int64_t sotto__melfile_samples(const sotto__melfile *m);

/* After finish: OUT [n_mels, 3000] = frames SEEK .. SEEK + N of the scaled log-mel,
 * frames from N on zeros (openai pad_or_trim of the slice). Frames past the content
 * read the padding's values, as the reference's mel of the padded file has them. */
void sotto__melfile_window(const sotto__melfile *m, int64_t seek, int n, float *out);

#endif
