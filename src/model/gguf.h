/* gguf.h — GGUF value types and the writer of sotto's native model file. Key names and
 * tensor layout are documented in docs/FORMAT.md. */
#ifndef SOTTO_GGUF_H
#define SOTTO_GGUF_H

enum {
    SOTTO__GGUF_UINT8, SOTTO__GGUF_INT8, SOTTO__GGUF_UINT16, SOTTO__GGUF_INT16,
    SOTTO__GGUF_UINT32, SOTTO__GGUF_INT32, SOTTO__GGUF_FLOAT32, SOTTO__GGUF_BOOL,
    SOTTO__GGUF_STRING, SOTTO__GGUF_ARRAY, SOTTO__GGUF_UINT64, SOTTO__GGUF_INT64,
    SOTTO__GGUF_FLOAT64, SOTTO__GGUF_N_TYPES
};

#define SOTTO__GGUF_ALIGNMENT 32

#include "../common.h"

/* Bytes of one value of each scalar type (0: string and array, which are not scalars). */
extern const size_t sotto__gguf_scalar_size[SOTTO__GGUF_N_TYPES];

/* A GGUF string (uint64 length, then the bytes, no terminator) at R: *S points into the
 * file, *LEN its length; false (with the message in R's error) when R runs out. */
bool sotto__gguf_rd_str(sotto__reader *r, const char **s, uint64_t *len, const char *what);

#endif
