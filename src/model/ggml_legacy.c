/* ggml_legacy.c — whisper.cpp's legacy ggml model files (`ggml-*.bin`, uint32 magic
 * 0x67676d6c): 11 int32 hyper-parameters, mel filters (shape checked; the front end makes
 * its own), the base vocabulary, then tensors to the end of the file under openai-whisper
 * state_dict names. Special and timestamp tokens are synthesised as openai-whisper's
 * tokenizer numbers them; the format has no suppress lists, so sotto__model_finish
 * derives them from the vocabulary (nonspeech.c). The format has no alignment, so the tensors are copied once into
 * one aligned block; q4_0/q4_1/q5_0/q5_1 become q8_0 on the way.
 * Format: ggml-org/whisper.cpp src/whisper.cpp whisper_model_load (models/convert-pt-to-
 * ggml.py writes it); block layouts: ggml-org/ggml src/ggml-common.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../quant.h"
#include "model.h"

#define GGML_MAGIC 0x67676d6cu
#define GGML_QNT_VERSION 2         /* the block layouts below (ggml since May 2023) */
#define N_TIMESTAMPS 1501          /* <|0.00|> .. <|30.00|> */
#define N_FIXED_SPECIALS 8         /* endoftext, startoftranscript, translate, transcribe,
                                      startoflm, startofprev, nospeech, notimestamps */
#define MAX_LANGUAGES 100
#define MAX_TOKEN_BYTES 65535
#define N_FFT_BINS 201             /* n_fft 400: 201 frequency bins per filter */

/* ggml_type ids (ggml.h); the ones read here, then names for messages about the rest. */
enum { GG_F32 = 0, GG_F16 = 1, GG_Q4_0 = 2, GG_Q4_1 = 3, GG_Q5_0 = 6, GG_Q5_1 = 7, GG_Q8_0 = 8 };

static const char *const ggml_type_names[] = {
    "f32",   "f16",    "q4_0",    "q4_1",  "q4_2",   "q4_3",  "q5_0",  "q5_1",  "q8_0",  "q8_1",
    "q2_K",  "q3_K",   "q4_K",    "q5_K",  "q6_K",   "q8_K",  "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s",
    "iq4_nl", "iq3_s", "iq2_s",   "iq4_xs", "i8",    "i16",   "i32",   "i64",   "f64",   "iq1_m",
    "bf16",  "q4_0_4_4", "q4_0_4_8", "q4_0_8_8", "tq1_0", "tq2_0", "iq4_nl_4_4", "iq4_nl_4_8",
    "iq4_nl_8_8", "mxfp4",
};

/* The 4- and 5-bit blocks of 32 values: value j is the low nibble of qs[j], value 16 + j
 * its high nibble; q5 keeps the fifth bit of value j in bit j of qh (a little-endian
 * uint32). x = d * (code - 8) (q4_0), d * (code - 16) (q5_0), d * code + m (q4_1, q5_1).
 * They are read byte by byte (the file is unaligned); the structs fix the sizes. */
typedef struct block_q4_0 { uint16_t d; uint8_t qs[16]; } block_q4_0;
typedef struct block_q4_1 { uint16_t d, m; uint8_t qs[16]; } block_q4_1;
typedef struct block_q5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; } block_q5_0;
typedef struct block_q5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; } block_q5_1;
_Static_assert(sizeof(block_q4_0) == 18, "ggml q4_0 block is 18 bytes");
_Static_assert(sizeof(block_q4_1) == 20, "ggml q4_1 block is 20 bytes");
_Static_assert(sizeof(block_q5_0) == 22, "ggml q5_0 block is 22 bytes");
_Static_assert(sizeof(block_q5_1) == 24, "ggml q5_1 block is 24 bytes");

/* Bytes of one 32-value block of ggml type T; 0 for the element types. */
static size_t block_bytes(int t)
{
    switch (t) {
    case GG_Q4_0: return sizeof(block_q4_0);
    case GG_Q4_1: return sizeof(block_q4_1);
    case GG_Q5_0: return sizeof(block_q5_0);
    case GG_Q5_1: return sizeof(block_q5_1);
    case GG_Q8_0: return sizeof(sotto__block_q8_0);
    }
    return 0;
}

static bool type_supported(int t)
{
    return t == GG_F32 || t == GG_F16 || block_bytes(t) != 0;
}

/* The type tensors of ggml type T are held in once loaded. */
static sotto_type held_type(int t)
{
    return t == GG_F32 ? SOTTO_TYPE_F32 : t == GG_F16 ? SOTTO_TYPE_F16 : SOTTO_TYPE_Q8_0;
}

/* Decodes one q4_0/q4_1/q5_0/q5_1 block at P into 32 floats. */
static void block_to_f32(int t, const uint8_t *p, float *x)
{
    bool has_min = t == GG_Q4_1 || t == GG_Q5_1, five = t == GG_Q5_0 || t == GG_Q5_1;
    float d = sotto__f16_to_f32(sotto__rd16(p));
    float m = has_min ? sotto__f16_to_f32(sotto__rd16(p + 2)) : 0.0f;
    const uint8_t *qh = p + (has_min ? 4 : 2), *qs = qh + (five ? 4 : 0);
    uint32_t high = five ? sotto__rd32(qh) : 0;
    int offset = has_min ? 0 : five ? 16 : 8;
    for (int j = 0; j < 16; j++) {
        int lo = (qs[j] & 15) | (int)((high >> j) & 1) << 4;
        int hi = (qs[j] >> 4) | (int)((high >> (j + 16)) & 1) << 4;
        x[j] = (float)(lo - offset) * d + m;
        x[j + 16] = (float)(hi - offset) * d + m;
    }
}

/* Index of the first block of ggml type T in [P, P + n_blocks blocks) whose scale (or
 * minimum) is a NaN or infinity, or -1. */
static int64_t first_bad_block(int t, const uint8_t *p, int64_t n_blocks)
{
    size_t bb = block_bytes(t);
    int n_halves = t == GG_Q4_1 || t == GG_Q5_1 ? 2 : 1;
    for (int64_t b = 0; b < n_blocks; b++)
        for (int k = 0; k < n_halves; k++)
            if ((sotto__rd16(p + (size_t)b * bb + 2 * k) & 0x7c00) == 0x7c00) return b;
    return -1;
}

/* ---- hyper-parameters ---------------------------------------------------------------- */

typedef struct hparams {
    int32_t n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer, n_text_ctx,
        n_text_state, n_text_head, n_text_layer, n_mels, ftype;
} hparams;

static sotto_status read_hparams(sotto__reader *r, hparams *h)
{
    static const struct { const char *name; int32_t lo, hi; } field[11] = {
        {"n_vocab", N_FIXED_SPECIALS + N_TIMESTAMPS + 2, 1000000},
        {"n_audio_ctx", 1, 1 << 20}, {"n_audio_state", 1, 16384}, {"n_audio_head", 1, 1024},
        {"n_audio_layer", 1, SOTTO__MAX_LAYERS}, {"n_text_ctx", 2, 4096}, {"n_text_state", 1, 16384},
        {"n_text_head", 1, 1024}, {"n_text_layer", 1, SOTTO__MAX_LAYERS}, {"n_mels", 1, 1024},
        {"ftype", 0, GGML_QNT_VERSION * 1000 + 999},
    };
    int32_t v[11];
    for (int k = 0; k < 11; k++) {
        uint32_t u;
        char what[48];
        snprintf(what, sizeof what, "hparam %s", field[k].name);
        if (!sotto__rd_u32(r, &u, what)) return r->err->status;
        v[k] = (int32_t)u;
        if (v[k] < field[k].lo || v[k] > field[k].hi)
            return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: hparam %s is %d (expected %d..%d)", r->path,
                               field[k].name, v[k], field[k].lo, field[k].hi);
    }
    *h = (hparams){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]};
    if (h->n_audio_state % h->n_audio_head)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: hparam n_audio_head %d does not divide n_audio_state %d",
                           r->path, h->n_audio_head, h->n_audio_state);
    if (h->n_text_state % h->n_text_head)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: hparam n_text_head %d does not divide n_text_state %d",
                           r->path, h->n_text_head, h->n_text_state);
    if (h->n_audio_ctx != SOTTO_N_FRAMES / 2)
        return sotto__fail(r->err, SOTTO_ERR_UNSUPPORTED, "%s: hparam n_audio_ctx is %d: only %d (30 s windows) "
                           "is supported", r->path, h->n_audio_ctx, SOTTO_N_FRAMES / 2);
    if (h->n_mels != 80 && h->n_mels != 128)
        return sotto__fail(r->err, SOTTO_ERR_UNSUPPORTED, "%s: hparam n_mels is %d: only 80 and 128 are supported",
                           r->path, h->n_mels);
    return SOTTO_OK;
}

/* The mel filter bank: int32 n_mel, int32 n_fft, then n_mel * n_fft f32, skipped. */
static sotto_status skip_mel_filters(sotto__reader *r, const hparams *h)
{
    uint32_t n_mel, n_fft;
    if (!sotto__rd_u32(r, &n_mel, "the mel filters' n_mel") || !sotto__rd_u32(r, &n_fft, "the mel filters' n_fft"))
        return r->err->status;
    if ((int32_t)n_mel != h->n_mels)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: mel filters: n_mel is %d, expected n_mels %d", r->path,
                           (int32_t)n_mel, h->n_mels);
    if (n_fft != N_FFT_BINS)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: mel filters: n_fft is %d, expected %d", r->path,
                           (int32_t)n_fft, N_FFT_BINS);
    if (!sotto__need(r, (uint64_t)n_mel * n_fft * 4, "the mel filters")) return r->err->status;
    r->i += (size_t)n_mel * n_fft * 4;
    return SOTTO_OK;
}

/* ---- vocabulary ---------------------------------------------------------------------- */

/* openai-whisper tokenizer.py LANGUAGES, in order: the language tokens follow
 * <|startoftranscript|>, as many as the vocabulary size leaves room for. */
static const char *const languages[MAX_LANGUAGES] = {
    "en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id",
    "hi", "fi", "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no", "th", "ur", "hr", "bg",
    "lt", "la", "mi", "ml", "cy", "sk", "te", "fa", "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "br",
    "eu", "is", "hy", "ne", "mn", "bs", "kk", "sq", "sw", "gl", "mr", "pa", "si", "km", "sn", "yo", "so",
    "af", "oc", "ka", "be", "tg", "sd", "gu", "am", "yi", "lo", "uz", "fo", "ht", "ps", "tk", "nn", "mt",
    "sa", "lb", "my", "bo", "tl", "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw", "su", "yue",
};

/* Where read_vocab writes the synthesised tokens: id ID next, its text in 24-byte slots. */
typedef struct specials {
    const char **tok;
    uint32_t *len;
    int32_t id;
    char *slot;
} specials;

static void add_special(specials *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_special(specials *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    o->len[o->id] = (uint32_t)vsnprintf(o->slot, 24, fmt, ap); /* the longest, <|startoftranscript|>, is 21 */
    va_end(ap);
    o->tok[o->id++] = o->slot;
    o->slot += 24;
}

/* Reads the base tokens and appends the special and timestamp tokens the way
 * openai-whisper's tokenizer numbers them (tokenizer.py get_encoding): right after the
 * N_BASE base tokens come <|endoftext|>, <|startoftranscript|>, n_languages language
 * tokens, <|translate|>, <|transcribe|>, <|startoflm|>, <|startofprev|>, <|nospeech|>,
 * <|notimestamps|> and the 1501 timestamps; n_languages is what n_vocab leaves (99 for
 * tiny … large-v2 and the English-only models, 100 for large-v3). Files written before
 * whisper.cpp dropped <|endoftext|> from the list (its PR 725) end the base tokens with
 * it; it is then counted as the first special. */
static sotto_status read_vocab(sotto__reader *r, sotto_model *m, const hparams *h, int32_t *n_base_out)
{
    uint32_t count;
    if (!sotto__rd_u32(r, &count, "the vocabulary count")) return r->err->status;
    if (count < 1 || count > (uint32_t)h->n_vocab)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: vocabulary count %d out of range 1..n_vocab (%d)", r->path,
                           (int32_t)count, h->n_vocab);
    if (count > (r->n - r->i) / 4)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: vocabulary count %u: the file ends before that many "
                           "tokens", r->path, count);
    const char **tok = malloc((size_t)h->n_vocab * sizeof *tok);
    uint32_t *len = malloc((size_t)h->n_vocab * sizeof *len);
    char *text = malloc((size_t)(MAX_LANGUAGES + N_FIXED_SPECIALS + N_TIMESTAMPS) * 24);
    sotto_status st = tok && len && text ? SOTTO_OK : sotto__fail(r->err, SOTTO_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; !st && k < count; k++) {
        if (!sotto__rd_u32(r, &len[k], "a token length")) st = r->err->status;
        else if (len[k] > MAX_TOKEN_BYTES) /* 0 is valid: the multilingual vocabulary's id 50256 is empty */
            st = sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: vocabulary token %u has length %u (expected 0..%d)",
                             r->path, k, len[k], MAX_TOKEN_BYTES);
        else if (!sotto__need(r, len[k], "a token")) st = r->err->status;
        else tok[k] = (const char *)r->p + r->i, r->i += len[k];
    }
    int32_t n_base = (int32_t)count;
    if (!st && len[count - 1] == 13 && memcmp(tok[count - 1], "<|endoftext|>", 13) == 0) n_base--;
    int32_t n_lang = h->n_vocab - n_base - N_FIXED_SPECIALS - N_TIMESTAMPS;
    if (!st && (n_lang < 1 || n_lang > MAX_LANGUAGES))
        st = sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: %d base tokens and hparam n_vocab %d leave %d language "
                         "tokens (openai-whisper's tokenizer has 1..%d)", r->path, n_base, h->n_vocab, n_lang,
                         MAX_LANGUAGES);
    if (!st) {
        specials o = {tok, len, n_base, text};
        add_special(&o, "<|endoftext|>");
        add_special(&o, "<|startoftranscript|>");
        for (int32_t k = 0; k < n_lang; k++) add_special(&o, "<|%s|>", languages[k]);
        static const char *const task[6] = {"translate", "transcribe", "startoflm", "startofprev", "nospeech",
                                            "notimestamps"};
        for (int k = 0; k < 6; k++) add_special(&o, "<|%s|>", task[k]);
        for (int k = 0; k < N_TIMESTAMPS; k++) add_special(&o, "<|%d.%02d|>", k / 50, k % 50 * 2);
        st = sotto__model_set_vocab(m, h->n_vocab, tok, len, r->err);
    }
    free(tok);
    free(len);
    free(text);
    *n_base_out = n_base;
    return st;
}


/* ---- tensors ------------------------------------------------------------------------- */

/* One tensor the hyper-parameters call for, and where the file holds it. */
typedef struct want {
    char name[SOTTO__NAME_LEN];
    int n_dims;
    int64_t dims[3];           /* PyTorch order */
    bool column_ok;            /* also accepted as [dims[0], 1] (conv biases) */
    bool seen;
    int type;                  /* ggml type, once seen */
    const uint8_t *data;       /* into the mapping, once seen */
} want;

typedef struct wants {
    want *v;
    int n, cap, last;          /* last: index of the previous match (files list them in order) */
} wants;

static void add_want(wants *w, int n_dims, int64_t d0, int64_t d1, int64_t d2, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void add_want(wants *w, int n_dims, int64_t d0, int64_t d1, int64_t d2, const char *fmt, ...)
{
    if (w->n == w->cap) return; /* cannot happen: the table is sized for every call */
    want *t = &w->v[w->n++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
    t->n_dims = n_dims;
    t->dims[0] = d0;
    t->dims[1] = d1;
    t->dims[2] = d2;
}

static void want_block(wants *w, const char *stack, int i, int64_t d, int64_t d_src, bool cross)
{
    const char *att[2] = {"attn", "cross_attn"};
    for (int a = 0; a < (cross ? 2 : 1); a++) {
        int64_t d_in = a ? d_src : d; /* cross-attention keys and values read the audio */
        add_want(w, 1, d, 0, 0, "%s.blocks.%d.%s_ln.weight", stack, i, att[a]);
        add_want(w, 1, d, 0, 0, "%s.blocks.%d.%s_ln.bias", stack, i, att[a]);
        add_want(w, 2, d, d, 0, "%s.blocks.%d.%s.query.weight", stack, i, att[a]);
        add_want(w, 1, d, 0, 0, "%s.blocks.%d.%s.query.bias", stack, i, att[a]);
        add_want(w, 2, d, d_in, 0, "%s.blocks.%d.%s.key.weight", stack, i, att[a]);
        add_want(w, 2, d, d_in, 0, "%s.blocks.%d.%s.value.weight", stack, i, att[a]);
        add_want(w, 1, d, 0, 0, "%s.blocks.%d.%s.value.bias", stack, i, att[a]);
        add_want(w, 2, d, d, 0, "%s.blocks.%d.%s.out.weight", stack, i, att[a]);
        add_want(w, 1, d, 0, 0, "%s.blocks.%d.%s.out.bias", stack, i, att[a]);
    }
    add_want(w, 1, d, 0, 0, "%s.blocks.%d.mlp_ln.weight", stack, i);
    add_want(w, 1, d, 0, 0, "%s.blocks.%d.mlp_ln.bias", stack, i);
    add_want(w, 2, 4 * d, d, 0, "%s.blocks.%d.mlp.0.weight", stack, i);
    add_want(w, 1, 4 * d, 0, 0, "%s.blocks.%d.mlp.0.bias", stack, i);
    add_want(w, 2, d, 4 * d, 0, "%s.blocks.%d.mlp.2.weight", stack, i);
    add_want(w, 1, d, 0, 0, "%s.blocks.%d.mlp.2.bias", stack, i);
}

/* Every tensor of an openai-whisper model of dimensions H, with its PyTorch shape. */
static sotto_status make_wants(const hparams *h, wants *w, sotto__err *err)
{
    int64_t da = h->n_audio_state, dt = h->n_text_state;
    w->cap = 11 + 15 * h->n_audio_layer + 24 * h->n_text_layer;
    w->v = calloc((size_t)w->cap, sizeof *w->v);
    if (!w->v) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    add_want(w, 3, da, h->n_mels, 3, "encoder.conv1.weight");
    add_want(w, 1, da, 0, 0, "encoder.conv1.bias");
    add_want(w, 3, da, da, 3, "encoder.conv2.weight");
    add_want(w, 1, da, 0, 0, "encoder.conv2.bias");
    w->v[1].column_ok = w->v[3].column_ok = true; /* convert-pt-to-ggml.py stores them [n, 1] */
    add_want(w, 2, h->n_audio_ctx, da, 0, "encoder.positional_embedding");
    for (int i = 0; i < h->n_audio_layer; i++) want_block(w, "encoder", i, da, da, false);
    add_want(w, 1, da, 0, 0, "encoder.ln_post.weight");
    add_want(w, 1, da, 0, 0, "encoder.ln_post.bias");
    add_want(w, 2, h->n_vocab, dt, 0, "decoder.token_embedding.weight");
    add_want(w, 2, h->n_text_ctx, dt, 0, "decoder.positional_embedding");
    for (int i = 0; i < h->n_text_layer; i++) want_block(w, "decoder", i, dt, da, true);
    add_want(w, 1, dt, 0, 0, "decoder.ln.weight");
    add_want(w, 1, dt, 0, 0, "decoder.ln.bias");
    return SOTTO_OK;
}

static want *find_want(wants *w, const char *name)
{
    for (int k = 0; k < w->n; k++) {
        int i = (w->last + k) % w->n;
        if (strcmp(w->v[i].name, name) == 0) return w->last = i, &w->v[i];
    }
    return NULL;
}

static int64_t want_numel(const want *t)
{
    int64_t n = 1;
    for (int k = 0; k < t->n_dims; k++) n *= t->dims[k];
    return n;
}

static void shape_str(char *out, size_t n, int n_dims, const int64_t *dims)
{
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < n_dims && o < n; i++)
        o += (size_t)snprintf(out + o, n - o, "%s%lld", i ? "," : "", (long long)dims[i]);
}

/* Reads one tensor record (int32 n_dims, int32 name length, int32 ggml type, the dims
 * fastest first, the name, the data) and checks it against the table. */
static sotto_status read_tensor(sotto__reader *r, wants *w, int32_t qntvr, int index)
{
    uint32_t n_dims, name_len, type, ne[4];
    if (!sotto__rd_u32(r, &n_dims, "a tensor's n_dims") || !sotto__rd_u32(r, &name_len, "a tensor's name length") ||
        !sotto__rd_u32(r, &type, "a tensor's type"))
        return r->err->status;
    if (n_dims < 1 || n_dims > 4)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %d has n_dims %d (expected 1..4)", r->path, index,
                           (int32_t)n_dims);
    if (name_len < 1 || name_len >= SOTTO__NAME_LEN)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %d has a name of length %d (expected 1..%d)",
                           r->path, index, (int32_t)name_len, SOTTO__NAME_LEN - 1);
    for (uint32_t k = 0; k < n_dims; k++)
        if (!sotto__rd_u32(r, &ne[k], "a tensor's dimensions")) return r->err->status;
    if (!sotto__need(r, name_len, "a tensor's name")) return r->err->status;
    char name[SOTTO__NAME_LEN];
    memcpy(name, r->p + r->i, name_len);
    name[name_len] = 0;
    r->i += name_len;
    if (strlen(name) != name_len)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %d: the name holds a NUL byte", r->path, index);
    want *t = find_want(w, name);
    if (!t) return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: unexpected tensor %s", r->path, name);
    if (t->seen) return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %s appears twice", r->path, name);
    if (!type_supported((int)type)) {
        const size_t n_names = sizeof ggml_type_names / sizeof *ggml_type_names;
        return sotto__fail(r->err, SOTTO_ERR_UNSUPPORTED, "%s: tensor %s has ggml type %d (%s); supported: f32, f16, "
                           "q8_0, q4_0, q4_1, q5_0, q5_1", r->path, name, (int32_t)type,
                           type < n_names ? ggml_type_names[type] : "unknown");
    }
    int64_t dims[4];
    for (uint32_t k = 0; k < n_dims; k++) {
        if ((int32_t)ne[k] < 1)
            return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %s: dimension %u is %d", r->path, name, k,
                               (int32_t)ne[k]);
        dims[n_dims - 1 - k] = ne[k];
    }
    bool column = t->column_ok && n_dims == 2 && dims[1] == 1;
    bool ok = (int)n_dims == t->n_dims || column;
    for (int k = 0; ok && k < t->n_dims; k++) ok = dims[k] == t->dims[k];
    if (!ok) {
        char got[96], exp[96];
        shape_str(got, sizeof got, (int)n_dims, dims);
        shape_str(exp, sizeof exp, t->n_dims, t->dims);
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %s has shape [%s], expected [%s]", r->path, name, got,
                           exp);
    }
    int64_t numel = want_numel(t); /* the hparams bound it: < 2^40 */
    size_t bytes, bb = block_bytes((int)type);
    if (bb && qntvr != GGML_QNT_VERSION)
        return sotto__fail(r->err, SOTTO_ERR_UNSUPPORTED, "%s: tensor %s is %s but hparam ftype says quantization "
                           "version %d: only version %d (ggml since May 2023) is read; quantize the model again",
                           r->path, name, ggml_type_names[type], qntvr, GGML_QNT_VERSION);
    if (bb && ne[0] % 32)
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %s is %s but its rows of %u values are not whole "
                           "blocks of 32", r->path, name, ggml_type_names[type], ne[0]);
    bool fits = bb ? sotto__mul_ok((size_t)numel / 32, bb, &bytes)
                   : sotto__mul_ok((size_t)numel, type == GG_F32 ? 4 : 2, &bytes);
    if (!fits || !sotto__need(r, bytes, "a tensor's data"))
        return sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: tensor %s: its %lld values run past the end of the file "
                           "(%zu bytes left at byte %zu)", r->path, name, (long long)numel, r->n - r->i, r->i);
    t->seen = true;
    t->type = (int)type;
    t->data = r->p + r->i;
    r->i += bytes;
    return SOTTO_OK;
}

/* Copies every tensor into one 64-byte-aligned block owned by M (converting 4- and 5-bit
 * blocks to q8_0) and records it on M. */
static sotto_status hold_tensors(sotto_model *m, const wants *w, const char *path, sotto__err *err)
{
    size_t total = 0, bytes;
    for (int i = 0; i < w->n; i++) {
        if (!sotto__type_bytes(held_type(w->v[i].type), want_numel(&w->v[i]), &bytes) ||
            !sotto__add_ok(total, (bytes + 63) / 64 * 64, &total))
            return sotto__fail(err, SOTTO_ERR_NOMEM, "%s: tensors too large", path);
    }
    uint8_t *block = total <= SIZE_MAX - 64 ? sotto__model_alloc(m, total + 64) : NULL;
    if (!block) return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory for %zu bytes of tensors", total);
    uint8_t *at = block + (64 - (uintptr_t)block % 64) % 64;
    for (int i = 0; i < w->n; i++) {
        const want *t = &w->v[i];
        int64_t numel = want_numel(t);
        sotto_type held = held_type(t->type);
        sotto__type_bytes(held, numel, &bytes);
        if (t->type == GG_F32 || t->type == GG_F16 || t->type == GG_Q8_0) {
            memcpy(at, t->data, bytes);
        } else {
            int64_t bad = first_bad_block(t->type, t->data, numel / 32);
            if (bad >= 0)
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: tensor %s holds a NaN or infinity scale in block %lld",
                                   path, t->name, (long long)bad);
            size_t bb = block_bytes(t->type);
            for (int64_t b = 0; b < numel / 32; b++) {
                float x[32];
                block_to_f32(t->type, t->data + (size_t)b * bb, x);
                sotto__quantize(SOTTO_TYPE_Q8_0, x, at + (size_t)b * sizeof(sotto__block_q8_0), 32);
            }
        }
        sotto_status st = sotto__model_add_tensor(m, t->name, held, t->n_dims, t->dims, at, bytes, err);
        if (st) return st;
        at += (bytes + 63) / 64 * 64;
    }
    return SOTTO_OK;
}

/* ---- the file ------------------------------------------------------------------------ */

bool sotto__ggml_probe(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    uint8_t b[4];
    bool yes = fread(b, 1, 4, f) == 4 && sotto__rd32(b) == GGML_MAGIC;
    fclose(f);
    return yes;
}

sotto_status sotto__load_ggml(sotto_model *m, const char *path, sotto__err *err)
{
    sotto_status st = sotto__map_file(path, &m->map, err);
    if (st) return st;
    sotto__reader r = {m->map.data, m->map.size, 0, path, err};
    uint32_t magic;
    if (!sotto__rd_u32(&r, &magic, "the magic")) return err->status;
    if (magic != GGML_MAGIC)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: not a whisper.cpp ggml file (bad magic)", path);
    hparams h = {0};
    int32_t n_base = 0;
    if ((st = read_hparams(&r, &h)) || (st = skip_mel_filters(&r, &h)) || (st = read_vocab(&r, m, &h, &n_base)))
        return st;
    wants w = {0};
    st = make_wants(&h, &w, err);
    for (int k = 0; !st && r.i < r.n; k++) st = read_tensor(&r, &w, h.ftype / 1000, k);
    for (int i = 0; !st && i < w.n; i++)
        if (!w.v[i].seen) st = sotto__fail(err, SOTTO_ERR_FORMAT, "%s: missing tensor %s", path, w.v[i].name);
    /* records are read back to back, so no two can overlap */
    if (!st) st = hold_tensors(m, &w, path, err);
    free(w.v);
    if (st) return st;
    sotto__unmap(&m->map); /* the vocabulary and every tensor are copies now */
    m->n_audio_head_file = h.n_audio_head;
    m->n_text_head_file = h.n_text_head;
    return sotto__model_finish(m, err); /* (which derives the suppress lists from the vocabulary) */
}
