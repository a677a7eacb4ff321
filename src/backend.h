/* backend.h — the seam between the engine (src/whisper/, src/vad/) and a compute backend
 * (a folder of src/: the CPU, Vulkan): buffer handles, memory, the ops the encoder,
 * decoder and search call, and the registry of backends (backend_reg.c) that a context
 * opens its device through. The engine never sees a kernel, a thread or a device; a
 * backend never sees a model or an engine struct. docs/ARCHITECTURE.md says how to add an
 * op or a backend. */
#ifndef SOTTO_BACKEND_H
#define SOTTO_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "tensor.h"

/* A place in a backend's memory: MEM is the backend's allocation (the CPU backend: its
 * host address), OFF bytes into it. MEM NULL is "no buffer" (an absent bias). */
typedef struct sotto__buf {
    void *mem;
    size_t off;
} sotto__buf;

static inline sotto__buf sotto__buf_at(sotto__buf b, size_t bytes)
{
    b.off += bytes;
    return b;
}
/* B advanced by N floats. */
static inline sotto__buf sotto__buf_f32(sotto__buf b, size_t n) { return sotto__buf_at(b, n * sizeof(float)); }

/* Weights as a backend holds them (sotto__import_*: for the CPU the model's own bytes). */
typedef struct sotto__blinear {
    sotto_type type;
    sotto__buf w;              /* [n_out, n_in] in TYPE */
    sotto__buf b;              /* [n_out] f32, or mem NULL */
    int n_out, n_in;
} sotto__blinear;

typedef struct sotto__bnorm {
    sotto__buf g, b;           /* [n_state] f32 each */
} sotto__bnorm;

/* The largest dimensions a context calls the ops with: a backend sizes its scratch from
 * them once, at creation. */
typedef struct sotto__limits {
    int max_rows;              /* M of a linear, layernorm or attention (queries) */
    int max_in;                /* widest n_in of a linear */
    int max_keys;              /* S of an attention, self or cross */
    int max_heads, max_dh;     /* of an attention */
    sotto_type cross_type;     /* storage of the cross-attention K/V */
    int cross_keys;            /* S of the cross-attention */
    int vocab_in;              /* n_in of the vocabulary projection */
} sotto__limits;

/* Cross-attention K/V storage (made by op cross_kv, read by op cross_attention). f32 and
 * f16: keys and values per head, [n_head][S][dh]. q8_0 (sotto__cross_q8_ok): keys per head
 * as rows of blocks [n_head][S][dh / 32]; values transposed, [n_head * dh][Sp / 32]
 * blocks over S padded with zeros to Sp = sotto__cross_padded(S). */
enum { SOTTO__CROSS_Q8_MAX_DH = 128, SOTTO__CROSS_Q8_MAX_S = 4096 };
static inline int sotto__cross_padded(int S) { return (S + 31) / 32 * 32; }
static inline bool sotto__cross_q8_ok(int S, int dh)
{
    return dh % 32 == 0 && dh <= SOTTO__CROSS_Q8_MAX_DH && S <= SOTTO__CROSS_Q8_MAX_S;
}
/* Bytes of one layer's keys *K and values *V in that layout. */
void sotto__cross_layout(sotto_type type, int S, int n_head, int dh, size_t *k, size_t *v);

typedef struct sotto__backend sotto__backend;

/* The op table: a name, then SOTTO__N_BACKEND_SLOTS function pointers and nothing else
 * (test_kernels checks that a backend leaves none empty). Shapes are row-major, ld* row strides in elements; every op may run
 * asynchronously until read, argmax or sync. Buffers passed to one op do not overlap
 * unless the op says so. */
typedef struct sotto__backend_ops {
    const char *name;
    void (*free)(sotto__backend *be);

    /* memory */
    /* BYTES of device memory, 64-byte aligned, contents undefined; freed with the backend */
    sotto_status (*alloc)(sotto__backend *be, size_t bytes, sotto__buf *out, sotto__err *err);
    /* weights: HOST[0..BYTES) made visible to ops (the CPU uses them in place: they
     * must outlive the backend; a GPU uploads them) */
    sotto_status (*import)(sotto__backend *be, const void *host, size_t bytes, sotto__buf *out, sotto__err *err);
    void (*write)(sotto__backend *be, sotto__buf dst, const void *src, size_t bytes);
    void (*zero)(sotto__backend *be, sotto__buf dst, size_t bytes);
    /* ROWS rows of ROW_BYTES from SRC to DST, rows DST_PITCH and SRC_PITCH bytes apart
     * (the regions do not overlap) */
    void (*copy2d)(sotto__backend *be, sotto__buf dst, size_t dst_pitch, sotto__buf src, size_t src_pitch,
                   size_t rows, size_t row_bytes);
    /* waits for the ops before it, then copies */
    void (*read)(sotto__backend *be, void *dst, sotto__buf src, size_t bytes);
    /* B's host address when the backend's memory is the host's (valid until the next
     * op writes it), else NULL: callers then read */
    const void *(*host)(sotto__backend *be, sotto__buf b);
    /* waits for every op; the first failure since the last sync, with its message */
    sotto_status (*sync)(sotto__backend *be, sotto__err *err);

    /* ops */
    /* Y[T_out, c_out] = conv1d(X, W [c_out, c_in, 3] f32, bias B [c_out]) with kernel 3,
     * padding 1 and STRIDE 1 or 2, T_out = T_in / STRIDE; X's element (channel c, time t)
     * at X[c * sc + t * st] (T_in times). PATCHES: T_out * c_in * 3 floats the caller
     * lends (im2col rows). */
    void (*conv3)(sotto__backend *be, sotto__buf X, size_t sc, size_t st, int c_in, int T_in, int stride,
                  sotto__buf W, sotto__buf B, int c_out, sotto__buf patches, sotto__buf Y);
    /* Y[M, n_out] = X[M, n_in] W^T + b; q8_0 weights multiply X quantised to q8_0 */
    void (*linear)(sotto__backend *be, sotto__buf X, int M, const sotto__blinear *l, sotto__buf Y);
    /* linear with each row's bits those of a product of exact_rows rows or more, at any M
     * (the batched decoder's rows; a backend with exact_rows 0 gives its linear) */
    void (*linear_rows)(sotto__backend *be, sotto__buf X, int M, const sotto__blinear *l, sotto__buf Y);
    /* Y[M, d] = LayerNorm(X[M, d]) g + b, eps 1e-5; Y may be X */
    void (*layernorm)(sotto__backend *be, sotto__buf X, int M, int d, const sotto__bnorm *n, sotto__buf Y);
    /* x = GELU(x) (exact, erf) over N values */
    void (*gelu)(sotto__backend *be, sotto__buf x, size_t n);
    /* x[i] += y[i], i < N */
    void (*add)(sotto__backend *be, sotto__buf x, sotto__buf y, size_t n);
    /* dst[c * ld_dst + r] = src[r * cols + c]: SRC [rows, cols] f32 transposed */
    void (*transpose)(sotto__backend *be, sotto__buf src, int rows, int cols, sotto__buf dst, size_t ld_dst);
    /* multi-head attention in f32: Q [T, n_head dh], KT keys transposed [n_head dh, S],
     * V [S, n_head dh], O [T, n_head dh]; CAUSAL_POS < 0: every query sees all S keys,
     * else query t sees keys 0 .. causal_pos + t */
    void (*attention)(sotto__backend *be, sotto__buf Q, size_t ldq, sotto__buf KT, size_t ldkt, sotto__buf V,
                      size_t ldv, sotto__buf O, size_t ldo, int T, int S, int n_head, int dh, int causal_pos);
    /* attention for N (1 .. SOTTO_MAX_SEQUENCES) decoder rows at position S - 1 each,
     * whose first P (< S) positions are one shared prefix: row r's keys and values are
     * those of positions 0 .. P-1 in KT0 / V0 and P .. S-1 in KT[r] / V[r] (each a cache
     * laid out as attention's KT and V, ldkt and ldv apart); every row sees all S. Q, O
     * [N, n_head dh]; U: N n_head dh floats of scratch the caller lends. The sums of
     * attention over one cache holding both parts (the CPU: its bits). */
    void (*attention_prefix)(sotto__backend *be, sotto__buf Q, size_t ldq, int n, sotto__buf KT0, sotto__buf V0,
                             const sotto__buf *KT, const sotto__buf *V, size_t ldkt, size_t ldv, int P, int S,
                             int n_head, int dh, sotto__buf O, size_t ldo, sotto__buf U);
    /* K, V (sotto__cross_layout in TYPE) from the projected rows KX, VX [S, n_head dh] */
    void (*cross_kv)(sotto__backend *be, sotto__buf Kx, sotto__buf Vx, int S, int n_head, int dh, sotto_type type,
                     sotto__buf K, sotto__buf V);
    /* attention of Q [T, n_head dh] over all S keys and values in TYPE made by cross_kv */
    void (*cross_attention)(sotto__backend *be, sotto__buf Q, size_t ldq, sotto_type type, sotto__buf K,
                            sotto__buf V, sotto__buf O, size_t ldo, int T, int S, int n_head, int dh);
    /* X[i] = EMB row TOKENS[i] (widened to f32) + POS[i], i < N; POS [N, n_in] f32 */
    void (*embed)(sotto__backend *be, const int32_t *tokens, int n, const sotto__blinear *emb, sotto__buf pos,
                  sotto__buf X);
    /* *OUT = the argmax over n of X[0..n_in) EMB[n]^T, as linear computes those logits,
     * the ids in the N_EXCL lists EXCL taken as -inf; the first of equal maxima, 0 when
     * every id is excluded. U: n_out floats of scratch. */
    sotto_status (*argmax)(sotto__backend *be, sotto__buf X, const sotto__blinear *emb, const sotto__i32list *excl,
                           int n_excl, sotto__buf U, int32_t *out);

    /* host row math: a row of logits the engine holds in host memory (read back), on the
     * host's fastest lanes (backend_row.h; sotto__row_max and sotto__row_exp_sum where the
     * backend has none of its own). Every backend gives the same bits. */
    /* the largest of X[0 .. n) (NaN skipped; -inf when none), a zero's sign as a scalar
     * loop gives it */
    float (*row_max)(sotto__backend *be, const float *x, int n);
    /* the sum over i < N of e^((X[i] - M) SCALE) in double (e^ to about 2 ulp, 0 below
     * e^-87), by index mod 4 in order, then the tail; W[i] gets each term as float when W
     * is not NULL */
    double (*row_exp_sum)(sotto__backend *be, const float *x, int n, float m, float scale, float *w);
    /* host work: FN(ARG, i) once for each i < N, on the backend's host threads where it has
     * several (the caller's thread among them; items at once and in any order), returning
     * when all are done: a search step's rows of logits, each on its own. FN touches only
     * its own item's data and calls no slot but the row math above (which every backend
     * makes safe to call from several threads at once). */
    void (*host_for)(sotto__backend *be, void (*fn)(void *arg, int i), void *arg, int n);
} sotto__backend_ops;
enum { SOTTO__N_BACKEND_SLOTS = 25 };
_Static_assert(sizeof(sotto__backend_ops) == sizeof(const char *) + SOTTO__N_BACKEND_SLOTS * sizeof(void (*)(void)),
               "a backend table is its name and SOTTO__N_BACKEND_SLOTS function pointers");

/* Every backend object starts with this. */
struct sotto__backend {
    const sotto__backend_ops *ops;
    int exact_rows;            /* from this many rows on (M >= exact_rows >= 1), linear gives each row the
                                  same bits whatever the rows beside it and their count; 0: never
                                  promised (batched decoding then has no bit-identity to keep) */
    bool host_memory;          /* its buffers are this process's memory: a context checks a batch's
                                  buffers against what the process may still allocate */
    bool few_logits;           /* a greedy step is faster as argmax over the text ids and linear
                                  over a few rows of the embedding than as every logit, and
                                  linear gives a row of W the same bits whatever rows of W are
                                  computed beside it (the CPU where the vocabulary is larger
                                  than its last cache: search.c's lazy steps) */
};

/* ---- the registry (backend_reg.c) ------------------------------------------------- */

enum { SOTTO__THREADS_MAX = 256 }; /* the most worker threads a backend runs */

/* Where a backend keeps what it derives from the weights once for all the backends made
 * on them (the CPU's vocabulary proxy): DERIVED returns the data in SLOT of OWNER, made
 * by MAKE(ARG) on the first call (callers of the same slot wait and share one copy) and
 * freed by FREE_FN with the weights; NULL when MAKE failed. RELEASE_PAGES hands [P, P + N)
 * of the weights' file mapping back to the page cache (for weights read through a
 * derived copy). */
typedef struct sotto__weights_cache {
    void *(*derived)(const void *owner, int slot, void *(*make)(void *arg), void (*free_fn)(void *), void *arg);
    void (*release_pages)(const void *owner, const void *p, size_t n);
    const void *owner;
} sotto__weights_cache;
enum { SOTTO__SLOT_VOCAB_PROXY = 0, SOTTO__SLOT_F16_PANELS = 1 }; /* the slots of sotto__weights_cache.derived */

/* What a backend is created for. */
typedef struct sotto__backend_config {
    int n_threads;             /* worker threads of a CPU backend; <= 0: every online core */
    sotto__limits lim;         /* the largest shapes its ops are called with */
    int index;                 /* N of "name:N"; -1: the backend's best device */
    bool gpu_only;             /* auto: only a discrete or integrated GPU, else SOTTO_ERR_UNSUPPORTED */
    const sotto__linear *vocab; /* the tied embedding argmax is called with (its shortcut), or NULL */
    sotto__weights_cache cache; /* for what it derives from VOCAB (owner NULL: nothing kept) */
} sotto__backend_config;

/* One backend as the registry lists it. */
typedef struct sotto__backend_reg {
    const char *name;          /* the device string's name: "cpu", "vulkan" */
    bool indexed;              /* it counts its devices: "name:N" names the N-th of LIST */
    bool fallback;             /* auto's last resort (its memory is the host's): the CPU */
    /* its devices (sotto.h sotto_device_info, backend and index filled) into OUT[0 .. CAP),
     * their number into *N; fails with a message when it cannot list (not built in, no
     * driver) */
    sotto_status (*list)(sotto_device_info *out, int cap, int *n, sotto__err *err);
    /* a backend on the device CFG names into *OUT, described in DESC ("name:N DEVICE
     * (TYPE)"); fails with a message that starts with "NAME: " */
    sotto_status (*create)(const sotto__backend_config *cfg, sotto__backend **out, char *desc, size_t desc_len,
                           sotto__err *err);
    /* the op table its backends carry (NULL for a stub that is not built in): test_kernels
     * checks every registered table for an empty slot, without a device */
    const sotto__backend_ops *ops;
} sotto__backend_reg;

/* The registered backends, in the order listing and auto visit them, NULL after the last. */
const sotto__backend_reg *sotto__backend_reg_at(int i);

/* A backend on DEVICE (sotto.h sotto_context_params: NULL or "auto", a backend's name, or
 * "name:N" for one that counts its devices), described in DESC. auto takes the first
 * backend with a GPU, else the fallback. Fails with SOTTO_ERR_INVALID_ARG and a message
 * for a string of another form, else with the backend's failure. */
sotto_status sotto__backend_open(const char *device, const sotto__backend_config *cfg, sotto__backend **out,
                                 char *desc, size_t desc_len, sotto__err *err);

/* The fallback backend (whose memory is the host's, sotto__backend_ops.host never NULL):
 * for work that reads its buffers in place (the VAD). */
sotto_status sotto__backend_open_host(const sotto__backend_config *cfg, sotto__backend **out, sotto__err *err);

/* Imports through BE: an f32 array of N values, a linear layer, a norm of N values. */
sotto_status sotto__import_f32(sotto__backend *be, const float *p, size_t n, sotto__buf *out, sotto__err *err);
sotto_status sotto__import_linear(sotto__backend *be, const sotto__linear *l, sotto__blinear *out, sotto__err *err);
sotto_status sotto__import_norm(sotto__backend *be, const sotto__norm *nrm, int n, sotto__bnorm *out,
                                sotto__err *err);

#endif
