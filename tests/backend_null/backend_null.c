/* backend_null.c — "null", the test build's backend: every op of the table (backend.h)
 * delegated to the registry's host backend (the CPU's), but its memory shown to the
 * engine as a device's (host() NULL: results are read back, as from a GPU). It proves
 * that a backend is a folder, one registry line and a CMake option: the engine, the tool
 * and Python run on it unchanged (tests/cli/test_null_backend.sh, cli_run_null). It is
 * built into the sotto-null tool only, never into libsotto or sotto. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "backend_row.h"

typedef struct null_backend {
    sotto__backend base;
    sotto__backend *in;        /* the host backend every op runs on */
} null_backend;

static sotto__backend *in(sotto__backend *be) { return ((null_backend *)be)->in; }

static void null_free(sotto__backend *be)
{
    if (!be) return;
    if (in(be)) in(be)->ops->free(in(be));
    free(be);
}

static sotto_status null_alloc(sotto__backend *be, size_t bytes, sotto__buf *out, sotto__err *err)
{
    return in(be)->ops->alloc(in(be), bytes, out, err);
}

static sotto_status null_import(sotto__backend *be, const void *host, size_t bytes, sotto__buf *out, sotto__err *err)
{
    return in(be)->ops->import(in(be), host, bytes, out, err);
}

static void null_write(sotto__backend *be, sotto__buf dst, const void *src, size_t bytes)
{
    in(be)->ops->write(in(be), dst, src, bytes);
}

static void null_zero(sotto__backend *be, sotto__buf dst, size_t bytes) { in(be)->ops->zero(in(be), dst, bytes); }

static void null_copy2d(sotto__backend *be, sotto__buf dst, size_t dst_pitch, sotto__buf src, size_t src_pitch,
                        size_t rows, size_t row_bytes)
{
    in(be)->ops->copy2d(in(be), dst, dst_pitch, src, src_pitch, rows, row_bytes);
}

static void null_read(sotto__backend *be, void *dst, sotto__buf src, size_t bytes)
{
    in(be)->ops->read(in(be), dst, src, bytes);
}

/* the engine sees device memory: it reads every result back */
static const void *null_host(sotto__backend *be, sotto__buf b) { return NULL; }

static sotto_status null_sync(sotto__backend *be, sotto__err *err) { return in(be)->ops->sync(in(be), err); }

static void null_conv3(sotto__backend *be, sotto__buf X, size_t sc, size_t st, int c_in, int T_in, int stride,
                       sotto__buf W, sotto__buf B, int c_out, sotto__buf patches, sotto__buf Y)
{
    in(be)->ops->conv3(in(be), X, sc, st, c_in, T_in, stride, W, B, c_out, patches, Y);
}

static void null_linear(sotto__backend *be, sotto__buf X, int M, const sotto__blinear *l, sotto__buf Y)
{
    in(be)->ops->linear(in(be), X, M, l, Y);
}

static void null_linear_rows(sotto__backend *be, sotto__buf X, int M, const sotto__blinear *l, sotto__buf Y)
{
    in(be)->ops->linear_rows(in(be), X, M, l, Y);
}

static void null_layernorm(sotto__backend *be, sotto__buf X, int M, int d, const sotto__bnorm *n, sotto__buf Y)
{
    in(be)->ops->layernorm(in(be), X, M, d, n, Y);
}

static void null_gelu(sotto__backend *be, sotto__buf x, size_t n) { in(be)->ops->gelu(in(be), x, n); }

static void null_add(sotto__backend *be, sotto__buf x, sotto__buf y, size_t n) { in(be)->ops->add(in(be), x, y, n); }

static void null_transpose(sotto__backend *be, sotto__buf src, int rows, int cols, sotto__buf dst, size_t ld_dst)
{
    in(be)->ops->transpose(in(be), src, rows, cols, dst, ld_dst);
}

static void null_attention(sotto__backend *be, sotto__buf Q, size_t ldq, sotto__buf KT, size_t ldkt, sotto__buf V,
                           size_t ldv, sotto__buf O, size_t ldo, int T, int S, int n_head, int dh, int causal_pos)
{
    in(be)->ops->attention(in(be), Q, ldq, KT, ldkt, V, ldv, O, ldo, T, S, n_head, dh, causal_pos);
}

static void null_attention_prefix(sotto__backend *be, sotto__buf Q, size_t ldq, int n, sotto__buf KT0,
                                  sotto__buf V0, const sotto__buf *KT, const sotto__buf *V, size_t ldkt, size_t ldv,
                                  int P, int S, int n_head, int dh, sotto__buf O, size_t ldo, sotto__buf U)
{
    in(be)->ops->attention_prefix(in(be), Q, ldq, n, KT0, V0, KT, V, ldkt, ldv, P, S, n_head, dh, O, ldo, U);
}

static void null_cross_kv(sotto__backend *be, sotto__buf Kx, sotto__buf Vx, int S, int n_head, int dh,
                          sotto_type type, sotto__buf K, sotto__buf V)
{
    in(be)->ops->cross_kv(in(be), Kx, Vx, S, n_head, dh, type, K, V);
}

static void null_cross_attention(sotto__backend *be, sotto__buf Q, size_t ldq, sotto_type type, sotto__buf K,
                                 sotto__buf V, sotto__buf O, size_t ldo, int T, int S, int n_head, int dh)
{
    in(be)->ops->cross_attention(in(be), Q, ldq, type, K, V, O, ldo, T, S, n_head, dh);
}

static void null_embed(sotto__backend *be, const int32_t *tokens, int n, const sotto__blinear *emb, sotto__buf pos,
                       sotto__buf X)
{
    in(be)->ops->embed(in(be), tokens, n, emb, pos, X);
}

static sotto_status null_argmax(sotto__backend *be, sotto__buf X, const sotto__blinear *emb,
                                const sotto__i32list *excl, int n_excl, sotto__buf U, int32_t *out)
{
    return in(be)->ops->argmax(in(be), X, emb, excl, n_excl, U, out);
}

static const sotto__backend_ops null_ops = {
    .name = "null",
    .free = null_free,
    .alloc = null_alloc,
    .import = null_import,
    .write = null_write,
    .zero = null_zero,
    .copy2d = null_copy2d,
    .read = null_read,
    .host = null_host,
    .sync = null_sync,
    .conv3 = null_conv3,
    .linear = null_linear,
    .linear_rows = null_linear_rows,
    .layernorm = null_layernorm,
    .gelu = null_gelu,
    .add = null_add,
    .transpose = null_transpose,
    .attention = null_attention,
    .attention_prefix = null_attention_prefix,
    .cross_kv = null_cross_kv,
    .cross_attention = null_cross_attention,
    .embed = null_embed,
    .argmax = null_argmax,
    .row_max = sotto__row_max,         /* the shared 4 lanes, as a device backend's */
    .row_exp_sum = sotto__row_exp_sum,
    .host_for = sotto__host_for,       /* the host's rows one after the other */
};

/* Never a GPU (auto passes it by); otherwise the host backend on CFG, wrapped. */
static sotto_status null_create(const sotto__backend_config *cfg, sotto__backend **out, char *desc, size_t desc_len,
                                sotto__err *err)
{
    *out = NULL;
    if (cfg->gpu_only) return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "null: not a GPU");
    null_backend *b = calloc(1, sizeof *b);
    if (!b) return sotto__fail(err, SOTTO_ERR_NOMEM, "null: out of memory");
    b->base.ops = &null_ops;
    sotto_status st = sotto__backend_open_host(cfg, &b->in, err);
    if (st) {
        null_free(&b->base);
        return st;
    }
    snprintf(desc, desc_len, "null (the %s backend's ops behind a device's memory)", b->in->ops->name);
    *out = &b->base;
    return SOTTO_OK;
}

static sotto_status null_list(sotto_device_info *out, int cap, int *n, sotto__err *err)
{
    *n = 1;
    if (cap < 1) return SOTTO_OK;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "test backend: the CPU's ops behind a device's memory");
    out->type = SOTTO_DEVICE_OTHER;
    return SOTTO_OK;
}

const sotto__backend_reg sotto__null_reg = {
    .name = "null", .indexed = false, .fallback = false, .list = null_list, .create = null_create, .ops = &null_ops,
};
