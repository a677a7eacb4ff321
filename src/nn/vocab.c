/* vocab.c — the greedy search's argmax over the vocabulary without every exact logit.
 *
 * The logits projection streams the whole tied embedding per token (51864 rows, 40 MB in
 * f16 for tiny). With a q8_0 proxy P of an f32/f16 embedding W (model.h), every row n is
 * scored from P with an upper bound U[n] >= z[n] on its exact logit; the exact logit L of
 * the best-scored row bounds the maximum from below, so only rows with U[n] >= L can hold
 * it, and only those are computed exactly, with the same kernels as the full projection
 * (kernels.h: a row's value does not depend on its neighbours). The argmax is therefore
 * the full projection's, ties included (the first of equal maxima).
 *
 * The bound: with A the activations X quantised to q8_0 (what the q8_0 kernel
 * multiplies), z[n] - A.P[n] = X.(W[n] - P[n]) + (X - A).P[n], so by Cauchy-Schwarz
 *   |z[n] - A.P[n]| <= |X| err[n] + |X - A| norm[n]
 * with err[n] >= |W[n] - P[n]| and norm[n] >= |P[n]| measured at load. U adds
 * 1.001 |X| err + (1.001 |X - A| + 0.001 |X|) (norm + err), whose extra exceeds the f32
 * rounding of both dot products (<= K 2^-24 |x| |w| each, K <= 4096: 2.4e-4 |X| |W|).
 * Anything non-finite falls back to the full projection. */
#include <math.h>
#include <stdlib.h>

#include "ops.h"

bool sotto__proxy_make(const sotto__kernels *k, const sotto__linear *e, sotto__block_q8_0 *q, float *dist,
                       float *len)
{
    const int K = e->n_in, nb = K / SOTTO__QK8_0;
    size_t row_bytes;
    sotto__type_bytes(e->type, K, &row_bytes);
    float *row = malloc((size_t)K * sizeof *row);
    if (!row) return false;
    for (int i = 0; i < e->n_out; i++) {
        sotto__block_q8_0 *qi = q + (size_t)i * nb;
        const char *src = (const char *)e->w + (size_t)i * row_bytes;
        const float *x = row;
        if (e->type == SOTTO_TYPE_F16) k->from_f16((const uint16_t *)src, row, (size_t)K);
        else x = (const float *)src;
        k->quantize_q8(x, qi, K);
        /* |x - d q| <= 0.5633 d per value (q = round(x / d) before d was rounded to f16) */
        double d2 = 0, n2 = 0;
        for (int b = 0; b < nb; b++) {
            double d = sotto__f16_to_f32(qi[b].d);
            int32_t q2 = 0;
            for (int j = 0; j < SOTTO__QK8_0; j++) q2 += qi[b].qs[j] * qi[b].qs[j];
            d2 += d * d, n2 += d * d * q2;
        }
        dist[i] = (float)(0.57 * sqrt(SOTTO__QK8_0 * d2) * (1 + 1e-6));
        len[i] = (float)(sqrt(n2) * (1 + 1e-6));
    }
    free(row);
    return true;
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

/* -1 where something is not finite (the caller then computes every logit). */
static int32_t proxy_argmax(const sotto__exec *ex, const float *X, const sotto__linear *l, const sotto__proxy *p,
                            const sotto__i32list *excl, int n_excl, float *U, int *n_exact)
{
    const int K = l->n_in, nb = K / SOTTO__QK8_0;
    const sotto__linear scores = {SOTTO_TYPE_Q8_0, p->q, NULL, p->n, K};
    sotto__op_linear(ex, X, 1, &scores, U); /* A.P, with A left in ex->qbuf */
    const sotto__block_q8_0 *qa = ex->qbuf;
    double x2 = 0, e2 = 0;
    for (int b = 0; b < nb; b++) {
        double d = sotto__f16_to_f32(qa[b].d);
        for (int i = 0; i < SOTTO__QK8_0; i++) {
            double x = X[SOTTO__QK8_0 * b + i], diff = x - d * qa[b].qs[i];
            x2 += x * x, e2 += diff * diff;
        }
    }
    const float alpha = (float)(1.001 * sqrt(x2)), beta = (float)(1.001 * sqrt(e2) + 0.001 * sqrt(x2));
    for (int n = 0; n < p->n; n++) U[n] += alpha * p->err[n] + beta * (p->norm[n] + p->err[n]);
    exclude(U, excl, n_excl);
    int32_t best = first_max(U, p->n);
    if (!isfinite(U[best])) return -1;
    float L = exact_row(ex->k, X, qa, l, best);
    if (!isfinite(L)) return -1;
    int32_t arg = best;
    float top = L;
    int count = 1;
    for (int32_t n = 0; n < p->n; n++) {
        if (n == best || !(U[n] >= L)) continue;
        float z = exact_row(ex->k, X, qa, l, n);
        count++;
        if (z > top || (z == top && n < arg)) top = z, arg = n;
    }
    if (n_exact) *n_exact = count;
    return arg;
}

int32_t sotto__op_argmax_logits(const sotto__exec *ex, const float *X, const sotto__linear *l,
                                const sotto__proxy *p, const sotto__i32list *excl, int n_excl, float *U,
                                int *n_exact)
{
    if (p && p->n && p->n == l->n_out && p->k == l->n_in && !l->b) {
        int32_t best = proxy_argmax(ex, X, l, p, excl, n_excl, U, n_exact);
        if (best >= 0) return best;
    }
    sotto__op_linear(ex, X, 1, l, U);
    exclude(U, excl, n_excl);
    if (n_exact) *n_exact = l->n_out;
    return first_max(U, l->n_out);
}
