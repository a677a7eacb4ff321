/* context.c — creating and freeing contexts (a backend, the encoder's and decoder's
 * weights imported into it, one arena for every buffer), and the checked public entry
 * points of the engine. The backend comes from the registry (backend.h), by the
 * device string. */
#define _DEFAULT_SOURCE /* mincore */
#define _POSIX_C_SOURCE 200809L
#include "context.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void *model_derived(const void *owner, int slot, void *(*make)(void *), void (*free_fn)(void *), void *arg)
{
    return sotto__model_derived(owner, slot, make, free_fn, arg);
}

static void model_release_pages(const void *owner, const void *p, size_t n) { sotto__model_release_pages(owner, p, n); }

sotto_status sotto__ctx_fail(sotto_context *ctx, sotto_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
    va_end(ap);
    sotto__printable(ctx->error);
    return status;
}

sotto_status sotto__ctx_args(sotto_context *ctx, const char *fmt, ...)
{
    sotto__err e = {SOTTO_ERR_INVALID_ARG, ""};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.msg, sizeof e.msg, fmt, ap);
    sotto__printable(e.msg);
    va_end(ap);
    if (ctx) snprintf(ctx->error, sizeof ctx->error, "%s", e.msg);
    return sotto__publish(&e);
}

sotto_context_params sotto_context_params_default(void)
{
    return (sotto_context_params){.n_threads = 0, .max_sequences = 5, .device = NULL, .max_batch = 1};
}

const char *sotto_context_error(const sotto_context *ctx) { return ctx ? ctx->error : ""; }

const char *sotto_context_device(const sotto_context *ctx) { return ctx ? ctx->device : ""; }

/* The largest shapes the encoder and decoder call the ops with. */
static sotto__limits limits(const sotto_model *m, sotto_type cross_type, int max_batch)
{
    const sotto_model_info *h = &m->info;
    int keys = h->n_audio_ctx > h->n_text_ctx ? h->n_audio_ctx : h->n_text_ctx;
    int d = h->n_audio_state > h->n_text_state ? h->n_audio_state : h->n_text_state;
    int dh_a = h->n_audio_state / h->n_audio_head, dh_t = h->n_text_state / h->n_text_head;
    return (sotto__limits){.max_rows = keys * max_batch, .max_in = 4 * d, .max_keys = keys,
                           .max_heads = h->n_audio_head > h->n_text_head ? h->n_audio_head : h->n_text_head,
                           .max_dh = dh_a > dh_t ? dh_a : dh_t, .cross_type = cross_type,
                           .cross_keys = h->n_audio_ctx, .vocab_in = h->n_text_state};
}

/* The backend DEVICE names (sotto.h sotto_context_params), through the registry,
 * described in CTX->device. */
static sotto_status make_backend(sotto_context *ctx, const char *device, int n_threads, int max_batch,
                                 sotto__err *err)
{
    const sotto_model *m = ctx->model;
    sotto__backend_config cfg = {.n_threads = n_threads, .lim = limits(m, sotto__decoder_cross_type(m), max_batch),
                                 .vocab = &m->w.tok_emb,
                                 .cache = {model_derived, model_release_pages, m}};
    return sotto__backend_open(device, &cfg, &ctx->be, ctx->device, sizeof ctx->device, err);
}

/* The bytes of the buffers CTX's encoder and decoder declare for batches of B windows of
 * MAX_SEQ sequences each (as sotto_context_init declares them); SIZE_MAX on overflow. */
static size_t batch_bytes(const sotto_context *ctx, int max_seq, int b)
{
    sotto__encoder e = ctx->enc;
    sotto__decoder d = ctx->dec;
    e.n_batch = b, d.n_slots = max_seq * b, d.n_win = b;
    sotto__arena a = {0};
    sotto__encoder_declare(&e, ctx->model, &a);
    sotto__decoder_declare(&d, &a);
    return a.overflow ? SIZE_MAX : a.total;
}

/* This process's live batched contexts on host memory. The memory room's page counts
 * (cgroup usage, MemAvailable) see their buffers only as their passes touch them, so a
 * context made beside them counts the pages of theirs not yet touched as taken (sotto
 * serve's workers, -j's files: two workers' batches of 4 on base each passed alone in a
 * cgroup of 800 MB and were killed under load). The lock makes check, allocation and list
 * one step for contexts made at once. */
static pthread_mutex_t batch_lock = PTHREAD_MUTEX_INITIALIZER;
static sotto_context *batch_live;

/* The bytes of [P, P + N) not yet touched (mincore: not resident); all N when unknown. */
static uint64_t untouched(const void *p, size_t n)
{
    const long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return n;
    const uintptr_t mask = (uintptr_t)page - 1, a = (uintptr_t)p & ~mask, e = ((uintptr_t)p + n + mask) & ~mask;
    const size_t pages = (size_t)((e - a) / (uintptr_t)page);
    unsigned char *vec = malloc(pages ? pages : 1);
    if (!vec || mincore((void *)a, (size_t)(e - a), vec) != 0) {
        free(vec);
        return n;
    }
    uint64_t touched = 0;
    for (size_t i = 0; i < pages; i++) touched += vec[i] & 1;
    free(vec);
    touched *= (uint64_t)page;
    return touched >= n ? 0 : n - touched;
}

/* The untouched bytes of the live batched contexts (under batch_lock). */
static uint64_t batch_held(void)
{
    uint64_t held = 0;
    for (const sotto_context *c = batch_live; c; c = c->batch_next) held += untouched(c->batch_mem, c->batch_bytes);
    return held;
}

/* SOTTO_OK when the buffers of CTX (declared on ARENA for batches of MAX_BATCH windows of
 * MAX_SEQ sequences) fit the memory this process may still allocate (sotto__mem_room: the
 * machine's, its cgroups', its ulimits); else SOTTO_ERR_NOMEM on ERR naming the bytes
 * asked, those left and the largest batch that fits. */
static sotto_status batch_fits(const sotto_context *ctx, const sotto__arena *arena, int max_seq, int max_batch,
                               sotto__err *err)
{
    const uint64_t held = batch_held(), room = sotto__mem_room(held);
    if (arena->overflow || (uint64_t)arena->total <= room) return SOTTO_OK; /* overflow: the allocation says so */
    int lo = 0, hi = max_batch - 1; /* the largest batch whose buffers fit: the sizes grow with the batch */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if ((uint64_t)batch_bytes(ctx, max_seq, mid) <= room) lo = mid;
        else hi = mid - 1;
    }
    char fits[96];
    if (lo > 0) snprintf(fits, sizeof fits, "at most %d fit (%.0f MiB)", lo, batch_bytes(ctx, max_seq, lo) / 1048576.0);
    else snprintf(fits, sizeof fits, "not even 1 fits (%.0f MiB)", batch_bytes(ctx, max_seq, 1) / 1048576.0);
    char also[96] = "";
    if (held)
        snprintf(also, sizeof also, ", less the %.0f MiB of this process's other batches not yet in use",
                 held / 1048576.0);
    return sotto__fail(err, SOTTO_ERR_NOMEM,
                       "context: a batch of %d windows needs %.0f MiB of buffers, but this process may allocate %.0f MiB"
                       " more (the least of the memory available, its cgroup's limit and its ulimits%s): %s",
                       max_batch, arena->total / 1048576.0, room / 1048576.0, also, fits);
}

sotto_status sotto_context_init(const sotto_model *model, const sotto_context_params *params, sotto_context **out)
{
    if (!out) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "context: no place for it (out is NULL)"});
    *out = NULL;
    sotto__err err = {0};
    if (!model) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "context: no model"});
    sotto_context_params p = params ? *params : sotto_context_params_default();
    if (p.max_sequences < 1 || p.max_sequences > SOTTO_MAX_SEQUENCES)
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "context: max_sequences must be 1..16"});
    if (p.max_batch < 1 || p.max_batch > SOTTO_MAX_BATCH)
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "context: max_batch must be 1..64"});
    if (p.max_sequences * p.max_batch > model->info.n_text_ctx) {
        sotto__err e = {SOTTO_ERR_INVALID_ARG, ""};
        snprintf(e.msg, sizeof e.msg, "context: max_batch %d x max_sequences %d rows exceed the decoder's %d: at most "
                 "%d windows of %d sequences", p.max_batch, p.max_sequences, model->info.n_text_ctx,
                 model->info.n_text_ctx / p.max_sequences, p.max_sequences);
        return sotto__publish(&e);
    }
    sotto_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "context: out of memory"});
    ctx->model = model;
    ctx->max_batch = p.max_batch;
    ctx->n_threads = p.n_threads > 0 ? p.n_threads : sotto_cpu_count();
    sotto__arena arena = {0};
    sotto_status st = make_backend(ctx, p.device, p.n_threads, p.max_batch, &err);
    if (!st) st = sotto__encoder_init(&ctx->enc, ctx->be, model, p.max_batch, &arena, &err);
    if (!st)
        st = sotto__decoder_init(&ctx->dec, ctx->be, model, p.max_sequences * p.max_batch, p.max_batch, &arena, &err);
    /* a GPU's buffers are its own memory, which the process's limits do not bound */
    const bool counted = !st && p.max_batch > 1 && ctx->be->host_memory;
    if (counted) pthread_mutex_lock(&batch_lock);
    if (counted) st = batch_fits(ctx, &arena, p.max_sequences, p.max_batch, &err);
    if (!st) st = sotto__arena_alloc(&arena, ctx->be, &err);
    if (counted) {
        if (!st) {
            ctx->batch_bytes = arena.total, ctx->batch_mem = ctx->be->ops->host(ctx->be, arena.base);
            ctx->batch_next = batch_live, batch_live = ctx;
        }
        pthread_mutex_unlock(&batch_lock);
    }
    if (st) {
        sotto_context_free(ctx);
        return sotto__publish(&err);
    }
    sotto__decoder_ready(&ctx->dec);
    *out = ctx;
    return SOTTO_OK;
}

void sotto_context_free(sotto_context *ctx)
{
    if (!ctx) return;
    if (ctx->batch_bytes) {
        pthread_mutex_lock(&batch_lock);
        sotto_context **p = &batch_live;
        while (*p && *p != ctx) p = &(*p)->batch_next;
        if (*p) *p = ctx->batch_next;
        pthread_mutex_unlock(&batch_lock);
    }
    sotto__encoder_free(&ctx->enc);
    sotto__decoder_free(&ctx->dec);
    if (ctx->be) ctx->be->ops->free(ctx->be);
    free(ctx->host_enc);
    free(ctx->host_logits);
    free(ctx);
}

sotto_status sotto__ctx_sync(sotto_context *ctx, const char *what)
{
    sotto__err err = {0};
    sotto_status st = ctx->be->ops->sync(ctx->be, &err);
    return st ? sotto__ctx_fail(ctx, st, "%s: %s", what, err.msg) : SOTTO_OK;
}

sotto_status sotto_encode(sotto_context *ctx, const float *mel, int64_t n_floats)
{
    if (!ctx) return SOTTO_ERR_INVALID_ARG;
    const sotto_model_info *h = &ctx->model->info;
    int64_t want = (int64_t)h->n_mels * SOTTO_N_FRAMES;
    if (!mel || n_floats != want)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "encode: the mel window must hold %d x %d = %lld floats, "
                               "got %lld", h->n_mels, SOTTO_N_FRAMES, (long long)want, (long long)n_floats);
    ctx->error[0] = 0;
    ctx->encoded = ctx->have_state = ctx->have_logits = false;
    sotto__encoder_forward(&ctx->enc, mel);
    /* cross-attention keys and values of every decoder layer, once per window */
    sotto__decoder_cross(&ctx->dec, ctx->enc.out, ctx->enc.k, ctx->enc.v);
    sotto_status st = sotto__ctx_sync(ctx, "encode");
    ctx->encoded = st == SOTTO_OK;
    return st;
}

/* A host view of BUF (N floats): the backend's own memory where it is the host's, else
 * a copy in *MIRROR (allocated on first use). NULL when out of memory. */
static const float *host_view(sotto_context *ctx, sotto__buf buf, size_t n, float **mirror)
{
    const void *p = ctx->be->ops->host(ctx->be, buf);
    if (p) return p;
    if (!*mirror) *mirror = malloc(n * sizeof(float));
    if (*mirror) ctx->be->ops->read(ctx->be, *mirror, buf, n * sizeof(float));
    return *mirror;
}

const float *sotto_encoder_output(const sotto_context *cctx)
{
    if (!cctx || !cctx->encoded) return NULL;
    /* the context is the caller's own, allocated mutable; const says the engine state
     * does not change (a host copy may be made) */
    sotto_context *ctx = (sotto_context *)cctx;
    return host_view(ctx, ctx->enc.out, (size_t)ctx->enc.n_ctx * ctx->enc.d, &ctx->host_enc);
}

static sotto_status decode_state(sotto_context *ctx, int slot, const int32_t *tokens, int n_tokens, int n_past)
{
    if (!ctx) return SOTTO_ERR_INVALID_ARG;
    const sotto_model_info *h = &ctx->model->info;
    if (!ctx->encoded) return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "decode: no window was encoded");
    if (!tokens || n_tokens < 1 || n_past < 0 || n_tokens > h->n_text_ctx || n_past > h->n_text_ctx - n_tokens)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG,
                               "decode: %d tokens at position %d do not fit the %d-token context", n_tokens, n_past,
                               h->n_text_ctx);
    for (int i = 0; i < n_tokens; i++)
        if (tokens[i] < 0 || tokens[i] >= h->n_vocab)
            return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "decode: token %d is outside the vocabulary (0..%d)",
                                   tokens[i], h->n_vocab - 1);
    ctx->error[0] = 0;
    ctx->have_state = ctx->have_logits = false;
    sotto__decoder_forward(&ctx->dec, tokens, n_tokens, n_past, slot, -1);
    ctx->have_state = true;
    return SOTTO_OK;
}

sotto_status sotto__decode_state(sotto_context *ctx, const int32_t *tokens, int n_tokens, int n_past)
{
    return decode_state(ctx, 0, tokens, n_tokens, n_past);
}

static void project(sotto_context *ctx)
{
    sotto__decoder_logits(&ctx->dec, 1);
    ctx->have_logits = true;
}

sotto_status sotto__decode_in(sotto_context *ctx, int slot, const int32_t *tokens, int n_tokens, int n_past)
{
    sotto_status st = decode_state(ctx, slot, tokens, n_tokens, n_past);
    if (!st) project(ctx);
    if (!st) st = sotto__ctx_sync(ctx, "decode");
    return st;
}

sotto_status sotto_decode(sotto_context *ctx, const int32_t *tokens, int n_tokens, int n_past)
{
    return sotto__decode_in(ctx, 0, tokens, n_tokens, n_past);
}

const float *sotto_logits(const sotto_context *cctx)
{
    if (!cctx || !cctx->have_state) return NULL;
    /* the greedy search leaves only the state: project it now (see sotto_encoder_output
     * for the cast) */
    sotto_context *ctx = (sotto_context *)cctx;
    if (!ctx->have_logits) project(ctx);
    return host_view(ctx, ctx->dec.logits, (size_t)ctx->dec.n_vocab, &ctx->host_logits);
}
