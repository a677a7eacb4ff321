/* ct2.c — CTranslate2 Whisper directories (model.bin, config.json, vocabulary.txt or
 * vocabulary.json), as written by ct2-transformers-converter and shipped for
 * faster-whisper. Variables are renamed to openai-whisper names; fused QKV / KV
 * projections are split (rows are contiguous, so the pieces point into the mapping);
 * int8 weights with per-row scales and bf16 values are converted to f32 once.
 * Format: OpenNMT/CTranslate2 python/ctranslate2/specs/model_spec.py. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "model.h"

enum { CT2_F32, CT2_I8, CT2_I16, CT2_I32, CT2_F16, CT2_BF16, CT2_N_TYPES };
static const size_t ct2_item[CT2_N_TYPES] = {4, 1, 2, 4, 2, 2};

typedef struct ct2_var {
    const char *name;          /* into the mapping, NUL-terminated (checked) */
    int rank;
    int64_t dims[4];
    int dtype;
    const uint8_t *data;
    size_t n_bytes;
} ct2_var;

typedef struct ct2_file {
    ct2_var *vars;
    int n_vars;
    const char **alias_from, **alias_to; /* ctranslate2 stores equal tensors (zero biases, the tied
                                             projection) once and names the others as aliases */
    int n_alias;
} ct2_file;


static bool rd_str(sotto__reader *r, const char **s, const char *what)
{
    if (!sotto__need(r, 2, what)) return false;
    uint16_t len = sotto__rd16(r->p + r->i);
    r->i += 2;
    if (len == 0) {
        sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: empty string for %s at byte %zu", r->path, what, r->i - 2);
        return false;
    }
    if (!sotto__need(r, len, what)) return false;
    const char *str = (const char *)r->p + r->i;
    if (str[len - 1] != 0 || memchr(str, 0, len - 1)) {
        sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: malformed string for %s at byte %zu", r->path, what, r->i);
        return false;
    }
    r->i += len;
    *s = str;
    return true;
}

static sotto_status parse_bin(const sotto__map *map, const char *path, ct2_file *f, sotto__err *err)
{
    sotto__reader r = {map->data, map->size, 0, path, err};
    uint32_t version, revision, n_vars;
    const char *spec;
    if (!sotto__rd_u32(&r, &version, "the version")) return err->status;
    if (version < 4 || version > 6)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: CTranslate2 binary version %u (supported: 4 to 6)",
                           path, version);
    if (!rd_str(&r, &spec, "the spec name") || !sotto__rd_u32(&r, &revision, "the spec revision") ||
        !sotto__rd_u32(&r, &n_vars, "the variable count"))
        return err->status;
    if (strcmp(spec, "WhisperSpec") != 0)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: spec '%s' is not a Whisper model", path, spec);
    if (n_vars > 100000)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: %u variables is implausible", path, n_vars);
    f->vars = calloc(n_vars ? n_vars : 1, sizeof *f->vars);
    if (!f->vars) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; k < n_vars; k++) {
        ct2_var *v = &f->vars[k];
        if (!rd_str(&r, &v->name, "a variable name") || !sotto__need(&r, 1, "a rank")) return err->status;
        v->rank = r.p[r.i++];
        if (v->rank > 4)
            return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: variable %s has rank %d", path, v->name, v->rank);
        int64_t numel = 1;
        for (int d = 0; d < v->rank; d++) {
            uint32_t dim;
            if (!sotto__rd_u32(&r, &dim, "a dimension")) return err->status;
            v->dims[d] = dim;
            if (__builtin_mul_overflow(numel, (int64_t)dim, &numel))
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: variable %s is too large", path, v->name);
        }
        uint32_t n_bytes;
        if (!sotto__need(&r, 1, "a dtype")) return err->status;
        v->dtype = r.p[r.i++];
        if (v->dtype >= CT2_N_TYPES)
            return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: variable %s has unknown dtype %d", path, v->name, v->dtype);
        if (!sotto__rd_u32(&r, &n_bytes, "a byte count")) return err->status;
        size_t want;
        if (!sotto__mul_ok((size_t)numel, ct2_item[v->dtype], &want) || want != n_bytes)
            return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: variable %s holds %u bytes, its shape needs %zu",
                               path, v->name, n_bytes, want);
        if (!sotto__need(&r, n_bytes, v->name)) return err->status;
        v->data = r.p + r.i;
        v->n_bytes = n_bytes;
        r.i += n_bytes;
        f->n_vars++;
    }
    uint32_t n_alias = 0;
    if (!sotto__rd_u32(&r, &n_alias, "the alias count")) return err->status;
    if (n_alias > 100000 || n_alias > (r.n - r.i) / 4)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: %u aliases do not fit the file", path, n_alias);
    f->alias_from = calloc(n_alias ? n_alias : 1, sizeof *f->alias_from);
    f->alias_to = calloc(n_alias ? n_alias : 1, sizeof *f->alias_to);
    if (!f->alias_from || !f->alias_to) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; k < n_alias; k++) {
        if (!rd_str(&r, &f->alias_from[k], "an alias") || !rd_str(&r, &f->alias_to[k], "an alias target"))
            return err->status;
        f->n_alias++;
    }
    if (r.i != r.n)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: %zu unexpected bytes after the last record", path, r.n - r.i);
    return SOTTO_OK;
}

static const ct2_var *find_var(const ct2_file *f, const char *name)
{
    for (int k = 0; k < f->n_alias; k++)
        if (strcmp(f->alias_from[k], name) == 0) name = f->alias_to[k];
    for (int k = 0; k < f->n_vars; k++)
        if (strcmp(f->vars[k].name, name) == 0) return &f->vars[k];
    return NULL;
}

/* A variable as f32 or f16 values: int8 (with NAME_scale per row) and bf16 become f32. */
typedef struct view {
    sotto_type type;
    const uint8_t *data;
    int rank;
    int64_t dims[4];
    size_t item;
} view;

static sotto_status get_view(sotto_model *m, const ct2_file *f, const char *name, view *out,
                             sotto__err *err)
{
    const ct2_var *v = find_var(f, name);
    if (!v) return sotto__fail(err, SOTTO_ERR_FORMAT, "model.bin lacks variable %s", name);
    out->rank = v->rank;
    memcpy(out->dims, v->dims, sizeof out->dims);
    int64_t numel = 1;
    for (int d = 0; d < v->rank; d++) numel *= v->dims[d];
    if (v->dtype == CT2_F32 || v->dtype == CT2_F16) {
        out->type = v->dtype == CT2_F32 ? SOTTO_TYPE_F32 : SOTTO_TYPE_F16;
        out->data = v->data;
        out->item = v->dtype == CT2_F32 ? 4 : 2;
        return SOTTO_OK;
    }
    float *dst = sotto__model_alloc(m, (size_t)numel * sizeof(float));
    if (!dst) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory converting %s", name);
    if (v->dtype == CT2_BF16) {
        for (int64_t i = 0; i < numel; i++) {
            uint32_t bits = (uint32_t)sotto__rd16(v->data + 2 * i) << 16;
            memcpy(&dst[i], &bits, 4);
        }
    } else if (v->dtype == CT2_I8 && v->rank == 2) {
        char sname[256];
        snprintf(sname, sizeof sname, "%s_scale", name);
        const ct2_var *s = find_var(f, sname);
        if (!s || s->rank != 1 || s->dims[0] != v->dims[0] || s->dtype != CT2_F32)
            return sotto__fail(err, SOTTO_ERR_FORMAT, "int8 variable %s lacks an f32 row scale %s", name, sname);
        for (int64_t row = 0; row < v->dims[0]; row++) {
            float scale;
            memcpy(&scale, s->data + 4 * row, 4);
            if (!(scale != 0))
                return sotto__fail(err, SOTTO_ERR_FORMAT, "variable %s has a zero scale at row %lld", sname,
                                   (long long)row);
            for (int64_t c = 0; c < v->dims[1]; c++)
                dst[row * v->dims[1] + c] = (float)(int8_t)v->data[row * v->dims[1] + c] / scale;
        }
    } else {
        return sotto__fail(err, SOTTO_ERR_FORMAT, "variable %s has dtype %d, expected a float or int8 matrix",
                           name, v->dtype);
    }
    out->type = SOTTO_TYPE_F32;
    out->data = (const uint8_t *)dst;
    out->item = 4;
    return SOTTO_OK;
}

/* Adds rows [row0, row0 + n_rows) of a rank-1 or rank-2 view as tensor NAME. */
static sotto_status add_rows(sotto_model *m, const char *name, const view *v, int64_t row0,
                             int64_t n_rows, sotto__err *err)
{
    int64_t cols = v->rank == 2 ? v->dims[1] : 1;
    if (v->rank < 1 || v->rank > 2 || row0 + n_rows > v->dims[0])
        return sotto__fail(err, SOTTO_ERR_FORMAT, "tensor %s: source has the wrong shape", name);
    int64_t dims[2] = {n_rows, cols};
    return sotto__model_add_tensor(m, name, v->type, v->rank, dims, v->data + (size_t)(row0 * cols) * v->item,
                                   (size_t)(n_rows * cols) * v->item, err);
}

static sotto_status add_whole(sotto_model *m, const ct2_file *f, const char *src, const char *dst,
                              sotto__err *err)
{
    view v;
    sotto_status st = get_view(m, f, src, &v, err);
    if (st) return st;
    int64_t numel = 1;
    for (int d = 0; d < v.rank; d++) numel *= v.dims[d];
    if (v.rank == 0) return sotto__fail(err, SOTTO_ERR_FORMAT, "variable %s is a scalar", src);
    return sotto__model_add_tensor(m, dst, v.type, v.rank, v.dims, v.data, (size_t)numel * v.item, err);
}

/* Adds SRC/W_NAME as DST.weight and SRC/B_NAME as DST.bias: a LayerNorm is stored as
 * gamma/beta, a linear layer as weight/bias. */
static sotto_status add_pair(sotto_model *m, const ct2_file *f, const char *src, const char *dst,
                             const char *w_name, const char *b_name, sotto__err *err)
{
    char a[256], d[256];
    snprintf(a, sizeof a, "%s/%s", src, w_name);
    snprintf(d, sizeof d, "%s.weight", dst);
    sotto_status st = add_whole(m, f, a, d, err);
    snprintf(a, sizeof a, "%s/%s", src, b_name);
    snprintf(d, sizeof d, "%s.bias", dst);
    return st ? st : add_whole(m, f, a, d, err);
}

static sotto_status add_norm(sotto_model *m, const ct2_file *f, const char *src, const char *dst,
                             sotto__err *err)
{
    return add_pair(m, f, src, dst, "gamma", "beta", err);
}

static sotto_status add_linear(sotto_model *m, const ct2_file *f, const char *src, const char *dst,
                               sotto__err *err)
{
    return add_pair(m, f, src, dst, "weight", "bias", err);
}

/* Splits a fused projection SRC (weight [k*d, d_in], bias [k*d]) into the openai names in
 * DST[k]; the key part (named with a NULL bias slot) has no bias in Whisper. A constant
 * key bias shifts every score of a query equally, so dropping it is exact. */
static sotto_status add_fused(sotto_model *m, const ct2_file *f, const char *src, const char *const *dst,
                              const bool *has_bias, int k, sotto__err *err)
{
    char name[256];
    view w, bias;
    snprintf(name, sizeof name, "%s/weight", src);
    sotto_status st = get_view(m, f, name, &w, err);
    snprintf(name, sizeof name, "%s/bias", src);
    if (!st) st = get_view(m, f, name, &bias, err);
    if (st) return st;
    if (w.rank != 2 || w.dims[0] % k || bias.rank != 1 || bias.dims[0] != w.dims[0])
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: fused projection has the wrong shape", src);
    int64_t d = w.dims[0] / k;
    for (int j = 0; j < k && !st; j++) {
        snprintf(name, sizeof name, "%s.weight", dst[j]);
        st = add_rows(m, name, &w, j * d, d, err);
        if (!st && has_bias[j]) {
            snprintf(name, sizeof name, "%s.bias", dst[j]);
            st = add_rows(m, name, &bias, j * d, d, err);
        }
    }
    return st;
}

static sotto_status add_layer(sotto_model *m, const ct2_file *f, const char *stack, int i, sotto__err *err)
{
    char s[128], d[128], q[128], k[128], v[128];
    const bool qkv_bias[3] = {true, false, true};
    sotto_status st;
#define SRC(x) (snprintf(s, sizeof s, "%s/layer_%d/%s", stack, i, x), s)
#define DST(x) (snprintf(d, sizeof d, "%s.blocks.%d.%s", stack, i, x), d)
    snprintf(q, sizeof q, "%s.blocks.%d.attn.query", stack, i);
    snprintf(k, sizeof k, "%s.blocks.%d.attn.key", stack, i);
    snprintf(v, sizeof v, "%s.blocks.%d.attn.value", stack, i);
    const char *qkv[3] = {q, k, v};
    if ((st = add_norm(m, f, SRC("self_attention/layer_norm"), DST("attn_ln"), err))) return st;
    if ((st = add_fused(m, f, SRC("self_attention/linear_0"), qkv, qkv_bias, 3, err))) return st;
    if ((st = add_linear(m, f, SRC("self_attention/linear_1"), DST("attn.out"), err))) return st;
    if (strcmp(stack, "decoder") == 0) {
        snprintf(k, sizeof k, "decoder.blocks.%d.cross_attn.key", i);
        snprintf(v, sizeof v, "decoder.blocks.%d.cross_attn.value", i);
        const char *kv[2] = {k, v};
        const bool kv_bias[2] = {false, true};
        if ((st = add_norm(m, f, SRC("attention/layer_norm"), DST("cross_attn_ln"), err))) return st;
        if ((st = add_linear(m, f, SRC("attention/linear_0"), DST("cross_attn.query"), err))) return st;
        if ((st = add_fused(m, f, SRC("attention/linear_1"), kv, kv_bias, 2, err))) return st;
        if ((st = add_linear(m, f, SRC("attention/linear_2"), DST("cross_attn.out"), err))) return st;
    }
    if ((st = add_norm(m, f, SRC("ffn/layer_norm"), DST("mlp_ln"), err))) return st;
    if ((st = add_linear(m, f, SRC("ffn/linear_0"), DST("mlp.0"), err))) return st;
    return add_linear(m, f, SRC("ffn/linear_1"), DST("mlp.2"), err);
#undef SRC
#undef DST
}

static int count_ct2_layers(const ct2_file *f, const char *stack)
{
    char name[128];
    int n = 0;
    for (;;) {
        snprintf(name, sizeof name, "%s/layer_%d/self_attention/layer_norm/gamma", stack, n);
        if (!find_var(f, name) || n >= SOTTO__MAX_LAYERS) return n;
        n++;
    }
}

static int32_t scalar_int(const ct2_file *f, const char *name)
{
    const ct2_var *v = find_var(f, name);
    if (!v || v->rank != 0) return 0;
    if (v->dtype == CT2_I16) return (int16_t)sotto__rd16(v->data);
    if (v->dtype == CT2_I32) return (int32_t)sotto__rd32(v->data);
    if (v->dtype == CT2_I8) return (int8_t)v->data[0];
    return 0;
}

static sotto_status load_vocab(sotto_model *m, const char *dir, sotto__err *err)
{
    char path[4096];
    char *text = NULL;
    size_t n = 0;
    sotto__json_doc doc = {0};
    bool json = sotto__path_join(path, sizeof path, dir, "vocabulary.json") && sotto__file_exists(path);
    if (!json && !sotto__path_join(path, sizeof path, dir, "vocabulary.txt"))
        return sotto__fail(err, SOTTO_ERR_IO, "path too long");
    sotto_status st = sotto__read_file(path, 64u << 20, &text, &n, err);
    if (st) return st;
    /* Collect token strings (byte-level form) first, then decode to raw bytes. */
    size_t cap = 1024, count = 0;
    const char **tok = malloc(cap * sizeof *tok);
    uint32_t *len = malloc(cap * sizeof *len);
    if (json) st = sotto__json_parse(text, n, path, &doc, err);
    if (!st && json && doc.root->kind != SOTTO__JSON_ARR)
        st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: expected an array of strings", path);
    const sotto__json *item = json && !st ? doc.root->child : NULL;
    size_t pos = 0;
    while (!st && tok && len) {
        const char *s;
        size_t l;
        if (json) {
            if (!item) break;
            if (item->kind != SOTTO__JSON_STR) {
                st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: item %zu is not a string", path, count);
                break;
            }
            s = item->str;
            l = item->len;
            item = item->next;
        } else {
            if (pos >= n) break;
            s = text + pos;
            const char *nl = memchr(s, '\n', n - pos);
            l = nl ? (size_t)(nl - s) : n - pos;
            pos += l + 1;
            if (l && s[l - 1] == '\r') l--;
        }
        if (count == cap) {
            cap *= 2;
            const char **t2 = realloc(tok, cap * sizeof *tok);
            uint32_t *l2 = t2 ? realloc(len, cap * sizeof *len) : NULL;
            if (t2) tok = t2;
            if (l2) len = l2;
            if (!t2 || !l2) break;
        }
        /* decode into a private copy (raw bytes are never longer), freed once the model's
         * vocabulary holds them all in one buffer */
        char *raw = malloc(l + 1);
        if (!raw) break;
        long b = sotto__bytelevel_decode(s, l, raw, l);
        if (b < 0) { /* not a byte-level string: keep the UTF-8 text as is */
            memcpy(raw, s, l);
            b = (long)l;
        }
        tok[count] = raw;
        len[count] = (uint32_t)b;
        count++;
    }
    if (!st && (!tok || !len || (json ? item != NULL : pos < n)))
        st = sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory reading %s", path);
    if (!st && count > 1000000) st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: too many tokens", path);
    if (!st) st = sotto__model_set_vocab(m, (int32_t)count, tok, len, err);
    for (size_t i = 0; tok && i < count; i++) free((char *)tok[i]);
    free(tok);
    free(len);
    sotto__json_free(&doc);
    free(text);
    return st;
}

/* Reads an array of integer ids (or of [layer, head] pairs when PAIRS) into LIST. */
sotto_status sotto__json_ids(sotto_model *m, const sotto__json *arr, bool pairs, sotto__i32list *list,
                             const char *what, sotto__err *err)
{
    if (!arr) return SOTTO_OK;
    if (arr->kind != SOTTO__JSON_ARR) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s is not an array", what);
    int per = pairs ? 2 : 1;
    list->v = sotto__model_alloc(m, (size_t)(arr->n * per) * sizeof(int32_t));
    if (!list->v) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    list->n = 0;
    for (const sotto__json *it = arr->child; it; it = it->next) {
        const sotto__json *vals[2] = {it, NULL};
        if (pairs) {
            if (it->kind != SOTTO__JSON_ARR || it->n != 2)
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: item %d is not a pair", what, list->n / 2);
            vals[0] = it->child;
            vals[1] = it->child->next;
        }
        for (int k = 0; k < per; k++) {
            int64_t v;
            if (!sotto__json_int(vals[k], 0, 10000000, &v))
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: item %d is not a non-negative integer", what,
                                   list->n / per);
            list->v[list->n++] = (int32_t)v;
        }
    }
    return SOTTO_OK;
}

static sotto_status load_config(sotto_model *m, const char *dir, sotto__err *err)
{
    char path[4096];
    if (!sotto__path_join(path, sizeof path, dir, "config.json") || !sotto__file_exists(path))
        return SOTTO_OK; /* optional: the reference lists are then derived at decode time */
    char *text;
    size_t n;
    sotto__json_doc doc;
    sotto_status st = sotto__read_file(path, 16u << 20, &text, &n, err);
    if (!st) st = sotto__json_parse(text, n, path, &doc, err);
    free(text);
    if (st) return st;
    if (!st) st = sotto__json_ids(m, sotto__json_get(doc.root, "suppress_ids"), false, &m->suppress,
                                  "config.json suppress_ids", err);
    if (!st) st = sotto__json_ids(m, sotto__json_get(doc.root, "suppress_ids_begin"), false,
                                  &m->suppress_begin, "config.json suppress_ids_begin", err);
    if (!st) st = sotto__json_ids(m, sotto__json_get(doc.root, "alignment_heads"), true,
                                  &m->alignment_heads, "config.json alignment_heads", err);
    sotto__json_free(&doc);
    return st;
}

sotto_status sotto__load_ct2(sotto_model *m, const char *dir, sotto__err *err)
{
    char path[4096];
    if (!sotto__path_join(path, sizeof path, dir, "model.bin"))
        return sotto__fail(err, SOTTO_ERR_IO, "path too long");
    ct2_file f = {0};
    sotto_status st = sotto__map_file(path, &m->map, err);
    if (!st) st = parse_bin(&m->map, path, &f, err);
    int n_enc = st ? 0 : count_ct2_layers(&f, "encoder");
    int n_dec = st ? 0 : count_ct2_layers(&f, "decoder");
    if (!st && (n_enc == 0 || n_dec == 0))
        st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no encoder or decoder layers", path);
    if (!st) st = add_linear(m, &f, "encoder/conv1", "encoder.conv1", err);
    if (!st) st = add_linear(m, &f, "encoder/conv2", "encoder.conv2", err);
    if (!st) st = add_whole(m, &f, "encoder/position_encodings/encodings", "encoder.positional_embedding", err);
    for (int i = 0; !st && i < n_enc; i++) st = add_layer(m, &f, "encoder", i, err);
    if (!st) st = add_norm(m, &f, "encoder/layer_norm", "encoder.ln_post", err);
    if (!st) st = add_whole(m, &f, "decoder/embeddings/weight", "decoder.token_embedding.weight", err);
    if (!st) st = add_whole(m, &f, "decoder/position_encodings/encodings", "decoder.positional_embedding", err);
    for (int i = 0; !st && i < n_dec; i++) st = add_layer(m, &f, "decoder", i, err);
    if (!st) st = add_norm(m, &f, "decoder/layer_norm", "decoder.ln", err);
    if (!st) {
        m->n_audio_head_file = scalar_int(&f, "encoder/num_heads");
        m->n_text_head_file = scalar_int(&f, "decoder/num_heads");
    }
    free(f.vars);
    free(f.alias_from);
    free(f.alias_to);
    if (!st) st = load_vocab(m, dir, err);
    if (!st) st = load_config(m, dir, err);
    if (!st) st = sotto__model_finish(m, err);
    return st;
}
