/* backend_cpu.c — the CPU implementation of the backend table (backend.h): buffers are
 * host memory (a buffer's mem is its address), weights are used in place from the model's
 * mapping, and every op runs at once on the thread pool through ops.h. */
#include "backend_cpu.h"

#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../quant.h"
#include "ops.h"
#include "panels.h"
#include "threadpool.h"

_Static_assert((int)SOTTO__POOL_MAX == (int)SOTTO__THREADS_MAX, "the pool runs the threads backend.h promises");

typedef struct cpu_backend {
    sotto__backend base;
    sotto__exec ex;
    void **blocks;             /* allocations, freed with the backend */
    int n_blocks, cap_blocks;
    const void *proxy_w;       /* the matrix the proxy was made of */
    const sotto__proxy *proxy;
    const sotto__linear *vocab; /* the embedding to make the proxy of on the first argmax, or NULL */
    sotto__weights_cache cache; /* where that proxy is kept for every backend on the weights */
    sotto__panel_store *panels; /* the model's f16 weights in panels for linear_rows, or NULL */
} cpu_backend;

static cpu_backend *cpu(sotto__backend *be) { return (cpu_backend *)be; }

static void *at(sotto__buf b) { return b.mem ? (char *)b.mem + b.off : NULL; }

static sotto__linear host_linear(const sotto__blinear *l)
{
    return (sotto__linear){l->type, at(l->w), at(l->b), l->n_out, l->n_in};
}

static sotto__norm host_norm(const sotto__bnorm *n) { return (sotto__norm){at(n->g), at(n->b)}; }

static void cpu_free(sotto__backend *be)
{
    cpu_backend *c = cpu(be);
    if (!c) return;
    sotto__exec_free(&c->ex);
    for (int i = 0; i < c->n_blocks; i++) free(c->blocks[i]);
    free(c->blocks);
    free(c);
}

static sotto_status cpu_alloc(sotto__backend *be, size_t bytes, sotto__buf *out, sotto__err *err)
{
    cpu_backend *c = cpu(be);
    if (c->n_blocks == c->cap_blocks) {
        int cap = c->cap_blocks ? 2 * c->cap_blocks : 8;
        void **p = realloc(c->blocks, (size_t)cap * sizeof *p);
        if (!p) return sotto__fail(err, SOTTO_ERR_NOMEM, "cpu: out of memory");
        c->blocks = p, c->cap_blocks = cap;
    }
    size_t rounded;
    if (!sotto__add_ok(bytes, 63, &rounded)) return sotto__fail(err, SOTTO_ERR_NOMEM, "cpu: %zu bytes", bytes);
    rounded &= ~(size_t)63;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p) return sotto__fail(err, SOTTO_ERR_NOMEM, "cpu: cannot allocate %zu bytes", bytes);
    c->blocks[c->n_blocks++] = p;
    *out = (sotto__buf){p, 0};
    return SOTTO_OK;
}

static sotto_status cpu_import(sotto__backend *be, const void *host, size_t bytes, sotto__buf *out, sotto__err *err)
{
    *out = (sotto__buf){(void *)host, 0}; /* in place: the model's bytes are read-only to every op */
    return SOTTO_OK;
}

static void cpu_write(sotto__backend *be, sotto__buf dst, const void *src, size_t bytes) { memcpy(at(dst), src, bytes); }
static void cpu_zero(sotto__backend *be, sotto__buf dst, size_t bytes) { memset(at(dst), 0, bytes); }
static void cpu_copy2d(sotto__backend *be, sotto__buf dst, size_t dst_pitch, sotto__buf src, size_t src_pitch,
                       size_t rows, size_t row_bytes)
{
    char *d = at(dst);
    const char *s = at(src);
    for (size_t r = 0; r < rows; r++) memcpy(d + r * dst_pitch, s + r * src_pitch, row_bytes);
}

static void cpu_read(sotto__backend *be, void *dst, sotto__buf src, size_t bytes) { memcpy(dst, at(src), bytes); }
static const void *cpu_host(sotto__backend *be, sotto__buf b) { return at(b); }
static sotto_status cpu_sync(sotto__backend *be, sotto__err *err) { return SOTTO_OK; }

static void cpu_conv3(sotto__backend *be, sotto__buf X, size_t sc, size_t st, int c_in, int T_in, int stride,
                      sotto__buf W, sotto__buf B, int c_out, sotto__buf patches, sotto__buf Y)
{
    const float *x = at(X);
    float *A = at(patches);
    const int T_out = T_in / stride, K = c_in * 3;
    for (int t = 0; t < T_out; t++) {
        float *row = A + (size_t)t * K;
        for (int k = 0; k < 3; k++) {
            int s = stride * t + k - 1;
            if (s < 0 || s >= T_in)
                for (int i = 0; i < c_in; i++) row[i * 3 + k] = 0.0f;
            else
                for (int i = 0; i < c_in; i++) row[i * 3 + k] = x[(size_t)i * sc + (size_t)s * st];
        }
    }
    sotto__op_matmul(&cpu(be)->ex, A, (size_t)K, at(W), (size_t)K, at(B), at(Y), (size_t)c_out, T_out, c_out, K);
}

static void cpu_linear(sotto__backend *be, sotto__buf X, int M, const sotto__blinear *l, sotto__buf Y)
{
    sotto__linear h = host_linear(l);
    sotto__op_linear(&cpu(be)->ex, at(X), M, &h, at(Y));
}

static void cpu_linear_rows(sotto__backend *be, sotto__buf X, int M, const sotto__blinear *l, sotto__buf Y)
{
    cpu_backend *c = cpu(be);
    sotto__linear h = host_linear(l);
    const uint16_t *panels = NULL;
    if (c->panels && h.type == SOTTO_TYPE_F16 && c->ex.k->gemm_f16p)
        panels = sotto__panels_of(c->panels, &c->ex, h.w, h.n_out, h.n_in);
    sotto__op_linear_rows(&c->ex, at(X), M, &h, panels, at(Y));
}

static void cpu_layernorm(sotto__backend *be, sotto__buf X, int M, int d, const sotto__bnorm *n, sotto__buf Y)
{
    sotto__norm h = host_norm(n);
    sotto__op_layernorm(&cpu(be)->ex, at(X), M, d, &h, at(Y));
}

static void cpu_gelu(sotto__backend *be, sotto__buf x, size_t n) { sotto__op_gelu(&cpu(be)->ex, at(x), n); }
static void cpu_add(sotto__backend *be, sotto__buf x, sotto__buf y, size_t n) { sotto__op_add(&cpu(be)->ex, at(x), at(y), n); }

static void cpu_transpose(sotto__backend *be, sotto__buf src, int rows, int cols, sotto__buf dst, size_t ld_dst)
{
    sotto__op_transpose(&cpu(be)->ex, at(src), rows, cols, at(dst), ld_dst);
}

static void cpu_attention(sotto__backend *be, sotto__buf Q, size_t ldq, sotto__buf KT, size_t ldkt, sotto__buf V,
                          size_t ldv, sotto__buf O, size_t ldo, int T, int S, int n_head, int dh, int causal_pos)
{
    sotto__op_attention(&cpu(be)->ex, at(Q), ldq, at(KT), ldkt, at(V), ldv, at(O), ldo, T, S, n_head, dh, causal_pos);
}

static void cpu_attention_prefix(sotto__backend *be, sotto__buf Q, size_t ldq, int n, sotto__buf KT0, sotto__buf V0,
                                 const sotto__buf *KT, const sotto__buf *V, size_t ldkt, size_t ldv, int P, int S,
                                 int n_head, int dh, sotto__buf O, size_t ldo, sotto__buf U)
{
    (void)U;
    const float *kt[SOTTO_MAX_SEQUENCES], *v[SOTTO_MAX_SEQUENCES];
    for (int r = 0; r < n; r++) kt[r] = at(KT[r]), v[r] = at(V[r]);
    sotto__op_attention_prefix(&cpu(be)->ex, at(Q), ldq, n, at(KT0), at(V0), kt, v, ldkt, ldv, P, S, n_head, dh, at(O),
                               ldo);
}

static void cpu_cross_kv(sotto__backend *be, sotto__buf Kx, sotto__buf Vx, int S, int n_head, int dh, sotto_type type,
                         sotto__buf K, sotto__buf V)
{
    sotto__op_cross_kv(&cpu(be)->ex, at(Kx), at(Vx), S, n_head, dh, type, at(K), at(V));
}

static void cpu_cross_attention(sotto__backend *be, sotto__buf Q, size_t ldq, sotto_type type, sotto__buf K,
                                sotto__buf V, sotto__buf O, size_t ldo, int T, int S, int n_head, int dh)
{
    sotto__op_cross_attention(&cpu(be)->ex, at(Q), ldq, type, at(K), at(V), at(O), ldo, T, S, n_head, dh);
}

static void cpu_embed(sotto__backend *be, const int32_t *tokens, int n, const sotto__blinear *emb, sotto__buf pos,
                      sotto__buf X)
{
    const int d = emb->n_in;
    const char *w = at(emb->w);
    const float *p = at(pos);
    float *x = at(X);
    for (int i = 0; i < n; i++) {
        size_t row_off;
        sotto__type_bytes(emb->type, (int64_t)tokens[i] * d, &row_off);
        sotto__dequantize(emb->type, w + row_off, x + (size_t)i * d, d);
        for (int j = 0; j < d; j++) x[(size_t)i * d + j] += p[(size_t)i * d + j];
    }
}

static void fetch_proxy(cpu_backend *c);

static sotto_status cpu_argmax(sotto__backend *be, sotto__buf X, const sotto__blinear *emb, const sotto__i32list *excl,
                               int n_excl, sotto__buf U, int32_t *out)
{
    cpu_backend *c = cpu(be);
    if (c->vocab) fetch_proxy(c);
    sotto__linear h = host_linear(emb);
    const sotto__proxy *p = c->proxy && c->proxy_w == h.w ? c->proxy : NULL;
    *out = sotto__op_argmax_logits(&c->ex, at(X), &h, p, excl, n_excl, at(U), NULL);
    return SOTTO_OK;
}

static float cpu_row_max(sotto__backend *be, const float *x, int n) { return cpu(be)->ex.k->row_max(x, n); }

static double cpu_row_exp_sum(sotto__backend *be, const float *x, int n, float m, float scale, float *w)
{
    return cpu(be)->ex.k->row_exp_sum(x, n, m, scale, w);
}

typedef struct host_job {
    void (*fn)(void *arg, int i);
    void *arg;
    int n;
    atomic_int next;
} host_job;

static void host_task(void *arg, int tid, int nt)
{
    (void)tid, (void)nt;
    host_job *j = arg;
    for (int i; (i = sotto__next_item(&j->next, j->n)) >= 0;) j->fn(j->arg, i);
}

/* The items taken by the pool's threads in turn (sotto__next_item: a step's 5 beams, 3
 * and 2 when the threads run alike); one item runs on the caller. */
static void cpu_host_for(sotto__backend *be, void (*fn)(void *arg, int i), void *arg, int n)
{
    host_job j = {fn, arg, n, 0};
    if (n <= 1) host_task(&j, 0, 1);
    else sotto__parallel_for(cpu(be)->ex.pool, host_task, &j);
}

static const sotto__backend_ops cpu_ops = {
    .name = "cpu",
    .free = cpu_free,
    .alloc = cpu_alloc,
    .import = cpu_import,
    .write = cpu_write,
    .zero = cpu_zero,
    .copy2d = cpu_copy2d,
    .read = cpu_read,
    .host = cpu_host,
    .sync = cpu_sync,
    .conv3 = cpu_conv3,
    .linear = cpu_linear,
    .linear_rows = cpu_linear_rows,
    .layernorm = cpu_layernorm,
    .gelu = cpu_gelu,
    .add = cpu_add,
    .transpose = cpu_transpose,
    .attention = cpu_attention,
    .attention_prefix = cpu_attention_prefix,
    .cross_kv = cpu_cross_kv,
    .cross_attention = cpu_cross_attention,
    .embed = cpu_embed,
    .argmax = cpu_argmax,
    .row_max = cpu_row_max,
    .row_exp_sum = cpu_row_exp_sum,
    .host_for = cpu_host_for,
};

static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

/* The largest scratch any op asks for within LIM on NT threads. */
static size_t scratch_bytes(const sotto__limits *lim, int nt)
{
    size_t s = sotto__op_linear_scratch(lim->max_rows, lim->max_in, SOTTO_TYPE_Q8_0);
    s = max_size(s, sotto__op_attention_scratch(nt, lim->max_keys, lim->max_dh));
    s = max_size(s, sotto__op_cross_kv_scratch(lim->cross_keys, lim->max_heads, lim->max_dh, lim->cross_type));
    s = max_size(s, sotto__op_cross_attention_scratch(nt, lim->cross_keys, lim->max_dh, lim->cross_type));
    return max_size(s, sotto__op_argmax_scratch(lim->vocab_in));
}

sotto_status sotto__cpu_backend_create(int n_threads, const sotto__limits *lim, sotto__backend **out,
                                       sotto__err *err)
{
    *out = NULL;
    cpu_backend *c = calloc(1, sizeof *c);
    if (!c) return sotto__fail(err, SOTTO_ERR_NOMEM, "cpu: out of memory");
    c->base.ops = &cpu_ops;
    c->base.exact_rows = SOTTO__GEMM_MIN_M; /* the GEMM's bits: the reference's fused chain (kernels.h) */
    c->base.host_memory = true;
    if (!sotto__exec_init(&c->ex, sotto__kernels_get(), n_threads, scratch_bytes(lim, n_threads))) {
        free(c);
        return sotto__fail(err, SOTTO_ERR_NOMEM, "cpu: cannot start %d worker threads with their scratch",
                           n_threads);
    }
    *out = &c->base;
    return SOTTO_OK;
}

sotto__proxy *sotto__cpu_proxy_make(sotto__backend *be, const sotto__linear *e)
{
    if (e->n_in % 128 || e->n_in > SOTTO__PROXY_MAX_K) return NULL;
    size_t n = (size_t)e->n_out;
    sotto__proxy *p = calloc(1, sizeof *p);
    uint8_t *rows = malloc(n * SOTTO__PROXY_ROW(e->n_in));
    float *dist = malloc(n * sizeof *dist), *len = malloc(n * sizeof *len);
    if (!p || !rows || !dist || !len || !sotto__proxy_make(&cpu(be)->ex, e, rows, dist, len)) {
        free(p), free(rows), free(dist), free(len);
        return NULL;
    }
    *p = (sotto__proxy){rows, dist, len, e->n_out, e->n_in};
    return p;
}

void sotto__cpu_proxy_free(void *proxy)
{
    sotto__proxy *p = proxy;
    if (!p) return;
    free((void *)p->rows), free((void *)p->err), free((void *)p->norm);
    free(p);
}

void sotto__cpu_backend_use_proxy(sotto__backend *be, const void *w, const sotto__proxy *p)
{
    cpu(be)->proxy_w = w;
    cpu(be)->proxy = p;
}

/* The vocabulary proxy of the embedding, made once per model on the threads of the first
 * CPU backend whose argmax asks for it. From then on a greedy step reads only a few rows of
 * an f32/f16 table (the token's own and the exact candidates): where it is mapped from the
 * file, it is left to the page cache (a q8_0 table stays: a flat step reads it whole). */
static void *make_proxy(void *arg)
{
    cpu_backend *c = arg;
    const sotto__linear *e = c->vocab;
    sotto__proxy *p = sotto__cpu_proxy_make(&c->base, e);
    size_t bytes;
    if (p && e->type != SOTTO_TYPE_Q8_0 && c->cache.release_pages &&
        sotto__type_bytes(e->type, (int64_t)e->n_out * e->n_in, &bytes))
        c->cache.release_pages(c->cache.owner, e->w, bytes);
    return p;
}

/* C's proxy, from the weights' cache, made there by the first backend to ask: on the first
 * argmax, not at creation, since only the greedy search's argmax reads it and transcription
 * computes every logit (a 5 s clip's `sotto transcribe` with tiny.en: 0.45 -> 0.41 s, 166 ->
 * 154 MB: docs/BENCHMARKS.md). NULL when making it failed: every logit then. */
static void fetch_proxy(cpu_backend *c)
{
    const sotto__proxy *p = c->cache.derived(c->cache.owner, SOTTO__SLOT_VOCAB_PROXY, make_proxy,
                                             sotto__cpu_proxy_free, c);
    sotto__cpu_backend_use_proxy(&c->base, c->vocab->w, p);
    c->vocab = NULL;
}

/* Whether the vocabulary's table is larger than half the CPU's last cache (which a step's
 * layers and cross-attention K/V share), or that cache is unknown: then a full projection
 * streams the table from memory at every greedy step, where the
 * proxy's argmax (a third of its bytes for f16) and a few exact rows are faster: tiny.en
 * f16 on an AMD EPYC Zen 4 with 32 MB of L3, 1.97 against 2.69 ms a step (`sotto bench`);
 * on an Intel Xeon whose 260 MB of L3 holds the table the full projection was faster
 * (docs/BENCHMARKS.md "Greedy without the log-probabilities"). */
static bool vocab_out_of_cache(const sotto__linear *e)
{
    size_t bytes, cache = sotto__last_cache_bytes();
    if (!sotto__type_bytes(e->type, (int64_t)e->n_out * e->n_in, &bytes)) return false;
    return cache == 0 || bytes > cache / 2;
}

/* The registry's create: CFG's threads (sotto_cpu_count for <= 0, at most
 * SOTTO__POOL_MAX), with the vocabulary proxy of CFG's embedding (kept in its cache, made
 * on the first argmax) unless SOTTO_VOCAB_PROXY=0 switches it off (for comparison: the
 * same ids either way), and few_logits where the table is out of cache or
 * SOTTO_VOCAB_PROXY=1. */
static sotto_status cpu_create(const sotto__backend_config *cfg, sotto__backend **out, char *desc, size_t desc_len,
                               sotto__err *err)
{
    int n_threads = cfg->n_threads;
    if (n_threads <= 0) n_threads = sotto_cpu_count();
    if (n_threads > SOTTO__POOL_MAX) n_threads = SOTTO__POOL_MAX;
    if (cfg->gpu_only) return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "cpu: not a GPU");
    sotto_status st = sotto__cpu_backend_create(n_threads, &cfg->lim, out, err);
    if (st) return st;
    snprintf(desc, desc_len, "cpu (%s kernels, %d thread%s)", cpu(*out)->ex.k->name, n_threads,
             n_threads == 1 ? "" : "s");
    if (cfg->cache.derived && cfg->cache.owner) /* the batched decoder's f16 weights, made on first use */
        cpu(*out)->panels = cfg->cache.derived(cfg->cache.owner, SOTTO__SLOT_F16_PANELS, sotto__panel_store_make,
                                               sotto__panel_store_free, NULL);
    const char *env = getenv("SOTTO_VOCAB_PROXY");
    if (!cfg->vocab || !cfg->cache.derived || (env && strcmp(env, "0") == 0)) return SOTTO_OK;
    cpu(*out)->vocab = cfg->vocab, cpu(*out)->cache = cfg->cache;
    (*out)->few_logits = (env && strcmp(env, "1") == 0) || vocab_out_of_cache(cfg->vocab);
    return SOTTO_OK;
}

/* The one CPU device: its kernel set. */
static sotto_status cpu_list(sotto_device_info *out, int cap, int *n, sotto__err *err)
{
    *n = 1;
    if (cap < 1) return SOTTO_OK;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s kernels", sotto__kernels_get()->name);
    out->type = SOTTO_DEVICE_OTHER;
    return SOTTO_OK;
}

const sotto__backend_reg sotto__cpu_reg = {
    .name = "cpu", .indexed = false, .fallback = true, .list = cpu_list, .create = cpu_create, .ops = &cpu_ops,
};
