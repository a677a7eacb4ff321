/* align.h — the numeric half of openai-whisper's find_alignment (timing.py, 20250625):
 * the alignment heads' cross-attention scores of one token sequence to a DTW path through
 * the token/frame cost matrix, and the frame at which the path reaches each token.
 * Pure functions over host arrays; timing.c runs the decoder and reads the scores. */
#ifndef SOTTO_ALIGN_H
#define SOTTO_ALIGN_H

#include <stdbool.h>
#include <stddef.h>

/* X [rows, n] in place: median filter of odd WIDTH along each row, reflect-padded (as
 * timing.py median_filter: unchanged when n <= WIDTH / 2; NaN sorts above every number,
 * as torch.sort). */
void sotto__median_filter(float *x, int rows, int n, int width);

/* DTW over the cost matrix X [N, M] (timing.py dtw_cpu: cumulative costs in float32,
 * ties broken as it breaks them, then backtrace). Writes the path's points, first to
 * last, into TI and TJ (each N + M entries of room) and returns how many; -1 when out
 * of memory. */
int sotto__dtw(const double *x, int N, int M, int *ti, int *tj);

/* The alignment pipeline: QK [H, T, S] holds the raw scores of H heads for T tokens over
 * S >= M frames (row stride S); only frames [0, M) are used. Softmax over those frames,
 * standardised over the tokens per head and frame (population std), median filter of
 * WIDTH, mean over the heads, and DTW over minus rows [ROW0, ROW0 + N) of it. JUMP [N]
 * gets, for each of those rows in order, the frame where the path first reaches it.
 * Returns false when out of memory, or when the path does not visit every row once in
 * order (only possible with non-finite scores). QK is overwritten. */
bool sotto__align_jumps(float *qk, int H, int T, int S, int M, int width, int row0, int N, int *jump);

#endif
