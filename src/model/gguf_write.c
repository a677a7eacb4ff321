/* gguf_write.c — writes a loaded model as one self-contained GGUF v3 file (the output of
 * `sotto convert`): hyper-parameters, byte-level tokens, merges, special ids, decoding
 * lists and every tensor in the requested storage type. Written to PATH.tmp.PID and
 * renamed, so a failure never leaves a half-written model under the final name; a link's
 * target is replaced, and a path that is not a regular file (a device, a FIFO) refused. */
#define _DEFAULT_SOURCE /* realpath, PATH_MAX */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../quant.h"
#include "gguf.h"
#include "model.h"

sotto_convert_params sotto_convert_params_default(void)
{
    return (sotto_convert_params){.encoder_type = SOTTO_TYPE_F32, .decoder_type = SOTTO_TYPE_F32};
}

typedef struct writer {
    FILE *f;
    bool ok;
} writer;

static void put(writer *w, const void *p, size_t n)
{
    if (w->ok && n && fwrite(p, 1, n, w->f) != n) w->ok = false;
}
static void put_u32(writer *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(w, b, 4);
}
static void put_u64(writer *w, uint64_t v)
{
    put_u32(w, (uint32_t)v);
    put_u32(w, (uint32_t)(v >> 32));
}
static void put_str(writer *w, const char *s, size_t n)
{
    put_u64(w, n);
    put(w, s, n);
}
static void kv_str(writer *w, const char *key, const char *val)
{
    put_str(w, key, strlen(key));
    put_u32(w, SOTTO__GGUF_STRING);
    put_str(w, val, strlen(val));
}
static void kv_u32(writer *w, const char *key, uint32_t val)
{
    put_str(w, key, strlen(key));
    put_u32(w, SOTTO__GGUF_UINT32);
    put_u32(w, val);
}
static void kv_ids(writer *w, const char *key, const int32_t *v, int n)
{
    put_str(w, key, strlen(key));
    put_u32(w, SOTTO__GGUF_ARRAY);
    put_u32(w, SOTTO__GGUF_INT32);
    put_u64(w, (uint64_t)n);
    for (int i = 0; i < n; i++) put_u32(w, (uint32_t)v[i]);
}

/* Storage type of tensor T in the output. Matrices take their component's type; q8_0
 * needs rows of a multiple of 32 values (the conv kernels' rows are 3 long), which fall
 * back to f16. Vectors and position tables stay f32. */
static sotto_type out_type(const sotto__tensor *t, const sotto_convert_params *p)
{
    bool emb = strcmp(t->name, "decoder.token_embedding.weight") == 0;
    bool pos = strstr(t->name, "positional_embedding") != NULL;
    if (t->n_dims < 2 || pos) return SOTTO_TYPE_F32;
    sotto_type want = emb || strncmp(t->name, "decoder.", 8) == 0 ? p->decoder_type : p->encoder_type;
    if (want == SOTTO_TYPE_Q8_0 && t->dims[t->n_dims - 1] % 32) return SOTTO_TYPE_F16;
    return want;
}

static void write_meta(writer *w, const sotto_model *m)
{
    const sotto_model_info *h = &m->info;
    kv_str(w, "general.architecture", "whisper");
    kv_str(w, "general.name", "whisper");
    kv_u32(w, "general.alignment", SOTTO__GGUF_ALIGNMENT);
    kv_u32(w, "whisper.n_vocab", (uint32_t)h->n_vocab);
    kv_u32(w, "whisper.n_mels", (uint32_t)h->n_mels);
    kv_u32(w, "whisper.audio.n_ctx", (uint32_t)h->n_audio_ctx);
    kv_u32(w, "whisper.audio.n_state", (uint32_t)h->n_audio_state);
    kv_u32(w, "whisper.audio.n_head", (uint32_t)h->n_audio_head);
    kv_u32(w, "whisper.audio.n_layer", (uint32_t)h->n_audio_layer);
    kv_u32(w, "whisper.text.n_ctx", (uint32_t)h->n_text_ctx);
    kv_u32(w, "whisper.text.n_state", (uint32_t)h->n_text_state);
    kv_u32(w, "whisper.text.n_head", (uint32_t)h->n_text_head);
    kv_u32(w, "whisper.text.n_layer", (uint32_t)h->n_text_layer);
    kv_u32(w, "whisper.token.eot", (uint32_t)h->token_eot);
    kv_u32(w, "whisper.token.sot", (uint32_t)h->token_sot);
    kv_u32(w, "whisper.token.notimestamps", (uint32_t)h->token_notimestamps);
    kv_str(w, "tokenizer.ggml.model", "gpt2");
    put_str(w, "tokenizer.ggml.tokens", strlen("tokenizer.ggml.tokens"));
    put_u32(w, SOTTO__GGUF_ARRAY);
    put_u32(w, SOTTO__GGUF_STRING);
    put_u64(w, (uint64_t)h->n_vocab);
    char buf[1024];
    for (int32_t i = 0; i < h->n_vocab; i++) {
        size_t len;
        const char *s = sotto_token_bytes(m, i, &len);
        if (len * 2 <= sizeof buf) {
            put_str(w, buf, sotto__bytelevel_encode(s, len, buf));
        } else {
            char *big = malloc(len * 2);
            if (!big) { w->ok = false; return; }
            put_str(w, big, sotto__bytelevel_encode(s, len, big));
            free(big);
        }
    }
    if (m->merges) {
        uint64_t n = 0;
        for (size_t i = 0; i < m->merges_len; i++) n += m->merges[i] == '\n';
        put_str(w, "tokenizer.ggml.merges", strlen("tokenizer.ggml.merges"));
        put_u32(w, SOTTO__GGUF_ARRAY);
        put_u32(w, SOTTO__GGUF_STRING);
        put_u64(w, n);
        const char *p = m->merges, *end = m->merges + m->merges_len;
        for (uint64_t k = 0; k < n; k++) { /* n counted the newlines, so each is found */
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            put_str(w, p, (size_t)(nl - p));
            p = nl + 1;
        }
    }
    kv_ids(w, "whisper.suppress_ids", m->suppress.v, m->suppress.n);
    kv_ids(w, "whisper.suppress_ids_begin", m->suppress_begin.v, m->suppress_begin.n);
    kv_ids(w, "whisper.alignment_heads", m->alignment_heads.v, m->alignment_heads.n);
}

enum { N_KV_BASE = 21 }; /* keys written by write_meta besides merges */

/* Index of the first of K values of TYPE at P that is an infinity or NaN (f16: an all-ones
 * exponent; q8_0: in a block scale), or -1: f16 and q8_0 scales overflow past 65504. */
static int64_t first_overflow(sotto_type type, const uint8_t *p, int64_t k)
{
    if (type == SOTTO_TYPE_F16) {
        for (int64_t i = 0; i < k; i++)
            if ((sotto__rd16(p + 2 * i) & 0x7c00) == 0x7c00) return i;
    } else if (type == SOTTO_TYPE_Q8_0) {
        for (int64_t b = 0; b < k / SOTTO__QK8_0; b++)
            if ((sotto__rd16(p + b * sizeof(sotto__block_q8_0)) & 0x7c00) == 0x7c00) return b * SOTTO__QK8_0;
    }
    return -1;
}

/* Writes tensor T's data in TYPE; false (with ERR set) when a value does not fit TYPE,
 * so that a converted file never holds an infinity its loader would refuse. */
static bool write_tensor_data(writer *w, const sotto__tensor *t, sotto_type type, float *f32, void *out,
                              int64_t chunk, sotto__err *err)
{
    int64_t n = sotto__tensor_numel(t);
    for (int64_t i = 0; i < n && w->ok; i += chunk) { /* chunk is a multiple of 32: q8_0 blocks stay whole */
        int64_t k = n - i < chunk ? n - i : chunk;
        size_t in_off, out_bytes;
        sotto__type_bytes(t->type, i, &in_off);
        sotto__dequantize(t->type, (const uint8_t *)t->data + in_off, f32, k);
        sotto__quantize(type, f32, out, k);
        int64_t at = first_overflow(type, out, k);
        if (at >= 0) {
            sotto__fail(err, SOTTO_ERR_INVALID_ARG, "tensor %s: value %g at element %lld does not fit %s; "
                        "convert it to f32", t->name, f32[at], (long long)(i + at), sotto__type_name(type));
            return false;
        }
        sotto__type_bytes(type, k, &out_bytes);
        put(w, out, out_bytes);
    }
    return true;
}

sotto_status sotto_model_save_gguf(const sotto_model *m, const char *path, const sotto_convert_params *params)
{
    sotto__err err = {0};
    sotto_convert_params p = params ? *params : sotto_convert_params_default();
    sotto_type types[3] = {SOTTO_TYPE_F32, SOTTO_TYPE_F16, SOTTO_TYPE_Q8_0};
    bool enc_ok = false, dec_ok = false;
    for (int i = 0; i < 3; i++) enc_ok |= p.encoder_type == types[i], dec_ok |= p.decoder_type == types[i];
    if (!m || !path || !enc_ok || !dec_ok)
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "save_gguf: bad model, path or weight type"});
    char tmp[4096 + 32], real[PATH_MAX];
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && realpath(path, real))
        path = real; /* a link's target is replaced, the link stays */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* never renamed over: /dev/null, a FIFO */
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "%s: not a regular file (a model is written to a file)", path);
        return sotto__publish(&err);
    }
    /* PATH.tmp.PID: another process converting to PATH has its own (two sharing one had
     * made a file of both, reported written), and a file of the user's named PATH.tmp
     * is never touched; the replaced file's permissions are kept */
    mode_t perm = stat(path, &st) == 0 ? st.st_mode & 07777 : 0666;
    int fd = sotto__temp_beside(path, perm, tmp, sizeof tmp);
    if (fd < 0 && errno == ENAMETOOLONG)
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "output path too long"});
    if (fd >= 0 && perm != 0666) (void)fchmod(fd, perm);
    writer w = {fd >= 0 ? fdopen(fd, "wb") : NULL, true};
    if (!w.f) {
        int e = errno;
        if (fd >= 0) close(fd), remove(tmp);
        sotto__fail(&err, SOTTO_ERR_IO, "%s: cannot create: %s", path, strerror(e));
        return sotto__publish(&err);
    }
    int n_kv = N_KV_BASE + (m->merges != NULL);
    put(&w, "GGUF", 4);
    put_u32(&w, 3);
    put_u64(&w, (uint64_t)m->n_tensors);
    put_u64(&w, (uint64_t)n_kv);
    write_meta(&w, m);
    uint64_t off = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        const sotto__tensor *t = &m->tensors[i];
        sotto_type type = out_type(t, &p);
        put_str(&w, t->name, strlen(t->name));
        put_u32(&w, (uint32_t)t->n_dims);
        for (int d = t->n_dims - 1; d >= 0; d--) put_u64(&w, (uint64_t)t->dims[d]);
        put_u32(&w, (uint32_t)type);
        put_u64(&w, off);
        size_t bytes;
        sotto__type_bytes(type, sotto__tensor_numel(t), &bytes);
        off += (bytes + SOTTO__GGUF_ALIGNMENT - 1) / SOTTO__GGUF_ALIGNMENT * SOTTO__GGUF_ALIGNMENT;
    }
    static const uint8_t zeros[SOTTO__GGUF_ALIGNMENT];
    long pos = ftell(w.f);
    if (pos < 0) w.ok = false;
    else put(&w, zeros, (size_t)((SOTTO__GGUF_ALIGNMENT - pos % SOTTO__GGUF_ALIGNMENT) % SOTTO__GGUF_ALIGNMENT));
    const int64_t chunk = 1 << 16;
    float *f32 = malloc((size_t)chunk * sizeof(float));
    void *out = malloc((size_t)chunk * sizeof(float));
    if (!f32 || !out) w.ok = false;
    bool fits = true;
    for (int i = 0; i < m->n_tensors && w.ok && fits; i++) {
        const sotto__tensor *t = &m->tensors[i];
        sotto_type type = out_type(t, &p);
        fits = write_tensor_data(&w, t, type, f32, out, chunk, &err);
        size_t bytes;
        sotto__type_bytes(type, sotto__tensor_numel(t), &bytes);
        put(&w, zeros, (SOTTO__GGUF_ALIGNMENT - bytes % SOTTO__GGUF_ALIGNMENT) % SOTTO__GGUF_ALIGNMENT);
    }
    free(f32);
    free(out);
    if (fclose(w.f) != 0) w.ok = false;
    if (!fits) {
        remove(tmp);
        return sotto__publish(&err);
    }
    if (!w.ok || rename(tmp, path) != 0) {
        sotto__fail(&err, SOTTO_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        remove(tmp);
        return sotto__publish(&err);
    }
    return SOTTO_OK;
}
