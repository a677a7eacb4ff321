/* model.h — the in-memory Whisper model every loader fills: hyper-parameters,
 * vocabulary, decoding lists, the named tensors as stored (openai-whisper state_dict
 * names and shapes), and the weights bound for the engine. */
#ifndef SOTTO_MODEL_H
#define SOTTO_MODEL_H

#include <pthread.h>

#include "../common.h"
#include "../quant.h"
#include "../tensor.h"

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

/* The number of values of T (the product of its dims). */
static inline int64_t sotto__tensor_numel(const sotto__tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->n_dims; i++) n *= t->dims[i];
    return n;
}

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
    const float *dec_pos;             /* [n_text_ctx, d] */
    sotto__layer dec[SOTTO__MAX_LAYERS];
    sotto__norm dec_ln;
} sotto__weights;

/* Data the engine derives from the weights once per model (the CPU backend's vocabulary
 * proxy), made on first use and freed with the model: sotto__model_derived. */
enum { SOTTO__MODEL_SLOTS = 4 };
typedef struct sotto__derived {
    void *data;
    void (*free_fn)(void *data);
} sotto__derived;

struct sotto_model {
    sotto_model_info info;
    int32_t n_audio_head_file, n_text_head_file; /* heads named by the file, 0 if none */

    /* vocabulary: token i is bytes vocab_bytes[vocab_off[i] .. vocab_off[i+1]) */
    char *vocab_bytes;
    uint32_t *vocab_off;       /* [n_vocab + 1] */
    char *merges;              /* "a b\n" lines in rank order (byte-level strings), or NULL */
    size_t merges_len;
    /* bytes -> id over the base vocabulary (ids below token_eot), for BPE encoding: open
     * addressing, slot = id + 1 (0: empty); built at load (token_index.c) */
    uint32_t *tok_index;       /* [tok_index_mask + 1] */
    uint32_t tok_index_mask;
    uint32_t tok_max_len;      /* longest base token, bytes */
    int32_t tok_missing_byte;  /* a byte value without a single-byte token, or -1 */

    sotto__i32list suppress;        /* suppressed at every step */
    sotto__i32list suppress_begin;  /* suppressed at the first step */
    sotto__i32list alignment_heads; /* (layer, head) pairs, flattened */

    sotto__tensor *tensors;
    int n_tensors, cap_tensors;

    sotto__weights w;

    void **owned;              /* heap blocks freed with the model */
    int n_owned, cap_owned;
    sotto__map map;            /* file mapping tensors may point into */

    pthread_mutex_t derived_mu; /* guards derived: the model is otherwise read-only */
    sotto__derived derived[SOTTO__MODEL_SLOTS];
};

/* A zeroed model for a loader to fill (free with sotto_model_free); NULL when out of memory. */
sotto_model *sotto__model_new(void);

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

/* The index of the first NaN or infinity among NUMEL values of TYPE at DATA (for q8_0 the
 * first value of a block whose scale is one), or -1. */
int64_t sotto__first_non_finite(const void *data, int64_t numel, sotto_type type);

/* Derives hyper-parameters from tensor shapes, special ids from the vocabulary,
 * validates every tensor against them and binds the engine weights. Loaders call it
 * last. */
sotto_status sotto__model_finish(sotto_model *m, sotto__err *err);

/* The data in SLOT (< SOTTO__MODEL_SLOTS) derived from M: made by MAKE(ARG) on the first
 * call for that slot (under the model's lock, so concurrent callers wait and share one
 * copy) and freed by FREE_FN with the model. NULL when MAKE failed (it is tried again on
 * the next call). */
void *sotto__model_derived(const sotto_model *m, int slot, void *(*make)(void *arg), void (*free_fn)(void *),
                           void *arg);

/* Hands the pages of [P, P + N) of the model's file mapping back to the page cache (they
 * are read again when touched): for weights the engine reads through a derived copy. */
void sotto__model_release_pages(const sotto_model *m, const void *p, size_t n);

/* The token index (token_index.c): SLOTS of it for a base vocabulary of N tokens (a power
 * of two), and m->tok_index built in TAB [slots] from the first N tokens of the vocabulary
 * (the ids below <|endoftext|>, 0 < N <= n_vocab). The caller (sotto__model_finish, or a
 * loader that needs the BPE before it, ggml_legacy.c) allocates TAB with the model. */
size_t sotto__token_index_slots(int32_t n);
void sotto__token_index_fill(sotto_model *m, int32_t n, uint32_t *tab, size_t slots);
/* The builder's: m->tok_index over the first N tokens, in a table the model owns. */
sotto_status sotto__model_token_index(sotto_model *m, int32_t n, sotto__err *err);

/* Id of the base-vocabulary token whose bytes are S[0..N), or -1 (also when N is 0). */
int32_t sotto__token_lookup(const sotto_model *m, const uint8_t *s, size_t n);

/* The one byte-level BPE's scratch, reused from piece to piece: {.m = MODEL} to start,
 * sotto__bpe_free at the end. */
typedef struct sotto__bpe_pair {
    uint32_t rank, start, end; /* a candidate merge of the part at START with the next, ending at END */
} sotto__bpe_pair;
typedef struct sotto__bpe {
    const sotto_model *m;
    uint32_t *next, *prev;     /* [cap + 1]: part boundaries; next[i] = end of part i */
    uint8_t *alive;            /* [cap]: a part starts at i */
    sotto__bpe_pair *heap;     /* [3 * cap]: n_heap used */
    size_t cap, n_heap;
} sotto__bpe;

/* tiktoken's byte-pair encoding of one pre-split piece S[0..N) over B->m's index: the
 * piece itself if it is a token, else from single bytes, merging again and again the
 * adjacent pair whose concatenation has the lowest rank (the leftmost on a tie) until no
 * adjacent concatenation is a token. Calls EMIT(ARG, id) per token in order; an id is -1
 * where a part is no token (a vocabulary without all 256 single bytes). false: out of
 * memory. */
bool sotto__bpe_piece(sotto__bpe *b, const uint8_t *s, size_t n, void (*emit)(void *, int32_t), void *arg);
void sotto__bpe_free(sotto__bpe *b);

/* The suppress lists from M's vocabulary (nonspeech.c), as openai-whisper's tokenizer and
 * decoder make them: SUPPRESS (non_speech_tokens and the special tokens, sorted) and BEGIN
 * (" " and <|endoftext|>), each malloc'd (the caller frees); the specials and the token
 * index must be set. */
sotto_status sotto__nonspeech(const sotto_model *m, sotto__i32list *suppress, sotto__i32list *begin, sotto__err *err);

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
