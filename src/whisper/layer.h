/* layer.h — a transformer block's weights as a backend holds them (backend.h views of
 * model.h's sotto__layer), shared by the encoder and the decoder. */
#ifndef SOTTO_LAYER_H
#define SOTTO_LAYER_H

#include "../backend.h"
#include "../model/model.h"

typedef struct sotto__blayer {
    sotto__bnorm attn_ln;
    sotto__blinear q, k, v, o;     /* self-attention; k has no bias */
    sotto__bnorm cross_ln;         /* decoder only */
    sotto__blinear cq, ck, cv, co;
    sotto__bnorm mlp_ln;
    sotto__blinear fc1, fc2;       /* [4d, d], [d, 4d] */
} sotto__blayer;

/* Imports the block L of width D (with its cross-attention when CROSS) through BE. */
sotto_status sotto__import_layer(sotto__backend *be, const sotto__layer *L, int d, bool cross, sotto__blayer *out,
                                 sotto__err *err);

#endif
