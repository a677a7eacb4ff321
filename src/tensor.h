/* tensor.h — the weight views every layer shares, below the model, the kernels and the
 * engine: linear layers, layer norms, id lists and the vocabulary proxy, all as host
 * pointers with their shapes. Loaders (src/model/) fill them; ops (src/cpu/) read them. */
#ifndef SOTTO_TENSOR_H
#define SOTTO_TENSOR_H

#include <stdint.h>

#include "sotto.h"

/* A linear layer y = x W^T + b as the kernels consume it. W stays in its stored type
 * (f32, f16 or q8_0 rows of n_in values) and points into the file mapping. */
typedef struct sotto__linear {
    sotto_type type;
    const void *w;             /* [n_out, n_in] in TYPE */
    const float *b;            /* [n_out] or NULL */
    int n_out, n_in;
} sotto__linear;

typedef struct sotto__norm {
    const float *g, *b;        /* [n_state] each */
} sotto__norm;

typedef struct sotto__i32list {
    int32_t *v;
    int n;
} sotto__i32list;

/* A 5-bit copy of a matrix for the greedy search's argmax (cpu/vocab.c), with bounds on
 * how far each row is from the matrix row and how long it is. Per row of K values (K a
 * multiple of 128) the record holds K / 2 bytes of low nibbles, K / 8 bytes of high bits
 * and K / 32 f16 block scales: value ~= s * (v - 16), v = nibble + 16 * bit in 0..31.
 * Per 128 values, nibble byte j holds value j (low) and value 64 + j (high), and the 16
 * bit bytes hold value i's high bit at bit i % 8 of byte i / 8. */
typedef struct sotto__proxy {
    const uint8_t *rows;       /* [n][SOTTO__PROXY_ROW(k)] */
    const float *err;          /* [n] >= || row - proxy row ||_2 */
    const float *norm;         /* [n] >= || proxy row ||_2 */
    int n, k;                  /* n = 0: no proxy */
} sotto__proxy;
#define SOTTO__PROXY_ROW(k) ((size_t)(k) / 2 + (size_t)(k) / 8 + (size_t)(k) / 16)

#endif
