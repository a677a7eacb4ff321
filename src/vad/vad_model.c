/* vad_model.c — the Silero VAD's GGUF file (keys and tensors in docs/FORMAT.md "Silero
 * VAD"), read through the one GGUF reader (model/gguf.c: every count, length, dimension
 * and offset checked against the file) into a sotto_vad whose weights point into the
 * read-only mapping; here each tensor is checked against its name, type and shape, and
 * every weight must be finite. */
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
    int64_t rate, window, context; /* -1 when absent */
} vad_meta;

/* Keeps what the VAD needs of one key (the reader checked its extent). */
static sotto_status take_kv(const sotto__gguf_kv *kv, vad_meta *mt, const char *path, sotto__err *err)
{
    if (kv->type == SOTTO__GGUF_STRING && sotto__gguf_key_is(kv, "general.architecture")) {
        if (!str_is(kv->str, kv->str_len, "silero-vad"))
            return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: general.architecture is \"%.*s\", not "
                               "\"silero-vad\" (a VAD model is made by scripts/silero_vad_to_gguf.py)", path,
                               kv->str_len > 64 ? 64 : (int)kv->str_len, kv->str);
        mt->arch_ok = true;
        return SOTTO_OK;
    }
    int64_t *slot = sotto__gguf_key_is(kv, "silero-vad.sample_rate") ? &mt->rate
                    : sotto__gguf_key_is(kv, "silero-vad.window")    ? &mt->window
                    : sotto__gguf_key_is(kv, "silero-vad.context")   ? &mt->context
                                                                     : NULL;
    if (!slot) return SOTTO_OK;
    if (kv->type != SOTTO__GGUF_UINT32)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: %.*s must be a uint32", path, kv->key_len, kv->key);
    *slot = (int64_t)kv->u;
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

/* Table entry T is one of the model's tensors (*SLOT), not seen before, f32, of its shape. */
static sotto_status match(const sotto__gguf_tensor *t, const bool *seen, int *slot, const char *path,
                          sotto__err *err)
{
    *slot = -1;
    for (int s = 0; s < N_VAD_TENSORS; s++)
        if (strcmp(t->name, want[s].name) == 0) *slot = s;
    if (*slot < 0)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: tensor %.64s is not one of the Silero VAD's", path, t->name);
    if (seen[*slot]) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: tensor %s appears twice", path, t->name);
    if (t->type != SOTTO_TYPE_F32)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: tensor %s has type %u (supported: 0, f32)", path,
                           t->name, t->type);
    bool shape_ok = (int)t->n_dims == want[*slot].n_dims;
    for (uint32_t d = 0; shape_ok && d < t->n_dims; d++) shape_ok = t->dims[d] == want[*slot].dims[d];
    if (!shape_ok) {
        char got[96];
        int o = 0;
        for (uint32_t d = 0; d < t->n_dims; d++)
            o += snprintf(got + o, sizeof got - (size_t)o, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: tensor %s has shape [%s], expected another", path, t->name,
                           got);
    }
    return SOTTO_OK;
}

/* Every tensor of the table matched, every value finite (a NaN weight would make every
 * probability NaN), then the weights bound to their tensors. */
static sotto_status bind(sotto_vad *v, const sotto__gguf *g, const char *path, sotto__err *err)
{
    const float *at[N_VAD_TENSORS] = {0};
    bool seen[N_VAD_TENSORS] = {0};
    for (uint64_t k = 0; k < g->n_tensors; k++) {
        const sotto__gguf_tensor *t = &g->t[k];
        int slot;
        sotto_status st = match(t, seen, &slot, path, err);
        if (st) return st;
        seen[slot] = true;
        const float *x = (const float *)t->data;
        for (size_t i = 0; i < t->bytes / sizeof(float); i++)
            if (!isfinite(x[i]))
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: tensor %s: value %zu is not finite", path, t->name, i);
        at[slot] = x;
    }
    for (int s = 0; s < N_VAD_TENSORS; s++)
        if (!seen[s]) return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no tensor %s", path, want[s].name);
    sotto__vad_weights *w = &v->w;
    w->stft = at[0];
    for (int c = 0; c < 4; c++) w->conv_w[c] = at[1 + 2 * c], w->conv_b[c] = at[2 + 2 * c];
    w->w_ih = at[9], w->w_hh = at[10], w->b_ih = at[11], w->b_hh = at[12];
    w->out_w = at[13], w->out_b = at[14];
    return SOTTO_OK;
}

/* The keys, then the tensor table, of G into V. */
static sotto_status read_file(sotto_vad *v, sotto__gguf *g, const char *path, sotto__err *err)
{
    vad_meta mt = {.rate = -1, .window = -1, .context = -1};
    sotto__gguf_kv kv;
    sotto_status st;
    for (bool more = true; more;) {
        if ((st = sotto__gguf_next_kv(g, &kv, &more))) return st;
        if (more && (st = take_kv(&kv, &mt, path, err))) return st;
    }
    if ((st = check_meta(&mt, path, err))) return st;
    if ((st = sotto__gguf_read_tensors(g))) return st;
    return bind(v, g, path, err);
}

sotto_status sotto__vad_model_load(const char *path, sotto_vad **out, sotto__err *err)
{
    *out = NULL;
    sotto_vad *v = calloc(1, sizeof *v);
    if (!v) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    sotto_status st = sotto__map_file(path, &v->map, err);
    sotto__gguf g = {0};
    if (!st) st = sotto__gguf_open(&g, v->map.data, v->map.size, path, MAX_TENSORS, MAX_KEYS,
                                   "not a Silero VAD model (a Whisper model goes to -m); a VAD model is the .gguf "
                                   "file scripts/silero_vad_to_gguf.py writes", err);
    if (!st) st = read_file(v, &g, path, err);
    sotto__gguf_free(&g);
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
