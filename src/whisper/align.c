/* align.c — cross-attention scores to the DTW path of word timestamps, step for step as
 * openai/whisper timing.py find_alignment (20250625) computes it: float32 softmax and
 * standardisation (torch on CPU accumulates the mean and variance in double), a median
 * filter of width 7, the mean over the heads, dtw_cpu with its float32 cost matrix. */
#include "align.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* a < b with NaN above every number (torch.sort's order) */
static bool less(float a, float b)
{
    if (isnan(a)) return false;
    return isnan(b) || a < b;
}

void sotto__median_filter(float *x, int rows, int n, int width)
{
    const int pad = width / 2;
    if (n <= pad || width < 1 || width > 63) return;
    float win[64], *row = NULL;
    float *src = malloc((size_t)n * sizeof *src);
    if (!src) return;
    for (int r = 0; r < rows; r++) {
        row = x + (size_t)r * n;
        memcpy(src, row, (size_t)n * sizeof *src);
        for (int c = 0; c < n; c++) {
            for (int k = 0; k < width; k++) {
                int i = c + k - pad;
                if (i < 0) i = -i; /* reflect: -1 -> 1 */
                if (i >= n) i = 2 * (n - 1) - i;
                win[k] = src[i];
            }
            for (int a = 1; a < width; a++) /* insertion sort, stable */
                for (int b = a; b > 0 && less(win[b], win[b - 1]); b--) {
                    float t = win[b];
                    win[b] = win[b - 1], win[b - 1] = t;
                }
            row[c] = win[pad];
        }
    }
    free(src);
}

int sotto__dtw(const double *x, int N, int M, int *ti, int *tj)
{
    const size_t W = (size_t)M + 1;
    float *cost = malloc((size_t)(N + 1) * W * sizeof *cost);
    int8_t *trace = malloc((size_t)(N + 1) * W);
    if (!cost || !trace) {
        free(cost), free(trace);
        return -1;
    }
    for (size_t k = 0; k < (size_t)(N + 1) * W; k++) cost[k] = INFINITY, trace[k] = -1;
    cost[0] = 0;
    for (int j = 1; j <= M; j++)
        for (int i = 1; i <= N; i++) {
            float c0 = cost[(i - 1) * W + j - 1], c1 = cost[(i - 1) * W + j], c2 = cost[i * W + j - 1], c;
            int8_t t;
            if (c0 < c1 && c0 < c2)
                c = c0, t = 0;
            else if (c1 < c0 && c1 < c2)
                c = c1, t = 1;
            else
                c = c2, t = 2;
            cost[i * W + j] = (float)(x[(size_t)(i - 1) * M + j - 1] + (double)c); /* a float32 array */
            trace[i * W + j] = t;
        }
    for (int j = 0; j <= M; j++) trace[j] = 2;
    for (int i = 0; i <= N; i++) trace[i * W] = 1;
    int n = 0, i = N, j = M;
    while (i > 0 || j > 0) {
        ti[n] = i - 1, tj[n] = j - 1, n++;
        int8_t t = trace[i * W + j];
        if (t == 0)
            i--, j--;
        else if (t == 1)
            i--;
        else
            j--;
    }
    free(cost), free(trace);
    for (int a = 0, b = n - 1; a < b; a++, b--) { /* first to last */
        int t = ti[a];
        ti[a] = ti[b], ti[b] = t;
        t = tj[a], tj[a] = tj[b], tj[b] = t;
    }
    return n;
}

/* Softmax over each row's first M values (float32, as torch's), rows S apart. */
static void softmax_rows(float *qk, int rows, int S, int M)
{
    for (int r = 0; r < rows; r++) {
        float *p = qk + (size_t)r * S, mx = -INFINITY;
        for (int s = 0; s < M; s++) mx = p[s] > mx ? p[s] : mx;
        double sum = 0; /* torch sums in vector lanes; a plain float sum would drop the small terms */
        for (int s = 0; s < M; s++) sum += p[s] = expf(p[s] - mx);
        const float inv = (float)(1.0 / sum); /* torch's softmax multiplies by the reciprocal */
        for (int s = 0; s < M; s++) p[s] *= inv;
    }
}

/* Each head's values standardised over its T tokens, per frame: (w - mean) / std. */
static void standardise(float *qk, int H, int T, int S, int M)
{
    for (int h = 0; h < H; h++) {
        float *w = qk + (size_t)h * T * S;
        for (int s = 0; s < M; s++) {
            double sum = 0, sq = 0;
            for (int t = 0; t < T; t++) sum += w[(size_t)t * S + s];
            double mean = sum / T;
            for (int t = 0; t < T; t++) {
                double e = w[(size_t)t * S + s] - mean;
                sq += e * e;
            }
            float m = (float)mean, sd = (float)sqrt(sq / T);
            for (int t = 0; t < T; t++) w[(size_t)t * S + s] = (w[(size_t)t * S + s] - m) / sd;
        }
    }
}

bool sotto__align_jumps(float *qk, int H, int T, int S, int M, int width, int row0, int N, int *jump)
{
    if (H < 1 || M < 1 || N < 1 || row0 < 0 || row0 + N > T) return false;
    softmax_rows(qk, H * T, S, M);
    standardise(qk, H, T, S, M);
    /* the filter runs over the frames actually used: compact the rows to width M */
    float *w = malloc((size_t)H * T * M * sizeof *w);
    double *x = malloc((size_t)N * M * sizeof *x);
    int *ti = malloc((size_t)(N + M) * sizeof *ti), *tj = malloc((size_t)(N + M) * sizeof *tj);
    bool ok = w && x && ti && tj;
    if (ok) {
        for (size_t r = 0; r < (size_t)H * T; r++) memcpy(w + r * M, qk + r * S, (size_t)M * sizeof *w);
        sotto__median_filter(w, H * T, M, width);
        for (int n = 0; n < N; n++)
            for (int s = 0; s < M; s++) {
                float sum = 0;
                for (int h = 0; h < H; h++) sum += w[((size_t)h * T + row0 + n) * M + s];
                x[(size_t)n * M + s] = -(double)(sum / (float)H);
            }
        int len = sotto__dtw(x, N, M, ti, tj), k = 0;
        ok = len > 0;
        for (int p = 0; ok && p < len; p++)
            if (p == 0 || ti[p] != ti[p - 1]) {
                if (k >= N || ti[p] != k) ok = false;
                else jump[k++] = tj[p];
            }
        ok = ok && k == N;
    }
    free(w), free(x), free(ti), free(tj);
    return ok;
}
