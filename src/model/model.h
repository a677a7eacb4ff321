/* model.h — the in-memory Whisper model every loader fills: hyper-parameters,
 * vocabulary, decoding lists, the named tensors as stored (openai-whisper state_dict
 * names and shapes), and the weights bound for the engine. */
#ifndef SOTTO_MODEL_H
#define SOTTO_MODEL_H

#include "../common.h"

#define SOTTO__MAX_LAYERS 64
#define SOTTO__NAME_LEN 96

/* One stored tensor. dims are in PyTorch (row-major, outermost first) order. */
typedef struct sotto__tensor {
    char name[SOTTO__NAME_LEN];
    sotto_type type;
    int n_dims;
    int64_t dims[4];
    const void *data;          /* into the file mapping or an owned buffer */
    size_t n_bytes;
} sotto__tensor;

/* A linear layer y = x W^T + b as the kernels consume it. W stays in its stored type
 * (f32, f16 or q8_0 rows of n_in values) and points into the file mapping. */
typedef struct sotto__linear {
    sotto_type type;
    const void *w;             /* [n_out, n_in] in TYPE */
    const float *b;            /* [n_out] or NULL */
    int n_out, n_in;
} sotto__linear;

/* A 5-bit copy of a matrix for the greedy search's argmax (nn/vocab.c), with bounds on
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

typedef struct sotto__norm {
    const float *g, *b;        /* [n_state] each */
} sotto__norm;

typedef struct sotto__layer {
    sotto__norm attn_ln;
    sotto__linear q, k, v, o;  /* self-attention; k has no bias */
    sotto__norm cross_ln;      /* decoder only */
    sotto__linear cq, ck, cv, co;
    sotto__norm mlp_ln;
    sotto__linear fc1, fc2;    /* [4d, d], [d, 4d] */
} sotto__layer;

typedef struct sotto__weights {
    const float *conv1_w, *conv1_b;   /* [d, n_mels, 3], [d] */
    const float *conv2_w, *conv2_b;   /* [d, d, 3], [d] */
    const float *enc_pos;             /* [n_audio_ctx, d] */
    sotto__layer enc[SOTTO__MAX_LAYERS];
    sotto__norm enc_ln;
    sotto__linear tok_emb;            /* [n_vocab, d]: the lookup table and, tied, the output
                                         projection (no bias), stored once */
    sotto__proxy tok_proxy;           /* 5-bit copy of tok_emb for the greedy search
                                         (n = 0: none), made at load */
    const float *dec_pos;             /* [n_text_ctx, d] */
    sotto__layer dec[SOTTO__MAX_LAYERS];
    sotto__norm dec_ln;
} sotto__weights;

typedef struct sotto__i32list {
    int32_t *v;
    int n;
} sotto__i32list;

struct sotto_model {
    sotto_model_info info;
    int32_t n_audio_head_file, n_text_head_file; /* heads named by the file, 0 if none */

    /* vocabulary: token i is bytes vocab_bytes[vocab_off[i] .. vocab_off[i+1]) */
    char *vocab_bytes;
    uint32_t *vocab_off;       /* [n_vocab + 1] */
    char *merges;              /* "a b\n" lines in rank order (byte-level strings), or NULL */
    size_t merges_len;

    sotto__i32list suppress;        /* suppressed at every step */
    sotto__i32list suppress_begin;  /* suppressed at the first step */
    sotto__i32list alignment_heads; /* (layer, head) pairs, flattened */

    sotto__tensor *tensors;
    int n_tensors, cap_tensors;

    sotto__weights w;

    void **owned;              /* heap blocks freed with the model */
    int n_owned, cap_owned;
    sotto__map map;            /* file mapping tensors may point into */
};

/* Allocates SIZE bytes owned by MODEL (freed with it); NULL on failure. */
void *sotto__model_alloc(sotto_model *m, size_t size);

/* Appends a tensor record; DATA must stay valid as long as the model. Checks that
 * n_bytes matches the dims and type. */
sotto_status sotto__model_add_tensor(sotto_model *m, const char *name, sotto_type type,
                                     int n_dims, const int64_t *dims, const void *data,
                                     size_t n_bytes, sotto__err *err);

const sotto__tensor *sotto__model_find(const sotto_model *m, const char *name);

/* Fails when two tensors whose data lies in [LO, HI) (the file mapping) share bytes: a
 * file's tensors must not overlap (views a loader cut from one fused record are made
 * after this check). */
sotto_status sotto__model_check_disjoint(const sotto_model *m, const uint8_t *lo, const uint8_t *hi,
                                         sotto__err *err);

/* Sets the vocabulary from N byte strings (copied). */
sotto_status sotto__model_set_vocab(sotto_model *m, int32_t n, const char *const *tok,
                                    const uint32_t *len, sotto__err *err);

/* Derives hyper-parameters from tensor shapes, special ids from the vocabulary,
 * validates every tensor against them and binds the engine weights. Loaders call it
 * last. */
sotto_status sotto__model_finish(sotto_model *m, sotto__err *err);

/* Bytes of one element row-major tensor of NUMEL values of TYPE; false on overflow or
 * a numel the type cannot hold (q8_0 needs multiples of 32). */
bool sotto__type_bytes(sotto_type type, int64_t numel, size_t *out);
const char *sotto__type_name(sotto_type type);

/* Loaders: each fills a zeroed model and calls sotto__model_finish. */
sotto_status sotto__load_gguf(sotto_model *m, const char *path, sotto__err *err);
sotto_status sotto__load_ct2(sotto_model *m, const char *dir, sotto__err *err);
sotto_status sotto__load_hf(sotto_model *m, const char *dir, sotto__err *err);
/* whisper.cpp's legacy ggml .bin (ggml_legacy.c); probe: true when PATH starts with its
 * magic (uint32 0x67676d6c). */
sotto_status sotto__load_ggml(sotto_model *m, const char *path, sotto__err *err);
bool sotto__ggml_probe(const char *path);

/* Reads a JSON array of integer ids (or of [layer, head] pairs when PAIRS) into LIST,
 * allocated on M; a NULL array leaves LIST empty. WHAT names the field in messages. */
struct sotto__json;
sotto_status sotto__json_ids(sotto_model *m, const struct sotto__json *arr, bool pairs,
                             sotto__i32list *list, const char *what, sotto__err *err);

/* GPT-2 byte-level strings: decode a byte-level UTF-8 string to raw bytes (into OUT,
 * at most CAP bytes); returns the byte count or -1 when a character is not one of the
 * 256 byte symbols. encode is the inverse (OUT needs 2 * n bytes). */
long sotto__bytelevel_decode(const char *s, size_t n, char *out, size_t cap);
size_t sotto__bytelevel_encode(const char *bytes, size_t n, char *out);

#endif
