/* model.c — the model object every loader builds (load.c dispatches to them): tensor
 * records, vocabulary, derivation of hyper-parameters and special ids, validation of
 * every tensor against them, and the binding of engine weights (converted to f32 once,
 * at load, where stored otherwise). */
#define _POSIX_C_SOURCE 200809L
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../quant.h"

void *sotto__model_alloc(sotto_model *m, size_t size)
{
    if (m->n_owned == m->cap_owned) {
        int cap = m->cap_owned ? m->cap_owned * 2 : 64;
        void **p = realloc(m->owned, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        m->owned = p;
        m->cap_owned = cap;
    }
    void *block = malloc(size ? size : 1);
    if (block) m->owned[m->n_owned++] = block;
    return block;
}

sotto_status sotto__model_add_tensor(sotto_model *m, const char *name, sotto_type type,
                                     int n_dims, const int64_t *dims, const void *data,
                                     size_t n_bytes, sotto__err *err)
{
    if (strlen(name) >= SOTTO__NAME_LEN)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "tensor name too long: %.40s...", name);
    if (n_dims < 1 || n_dims > 4)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "tensor %s: %d dimensions", name, n_dims);
    if (sotto__model_find(m, name))
        return sotto__fail(err, SOTTO_ERR_FORMAT, "tensor %s appears twice", name);
    int64_t numel = 1;
    for (int i = 0; i < n_dims; i++) {
        if (dims[i] <= 0 || dims[i] > ((int64_t)1 << 32) ||
            __builtin_mul_overflow(numel, dims[i], &numel))
            return sotto__fail(err, SOTTO_ERR_FORMAT, "tensor %s: bad dimension %lld", name,
                               (long long)dims[i]);
    }
    size_t want;
    if (!sotto__type_bytes(type, numel, &want) || want != n_bytes)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "tensor %s: %zu bytes for %lld %s values",
                           name, n_bytes, (long long)numel, sotto__type_name(type));
    if (m->n_tensors == m->cap_tensors) {
        int cap = m->cap_tensors ? m->cap_tensors * 2 : 256;
        sotto__tensor *p = realloc(m->tensors, (size_t)cap * sizeof *p);
        if (!p) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
        m->tensors = p;
        m->cap_tensors = cap;
    }
    sotto__tensor *t = &m->tensors[m->n_tensors++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->type = type;
    t->n_dims = n_dims;
    memcpy(t->dims, dims, (size_t)n_dims * sizeof *dims);
    t->data = data;
    t->n_bytes = n_bytes;
    return SOTTO_OK;
}

static int cmp_range(const void *a, const void *b)
{
    const sotto__tensor *x = *(const sotto__tensor *const *)a, *y = *(const sotto__tensor *const *)b;
    const uint8_t *px = x->data, *py = y->data;
    return px < py ? -1 : px > py;
}

sotto_status sotto__model_check_disjoint(const sotto_model *m, const uint8_t *lo, const uint8_t *hi,
                                         sotto__err *err)
{
    const sotto__tensor **v = malloc((size_t)(m->n_tensors ? m->n_tensors : 1) * sizeof *v);
    if (!v) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    int n = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        const uint8_t *p = m->tensors[i].data;
        if (p >= lo && p < hi) v[n++] = &m->tensors[i];
    }
    qsort(v, (size_t)n, sizeof *v, cmp_range);
    sotto_status st = SOTTO_OK;
    for (int i = 1; i < n && !st; i++)
        if ((const uint8_t *)v[i - 1]->data + v[i - 1]->n_bytes > (const uint8_t *)v[i]->data)
            st = sotto__fail(err, SOTTO_ERR_FORMAT, "tensors %s and %s overlap in the file", v[i - 1]->name,
                             v[i]->name);
    free(v);
    return st;
}

const sotto__tensor *sotto__model_find(const sotto_model *m, const char *name)
{
    for (int i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0) return &m->tensors[i];
    return NULL;
}

sotto_status sotto__model_set_vocab(sotto_model *m, int32_t n, const char *const *tok,
                                    const uint32_t *len, sotto__err *err)
{
    size_t total = 0;
    for (int32_t i = 0; i < n; i++)
        if (!sotto__add_ok(total, len[i], &total))
            return sotto__fail(err, SOTTO_ERR_FORMAT, "vocabulary too large");
    if (total > UINT32_MAX) return sotto__fail(err, SOTTO_ERR_FORMAT, "vocabulary too large");
    m->vocab_bytes = sotto__model_alloc(m, total + 1);
    m->vocab_off = sotto__model_alloc(m, ((size_t)n + 1) * sizeof(uint32_t));
    if (!m->vocab_bytes || !m->vocab_off) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    uint32_t off = 0;
    for (int32_t i = 0; i < n; i++) {
        m->vocab_off[i] = off;
        memcpy(m->vocab_bytes + off, tok[i], len[i]);
        off += len[i];
    }
    m->vocab_off[n] = off;
    m->info.n_vocab = n;
    return SOTTO_OK;
}

const char *sotto_token_bytes(const sotto_model *m, int32_t id, size_t *n_bytes)
{
    if (!m || id < 0 || id >= m->info.n_vocab || !m->vocab_off) return NULL;
    if (n_bytes) *n_bytes = m->vocab_off[id + 1] - m->vocab_off[id];
    return m->vocab_bytes + m->vocab_off[id];
}

static int32_t find_token(const sotto_model *m, const char *text)
{
    size_t n = strlen(text);
    for (int32_t i = m->info.n_vocab - 1; i >= 0; i--) {
        size_t len = 0;
        const char *s = sotto_token_bytes(m, i, &len);
        if (len == n && memcmp(s, text, n) == 0) return i;
    }
    return -1;
}

int32_t sotto_language_token(const sotto_model *m, const char *code)
{
    if (!m || !code || !m->info.multilingual) return -1;
    char want[32];
    if (snprintf(want, sizeof want, "<|%s|>", code) >= (int)sizeof want) return -1;
    for (int32_t i = 0; i < m->info.n_languages; i++) {
        int32_t id = m->info.token_lang_first + i;
        size_t len = 0;
        const char *s = sotto_token_bytes(m, id, &len);
        if (len == strlen(want) && memcmp(s, want, len) == 0) return id;
    }
    return -1;
}

/* Fills ids from n_have to n_vocab with timestamp tokens "<|0.00|>", "<|0.02|>", ...,
 * which Hugging Face tokenizer files often leave out. Only valid right after
 * <|notimestamps|>. */
static sotto_status extend_timestamps(sotto_model *m, int32_t n_vocab, sotto__err *err)
{
    int32_t n_have = m->info.n_vocab;
    size_t len;
    const char *last = sotto_token_bytes(m, n_have - 1, &len);
    if (!last || len != 16 || memcmp(last, "<|notimestamps|>", 16) != 0)
        return sotto__fail(err, SOTTO_ERR_FORMAT,
                           "vocabulary has %d tokens but the embedding has %d rows", n_have, n_vocab);
    int32_t n_new = n_vocab - n_have;
    const char **tok = calloc((size_t)n_vocab, sizeof *tok);
    uint32_t *lens = calloc((size_t)n_vocab, sizeof *lens);
    char *text = calloc((size_t)n_new + 1, 16);
    sotto_status st = SOTTO_OK;
    if (!tok || !lens || !text) st = sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    for (int32_t i = 0; st == SOTTO_OK && i < n_vocab; i++) {
        if (i < n_have) {
            size_t l = 0;
            tok[i] = sotto_token_bytes(m, i, &l);
            lens[i] = (uint32_t)l;
        } else {
            char *s = text + (size_t)(i - n_have) * 16;
            int k = i - n_have;
            lens[i] = (uint32_t)snprintf(s, 16, "<|%d.%02d|>", k / 50, (k % 50) * 2);
            tok[i] = s;
        }
    }
    if (st == SOTTO_OK) st = sotto__model_set_vocab(m, n_vocab, tok, lens, err);
    free(tok);
    free(lens);
    free(text);
    return st;
}

static sotto_status derive_special(sotto_model *m, sotto__err *err)
{
    sotto_model_info *h = &m->info;
    h->token_eot = find_token(m, "<|endoftext|>");
    h->token_sot = find_token(m, "<|startoftranscript|>");
    h->token_translate = find_token(m, "<|translate|>");
    h->token_transcribe = find_token(m, "<|transcribe|>");
    h->token_startoflm = find_token(m, "<|startoflm|>");
    h->token_startofprev = find_token(m, "<|startofprev|>");
    h->token_nospeech = find_token(m, "<|nospeech|>");
    if (h->token_nospeech < 0) h->token_nospeech = find_token(m, "<|nocaptions|>");
    h->token_notimestamps = find_token(m, "<|notimestamps|>");
    h->token_timestamp_begin = find_token(m, "<|0.00|>");
    if (h->token_eot < 0 || h->token_sot < 0 || h->token_notimestamps < 0 ||
        h->token_transcribe < 0 || h->token_translate < 0)
        return sotto__fail(err, SOTTO_ERR_FORMAT,
                           "vocabulary lacks Whisper's special tokens (<|endoftext|>, "
                           "<|startoftranscript|>, <|transcribe|>, <|notimestamps|>)");
    h->multilingual = h->n_vocab >= 51865;
    h->token_lang_first = -1;
    h->n_languages = 0;
    if (h->multilingual && h->token_translate > h->token_sot + 1) {
        h->token_lang_first = h->token_sot + 1;
        h->n_languages = h->token_translate - h->token_lang_first;
    }
    return SOTTO_OK;
}

/* Returns the tensor NAME after checking its shape; NULL (with ERR set) otherwise. */
static const sotto__tensor *expect(sotto_model *m, const char *name, int n_dims, int64_t d0,
                                   int64_t d1, int64_t d2, sotto__err *err)
{
    const sotto__tensor *t = sotto__model_find(m, name);
    if (!t) {
        sotto__fail(err, SOTTO_ERR_FORMAT, "missing tensor %s", name);
        return NULL;
    }
    int64_t want[3] = {d0, d1, d2};
    bool ok = t->n_dims == n_dims;
    for (int i = 0; ok && i < n_dims; i++) ok = t->dims[i] == want[i];
    if (!ok) {
        char got[96] = "", exp[96] = "";
        for (int i = 0; i < t->n_dims; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "",
                     (long long)t->dims[i]);
        for (int i = 0; i < n_dims; i++)
            snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%s%lld", i ? "," : "",
                     (long long)want[i]);
        sotto__fail(err, SOTTO_ERR_FORMAT, "tensor %s has shape [%s], expected [%s]", name, got, exp);
        return NULL;
    }
    return t;
}

/* f32 view of tensor T: the stored data when already f32, else a converted copy. */
static const float *as_f32(sotto_model *m, const sotto__tensor *t, sotto__err *err)
{
    if (t->type == SOTTO_TYPE_F32) return t->data;
    int64_t numel = sotto__tensor_numel(t);
    float *out = sotto__model_alloc(m, (size_t)numel * sizeof(float));
    if (!out) {
        sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory converting %s", t->name);
        return NULL;
    }
    sotto__dequantize(t->type, t->data, out, numel);
    return out;
}

typedef struct binder {
    sotto_model *m;
    sotto__err *err;
    bool ok;
} binder;

static const float *bind(binder *b, const char *name, int n_dims, int64_t d0, int64_t d1,
                         int64_t d2)
{
    if (!b->ok) return NULL;
    const sotto__tensor *t = expect(b->m, name, n_dims, d0, d1, d2, b->err);
    const float *p = t ? as_f32(b->m, t, b->err) : NULL;
    if (!p) b->ok = false;
    return p;
}

static void bind_norm(binder *b, sotto__norm *n, const char *prefix, int64_t d)
{
    char name[SOTTO__NAME_LEN + 8]; /* PREFIX (< SOTTO__NAME_LEN) + ".weight" */
    snprintf(name, sizeof name, "%s.weight", prefix);
    n->g = bind(b, name, 1, d, 0, 0);
    snprintf(name, sizeof name, "%s.bias", prefix);
    n->b = bind(b, name, 1, d, 0, 0);
}

/* Binds a matrix in its stored type; q8_0 needs rows of a multiple of 32 values, and
 * anything the kernels cannot take is widened to f32 once. */
static void bind_matrix(binder *b, sotto__linear *l, const char *name, int64_t n_out, int64_t n_in)
{
    l->n_out = (int)n_out;
    l->n_in = (int)n_in;
    l->w = NULL;
    if (!b->ok) return;
    const sotto__tensor *t = expect(b->m, name, 2, n_out, n_in, 0, b->err);
    if (!t) {
        b->ok = false;
        return;
    }
    l->type = t->type;
    l->w = t->data;
    if (t->type == SOTTO_TYPE_Q8_0 && n_in % 32 != 0) {
        l->type = SOTTO_TYPE_F32;
        l->w = as_f32(b->m, t, b->err);
        if (!l->w) b->ok = false;
    }
}

static void bind_linear(binder *b, sotto__linear *l, const char *prefix, int64_t n_out,
                        int64_t n_in, bool has_bias)
{
    char name[SOTTO__NAME_LEN + 8]; /* PREFIX (< SOTTO__NAME_LEN) + ".weight" */
    snprintf(name, sizeof name, "%s.weight", prefix);
    bind_matrix(b, l, name, n_out, n_in);
    l->b = NULL;
    if (has_bias) {
        snprintf(name, sizeof name, "%s.bias", prefix);
        l->b = bind(b, name, 1, n_out, 0, 0);
    }
}

static void bind_block(binder *b, sotto__layer *L, const char *stack, int i, int64_t d,
                       int64_t d_src, bool cross)
{
    char p[SOTTO__NAME_LEN];
#define NAME(suffix) (snprintf(p, sizeof p, "%s.blocks.%d.%s", stack, i, suffix), p)
    bind_norm(b, &L->attn_ln, NAME("attn_ln"), d);
    bind_linear(b, &L->q, NAME("attn.query"), d, d, true);
    bind_linear(b, &L->k, NAME("attn.key"), d, d, false);
    bind_linear(b, &L->v, NAME("attn.value"), d, d, true);
    bind_linear(b, &L->o, NAME("attn.out"), d, d, true);
    if (cross) {
        bind_norm(b, &L->cross_ln, NAME("cross_attn_ln"), d);
        bind_linear(b, &L->cq, NAME("cross_attn.query"), d, d, true);
        bind_linear(b, &L->ck, NAME("cross_attn.key"), d, d_src, false);
        bind_linear(b, &L->cv, NAME("cross_attn.value"), d, d_src, true);
        bind_linear(b, &L->co, NAME("cross_attn.out"), d, d, true);
    }
    bind_norm(b, &L->mlp_ln, NAME("mlp_ln"), d);
    bind_linear(b, &L->fc1, NAME("mlp.0"), 4 * d, d, true);
    bind_linear(b, &L->fc2, NAME("mlp.2"), d, 4 * d, true);
#undef NAME
}

static int count_layers(const sotto_model *m, const char *stack)
{
    int n = 0;
    char name[SOTTO__NAME_LEN];
    for (;;) {
        snprintf(name, sizeof name, "%s.blocks.%d.attn_ln.weight", stack, n);
        if (!sotto__model_find(m, name)) return n;
        n++;
    }
}

static sotto_status derive_hparams(sotto_model *m, sotto__err *err)
{
    sotto_model_info *h = &m->info;
    const sotto__tensor *conv1 = sotto__model_find(m, "encoder.conv1.weight");
    const sotto__tensor *epos = sotto__model_find(m, "encoder.positional_embedding");
    const sotto__tensor *emb = sotto__model_find(m, "decoder.token_embedding.weight");
    const sotto__tensor *dpos = sotto__model_find(m, "decoder.positional_embedding");
    if (!conv1 || conv1->n_dims != 3)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "missing or malformed encoder.conv1.weight");
    if (!epos || epos->n_dims != 2)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "missing or malformed encoder.positional_embedding");
    if (!emb || emb->n_dims != 2)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "missing or malformed decoder.token_embedding.weight");
    if (!dpos || dpos->n_dims != 2)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "missing or malformed decoder.positional_embedding");
    h->n_mels = (int32_t)conv1->dims[1];
    h->n_audio_state = (int32_t)conv1->dims[0];
    h->n_audio_ctx = (int32_t)epos->dims[0];
    h->n_text_state = (int32_t)emb->dims[1];
    h->n_text_ctx = (int32_t)dpos->dims[0];
    h->n_audio_layer = count_layers(m, "encoder");
    h->n_text_layer = count_layers(m, "decoder");
    int64_t n_vocab = emb->dims[0];
    if (h->n_audio_ctx != SOTTO_N_FRAMES / 2)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "n_audio_ctx %d: only 1500 (30 s windows) is supported",
                           h->n_audio_ctx);
    if (h->n_mels != 80 && h->n_mels != 128)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%d mel bins: only 80 and 128 are supported", h->n_mels);
    if (h->n_audio_layer < 1 || h->n_audio_layer > SOTTO__MAX_LAYERS || h->n_text_layer < 1 ||
        h->n_text_layer > SOTTO__MAX_LAYERS)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "layer counts %d/%d out of range 1..%d",
                           h->n_audio_layer, h->n_text_layer, SOTTO__MAX_LAYERS);
    if (h->n_text_ctx < 2 || h->n_text_ctx > 4096 || n_vocab < 100 || n_vocab > 1000000)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "n_text_ctx %d or n_vocab %lld out of range",
                           h->n_text_ctx, (long long)n_vocab);
    h->n_audio_head = m->n_audio_head_file ? m->n_audio_head_file : h->n_audio_state / 64;
    h->n_text_head = m->n_text_head_file ? m->n_text_head_file : h->n_text_state / 64;
    if (h->n_audio_head < 1 || h->n_audio_state % h->n_audio_head || h->n_text_head < 1 ||
        h->n_text_state % h->n_text_head)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "head counts %d/%d do not divide widths %d/%d",
                           h->n_audio_head, h->n_text_head, h->n_audio_state, h->n_text_state);
    if (!m->vocab_off) return sotto__fail(err, SOTTO_ERR_FORMAT, "model has no vocabulary");
    if (h->n_vocab > n_vocab)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "vocabulary has %d tokens but the embedding has %lld rows",
                           h->n_vocab, (long long)n_vocab);
    if (h->n_vocab < n_vocab) {
        sotto_status st = extend_timestamps(m, (int32_t)n_vocab, err);
        if (st) return st;
    }
    return SOTTO_OK;
}

static sotto_status check_lists(sotto_model *m, sotto__err *err)
{
    const sotto__i32list *lists[] = {&m->suppress, &m->suppress_begin};
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < lists[l]->n; i++)
            if (lists[l]->v[i] < 0 || lists[l]->v[i] >= m->info.n_vocab)
                return sotto__fail(err, SOTTO_ERR_FORMAT, "suppress list holds id %d outside the vocabulary",
                                   lists[l]->v[i]);
    /* alignment heads: (layer, head) pairs of the decoder (word timestamps read them) */
    const sotto__i32list *a = &m->alignment_heads;
    if (a->n % 2)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "alignment heads: %d values, not (layer, head) pairs", a->n);
    for (int i = 0; i < a->n; i += 2)
        if (a->v[i] < 0 || a->v[i] >= m->info.n_text_layer || a->v[i + 1] < 0 || a->v[i + 1] >= m->info.n_text_head)
            return sotto__fail(err, SOTTO_ERR_FORMAT, "alignment head %d is (%d, %d): outside the decoder's %d layers "
                               "x %d heads", i / 2, a->v[i], a->v[i + 1], m->info.n_text_layer, m->info.n_text_head);
    return SOTTO_OK;
}

/* Index of the first NaN or infinity in tensor T (by its bit pattern: an all-ones
 * exponent), or -1. q8_0 checks its block scales; the int8 values are always finite. */
/* The first element of N (at P, STEP bytes apart) whose exponent bits are all set. */
static int64_t first_all_ones(const uint8_t *p, int64_t n, int step)
{
    for (int64_t i = 0; i < n; i++) {
        bool hit = step == 4 ? (sotto__rd32(p + 4 * i) & 0x7f800000u) == 0x7f800000u
                             : (sotto__rd16(p + 2 * i) & 0x7c00) == 0x7c00;
        if (hit) return i;
    }
    return -1;
}

/* The first non-finite element of a f32 or f16 tensor, or -1. Eight bytes at a time: a
 * lane whose exponent bits are all set leaves (top bit - (lane's exponent ^ all set))
 * with its top bit set, no lane borrowing from the next; a chunk with a hit is searched
 * one element at a time. Every load scans all weights: tiny.en f16 loads in 24 ms this
 * way, 42 ms one element at a time. */
static int64_t first_non_finite_run(const uint8_t *p, int64_t numel, int step)
{
    const uint64_t exp = step == 4 ? 0x7f8000007f800000u : 0x7c007c007c007c00u;
    const uint64_t top = step == 4 ? 0x8000000080000000u : 0x8000800080008000u;
    const int64_t per = 8 / step, chunk = 512;
    int64_t words = numel / per;
    for (int64_t w0 = 0; w0 < words; w0 += chunk) {
        int64_t w1 = w0 + chunk < words ? w0 + chunk : words;
        uint64_t any = 0;
        for (int64_t w = w0; w < w1; w++) {
            uint64_t v;
            memcpy(&v, p + 8 * w, 8);
            any |= (top - ((v & exp) ^ exp)) & top;
        }
        if (any) return w0 * per + first_all_ones(p + 8 * w0, (w1 - w0) * per, step);
    }
    int64_t at = first_all_ones(p + 8 * words, numel - words * per, step);
    return at < 0 ? -1 : words * per + at;
}

int64_t sotto__first_non_finite(const void *data, int64_t numel, sotto_type type)
{
    const uint8_t *p = data;
    switch (type) {
    case SOTTO_TYPE_F32: return first_non_finite_run(p, numel, 4);
    case SOTTO_TYPE_F16: return first_non_finite_run(p, numel, 2);
    case SOTTO_TYPE_Q8_0:
        for (int64_t b = 0; b < numel / SOTTO__QK8_0; b++)
            if ((sotto__rd16(p + b * sizeof(sotto__block_q8_0)) & 0x7c00) == 0x7c00) return b * SOTTO__QK8_0;
        break;
    }
    return -1;
}

static void component_bytes(sotto_model *m)
{
    sotto_model_info *h = &m->info;
    h->encoder_bytes = h->decoder_bytes = h->embedding_bytes = 0;
    h->encoder_type = h->decoder_type = SOTTO_TYPE_F32;
    for (int i = 0; i < m->n_tensors; i++) {
        const sotto__tensor *t = &m->tensors[i];
        if (strcmp(t->name, "decoder.token_embedding.weight") == 0) {
            h->embedding_bytes += t->n_bytes;
            h->decoder_type = t->type;
        } else if (strncmp(t->name, "encoder.", 8) == 0) {
            h->encoder_bytes += t->n_bytes;
            if (strcmp(t->name, "encoder.blocks.0.mlp.0.weight") == 0) h->encoder_type = t->type;
        } else {
            h->decoder_bytes += t->n_bytes;
        }
    }
}

void *sotto__model_derived(const sotto_model *cm, int slot, void *(*make)(void *arg), void (*free_fn)(void *),
                           void *arg)
{
    /* the model is shared read-only; the derived slots are its one mutable part, behind
     * the lock (a cast, as a memo is: the model's observable state does not change) */
    sotto_model *m = (sotto_model *)cm;
    pthread_mutex_lock(&m->derived_mu);
    sotto__derived *d = &m->derived[slot];
    if (!d->data) {
        d->data = make(arg);
        d->free_fn = free_fn;
    }
    void *data = d->data;
    pthread_mutex_unlock(&m->derived_mu);
    return data;
}

void sotto__model_release_pages(const sotto_model *m, const void *p, size_t n) { sotto__map_release(&m->map, p, n); }

sotto_status sotto__model_token_index(sotto_model *m, int32_t n, sotto__err *err)
{
    if (n <= 0 || n > m->info.n_vocab)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "no base vocabulary before <|endoftext|>");
    size_t slots = sotto__token_index_slots(n);
    uint32_t *tab = sotto__model_alloc(m, slots * sizeof *tab);
    if (!tab) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory for the token index");
    sotto__token_index_fill(m, n, tab, slots);
    return SOTTO_OK;
}

/* A model file without suppress lists gets openai-whisper's, from its vocabulary. */
static sotto_status derive_lists(sotto_model *m, sotto__err *err)
{
    sotto__i32list s, b;
    sotto_status st = sotto__nonspeech(m, &s, &b, err);
    if (st) return st;
    m->suppress.v = sotto__model_alloc(m, (size_t)s.n * sizeof(int32_t));
    m->suppress_begin.v = sotto__model_alloc(m, (size_t)b.n * sizeof(int32_t));
    if (m->suppress.v && m->suppress_begin.v) {
        memcpy(m->suppress.v, s.v, (size_t)s.n * sizeof *s.v);
        memcpy(m->suppress_begin.v, b.v, (size_t)b.n * sizeof *b.v);
        m->suppress.n = s.n, m->suppress_begin.n = b.n;
    } else {
        st = sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    }
    free(s.v), free(b.v);
    return st;
}

sotto_status sotto__model_finish(sotto_model *m, sotto__err *err)
{
    for (int i = 0; i < m->n_tensors; i++) {
        const sotto__tensor *t = &m->tensors[i];
        int64_t at = sotto__first_non_finite(t->data, sotto__tensor_numel(t), t->type);
        if (at >= 0)
            return sotto__fail(err, SOTTO_ERR_FORMAT, "tensor %s holds a NaN or infinity at element %lld",
                               m->tensors[i].name, (long long)at);
    }
    sotto_status st = derive_hparams(m, err);
    if (!st) st = derive_special(m, err);
    /* eot: derive_special checked it exists */
    if (!st && !m->tok_index) st = sotto__model_token_index(m, m->info.token_eot, err);
    /* a file without suppress lists (ggml; a CTranslate2 or Hugging Face folder without its
     * config): openai-whisper's, from the vocabulary, rather than none */
    if (!st && !m->suppress.n && !m->suppress_begin.n) st = derive_lists(m, err);
    if (!st) st = check_lists(m, err);
    if (st) return st;
    const sotto_model_info *h = &m->info;
    int64_t d = h->n_audio_state, dt = h->n_text_state;
    binder b = {m, err, true};
    sotto__weights *w = &m->w;
    w->conv1_w = bind(&b, "encoder.conv1.weight", 3, d, h->n_mels, 3);
    w->conv1_b = bind(&b, "encoder.conv1.bias", 1, d, 0, 0);
    w->conv2_w = bind(&b, "encoder.conv2.weight", 3, d, d, 3);
    w->conv2_b = bind(&b, "encoder.conv2.bias", 1, d, 0, 0);
    w->enc_pos = bind(&b, "encoder.positional_embedding", 2, h->n_audio_ctx, d, 0);
    for (int i = 0; i < h->n_audio_layer; i++) bind_block(&b, &w->enc[i], "encoder", i, d, d, false);
    bind_norm(&b, &w->enc_ln, "encoder.ln_post", d);
    bind_matrix(&b, &w->tok_emb, "decoder.token_embedding.weight", h->n_vocab, dt);
    w->tok_emb.b = NULL;
    w->dec_pos = bind(&b, "decoder.positional_embedding", 2, h->n_text_ctx, dt, 0);
    for (int i = 0; i < h->n_text_layer; i++) bind_block(&b, &w->dec[i], "decoder", i, dt, d, true);
    bind_norm(&b, &w->dec_ln, "decoder.ln", dt);
    if (!b.ok) return err->status;
    component_bytes(m);
    return SOTTO_OK;
}

sotto_model *sotto__model_new(void)
{
    sotto_model *m = calloc(1, sizeof *m);
    if (m) pthread_mutex_init(&m->derived_mu, NULL);
    return m;
}

void sotto_model_free(sotto_model *m)
{
    if (!m) return;
    for (int i = 0; i < SOTTO__MODEL_SLOTS; i++)
        if (m->derived[i].data) m->derived[i].free_fn(m->derived[i].data);
    pthread_mutex_destroy(&m->derived_mu);
    for (int i = 0; i < m->n_owned; i++) free(m->owned[i]);
    free(m->owned);
    free(m->tensors);
    sotto__unmap(&m->map);
    free(m);
}

void sotto_model_get_info(const sotto_model *m, sotto_model_info *info)
{
    if (info) *info = m ? m->info : (sotto_model_info){0};
}
