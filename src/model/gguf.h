/* gguf.h — the GGUF format (ggml-org/ggml docs/gguf.md, v2/v3): value types, and the one
 * reader every loader of a .gguf file goes through (gguf.c: a key/value iterator and a
 * checked tensor table; the Whisper loader gguf_read.c, the Silero VAD's vad_model.c) and
 * the writer's constants (gguf_write.c). sotto's keys are in docs/FORMAT.md. */
#ifndef SOTTO_GGUF_H
#define SOTTO_GGUF_H

enum {
    SOTTO__GGUF_UINT8, SOTTO__GGUF_INT8, SOTTO__GGUF_UINT16, SOTTO__GGUF_INT16,
    SOTTO__GGUF_UINT32, SOTTO__GGUF_INT32, SOTTO__GGUF_FLOAT32, SOTTO__GGUF_BOOL,
    SOTTO__GGUF_STRING, SOTTO__GGUF_ARRAY, SOTTO__GGUF_UINT64, SOTTO__GGUF_INT64,
    SOTTO__GGUF_FLOAT64, SOTTO__GGUF_N_TYPES
};

#define SOTTO__GGUF_ALIGNMENT 32
#define SOTTO__GGUF_NAME_LEN 96 /* tensor names are shorter */

#include "../common.h"

/* Bytes of one value of each scalar type (0: string and array, which are not scalars). */
extern const size_t sotto__gguf_scalar_size[SOTTO__GGUF_N_TYPES];

/* A GGUF string (uint64 length, then the bytes, no terminator) at R: *S points into the
 * file, *LEN its length; false (with the message in R's error) when R runs out. */
bool sotto__gguf_rd_str(sotto__reader *r, const char **s, uint64_t *len, const char *what);

/* One key and its value, pointing into the file. */
typedef struct sotto__gguf_kv {
    const char *key;
    int key_len;               /* 1..65535 */
    uint32_t type;             /* SOTTO__GGUF_* */
    uint64_t u;                /* a scalar's bits, zero-extended (a float32's too) */
    const char *str;           /* STRING: the bytes, str_len of them */
    uint64_t str_len;
    uint32_t arr_type;         /* ARRAY of scalars or strings: element type, count, and the */
    uint64_t arr_n;            /*   offset in the file of the first element (a string: its */
    size_t arr_pos;            /*   length, then its bytes); every element is in the file */
} sotto__gguf_kv;

/* One entry of the tensor table, checked: a name of 1..SOTTO__GGUF_NAME_LEN - 1 bytes,
 * rank 1..4, every dimension 1..2^32, a type sotto stores (f32, f16, q8_0 with rows of
 * whole blocks), and DATA[0..bytes) aligned, inside the file and sharing no byte with
 * another tensor. */
typedef struct sotto__gguf_tensor {
    char name[SOTTO__GGUF_NAME_LEN];
    uint32_t n_dims;
    uint32_t type;             /* sotto_type */
    int64_t dims[4];           /* outermost first (GGUF lists the fastest first) */
    int64_t numel;
    uint64_t off;              /* from the start of the tensor data */
    size_t bytes;
    const uint8_t *data;
} sotto__gguf_tensor;

/* A GGUF file being read: the header, then the keys one at a time, then the table. */
typedef struct sotto__gguf {
    sotto__reader r;
    uint32_t version;
    uint64_t n_tensors, n_kv, kv_read;
    uint32_t alignment;        /* general.alignment, else 32 */
    sotto__gguf_tensor *t;     /* [n_tensors] after sotto__gguf_read_tensors */
} sotto__gguf;

/* Starts reading the N bytes at P (a file mapping, named PATH in messages): the magic
 * (else SOTTO_ERR_FORMAT "not a GGUF file (bad magic); " HINT), version 2 or 3 (else
 * SOTTO_ERR_UNSUPPORTED), and counts of at most MAX_TENSORS tensors and MAX_KV keys
 * ("implausible"). Free with sotto__gguf_free, whatever the status. */
sotto_status sotto__gguf_open(sotto__gguf *g, const uint8_t *p, size_t n, const char *path, uint64_t max_tensors,
                              uint64_t max_kv, const char *hint, sotto__err *err);

/* The next key and its value into *KV; *MORE false (and KV untouched) after the last.
 * Checks the key's length and the value's type, and that a string or an array (of
 * scalars or of strings; nested arrays are refused) lies inside the file.
 * general.alignment is taken here (a power of two up to 65536, a uint32). */
sotto_status sotto__gguf_next_kv(sotto__gguf *g, sotto__gguf_kv *kv, bool *more);

/* KV's key is KEY. */
bool sotto__gguf_key_is(const sotto__gguf_kv *kv, const char *key);

/* After the last key: reads and checks the tensor table into G->t (see
 * sotto__gguf_tensor), naming the tensor and the field on failure. */
sotto_status sotto__gguf_read_tensors(sotto__gguf *g);

void sotto__gguf_free(sotto__gguf *g);

#endif
