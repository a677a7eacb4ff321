/* backend.c — what every backend shares: the cross-attention K/V layout's sizes and the
 * import of the model's weight views through a backend's table. */
#include "backend.h"

#include "quant.h"

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
