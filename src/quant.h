/* quant.h — storage types of weights: their sizes, the q8_0 block layout (32 int8 values
 * sharing one f16 scale, as in GGUF) and conversion of rows between f32, f16 and q8_0. */
#ifndef SOTTO_QUANT_H
#define SOTTO_QUANT_H

#include <stdint.h>

#include "common.h"

#define SOTTO__QK8_0 32

typedef struct sotto__block_q8_0 {
    uint16_t d;                /* f16 scale: value = d * qs[i] */
    int8_t qs[SOTTO__QK8_0];
} sotto__block_q8_0;
_Static_assert(sizeof(sotto__block_q8_0) == 34, "q8_0 block must be 34 bytes, as in GGUF");

/* Bytes of one row-major tensor of NUMEL values of TYPE; false on overflow or a numel the
 * type cannot hold (q8_0 needs multiples of 32). */
bool sotto__type_bytes(sotto_type type, int64_t numel, size_t *out);
/* "f32", "f16", "q8_0" ("?" for anything else). */
const char *sotto__type_name(sotto_type type);

/* Converts N values stored as TYPE at SRC to f32 at DST. For q8_0, N is a multiple of 32. */
void sotto__dequantize(sotto_type type, const void *src, float *dst, int64_t n);

/* Converts N f32 values to TYPE at DST (N a multiple of 32 for q8_0): f16 rounds to
 * nearest even; q8_0 takes d = max|x| / 127 per block and q = round(x / d). */
void sotto__quantize(sotto_type type, const float *src, void *dst, int64_t n);

#endif
