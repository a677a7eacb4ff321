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

#endif
