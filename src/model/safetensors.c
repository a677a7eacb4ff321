/* safetensors.c — Hugging Face Whisper directories: config.json (head counts),
 * model.safetensors (u64 header length, JSON header, data), tokenizer.json or
 * vocab.json + added_tokens.json, and generation_config.json for the decoding lists.
 * Tensor names are mapped to openai-whisper names; F32/F16 tensors point into the
 * mapping, BF16 ones are widened once. Format: huggingface/safetensors README. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "model.h"

/* Hugging Face name -> openai-whisper name; false for names sotto does not use. */
static bool map_name(const char *hf, char *out, size_t n)
{
    static const struct { const char *from, *to; } whole[] = {
        {"model.encoder.conv1.weight", "encoder.conv1.weight"},
        {"model.encoder.conv1.bias", "encoder.conv1.bias"},
        {"model.encoder.conv2.weight", "encoder.conv2.weight"},
        {"model.encoder.conv2.bias", "encoder.conv2.bias"},
        {"model.encoder.embed_positions.weight", "encoder.positional_embedding"},
        {"model.encoder.layer_norm.weight", "encoder.ln_post.weight"},
        {"model.encoder.layer_norm.bias", "encoder.ln_post.bias"},
        {"model.decoder.embed_tokens.weight", "decoder.token_embedding.weight"},
        {"model.decoder.embed_positions.weight", "decoder.positional_embedding"},
        {"model.decoder.layer_norm.weight", "decoder.ln.weight"},
        {"model.decoder.layer_norm.bias", "decoder.ln.bias"},
    };
    for (size_t k = 0; k < sizeof whole / sizeof *whole; k++)
        if (strcmp(hf, whole[k].from) == 0) return snprintf(out, n, "%s", whole[k].to) < (int)n;
    static const struct { const char *from, *to; } part[] = {
        {"self_attn.q_proj", "attn.query"}, {"self_attn.k_proj", "attn.key"},
        {"self_attn.v_proj", "attn.value"}, {"self_attn.out_proj", "attn.out"},
        {"self_attn_layer_norm", "attn_ln"},
        {"encoder_attn.q_proj", "cross_attn.query"}, {"encoder_attn.k_proj", "cross_attn.key"},
        {"encoder_attn.v_proj", "cross_attn.value"}, {"encoder_attn.out_proj", "cross_attn.out"},
        {"encoder_attn_layer_norm", "cross_attn_ln"},
        {"fc1", "mlp.0"}, {"fc2", "mlp.2"}, {"final_layer_norm", "mlp_ln"},
    };
    const char *stack;
    int layer, used = 0;
    if (strncmp(hf, "model.encoder.layers.", 21) == 0) stack = "encoder";
    else if (strncmp(hf, "model.decoder.layers.", 21) == 0) stack = "decoder";
    else return false;
    if (sscanf(hf + 21, "%d.%n", &layer, &used) != 1 || used == 0 || layer < 0 || layer >= SOTTO__MAX_LAYERS)
        return false;
    const char *rest = hf + 21 + used;
    for (size_t k = 0; k < sizeof part / sizeof *part; k++) {
        size_t len = strlen(part[k].from);
        if (strncmp(rest, part[k].from, len) == 0 && rest[len] == '.') {
            return snprintf(out, n, "%s.blocks.%d.%s%s", stack, layer, part[k].to, rest + len) < (int)n;
        }
    }
    return false;
}

typedef struct range {
    int64_t begin, end;
    const char *name;
} range;

static int cmp_range(const void *a, const void *b)
{
    const range *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* The format indexes the data buffer entirely, without holes or overlaps. An entry whose
 * range equals another's exactly (a tied proj_out.weight written by some exporters) is
 * taken as an alias. */
static sotto_status check_layout(const sotto__json *root, size_t data_size, const char *path, sotto__err *err)
{
    range *r = malloc((size_t)(root->n ? root->n : 1) * sizeof *r);
    if (!r) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    int n = 0;
    for (const sotto__json *e = root->child; e; e = e->next) {
        const sotto__json *offs = sotto__json_get(e, "data_offsets");
        if (strcmp(e->key, "__metadata__") == 0) continue;
        if (!offs || offs->kind != SOTTO__JSON_ARR || offs->n != 2 ||
            !sotto__json_int(offs->child, 0, INT64_MAX / 2, &r[n].begin) ||
            !sotto__json_int(offs->child->next, r[n].begin, INT64_MAX / 2, &r[n].end)) {
            free(r);
            return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: entry %s: bad data_offsets", path, e->key);
        }
        if ((uint64_t)r[n].end > data_size) {
            long long end = (long long)r[n].end;
            free(r);
            return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: entry %s: data_offsets end %lld past the %zu data bytes",
                               path, e->key, end, data_size);
        }
        r[n++].name = e->key;
    }
    qsort(r, (size_t)n, sizeof *r, cmp_range);
    int64_t at = 0;
    sotto_status st = SOTTO_OK;
    for (int i = 0; i < n && !st; i++) {
        if (i > 0 && r[i].begin == r[i - 1].begin && r[i].end == r[i - 1].end) continue;
        if (r[i].begin != at)
            st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: entry %s: data_offsets start at %lld, expected %lld "
                             "(%s)", path, r[i].name, (long long)r[i].begin, (long long)at,
                             r[i].begin < at ? "overlap" : "hole");
        at = r[i].end;
    }
    if (!st && (uint64_t)at != data_size)
        st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: data_offsets cover %lld of %zu data bytes", path, (long long)at,
                         data_size);
    free(r);
    return st;
}

static sotto_status load_tensors(sotto_model *m, const char *path, sotto__err *err)
{
    sotto_status st = sotto__map_file(path, &m->map, err);
    if (st) return st;
    const uint8_t *p = m->map.data;
    size_t size = m->map.size;
    if (size < 8) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: truncated (no header length)", path);
    uint64_t hlen = sotto__rd64(p);
    if (hlen < 2 || hlen > 100000000 || hlen > size - 8)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: header length %llu out of range", path, (unsigned long long)hlen);
    sotto__json_doc doc;
    if ((st = sotto__json_parse((const char *)p + 8, hlen, path, &doc, err))) return st;
    const uint8_t *data = p + 8 + hlen;
    size_t data_size = size - 8 - hlen;
    if (doc.root->kind != SOTTO__JSON_OBJ) st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: header is not an object", path);
    if (!st) st = check_layout(doc.root, data_size, path, err);
    for (const sotto__json *e = st ? NULL : doc.root->child; e && !st; e = e->next) {
        if (strcmp(e->key, "__metadata__") == 0) continue;
        char name[SOTTO__NAME_LEN];
        if (strlen(e->key) != e->key_len || !map_name(e->key, name, sizeof name)) continue; /* proj_out etc. */
        const sotto__json *dt = sotto__json_get(e, "dtype"), *shape = sotto__json_get(e, "shape"),
                          *offs = sotto__json_get(e, "data_offsets");
        int64_t dims[4], begin, end;
        if (!dt || dt->kind != SOTTO__JSON_STR || !shape || shape->kind != SOTTO__JSON_ARR || shape->n < 1 ||
            shape->n > 4 || !offs || offs->kind != SOTTO__JSON_ARR || offs->n != 2 ||
            !sotto__json_int(offs->child, 0, INT64_MAX / 2, &begin) ||
            !sotto__json_int(offs->child->next, 0, INT64_MAX / 2, &end) || end < begin ||
            (uint64_t)end > data_size) {
            st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: entry %s: bad dtype, shape or data_offsets", path, e->key);
            break;
        }
        int k = 0;
        for (const sotto__json *d = shape->child; d; d = d->next, k++)
            if (!sotto__json_int(d, 1, (int64_t)1 << 32, &dims[k])) break;
        if (k != shape->n) {
            st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: entry %s: bad shape", path, e->key);
            break;
        }
        size_t n_bytes = (size_t)(end - begin);
        const uint8_t *src = data + begin;
        if (strcmp(dt->str, "F32") == 0) {
            st = sotto__model_add_tensor(m, name, SOTTO_TYPE_F32, k, dims, src, n_bytes, err);
        } else if (strcmp(dt->str, "F16") == 0) {
            st = sotto__model_add_tensor(m, name, SOTTO_TYPE_F16, k, dims, src, n_bytes, err);
        } else if (strcmp(dt->str, "BF16") == 0) {
            float *f = sotto__model_alloc(m, n_bytes * 2);
            if (!f) { st = sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory"); break; }
            for (size_t i = 0; i < n_bytes / 2; i++) {
                uint32_t bits = (uint32_t)sotto__rd16(src + 2 * i) << 16;
                memcpy(&f[i], &bits, 4);
            }
            st = sotto__model_add_tensor(m, name, SOTTO_TYPE_F32, k, dims, f, n_bytes * 2, err);
        } else {
            st = sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: entry %s has dtype %s (supported: F32, F16, BF16)",
                             path, e->key, dt->str);
        }
    }
    sotto__json_free(&doc);
    /* the tensors sotto uses must not share bytes (a tied proj_out.weight aliasing the
     * embedding is skipped above, so exact aliases of unused entries stay legal) */
    if (!st) st = sotto__model_check_disjoint(m, data, data + data_size, err);
    return st;
}

static sotto_status read_json(const char *dir, const char *file, bool required, sotto__json_doc *doc,
                              sotto__err *err)
{
    char path[4096];
    doc->root = NULL;
    doc->arena = NULL;
    if (!sotto__path_join(path, sizeof path, dir, file)) return sotto__fail(err, SOTTO_ERR_IO, "path too long");
    if (!sotto__file_exists(path))
        return required ? sotto__fail(err, SOTTO_ERR_IO, "%s: missing", path) : SOTTO_OK;
    char *text;
    size_t n;
    sotto_status st = sotto__read_file(path, 256u << 20, &text, &n, err);
    if (st) return st;
    st = sotto__json_parse(text, n, path, doc, err);
    free(text);
    return st;
}

/* Places token strings (byte-level form) by id from a {token: id} object and a list of
 * {id, content} objects, then decodes them to bytes. Ids must cover 0..n-1. */
static sotto_status build_vocab(sotto_model *m, const sotto__json *vocab, const sotto__json *added,
                                sotto__err *err)
{
    if (!vocab || vocab->kind != SOTTO__JSON_OBJ)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "tokenizer: no vocabulary object");
    int64_t n = vocab->n + (added && added->kind == SOTTO__JSON_ARR ? added->n : 0);
    const char **tok = calloc((size_t)n + 1, sizeof *tok);
    size_t *tlen = calloc((size_t)n + 1, sizeof *tlen);
    uint32_t *len = calloc((size_t)n + 1, sizeof *len);
    sotto_status st = tok && tlen && len ? SOTTO_OK : sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    int64_t max_id = -1;
    for (const sotto__json *e = st ? NULL : vocab->child; e && !st; e = e->next) {
        int64_t id;
        if (!sotto__json_int(e, 0, n - 1, &id))
            st = sotto__fail(err, SOTTO_ERR_FORMAT, "tokenizer: token '%.40s' has a bad id", e->key);
        else tok[id] = e->key, tlen[id] = e->key_len, max_id = id > max_id ? id : max_id;
    }
    for (const sotto__json *a = st || !added ? NULL : added->child; a && !st; a = a->next) {
        int64_t id;
        const sotto__json *c = sotto__json_get(a, "content");
        if (!sotto__json_int(sotto__json_get(a, "id"), 0, n - 1, &id) || !c || c->kind != SOTTO__JSON_STR)
            st = sotto__fail(err, SOTTO_ERR_FORMAT, "tokenizer: malformed added token");
        else tok[id] = c->str, tlen[id] = c->len, max_id = id > max_id ? id : max_id;
    }
    int64_t n_raw = 0; /* tok[0 .. n_raw) decoded into copies of their own, freed below */
    for (int64_t i = 0; !st && i <= max_id; i++) {
        if (!tok[i]) {
            st = sotto__fail(err, SOTTO_ERR_FORMAT, "tokenizer: no token has id %lld", (long long)i);
            break;
        }
        char *raw = malloc(tlen[i] + 1);
        if (!raw) { st = sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory"); break; }
        long b = sotto__bytelevel_decode(tok[i], tlen[i], raw, tlen[i]);
        if (b < 0) memcpy(raw, tok[i], tlen[i]), b = (long)tlen[i];
        tok[i] = raw;
        len[i] = (uint32_t)b;
        n_raw = i + 1;
    }
    if (!st) st = sotto__model_set_vocab(m, (int32_t)(max_id + 1), tok, len, err);
    for (int64_t i = 0; i < n_raw; i++) free((char *)tok[i]);
    free(tok);
    free(tlen);
    free(len);
    return st;
}

static sotto_status build_merges(sotto_model *m, const sotto__json *merges)
{
    if (!merges || merges->kind != SOTTO__JSON_ARR || merges->n == 0) return SOTTO_OK;
    size_t total = 0;
    for (const sotto__json *e = merges->child; e; e = e->next) {
        const sotto__json *parts[2] = {e, NULL};
        if (e->kind == SOTTO__JSON_ARR && e->n == 2) parts[0] = e->child, parts[1] = e->child->next;
        else if (e->kind != SOTTO__JSON_STR) return SOTTO_ERR_FORMAT;
        for (int k = 0; k < 2 && parts[k]; k++) {
            if (parts[k]->kind != SOTTO__JSON_STR || memchr(parts[k]->str, '\n', parts[k]->len) ||
                memchr(parts[k]->str, 0, parts[k]->len))
                return SOTTO_ERR_FORMAT; /* merges are stored newline-separated */
            total += parts[k]->len + 1;
        }
    }
    m->merges = sotto__model_alloc(m, total + 1);
    if (!m->merges) return SOTTO_ERR_NOMEM;
    size_t o = 0;
    for (const sotto__json *e = merges->child; e; e = e->next) {
        if (e->kind == SOTTO__JSON_STR) {
            memcpy(m->merges + o, e->str, e->len);
            o += e->len;
        } else {
            memcpy(m->merges + o, e->child->str, e->child->len);
            o += e->child->len;
            m->merges[o++] = ' ';
            memcpy(m->merges + o, e->child->next->str, e->child->next->len);
            o += e->child->next->len;
        }
        m->merges[o++] = '\n';
    }
    m->merges[o] = 0;
    m->merges_len = o;
    return SOTTO_OK;
}

static sotto_status load_tokenizer(sotto_model *m, const char *dir, sotto__err *err)
{
    sotto__json_doc tj, vj = {0}, aj = {0};
    sotto_status st = read_json(dir, "tokenizer.json", false, &tj, err);
    if (st) return st;
    if (tj.root) {
        const sotto__json *model = sotto__json_get(tj.root, "model");
        st = build_vocab(m, sotto__json_get(model, "vocab"), sotto__json_get(tj.root, "added_tokens"), err);
        if (!st && build_merges(m, sotto__json_get(model, "merges")))
            st = sotto__fail(err, SOTTO_ERR_FORMAT, "tokenizer.json: malformed merges");
        sotto__json_free(&tj);
        return st;
    }
    char probe[4096];
    if (!sotto__path_join(probe, sizeof probe, dir, "vocab.json") || !sotto__file_exists(probe))
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no tokenizer: neither tokenizer.json nor vocab.json", dir);
    st = read_json(dir, "vocab.json", true, &vj, err);
    if (!st) st = read_json(dir, "added_tokens.json", false, &aj, err);
    if (!st) {
        /* added_tokens.json is {content: id}: turn it into the same walk as vocab. */
        st = build_vocab(m, vj.root, NULL, err);
        if (!st && aj.root && aj.root->kind == SOTTO__JSON_OBJ && aj.root->n) {
            sotto__json merged = *vj.root;
            sotto__json *last = (sotto__json *)vj.root->child;
            while (last && last->next) last = last->next;
            if (last) last->next = aj.root->child;
            merged.n = vj.root->n + aj.root->n;
            m->info.n_vocab = 0;
            st = build_vocab(m, &merged, NULL, err);
            if (last) last->next = NULL;
        }
    }
    sotto__json_free(&vj);
    sotto__json_free(&aj);
    return st;
}

static sotto_status load_config(sotto_model *m, const char *dir, sotto__err *err)
{
    sotto__json_doc cfg, gen;
    sotto_status st = read_json(dir, "config.json", true, &cfg, err);
    if (st) return st;
    static const char *keys[2] = {"encoder_attention_heads", "decoder_attention_heads"};
    int32_t *heads[2] = {&m->n_audio_head_file, &m->n_text_head_file};
    for (int k = 0; k < 2; k++) {
        const sotto__json *h = sotto__json_get(cfg.root, keys[k]);
        int64_t v;
        if (!h) continue; /* absent: d / 64, as every Whisper size */
        if (!sotto__json_int(h, 1, 4096, &v)) {
            sotto__json_free(&cfg);
            return sotto__fail(err, SOTTO_ERR_FORMAT, "%s/config.json: %s must be an integer in 1..4096", dir, keys[k]);
        }
        *heads[k] = (int32_t)v;
    }
    st = read_json(dir, "generation_config.json", false, &gen, err);
    /* generation_config.json wins; config.json carries the same lists in older exports */
    const sotto__json *src[2] = {gen.root, cfg.root};
    for (int k = 0; k < 2 && !st; k++) {
        if (!src[k]) continue;
        if (!m->suppress.n)
            st = sotto__json_ids(m, sotto__json_get(src[k], "suppress_tokens"), false, &m->suppress,
                                 "suppress_tokens", err);
        if (!st && !m->suppress_begin.n)
            st = sotto__json_ids(m, sotto__json_get(src[k], "begin_suppress_tokens"), false, &m->suppress_begin,
                                 "begin_suppress_tokens", err);
        if (!st && !m->alignment_heads.n)
            st = sotto__json_ids(m, sotto__json_get(src[k], "alignment_heads"), true, &m->alignment_heads,
                                 "alignment_heads", err);
    }
    sotto__json_free(&gen);
    sotto__json_free(&cfg);
    return st;
}

sotto_status sotto__load_hf(sotto_model *m, const char *dir, sotto__err *err)
{
    char path[4096];
    if (!sotto__path_join(path, sizeof path, dir, "model.safetensors"))
        return sotto__fail(err, SOTTO_ERR_IO, "path too long");
    sotto_status st = load_tensors(m, path, err);
    if (!st) st = load_config(m, dir, err);
    if (!st) st = load_tokenizer(m, dir, err);
    if (!st) st = sotto__model_finish(m, err);
    return st;
}
