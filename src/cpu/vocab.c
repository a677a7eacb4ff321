/* vocab.c — the greedy search's argmax over the vocabulary without every exact logit.
 *
 * The logits projection streams the whole tied embedding per token (51864 rows: 21 MB in
 * q8_0, 40 MB in f16 for tiny). With a 5-bit proxy P of the embedding W (model.h: 13.7 MB
 * for tiny), every row n is scored from P with an upper bound U[n] >= z[n] on its exact
 * logit; the exact logit L of the best-scored row bounds the maximum from below, so only
 * rows with U[n] >= L can hold it, and only those are computed exactly, with the same
 * kernels as the full projection (kernels.h: a row's value does not depend on its
 * neighbours). The argmax is therefore the full projection's, ties included (the first of
 * equal maxima). Where more than 1/8 of the rows stay in reach (flat distributions), one
 * pass over the table is cheaper and is taken.
 *
 * The bound: with A the activations X quantised to q8_0 (what the proxy scores multiply)
 * and x what the exact kernel multiplies (X for f32/f16 rows, A itself for q8_0 rows),
 * z[n] - A.P[n] = x.(W[n] - P[n]) + (x - A).P[n], so by Cauchy-Schwarz
 *   |z[n] - A.P[n]| <= |x| err[n] + |x - A| norm[n]
 * with err[n] >= |W[n] - P[n]| and norm[n] >= |P[n]| measured at load. U adds
 * 1.001 |x| err + (1.001 |x - A| + 0.001 |x|) (norm + err), whose extra exceeds the f32
 * rounding of both dot products (<= K 2^-24 |x| |w| each, K <= 4096: 2.4e-4 |x| |W|).
 * Anything non-finite falls back to the full projection. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

typedef struct make_job {
    const sotto__kernels *k;
    const sotto__linear *e;
    uint8_t *rows;
    float *err, *len;
    atomic_bool failed;
} make_job;

static void make_task(void *arg, int tid, int nt)
{
    make_job *j = arg;
    const int K = j->e->n_in, n = j->e->n_out, per = (n + nt - 1) / nt;
    int b = tid * per, e = b + per < n ? b + per : n;
    size_t row_bytes;
    sotto__type_bytes(j->e->type, K, &row_bytes);
    float *x = malloc((size_t)K * sizeof *x);
    if (!x) {
        atomic_store(&j->failed, true);
        return;
    }
    for (int i = b; i < e; i++) {
        const char *src = (const char *)j->e->w + (size_t)i * row_bytes;
        if (j->e->type == SOTTO_TYPE_F16) j->k->from_f16((const uint16_t *)src, x, (size_t)K);
        else sotto__dequantize(j->e->type, src, x, K);
        j->k->quantize_p5(x, K, j->rows + (size_t)i * SOTTO__PROXY_ROW(K), j->err + i, j->len + i);
    }
    free(x);
}

bool sotto__proxy_make(const sotto__exec *ex, const sotto__linear *e, uint8_t *rows, float *err, float *len)
{
    /* tens of milliseconds for tiny: spread over the caller's threads */
    make_job j = {ex->k, e, rows, err, len, false};
    sotto__parallel_for(ex->pool, make_task, &j);
    return !atomic_load(&j.failed);
}

enum { N_BLOCKS = 256 }; /* the rows fall into this many blocks, each with its largest bound */

typedef struct score_job {
    const sotto__kernels *k;
    const int8_t *a;
    const float *d, *g;
    const sotto__proxy *p;
    const sotto__i32list *excl;
    int n_excl, block_rows;
    float alpha, beta;
    float *u;
    float bmax[N_BLOCKS];
    float top[SOTTO__POOL_MAX];  /* per thread: its largest bound (first of equals) */
    int32_t arg[SOTTO__POOL_MAX];
    bool bad[SOTTO__POOL_MAX];   /* a NaN bound in its rows */
} score_job;

/* Thread TID's blocks [*b0, *b1) of N_BLOCKS. */
static void share(int tid, int nt, int *b0, int *b1)
{
    *b0 = (int)((long)N_BLOCKS * tid / nt), *b1 = (int)((long)N_BLOCKS * (tid + 1) / nt);
}

/* Scores plus bounds of a share of the rows, the excluded ids set to -inf, and the
 * share's largest bound, overall and per block. */
static void score_task(void *arg, int tid, int nt)
{
    score_job *j = arg;
    const sotto__proxy *p = j->p;
    int b0, b1;
    share(tid, nt, &b0, &b1);
    int r0 = b0 * j->block_rows < p->n ? b0 * j->block_rows : p->n;
    int r1 = b1 * j->block_rows < p->n ? b1 * j->block_rows : p->n;
    j->top[tid] = -INFINITY, j->arg[tid] = -1, j->bad[tid] = false;
    if (r0 < r1)
        j->k->scores_p5(j->a, j->d, j->g, p->rows + (size_t)r0 * SOTTO__PROXY_ROW(p->k), j->u + r0, r1 - r0, p->k);
    float *U = j->u;
    for (int n = r0; n < r1; n++) U[n] += j->alpha * p->err[n] + j->beta * (p->norm[n] + p->err[n]);
    for (int i = 0; i < j->n_excl; i++)
        for (int e = 0; e < j->excl[i].n; e++)
            if (j->excl[i].v[e] >= r0 && j->excl[i].v[e] < r1) U[j->excl[i].v[e]] = -INFINITY;
    bool bad = false;
    for (int b = b0; b < b1; b++) {
        int n0 = b * j->block_rows, n1 = n0 + j->block_rows < p->n ? n0 + j->block_rows : p->n;
        float m = -INFINITY;
        int at = n0; /* the first of the block's maxima */
        for (int n = n0; n < n1; n++) {
            bad |= U[n] != U[n];
            if (U[n] > m) m = U[n], at = n;
        }
        j->bmax[b] = m;
        if (n0 < n1 && (j->arg[tid] < 0 || m > j->top[tid])) j->top[tid] = m, j->arg[tid] = at;
    }
    j->bad[tid] = bad;
}

/* The exact logit of row n as sotto__op_linear computes it (QA: X in q8_0 blocks). */
static float exact_row(const sotto__kernels *k, const float *X, const sotto__block_q8_0 *qa, const sotto__linear *l,
                       int n)
{
    const int K = l->n_in, nb = K / SOTTO__QK8_0;
    float z = 0;
    switch (l->type) {
    case SOTTO_TYPE_F32: k->matmul(X, K, (const float *)l->w + (size_t)n * K, K, NULL, &z, 1, 1, 1, K); break;
    case SOTTO_TYPE_F16: k->matmul_f16(X, K, (const uint16_t *)l->w + (size_t)n * K, K, NULL, &z, 1, 1, 1, K); break;
    case SOTTO_TYPE_Q8_0:
        k->matmul_q8(qa, nb, (const sotto__block_q8_0 *)l->w + (size_t)n * nb, nb, NULL, &z, 1, 1, 1, K);
        break;
    }
    return z;
}

typedef struct exact_job {
    const sotto__kernels *k;
    const float *X;
    const sotto__block_q8_0 *qa;
    const sotto__linear *l;
    const float *ids; /* candidate row ids (exact in f32) */
    float *z;
    int n;
} exact_job;

static void exact_task(void *arg, int tid, int nt)
{
    exact_job *j = arg;
    for (int i = (int)((long)j->n * tid / nt); i < (int)((long)j->n * (tid + 1) / nt); i++)
        j->z[i] = exact_row(j->k, j->X, j->qa, j->l, (int)j->ids[i]);
}

static void exclude(float *U, const sotto__i32list *excl, int n_excl)
{
    for (int i = 0; i < n_excl; i++)
        for (int j = 0; j < excl[i].n; j++) U[excl[i].v[j]] = -INFINITY;
}

static int32_t first_max(const float *U, int N)
{
    int32_t best = 0;
    float top = U[0];
    for (int32_t i = 1; i < N; i++)
        if (U[i] > top) top = U[i], best = i;
    return best;
}

/* -1 where something is not finite or too many rows are in reach (the caller then
 * computes every logit). */
static int32_t proxy_argmax(const sotto__exec *ex, const float *X, const sotto__linear *l, const sotto__proxy *p,
                            const sotto__i32list *excl, int n_excl, float *U, int *n_exact)
{
    const int K = l->n_in, nb = K / SOTTO__QK8_0;
    const bool q8 = l->type == SOTTO_TYPE_Q8_0;
    sotto__block_q8_0 *qa = ex->scratch;
    ex->k->quantize_q8(X, qa, K);
    int8_t a[SOTTO__PROXY_MAX_K];
    float d[SOTTO__PROXY_MAX_K / SOTTO__QK8_0], g[SOTTO__PROXY_MAX_K / SOTTO__QK8_0];
    double x2 = 0, e2 = 0; /* |x|^2 and |x - A|^2, x what the exact kernel multiplies */
    for (int b = 0; b < nb; b++) {
        double db = sotto__f16_to_f32(qa[b].d);
        int32_t sum = 0;
        for (int i = 0; i < SOTTO__QK8_0; i++) {
            int v = qa[b].qs[i];
            a[SOTTO__QK8_0 * b + i] = (int8_t)v;
            sum += v;
            double x = q8 ? db * v : X[SOTTO__QK8_0 * b + i], diff = x - db * v;
            x2 += x * x, e2 += diff * diff;
        }
        d[b] = (float)db;
        g[b] = -16.0f * d[b] * (float)sum; /* the kernel sums a (v + 16): take 16 sum a back */
    }
    score_job job = {.k = ex->k, .a = a, .d = d, .g = g, .p = p, .excl = excl, .n_excl = n_excl,
                     .block_rows = (p->n + N_BLOCKS - 1) / N_BLOCKS, .u = U,
                     .alpha = (float)(1.001 * sqrt(x2)), .beta = (float)(1.001 * sqrt(e2) + 0.001 * sqrt(x2))};
    int nt = sotto__pool_size(ex->pool);
    sotto__parallel_for(ex->pool, score_task, &job);
    int32_t best = -1;
    float top = -INFINITY;
    for (int t = 0; t < nt; t++) {
        if (job.bad[t]) return -1;
        if (job.arg[t] >= 0 && (best < 0 || job.top[t] > top)) top = job.top[t], best = job.arg[t];
    }
    if (best < 0 || !isfinite(top)) return -1;
    float L = exact_row(ex->k, X, qa, l, best);
    if (!isfinite(L)) return -1;
    /* the rows whose bound reaches L, their ids written over the front of U (a row's id
     * goes at or before its own place, after it was read); a flat distribution leaves
     * many in reach, and then one pass over the table is cheaper */
    const int cap = p->n / 8;
    int cnt = 0;
    for (int b = 0; b < N_BLOCKS; b++) {
        if (!(job.bmax[b] >= L)) continue;
        int n1 = (b + 1) * job.block_rows < p->n ? (b + 1) * job.block_rows : p->n;
        for (int n = b * job.block_rows; n < n1; n++) {
            if (n == best || !(U[n] >= L)) continue;
            if (cnt == cap) return -1;
            U[cnt++] = (float)n;
        }
    }
    exact_job ej = {ex->k, X, qa, l, U, U + cap, cnt};
    if (cnt >= 64) sotto__parallel_for(ex->pool, exact_task, &ej);
    else exact_task(&ej, 0, 1);
    int32_t arg = best;
    for (int i = 0; i < cnt; i++) {
        int32_t n = (int32_t)U[i];
        if (ej.z[i] > L || (ej.z[i] == L && n < arg)) L = ej.z[i], arg = n;
    }
    if (n_exact) *n_exact = cnt + 1;
    return arg;
}

int32_t sotto__op_argmax_logits(const sotto__exec *ex, const float *X, const sotto__linear *l,
                                const sotto__proxy *p, const sotto__i32list *excl, int n_excl, float *U,
                                int *n_exact)
{
    if (p && p->n && p->n == l->n_out && p->k == l->n_in && !l->b && l->n_in <= SOTTO__PROXY_MAX_K) {
        int32_t best = proxy_argmax(ex, X, l, p, excl, n_excl, U, n_exact);
        if (best >= 0) return best;
    }
    sotto__op_linear(ex, X, 1, l, U);
    exclude(U, excl, n_excl);
    if (n_exact) *n_exact = l->n_out;
    return first_max(U, l->n_out);
}
