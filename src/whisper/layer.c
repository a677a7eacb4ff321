/* layer.c — importing a block's weights into a backend (layer.h). */
#include "layer.h"

sotto_status sotto__import_layer(sotto__backend *be, const sotto__layer *L, int d, bool cross, sotto__blayer *out,
                                 sotto__err *err)
{
    *out = (sotto__blayer){0};
    sotto_status st = sotto__import_norm(be, &L->attn_ln, d, &out->attn_ln, err);
    const sotto__linear *in[] = {&L->q, &L->k, &L->v, &L->o, &L->fc1, &L->fc2, &L->cq, &L->ck, &L->cv, &L->co};
    sotto__blinear *to[] = {&out->q, &out->k, &out->v, &out->o, &out->fc1, &out->fc2,
                            &out->cq, &out->ck, &out->cv, &out->co};
    int n = cross ? 10 : 6;
    for (int i = 0; i < n && !st; i++) st = sotto__import_linear(be, in[i], to[i], err);
    if (!st) st = sotto__import_norm(be, &L->mlp_ln, d, &out->mlp_ln, err);
    if (!st && cross) st = sotto__import_norm(be, &L->cross_ln, d, &out->cross_ln, err);
    return st;
}
