/* gguf.c — the one GGUF reader (ggml-org/ggml docs/gguf.md, v2/v3) under every loader of a
 * .gguf file: the header, a key/value iterator and the checked tensor table, over a
 * read-only mapping. The file is hostile: every count, length, dimension and offset is
 * checked against the file size before it is used, and the message names the field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../quant.h"
#include "gguf.h"

const size_t sotto__gguf_scalar_size[SOTTO__GGUF_N_TYPES] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

bool sotto__gguf_rd_str(sotto__reader *r, const char **s, uint64_t *len, const char *what)
{
    if (!sotto__rd_u64(r, len, what) || !sotto__need(r, *len, what)) return false;
    *s = (const char *)r->p + r->i;
    r->i += *len;
    return true;
}

sotto_status sotto__gguf_open(sotto__gguf *g, const uint8_t *p, size_t n, const char *path, uint64_t max_tensors,
                              uint64_t max_kv, const char *hint, sotto__err *err)
{
    *g = (sotto__gguf){.r = {p, n, 0, path, err}, .alignment = SOTTO__GGUF_ALIGNMENT};
    sotto__reader *r = &g->r;
    if (!sotto__need(r, 4, "the magic")) return err->status;
    if (memcmp(p, "GGUF", 4) != 0)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: not a GGUF file (bad magic); %s", path, hint);
    r->i = 4;
    if (!sotto__rd_u32(r, &g->version, "the version")) return err->status;
    if (g->version < 2 || g->version > 3)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: GGUF version %u (supported: 2, 3)", path, g->version);
    if (!sotto__rd_u64(r, &g->n_tensors, "the tensor count") || !sotto__rd_u64(r, &g->n_kv, "the key count"))
        return err->status;
    if (g->n_tensors > max_tensors || g->n_kv > max_kv)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: %llu tensors / %llu keys is implausible (more than %llu / %llu); %s",
                           path, (unsigned long long)g->n_tensors, (unsigned long long)g->n_kv,
                           (unsigned long long)max_tensors, (unsigned long long)max_kv, hint);
    return SOTTO_OK;
}

bool sotto__gguf_key_is(const sotto__gguf_kv *kv, const char *key)
{
    return (size_t)kv->key_len == strlen(key) && memcmp(kv->key, key, (size_t)kv->key_len) == 0;
}

/* An array's header and elements: all inside the file (the reader is left past them). */
static sotto_status read_array(sotto__reader *r, sotto__gguf_kv *kv)
{
    if (!sotto__rd_u32(r, &kv->arr_type, "an array type") || !sotto__rd_u64(r, &kv->arr_n, "an array length"))
        return r->err->status;
    kv->arr_pos = r->i;
    uint32_t et = kv->arr_type;
    if (et == SOTTO__GGUF_STRING) { /* a bound on the count; each string is checked as it is read */
        if (kv->arr_n > r->n / 8)
            return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: array %.*s is longer than the file", r->path,
                               kv->key_len, kv->key);
        for (uint64_t k = 0; k < kv->arr_n; k++) {
            const char *s;
            uint64_t len;
            if (!sotto__gguf_rd_str(r, &s, &len, "an array string")) return r->err->status;
        }
        return SOTTO_OK;
    }
    if (et >= SOTTO__GGUF_N_TYPES || !sotto__gguf_scalar_size[et])
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: array %.*s has element type %u", r->path, kv->key_len,
                           kv->key, et);
    if (kv->arr_n > (r->n - r->i) / sotto__gguf_scalar_size[et])
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: array %.*s is longer than the file", r->path,
                           kv->key_len, kv->key);
    r->i += kv->arr_n * sotto__gguf_scalar_size[et];
    return SOTTO_OK;
}

/* A scalar value into kv->u; general.alignment is kept in G. */
static sotto_status read_scalar(sotto__gguf *g, sotto__gguf_kv *kv)
{
    sotto__reader *r = &g->r;
    size_t w = sotto__gguf_scalar_size[kv->type];
    if (!sotto__need(r, w, "a value")) return r->err->status;
    const uint8_t *p = r->p + r->i;
    kv->u = w == 1 ? p[0] : w == 2 ? sotto__rd16(p) : w == 4 ? sotto__rd32(p) : sotto__rd64(p);
    r->i += w;
    if (sotto__gguf_key_is(kv, "general.alignment")) {
        if (kv->type != SOTTO__GGUF_UINT32 || kv->u == 0 || kv->u > 65536 || (kv->u & (kv->u - 1)))
            return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: general.alignment must be a power of two uint32",
                               r->path);
        g->alignment = (uint32_t)kv->u;
    }
    return SOTTO_OK;
}

sotto_status sotto__gguf_next_kv(sotto__gguf *g, sotto__gguf_kv *kv, bool *more)
{
    *more = false;
    if (g->kv_read == g->n_kv) return SOTTO_OK;
    sotto__reader *r = &g->r;
    sotto__gguf_kv v = {0};
    uint64_t klen;
    if (!sotto__gguf_rd_str(r, &v.key, &klen, "a key") || !sotto__rd_u32(r, &v.type, "a value type"))
        return r->err->status;
    if (klen == 0 || klen > 65535)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: key of length %llu", r->path, (unsigned long long)klen);
    v.key_len = (int)klen;
    if (v.type >= SOTTO__GGUF_N_TYPES)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: key %.*s has unknown type %u", r->path, v.key_len, v.key,
                           v.type);
    sotto_status st;
    if (v.type == SOTTO__GGUF_STRING)
        st = sotto__gguf_rd_str(r, &v.str, &v.str_len, "a string value") ? SOTTO_OK : r->err->status;
    else if (v.type == SOTTO__GGUF_ARRAY) st = read_array(r, &v);
    else st = read_scalar(g, &v);
    if (st) return st;
    g->kv_read++;
    *kv = v;
    *more = true;
    return SOTTO_OK;
}

/* Tensor info K at the reader: name, rank, dimensions, type, offset. */
static sotto_status read_info(sotto__gguf *g, uint64_t k, sotto__gguf_tensor *t)
{
    sotto__reader *r = &g->r;
    const char *name;
    uint64_t name_len;
    if (!sotto__gguf_rd_str(r, &name, &name_len, "a tensor name") || !sotto__rd_u32(r, &t->n_dims, "a rank"))
        return r->err->status;
    if (name_len == 0 || name_len >= SOTTO__GGUF_NAME_LEN || t->n_dims < 1 || t->n_dims > 4)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %llu (%.*s) has a bad name or rank %u", r->path,
                           (unsigned long long)k, name_len > 64 ? 64 : (int)name_len, name, t->n_dims);
    memcpy(t->name, name, name_len);
    t->name[name_len] = 0;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        uint64_t dim;
        if (!sotto__rd_u64(r, &dim, "a dimension")) return r->err->status;
        if (dim == 0 || dim > ((uint64_t)1 << 32))
            return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %s has dimension %llu", r->path, t->name,
                               (unsigned long long)dim);
        t->dims[t->n_dims - 1 - d] = (int64_t)dim; /* GGUF lists the fastest dimension first */
    }
    if (!sotto__rd_u32(r, &t->type, "a tensor type") || !sotto__rd_u64(r, &t->off, "a tensor offset"))
        return r->err->status;
    if (t->type != SOTTO_TYPE_F32 && t->type != SOTTO_TYPE_F16 && t->type != SOTTO_TYPE_Q8_0)
        return sotto__fail(r->err, SOTTO_ERR_UNSUPPORTED, "%s: tensor %s has type %u (supported: f32, f16, q8_0)",
                           r->path, t->name, t->type);
    return SOTTO_OK;
}

/* T's bytes from its shape and type, inside [DATA_START, file end) and aligned. */
static sotto_status place(const sotto__gguf *g, sotto__gguf_tensor *t, size_t data_start)
{
    const sotto__reader *r = &g->r;
    int64_t numel = 1;
    bool ok = true;
    for (uint32_t d = 0; d < t->n_dims; d++) ok = ok && !__builtin_mul_overflow(numel, t->dims[d], &numel);
    ok = ok && numel > 0 && numel <= ((int64_t)1 << 40) && sotto__type_bytes(t->type, numel, &t->bytes);
    if (ok && t->type == SOTTO_TYPE_Q8_0) ok = t->dims[t->n_dims - 1] % 32 == 0;
    if (!ok || t->off % g->alignment || t->off > r->n - data_start || t->bytes > r->n - data_start - t->off)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %s: size or offset out of range (offset %llu + "
                           "%llu bytes is misaligned or past the end of the file)", r->path, t->name,
                           (unsigned long long)t->off, (unsigned long long)(ok ? t->bytes : 0));
    t->numel = numel;
    t->data = r->p + data_start + t->off;
    return SOTTO_OK;
}

static int by_offset(const void *a, const void *b)
{
    const sotto__gguf_tensor *x = *(const sotto__gguf_tensor *const *)a, *y = *(const sotto__gguf_tensor *const *)b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* No two tensors share a byte (a crafted file could alias one weight into another). */
static sotto_status disjoint(const sotto__gguf *g)
{
    size_t n = (size_t)g->n_tensors;
    const sotto__gguf_tensor **v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return sotto__fail(g->r.err, SOTTO_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < n; k++) v[k] = &g->t[k];
    qsort(v, n, sizeof *v, by_offset);
    sotto_status st = SOTTO_OK;
    for (size_t k = 1; k < n && !st; k++)
        if (v[k - 1]->off + v[k - 1]->bytes > v[k]->off)
            st = sotto__fail(g->r.err, SOTTO_ERR_FORMAT, "%s: tensors %s and %s share bytes (they overlap in the "
                             "file)", g->r.path, v[k - 1]->name, v[k]->name);
    free(v);
    return st;
}

sotto_status sotto__gguf_read_tensors(sotto__gguf *g)
{
    sotto__reader *r = &g->r;
    g->t = calloc(g->n_tensors ? (size_t)g->n_tensors : 1, sizeof *g->t);
    if (!g->t) return sotto__fail(r->err, SOTTO_ERR_NOMEM, "out of memory");
    sotto_status st = SOTTO_OK;
    for (uint64_t k = 0; k < g->n_tensors && !st; k++) st = read_info(g, k, &g->t[k]);
    size_t data_start = (r->i + g->alignment - 1) / g->alignment * g->alignment;
    if (!st && data_start > r->n)
        st = sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: truncated before the tensor data", r->path);
    for (uint64_t k = 0; k < g->n_tensors && !st; k++) st = place(g, &g->t[k], data_start);
    return st ? st : disjoint(g);
}

void sotto__gguf_free(sotto__gguf *g)
{
    free(g->t);
    g->t = NULL;
}
