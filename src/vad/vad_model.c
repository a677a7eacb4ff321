/* vad_model.c — reads the Silero VAD GGUF file (GGUF v2/v3, ggml-org/ggml docs/gguf.md;
 * keys and tensors in docs/FORMAT.md "Silero VAD") into a sotto_vad whose weights point
 * into the read-only mapping. The file is hostile: every count, length, dimension and
 * offset is checked against the file size before use, each tensor against its name,
 * type and shape, and every weight must be finite. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/gguf.h"
#include "vad_model.h"

enum { MAX_TENSORS = 64, MAX_KEYS = 256, N_VAD_TENSORS = 15 };

/* The tensors of the 16 kHz model: state_dict name and shape (outermost first). */
static const struct {
    const char *name;
    int n_dims;
    int64_t dims[3];
} want[N_VAD_TENSORS] = {
    {"stft.forward_basis_buffer", 3, {2 * SOTTO__VAD_BINS, 1, SOTTO__VAD_NFFT}},
    {"encoder.0.reparam_conv.weight", 3, {SOTTO__VAD_C1, SOTTO__VAD_BINS, 3}},
    {"encoder.0.reparam_conv.bias", 1, {SOTTO__VAD_C1}},
    {"encoder.1.reparam_conv.weight", 3, {SOTTO__VAD_C2, SOTTO__VAD_C1, 3}},
    {"encoder.1.reparam_conv.bias", 1, {SOTTO__VAD_C2}},
    {"encoder.2.reparam_conv.weight", 3, {SOTTO__VAD_C3, SOTTO__VAD_C2, 3}},
    {"encoder.2.reparam_conv.bias", 1, {SOTTO__VAD_C3}},
    {"encoder.3.reparam_conv.weight", 3, {SOTTO__VAD_C4, SOTTO__VAD_C3, 3}},
    {"encoder.3.reparam_conv.bias", 1, {SOTTO__VAD_C4}},
    {"decoder.rnn.weight_ih", 2, {4 * SOTTO__VAD_HIDDEN, SOTTO__VAD_C4}},
    {"decoder.rnn.weight_hh", 2, {4 * SOTTO__VAD_HIDDEN, SOTTO__VAD_HIDDEN}},
    {"decoder.rnn.bias_ih", 1, {4 * SOTTO__VAD_HIDDEN}},
    {"decoder.rnn.bias_hh", 1, {4 * SOTTO__VAD_HIDDEN}},
    {"decoder.decoder.2.weight", 3, {1, SOTTO__VAD_HIDDEN, 1}},
    {"decoder.decoder.2.bias", 1, {1}},
};

static bool str_is(const char *s, uint64_t len, const char *lit)
{
    return len == strlen(lit) && memcmp(s, lit, len) == 0;
}


/* What the loader keeps of the key-value section. */
typedef struct vad_meta {
    bool arch_ok;
    uint32_t alignment;
    int64_t rate, window, context; /* -1 when absent */
} vad_meta;

/* Skips one array value (of scalars or strings; nested arrays are refused). */
static sotto_status skip_array(sotto__reader *r, const char *key, int klen)
{
    uint32_t et;
    uint64_t count;
    if (!sotto__rd_u32(r, &et, "an array type") || !sotto__rd_u64(r, &count, "an array length")) return r->err->status;
    if (et == SOTTO__GGUF_STRING) {
        if (count > (r->n - r->i) / 8)
            return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: array %.*s is longer than the file", r->path, klen, key);
        for (uint64_t k = 0; k < count; k++) {
            const char *s;
            uint64_t len;
            if (!sotto__gguf_rd_str(r, &s, &len, "an array string")) return r->err->status;
        }
        return SOTTO_OK;
    }
    if (et >= SOTTO__GGUF_N_TYPES || !sotto__gguf_scalar_size[et])
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: array %.*s has element type %u", r->path, klen, key, et);
    if (count > (r->n - r->i) / sotto__gguf_scalar_size[et])
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: array %.*s is longer than the file", r->path, klen, key);
    r->i += count * sotto__gguf_scalar_size[et];
    return SOTTO_OK;
}

/* Reads one key and its value; keeps those of vad_meta. */
static sotto_status read_kv(sotto__reader *r, vad_meta *mt)
{
    const char *key;
    uint64_t klen;
    uint32_t type;
    if (!sotto__gguf_rd_str(r, &key, &klen, "a key") || !sotto__rd_u32(r, &type, "a value type")) return r->err->status;
    if (klen == 0 || klen > 65535)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: key of length %llu", r->path, (unsigned long long)klen);
    int kl = (int)klen;
    if (type >= SOTTO__GGUF_N_TYPES)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: key %.*s has unknown type %u", r->path, kl, key, type);
    if (type == SOTTO__GGUF_ARRAY) return skip_array(r, key, kl);
    if (type == SOTTO__GGUF_STRING) {
        const char *s;
        uint64_t len;
        if (!sotto__gguf_rd_str(r, &s, &len, "a string value")) return r->err->status;
        if (str_is(key, klen, "general.architecture")) {
            if (!str_is(s, len, "silero-vad"))
                return sotto__fail(r->err, SOTTO_ERR_UNSUPPORTED, "%s: general.architecture is \"%.*s\", not "
                                   "\"silero-vad\" (a VAD model is made by scripts/silero_vad_to_gguf.py)",
                                   r->path, len > 64 ? 64 : (int)len, s);
            mt->arch_ok = true;
        }
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
    int64_t *slot = str_is(key, klen, "silero-vad.sample_rate") ? &mt->rate
                    : str_is(key, klen, "silero-vad.window")    ? &mt->window
                    : str_is(key, klen, "silero-vad.context")   ? &mt->context
                                                                : NULL;
    bool u32 = type == SOTTO__GGUF_UINT32;
    if (str_is(key, klen, "general.alignment")) {
        if (!u32 || v == 0 || v > 65536 || (v & (v - 1)))
            return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: general.alignment must be a power of two uint32",
                               r->path);
        mt->alignment = (uint32_t)v;
    } else if (slot) {
        if (!u32) return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: %.*s must be a uint32", r->path, kl, key);
        *slot = (int64_t)v;
    }
    return SOTTO_OK;
}

/* The keys the model's geometry depends on, present and equal to the 16 kHz model's. */
static sotto_status check_meta(const vad_meta *mt, const char *path, sotto__err *err)
{
    if (!mt->arch_ok) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no general.architecture key", path);
    const struct { const char *key; int64_t got, need; } k[] = {
        {"silero-vad.sample_rate", mt->rate, SOTTO__VAD_RATE},
        {"silero-vad.window", mt->window, SOTTO__VAD_WINDOW},
        {"silero-vad.context", mt->context, SOTTO__VAD_CONTEXT},
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        if (k[i].got < 0) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no %s key", path, k[i].key);
        if (k[i].got != k[i].need)
            return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: %s is %lld (supported: %lld)", path, k[i].key,
                               (long long)k[i].got, (long long)k[i].need);
    }
    return SOTTO_OK;
}

typedef struct tinfo {
    const char *name;
    uint64_t name_len;
    uint32_t n_dims, type;
    int64_t dims[4];
    uint64_t off, bytes;
    int slot;                  /* index into want[] */
} tinfo;

/* Reads tensor info K and matches it against the model's tensors. */
static sotto_status read_tinfo(sotto__reader *r, tinfo *t, const bool *seen)
{
    if (!sotto__gguf_rd_str(r, &t->name, &t->name_len, "a tensor name") || !sotto__rd_u32(r, &t->n_dims, "a rank"))
        return r->err->status;
    int nl = t->name_len > 64 ? 64 : (int)t->name_len;
    if (t->name_len == 0 || t->n_dims < 1 || t->n_dims > 4)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %.*s has an empty name or rank %u", r->path, nl,
                           t->name, t->n_dims);
    for (uint32_t d = 0; d < t->n_dims; d++) {
        uint64_t dim;
        if (!sotto__rd_u64(r, &dim, "a dimension")) return r->err->status;
        if (dim == 0 || dim > ((uint64_t)1 << 32))
            return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %.*s has dimension %llu", r->path, nl, t->name,
                               (unsigned long long)dim);
        t->dims[t->n_dims - 1 - d] = (int64_t)dim; /* GGUF lists the fastest dimension first */
    }
    if (!sotto__rd_u32(r, &t->type, "a tensor type") || !sotto__rd_u64(r, &t->off, "a tensor offset")) return r->err->status;
    t->slot = -1;
    for (int s = 0; s < N_VAD_TENSORS; s++)
        if (str_is(t->name, t->name_len, want[s].name)) t->slot = s;
    if (t->slot < 0)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %.*s is not one of the Silero VAD's", r->path, nl,
                           t->name);
    if (seen[t->slot])
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %s appears twice", r->path, want[t->slot].name);
    if (t->type != SOTTO_TYPE_F32)
        return sotto__fail(r->err, SOTTO_ERR_UNSUPPORTED, "%s: tensor %s has type %u (supported: 0, f32)", r->path,
                           want[t->slot].name, t->type);
    bool shape_ok = (int)t->n_dims == want[t->slot].n_dims;
    for (uint32_t d = 0; shape_ok && d < t->n_dims; d++) shape_ok = t->dims[d] == want[t->slot].dims[d];
    if (!shape_ok) {
        char got[96];
        int o = 0;
        for (uint32_t d = 0; d < t->n_dims; d++)
            o += snprintf(got + o, sizeof got - (size_t)o, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %s has shape [%s], expected another", r->path,
                           want[t->slot].name, got);
    }
    uint64_t numel = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) numel *= (uint64_t)t->dims[d]; /* the shape is one of want[]'s */
    t->bytes = numel * sizeof(float);
    return SOTTO_OK;
}

/* Data ranges inside the file, aligned, disjoint, and the values finite. */
static sotto_status check_data(const tinfo *ti, int n, size_t data_start, size_t size, uint32_t align,
                               const char *path, sotto__err *err)
{
    for (int k = 0; k < n; k++) {
        const tinfo *t = &ti[k];
        const char *name = want[t->slot].name;
        if (t->off % align || t->off > size - data_start || t->bytes > size - data_start - t->off)
            return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: tensor %s: offset %llu + %llu bytes is misaligned or past "
                               "the end of the file", path, name, (unsigned long long)t->off,
                               (unsigned long long)t->bytes);
        for (int j = 0; j < k; j++)
            if (t->off < ti[j].off + ti[j].bytes && ti[j].off < t->off + t->bytes)
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: tensors %s and %s share bytes", path,
                                   want[ti[j].slot].name, name);
    }
    return SOTTO_OK;
}

/* Every value finite (a NaN weight would make every probability NaN), then the weights
 * bound to their tensors. */
static sotto_status bind(sotto_vad *v, const tinfo *ti, int n, const uint8_t *data, const char *path,
                         sotto__err *err)
{
    const float *at[N_VAD_TENSORS] = {0};
    for (int k = 0; k < n; k++) {
        const float *x = (const float *)(data + ti[k].off);
        for (size_t i = 0; i < ti[k].bytes / sizeof(float); i++)
            if (!isfinite(x[i]))
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: tensor %s: value %zu is not finite", path,
                                   want[ti[k].slot].name, i);
        at[ti[k].slot] = x;
    }
    sotto__vad_weights *w = &v->w;
    w->stft = at[0];
    for (int c = 0; c < 4; c++) w->conv_w[c] = at[1 + 2 * c], w->conv_b[c] = at[2 + 2 * c];
    w->w_ih = at[9], w->w_hh = at[10], w->b_ih = at[11], w->b_hh = at[12];
    w->out_w = at[13], w->out_b = at[14];
    return SOTTO_OK;
}

sotto_status sotto__vad_model_load(const char *path, sotto_vad **out, sotto__err *err)
{
    *out = NULL;
    sotto_vad *v = calloc(1, sizeof *v);
    if (!v) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    sotto_status st = sotto__map_file(path, &v->map, err);
    tinfo ti[MAX_TENSORS];
    bool seen[N_VAD_TENSORS] = {0};
    uint64_t n_tensors = 0, n_kv = 0;
    sotto__reader r = {v->map.data, v->map.size, 0, path, err};
    vad_meta mt = {.alignment = SOTTO__GGUF_ALIGNMENT, .rate = -1, .window = -1, .context = -1};
    uint32_t version = 0;
    if (!st && !sotto__need(&r, 4, "the magic")) st = err->status;
    if (!st && memcmp(r.p, "GGUF", 4) != 0)
        st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: not a GGUF file (bad magic); a VAD model is the .gguf file "
                         "scripts/silero_vad_to_gguf.py writes", path);
    r.i = 4;
    if (!st && !sotto__rd_u32(&r, &version, "the version")) st = err->status;
    if (!st && (version < 2 || version > 3))
        st = sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: GGUF version %u (supported: 2, 3)", path, version);
    if (!st && (!sotto__rd_u64(&r, &n_tensors, "the tensor count") || !sotto__rd_u64(&r, &n_kv, "the key count"))) st = err->status;
    if (!st && (n_tensors > MAX_TENSORS || n_kv > MAX_KEYS))
        st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: %llu tensors / %llu keys is implausible for a VAD model", path,
                         (unsigned long long)n_tensors, (unsigned long long)n_kv);
    for (uint64_t k = 0; !st && k < n_kv; k++) st = read_kv(&r, &mt);
    if (!st) st = check_meta(&mt, path, err);
    for (uint64_t k = 0; !st && k < n_tensors; k++) {
        st = read_tinfo(&r, &ti[k], seen);
        if (!st) seen[ti[k].slot] = true;
    }
    for (int s = 0; !st && s < N_VAD_TENSORS; s++)
        if (!seen[s]) st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no tensor %s", path, want[s].name);
    size_t data_start = (r.i + mt.alignment - 1) / mt.alignment * mt.alignment;
    if (!st && data_start > r.n) st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: truncated before the tensor data", path);
    if (!st) st = check_data(ti, (int)n_tensors, data_start, r.n, mt.alignment, path, err);
    if (!st) st = bind(v, ti, (int)n_tensors, r.p + data_start, path, err);
    if (st) {
        sotto_vad_free(v);
        return st;
    }
    *out = v;
    return SOTTO_OK;
}

sotto_status sotto_vad_load(const char *path, sotto_vad **out)
{
    sotto__err err = {0};
    if (!out) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "sotto_vad_load: no output pointer"});
    *out = NULL;
    if (!path) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "no VAD model path given"});
    sotto_status st = sotto__vad_model_load(path, out, &err);
    return st ? sotto__publish(&err) : SOTTO_OK;
}

void sotto_vad_free(sotto_vad *vad)
{
    if (!vad) return;
    sotto__unmap(&vad->map);
    free(vad);
}
