/* gguf_read.c — the Whisper loader of the native model file: GGUF (read through gguf.c's
 * key/value iterator and checked tensor table) with the keys of docs/FORMAT.md. The file
 * is mapped read-only; tensors point into it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "model.h"

/* What the loader keeps of the key-value section. */
typedef struct meta {
    bool arch_ok;
    int64_t n_audio_head, n_text_head;
    uint64_t tokens_pos, n_tokens; /* byte offset of the first token string */
    uint64_t merges_pos, n_merges;
    uint64_t suppress_pos, n_suppress, begin_pos, n_begin, heads_pos, n_heads;
} meta;

/* Keeps what the Whisper model needs of one key (the reader checked its extent). */
static void take_kv(const sotto__gguf_kv *kv, meta *mt)
{
    if (kv->type == SOTTO__GGUF_STRING) {
        if (sotto__gguf_key_is(kv, "general.architecture"))
            mt->arch_ok = kv->str_len == 7 && memcmp(kv->str, "whisper", 7) == 0;
    } else if (kv->type == SOTTO__GGUF_ARRAY) {
        bool str = kv->arr_type == SOTTO__GGUF_STRING, i32 = kv->arr_type == SOTTO__GGUF_INT32;
        if (sotto__gguf_key_is(kv, "tokenizer.ggml.tokens") && str) mt->tokens_pos = kv->arr_pos, mt->n_tokens = kv->arr_n;
        else if (sotto__gguf_key_is(kv, "tokenizer.ggml.merges") && str)
            mt->merges_pos = kv->arr_pos, mt->n_merges = kv->arr_n;
        else if (sotto__gguf_key_is(kv, "whisper.suppress_ids") && i32)
            mt->suppress_pos = kv->arr_pos, mt->n_suppress = kv->arr_n;
        else if (sotto__gguf_key_is(kv, "whisper.suppress_ids_begin") && i32)
            mt->begin_pos = kv->arr_pos, mt->n_begin = kv->arr_n;
        else if (sotto__gguf_key_is(kv, "whisper.alignment_heads") && i32)
            mt->heads_pos = kv->arr_pos, mt->n_heads = kv->arr_n;
    } else if (kv->type == SOTTO__GGUF_UINT32 || kv->type == SOTTO__GGUF_INT32) {
        if (sotto__gguf_key_is(kv, "whisper.audio.n_head")) mt->n_audio_head = (int64_t)kv->u;
        else if (sotto__gguf_key_is(kv, "whisper.text.n_head")) mt->n_text_head = (int64_t)kv->u;
    }
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
    /* the decoded tokens end to end in one scratch buffer, which the model's vocabulary
     * copies (not 51864 allocations kept for the model's life: 2 MB resident) */
    size_t total = 0;
    for (uint64_t k = 0; k < mt->n_tokens; k++) {
        uint64_t l = sotto__rd64(p);
        total += l;
        p += 8 + l;
    }
    p = m->map.data + mt->tokens_pos;
    char *scratch = st ? NULL : malloc(total + 1);
    if (!st && !scratch) st = sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    size_t used = 0;
    for (uint64_t k = 0; !st && k < mt->n_tokens; k++) {
        uint64_t l = sotto__rd64(p);
        char *raw = scratch + used;
        long b = sotto__bytelevel_decode((const char *)p + 8, l, raw, l);
        if (b < 0) {
            memcpy(raw, p + 8, l);
            b = (long)l;
        }
        tok[k] = raw;
        len[k] = (uint32_t)b;
        used += (size_t)b;
        p += 8 + l;
    }
    if (!st) st = sotto__model_set_vocab(m, (int32_t)mt->n_tokens, tok, len, err);
    free(scratch);
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

/* The keys and the tensor table of G into M. */
static sotto_status read_file(sotto_model *m, sotto__gguf *g, meta *mt)
{
    sotto_status st;
    sotto__gguf_kv kv;
    for (bool more = true; more;) {
        if ((st = sotto__gguf_next_kv(g, &kv, &more))) return st;
        if (more) take_kv(&kv, mt);
    }
    if (!mt->arch_ok)
        return sotto__fail(g->r.err, SOTTO_ERR_UNSUPPORTED, "%s: general.architecture is not \"whisper\"", g->r.path);
    if ((st = sotto__gguf_read_tensors(g))) return st;
    for (uint64_t k = 0; k < g->n_tensors && !st; k++) {
        const sotto__gguf_tensor *t = &g->t[k];
        st = sotto__model_add_tensor(m, t->name, t->type, (int)t->n_dims, t->dims, t->data, t->bytes, g->r.err);
    }
    return st;
}

sotto_status sotto__load_gguf(sotto_model *m, const char *path, sotto__err *err)
{
    sotto_status st = sotto__map_file(path, &m->map, err);
    if (st) return st;
    sotto__gguf g;
    meta mt = {0};
    st = sotto__gguf_open(&g, m->map.data, m->map.size, path, 100000, 100000,
                          "sotto reads .gguf files, whisper.cpp ggml .bin files, CTranslate2 directories and Hugging "
                          "Face directories", err);
    if (!st) st = read_file(m, &g, &mt);
    sotto__gguf_free(&g);
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
