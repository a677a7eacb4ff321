/* gguf_read.c — the native model file: GGUF v2/v3 (ggml-org/ggml docs/gguf.md) with the
 * keys of docs/FORMAT.md. The file is mapped read-only; f32 tensors point into it.
 * Every count, length, dimension and offset is checked against the file size first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "model.h"

const size_t sotto__gguf_scalar_size[SOTTO__GGUF_N_TYPES] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

bool sotto__gguf_rd_str(sotto__reader *r, const char **s, uint64_t *len, const char *what)
{
    if (!sotto__rd_u64(r, len, what) || !sotto__need(r, *len, what)) return false;
    *s = (const char *)r->p + r->i;
    r->i += *len;
    return true;
}



/* What the loader keeps of the key-value section. */
typedef struct meta {
    bool arch_ok;
    uint32_t alignment;
    int64_t n_audio_head, n_text_head;
    uint64_t tokens_pos, n_tokens; /* byte offset of the first token string */
    uint64_t merges_pos, n_merges;
    uint64_t suppress_pos, n_suppress, begin_pos, n_begin, heads_pos, n_heads;
} meta;

static bool key_is(const char *k, uint64_t len, const char *want)
{
    return len == strlen(want) && memcmp(k, want, len) == 0;
}

static sotto_status read_kv(sotto__reader *r, meta *mt)
{
    const char *key;
    uint64_t klen;
    uint32_t type;
    if (!sotto__gguf_rd_str(r, &key, &klen, "a key") || !sotto__rd_u32(r, &type, "a value type")) return r->err->status;
    if (klen == 0 || klen > 65535)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: key of length %llu", r->path, (unsigned long long)klen);
    if (type >= SOTTO__GGUF_N_TYPES)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: key %.*s has unknown type %u", r->path, (int)klen, key, type);
    if (type == SOTTO__GGUF_STRING) {
        const char *s;
        uint64_t len;
        if (!sotto__gguf_rd_str(r, &s, &len, "a string value")) return r->err->status;
        if (key_is(key, klen, "general.architecture")) mt->arch_ok = len == 7 && memcmp(s, "whisper", 7) == 0;
        return SOTTO_OK;
    }
    if (type == SOTTO__GGUF_ARRAY) {
        uint32_t et;
        uint64_t count;
        if (!sotto__rd_u32(r, &et, "an array type") || !sotto__rd_u64(r, &count, "an array length")) return r->err->status;
        uint64_t pos = r->i;
        if (et == SOTTO__GGUF_STRING) {
            if (count > r->n / 8) return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: array %.*s is longer than the file",
                                                     r->path, (int)klen, key);
            for (uint64_t k = 0; k < count; k++) {
                const char *s;
                uint64_t len;
                if (!sotto__gguf_rd_str(r, &s, &len, "an array string")) return r->err->status;
            }
        } else if (et < SOTTO__GGUF_N_TYPES && sotto__gguf_scalar_size[et]) {
            if (!sotto__need(r, 0, "") || count > (r->n - r->i) / sotto__gguf_scalar_size[et])
                return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: array %.*s is longer than the file", r->path,
                                   (int)klen, key);
            r->i += count * sotto__gguf_scalar_size[et];
        } else {
            return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: array %.*s has element type %u", r->path, (int)klen,
                               key, et);
        }
        bool i32 = et == SOTTO__GGUF_INT32;
        if (key_is(key, klen, "tokenizer.ggml.tokens") && et == SOTTO__GGUF_STRING)
            mt->tokens_pos = pos, mt->n_tokens = count;
        else if (key_is(key, klen, "tokenizer.ggml.merges") && et == SOTTO__GGUF_STRING)
            mt->merges_pos = pos, mt->n_merges = count;
        else if (key_is(key, klen, "whisper.suppress_ids") && i32)
            mt->suppress_pos = pos, mt->n_suppress = count;
        else if (key_is(key, klen, "whisper.suppress_ids_begin") && i32)
            mt->begin_pos = pos, mt->n_begin = count;
        else if (key_is(key, klen, "whisper.alignment_heads") && i32)
            mt->heads_pos = pos, mt->n_heads = count;
        return SOTTO_OK;
    }
    if (!sotto__need(r, sotto__gguf_scalar_size[type], "a value")) return r->err->status;
    uint64_t v = 0;
    switch (sotto__gguf_scalar_size[type]) {
    case 1: v = r->p[r->i]; break;
    case 2: v = sotto__rd16(r->p + r->i); break;
    case 4: v = sotto__rd32(r->p + r->i); break;
    case 8: v = sotto__rd64(r->p + r->i); break;
    }
    r->i += sotto__gguf_scalar_size[type];
    bool is_u32 = type == SOTTO__GGUF_UINT32 || type == SOTTO__GGUF_INT32;
    if (key_is(key, klen, "general.alignment")) {
        if (type != SOTTO__GGUF_UINT32 || v == 0 || v > 65536 || (v & (v - 1)))
            return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: general.alignment must be a power of two uint32",
                               r->path);
        mt->alignment = (uint32_t)v;
    } else if (key_is(key, klen, "whisper.audio.n_head") && is_u32) {
        mt->n_audio_head = (int64_t)v;
    } else if (key_is(key, klen, "whisper.text.n_head") && is_u32) {
        mt->n_text_head = (int64_t)v;
    }
    return SOTTO_OK;
}

static sotto_status read_tokens(sotto_model *m, const meta *mt, const char *path, sotto__err *err)
{
    if (mt->n_tokens == 0 || mt->n_tokens > 1000000)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: tokenizer.ggml.tokens missing or with %llu entries", path,
                           (unsigned long long)mt->n_tokens);
    const char **tok = malloc(mt->n_tokens * sizeof *tok);
    uint32_t *len = malloc(mt->n_tokens * sizeof *len);
    sotto_status st = tok && len ? SOTTO_OK : sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    const uint8_t *p = m->map.data + mt->tokens_pos; /* bounds were checked while skipping */
    for (uint64_t k = 0; !st && k < mt->n_tokens; k++) {
        uint64_t l = sotto__rd64(p);
        char *raw = sotto__model_alloc(m, l + 1);
        if (!raw) {
            st = sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
            break;
        }
        long b = sotto__bytelevel_decode((const char *)p + 8, l, raw, l);
        if (b < 0) {
            memcpy(raw, p + 8, l);
            b = (long)l;
        }
        tok[k] = raw;
        len[k] = (uint32_t)b;
        p += 8 + l;
    }
    if (!st) st = sotto__model_set_vocab(m, (int32_t)mt->n_tokens, tok, len, err);
    free(tok);
    free(len);
    return st;
}

static sotto_status read_merges(sotto_model *m, const meta *mt)
{
    if (!mt->n_merges) return SOTTO_OK;
    const uint8_t *p = m->map.data + mt->merges_pos;
    size_t total = 0;
    for (uint64_t k = 0; k < mt->n_merges; k++) {
        uint64_t l = sotto__rd64(p);
        if (memchr(p + 8, '\n', l) || memchr(p + 8, 0, l)) return SOTTO_ERR_FORMAT;
        total += l + 1;
        p += 8 + l;
    }
    m->merges = sotto__model_alloc(m, total + 1);
    if (!m->merges) return SOTTO_ERR_NOMEM;
    p = m->map.data + mt->merges_pos;
    size_t o = 0;
    for (uint64_t k = 0; k < mt->n_merges; k++) {
        uint64_t l = sotto__rd64(p);
        memcpy(m->merges + o, p + 8, l);
        o += l;
        m->merges[o++] = '\n';
        p += 8 + l;
    }
    m->merges[o] = 0;
    m->merges_len = o;
    return SOTTO_OK;
}

static sotto_status read_ids(sotto_model *m, uint64_t pos, uint64_t n, sotto__i32list *list, sotto__err *err)
{
    if (!n) return SOTTO_OK;
    list->v = sotto__model_alloc(m, n * sizeof(int32_t));
    if (!list->v) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    for (uint64_t k = 0; k < n; k++) list->v[k] = (int32_t)sotto__rd32(m->map.data + pos + 4 * k);
    list->n = (int)n;
    return SOTTO_OK;
}

sotto_status sotto__load_gguf(sotto_model *m, const char *path, sotto__err *err)
{
    sotto_status st = sotto__map_file(path, &m->map, err);
    if (st) return st;
    sotto__reader r = {m->map.data, m->map.size, 0, path, err};
    uint32_t version;
    uint64_t n_tensors, n_kv;
    if (!sotto__need(&r, 4, "the magic")) return err->status;
    if (memcmp(r.p, "GGUF", 4) != 0)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: not a GGUF file (bad magic); sotto reads .gguf files, "
                           "whisper.cpp ggml .bin files, CTranslate2 directories and Hugging Face directories", path);
    r.i = 4;
    if (!sotto__rd_u32(&r, &version, "the version")) return err->status;
    if (version < 2 || version > 3)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: GGUF version %u (supported: 2, 3)", path, version);
    if (!sotto__rd_u64(&r, &n_tensors, "the tensor count") || !sotto__rd_u64(&r, &n_kv, "the key count")) return err->status;
    if (n_tensors > 100000 || n_kv > 100000)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: %llu tensors / %llu keys is implausible", path,
                           (unsigned long long)n_tensors, (unsigned long long)n_kv);
    meta mt = {.alignment = 32};
    for (uint64_t k = 0; k < n_kv; k++)
        if ((st = read_kv(&r, &mt))) return st;
    if (!mt.arch_ok) return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: general.architecture is not \"whisper\"", path);
    /* tensor infos: remember them, check ranges once the data start is known */
    typedef struct info { const char *name; uint64_t name_len; uint32_t n_dims, type; int64_t dims[4]; uint64_t off; } info;
    info *ti = calloc(n_tensors ? n_tensors : 1, sizeof *ti);
    if (!ti) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    for (uint64_t k = 0; k < n_tensors && !st; k++) {
        info *t = &ti[k];
        if (!sotto__gguf_rd_str(&r, &t->name, &t->name_len, "a tensor name") || !sotto__rd_u32(&r, &t->n_dims, "a rank")) {
            st = err->status;
            break;
        }
        if (t->name_len == 0 || t->name_len >= SOTTO__NAME_LEN || t->n_dims < 1 || t->n_dims > 4) {
            st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: tensor %llu has a bad name or rank", path,
                             (unsigned long long)k);
            break;
        }
        for (uint32_t d = 0; d < t->n_dims && !st; d++) {
            uint64_t dim;
            if (!sotto__rd_u64(&r, &dim, "a dimension")) st = err->status;
            else if (dim == 0 || dim > ((uint64_t)1 << 32))
                st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: tensor %.*s has dimension %llu", path,
                                 (int)t->name_len, t->name, (unsigned long long)dim);
            else t->dims[t->n_dims - 1 - d] = (int64_t)dim; /* GGUF lists the fastest dim first */
        }
        if (!st && (!sotto__rd_u32(&r, &t->type, "a tensor type") || !sotto__rd_u64(&r, &t->off, "a tensor offset")))
            st = err->status;
        if (!st && t->type != SOTTO_TYPE_F32 && t->type != SOTTO_TYPE_F16 && t->type != SOTTO_TYPE_Q8_0)
            st = sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: tensor %.*s has type %u (supported: f32, f16, q8_0)",
                             path, (int)t->name_len, t->name, t->type);
    }
    size_t data_start = (r.i + mt.alignment - 1) / mt.alignment * mt.alignment;
    if (!st && data_start > r.n) st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: truncated before the tensor data", path);
    for (uint64_t k = 0; k < n_tensors && !st; k++) {
        info *t = &ti[k];
        char name[SOTTO__NAME_LEN];
        memcpy(name, t->name, t->name_len);
        name[t->name_len] = 0;
        int64_t numel = 1;
        bool ok = true;
        for (uint32_t d = 0; d < t->n_dims; d++) ok = ok && !__builtin_mul_overflow(numel, t->dims[d], &numel);
        size_t bytes;
        ok = ok && numel > 0 && numel <= ((int64_t)1 << 40) && sotto__type_bytes(t->type, numel, &bytes);
        if (ok && t->type == SOTTO_TYPE_Q8_0) ok = t->dims[t->n_dims - 1] % 32 == 0;
        if (!ok || t->off % mt.alignment || t->off > r.n - data_start || bytes > r.n - data_start - t->off) {
            st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: tensor %s: size or offset out of range", path, name);
            break;
        }
        st = sotto__model_add_tensor(m, name, t->type, (int)t->n_dims, t->dims, r.p + data_start + t->off, bytes, err);
    }
    free(ti);
    if (!st) st = sotto__model_check_disjoint(m, m->map.data, m->map.data + m->map.size, err);
    if (st) return st;
    m->n_audio_head_file = (int32_t)(mt.n_audio_head > 0 && mt.n_audio_head < 4096 ? mt.n_audio_head : 0);
    m->n_text_head_file = (int32_t)(mt.n_text_head > 0 && mt.n_text_head < 4096 ? mt.n_text_head : 0);
    if ((st = read_tokens(m, &mt, path, err))) return st;
    if ((st = read_merges(m, &mt)))
        return sotto__fail(err, st, st == SOTTO_ERR_NOMEM ? "out of memory"
                                                           : "%s: a tokenizer.ggml.merges entry holds a newline or NUL", path);
    if ((st = read_ids(m, mt.suppress_pos, mt.n_suppress, &m->suppress, err))) return st;
    if ((st = read_ids(m, mt.begin_pos, mt.n_begin, &m->suppress_begin, err))) return st;
    if ((st = read_ids(m, mt.heads_pos, mt.n_heads, &m->alignment_heads, err))) return st;
    return sotto__model_finish(m, err);
}
