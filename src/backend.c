/* backend.c — what every backend shares: the cross-attention K/V layout's sizes, the
 * import of the model's weight views through a backend's table, and the 4-lane host row
 * math of backend_row.h (the slots row_max and row_exp_sum of a backend without wider
 * lanes, and the groups and tail a wider one finishes with). */
#include "backend.h"

#include <math.h>

#include "backend_row.h"
#include "quant.h"

/* The compiler's vector extension: four lanes (the SSE registers every x86-64 has, NEON
 * on AArch64: no ABI question). */
typedef float v4f __attribute__((vector_size(16), aligned(4)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16)));
SOTTO__DEFINE_EXP(exp4, v4f, v4i, )

float sotto__row_max_from(const float *x, int i, int n, float m)
{
    v4f v = (v4f){0} + m;
    for (; i + 4 <= n; i += 4) SOTTO__VMAX(v4i, v, *(const v4f *)(x + i));
    for (int l = 0; l < 4; l++) m = v[l] > m ? v[l] : m;
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    if (m == 0) /* which zero comes first */
        for (i = 0, m = -INFINITY; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

double sotto__row_exp_sum_from(const float *x, int i, int n, float m, float scale, float *w, double acc[4])
{
    v2d a0 = {acc[0], acc[1]}, a1 = {acc[2], acc[3]};
    for (; i + 4 <= n; i += 4) {
        v4f e = exp4((*(const v4f *)(x + i) - m) * scale);
        if (w) *(v4f *)(w + i) = e;
        a0 += __builtin_convertvector(__builtin_shufflevector(e, e, 0, 1), v2d);
        a1 += __builtin_convertvector(__builtin_shufflevector(e, e, 2, 3), v2d);
    }
    double s = 0;
    for (; i < n; i++) {
        double e = exp(((double)x[i] - m) * scale);
        if (w) w[i] = (float)e;
        s += e;
    }
    return s + (a0[0] + a0[1] + a1[0] + a1[1]);
}

float sotto__row_max(sotto__backend *be, const float *x, int n) { return sotto__row_max_from(x, 0, n, -INFINITY); }

double sotto__row_exp_sum(sotto__backend *be, const float *x, int n, float m, float scale, float *w)
{
    double acc[4] = {0};
    return sotto__row_exp_sum_from(x, 0, n, m, scale, w, acc);
}

void sotto__cross_layout(sotto_type type, int S, int n_head, int dh, size_t *k, size_t *v)
{
    int64_t d = (int64_t)n_head * dh, sv = type == SOTTO_TYPE_Q8_0 ? sotto__cross_padded(S) : S;
    *k = *v = 0;
    sotto__type_bytes(type, (int64_t)S * d, k);
    sotto__type_bytes(type, sv * d, v);
}

sotto_status sotto__import_f32(sotto__backend *be, const float *p, size_t n, sotto__buf *out, sotto__err *err)
{
    return be->ops->import(be, p, n * sizeof(float), out, err);
}

sotto_status sotto__import_linear(sotto__backend *be, const sotto__linear *l, sotto__blinear *out, sotto__err *err)
{
    size_t bytes;
    *out = (sotto__blinear){.type = l->type, .n_out = l->n_out, .n_in = l->n_in};
    if (!sotto__type_bytes(l->type, (int64_t)l->n_out * l->n_in, &bytes))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "import: %d x %d %s weights", l->n_out, l->n_in,
                           sotto__type_name(l->type));
    sotto_status st = be->ops->import(be, l->w, bytes, &out->w, err);
    if (!st && l->b) st = sotto__import_f32(be, l->b, (size_t)l->n_out, &out->b, err);
    return st;
}

sotto_status sotto__import_norm(sotto__backend *be, const sotto__norm *nrm, int n, sotto__bnorm *out,
                                sotto__err *err)
{
    sotto_status st = sotto__import_f32(be, nrm->g, (size_t)n, &out->g, err);
    if (!st) st = sotto__import_f32(be, nrm->b, (size_t)n, &out->b, err);
    return st;
}

void sotto__host_for(sotto__backend *be, void (*fn)(void *arg, int i), void *arg, int n)
{
    (void)be;
    for (int i = 0; i < n; i++) fn(arg, i);
}
