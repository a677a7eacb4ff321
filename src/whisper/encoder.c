/* encoder.c — the audio encoder (openai/whisper model.py AudioEncoder): two 1-D
 * convolutions with GELU, sinusoidal positions, pre-LN transformer blocks, ln_post.
 * Input: a mel window [n_mels, 3000] from the host; output: e->out [1500, d] in the
 * backend's memory (the decoder projects its cross-attention K/V from it). */
#include "encoder.h"

#include <stdlib.h>

/* The row stride of the transposed keys: n_ctx rounded up to 16 floats, so that each row
 * starts a cache line and the scores' 32-wide loads of it split no line (avx512, one core,
 * 24 x 1500 x 64 Q K^T: 145-155 -> 158-173 GFLOP/s; docs/BENCHMARKS.md). */
static size_t kt_ld(const sotto__encoder *e) { return ((size_t)e->n_ctx + 15) & ~(size_t)15; }

sotto_status sotto__encoder_init(sotto__encoder *e, sotto__backend *be, const sotto_model *m, int n_batch,
                                 sotto__arena *a, sotto__err *err)
{
    const sotto_model_info *h = &m->info;
    const sotto__weights *w = &m->w;
    *e = (sotto__encoder){.be = be, .n_mels = h->n_mels, .n_frames = SOTTO_N_FRAMES, .n_ctx = h->n_audio_ctx,
                          .d = h->n_audio_state, .n_head = h->n_audio_head, .n_layer = h->n_audio_layer,
                          .n_batch = n_batch < 1 ? 1 : n_batch, .ff_rows = (h->n_audio_ctx + 3) / 4};
    const size_t d = (size_t)e->d, mels = (size_t)e->n_mels;
    e->blocks = calloc((size_t)e->n_layer, sizeof *e->blocks);
    if (!e->blocks) return sotto__fail(err, SOTTO_ERR_NOMEM, "encoder: out of memory");
    sotto_status st = sotto__import_f32(be, w->conv1_w, d * mels * 3, &e->conv1_w, err);
    if (!st) st = sotto__import_f32(be, w->conv1_b, d, &e->conv1_b, err);
    if (!st) st = sotto__import_f32(be, w->conv2_w, d * d * 3, &e->conv2_w, err);
    if (!st) st = sotto__import_f32(be, w->conv2_b, d, &e->conv2_b, err);
    if (!st) st = sotto__import_f32(be, w->enc_pos, (size_t)e->n_ctx * e->d, &e->pos, err);
    for (int l = 0; l < e->n_layer && !st; l++) st = sotto__import_layer(be, &w->enc[l], e->d, false, &e->blocks[l], err);
    if (!st) st = sotto__import_norm(be, &w->enc_ln, e->d, &e->ln_post, err);
    if (!st) sotto__encoder_declare(e, m, a);
    return st;
}

void sotto__encoder_declare(sotto__encoder *e, const sotto_model *m, sotto__arena *a)
{
    const sotto_model_info *h = &m->info;
    const size_t n = (size_t)e->n_ctx * (size_t)e->n_batch, d = (size_t)e->d, T = (size_t)e->n_frames, mels = (size_t)e->n_mels;
    const size_t f = sizeof(float), dk = d > (size_t)h->n_text_state ? d : (size_t)h->n_text_state;
    sotto__arena_add(a, &e->x, n * d * f);
    /* h .. ff in this order, one run of bytes: the convolutions' buffers fit inside */
    sotto__arena_add(a, &e->h, n * d * f);
    sotto__arena_add(a, &e->q, n * d * f);
    sotto__arena_alias(a, &e->out, &e->q, 0); /* ln_post's output: q is dead after the blocks */
    sotto__arena_add(a, &e->k, n * dk * f);
    sotto__arena_add(a, &e->v, n * dk * f);
    sotto__arena_add(a, &e->attn, n * d * f);
    sotto__arena_add(a, &e->kt, kt_ld(e) * d * f);
    sotto__arena_add(a, &e->ff, (size_t)e->ff_rows * 4 * d * f);
    /* conv1's rows (T of 3 n_mels) or conv2's (T / 2 of 3 d), whichever is larger */
    size_t patches = T * 3 * mels > T / 2 * 3 * d ? T * 3 * mels : T / 2 * 3 * d;
    size_t conv1 = T * d * f, mel = mels * T * f;
    patches = (patches * f + 63) & ~(size_t)63, conv1 = (conv1 + 63) & ~(size_t)63;
    size_t run = ((3 * d + 2 * dk) * n + kt_ld(e) * d + (size_t)e->ff_rows * 4 * d) * f; /* h .. ff */
    if (patches + conv1 + mel <= run) {
        sotto__arena_alias(a, &e->patches, &e->h, 0);
        sotto__arena_alias(a, &e->conv1, &e->h, patches);
        sotto__arena_alias(a, &e->mel, &e->h, patches + conv1);
    } else {
        sotto__arena_add(a, &e->patches, patches);
        sotto__arena_add(a, &e->conv1, conv1);
        sotto__arena_add(a, &e->mel, mel);
    }
}

void sotto__encoder_free(sotto__encoder *e)
{
    free(e->blocks);
    e->blocks = NULL;
}

/* conv1 (n_mels -> d, kernel 3, pad 1) over 3000 frames, conv2 (d -> d, kernel 3, stride
 * 2, pad 1) to 1500 positions, each with GELU, then the positions, into X. */
static void convs(sotto__encoder *e, sotto__buf x)
{
    const sotto__backend_ops *o = e->be->ops;
    const int T = e->n_frames, d = e->d;
    o->conv3(e->be, e->mel, (size_t)T, 1, e->n_mels, T, 1, e->conv1_w, e->conv1_b, d, e->patches, e->conv1);
    o->gelu(e->be, e->conv1, (size_t)T * d);
    o->conv3(e->be, e->conv1, 1, (size_t)d, d, T, 2, e->conv2_w, e->conv2_b, d, e->patches, x);
    o->gelu(e->be, x, (size_t)e->n_ctx * d);
    o->add(e->be, x, e->pos, (size_t)e->n_ctx * d);
}

/* Window W's rows of the [nb * n_ctx, COLS] buffer B. */
static sotto__buf win(const sotto__encoder *e, sotto__buf b, int w, int cols)
{
    return sotto__buf_f32(b, (size_t)w * e->n_ctx * cols);
}

/* Block L over NB windows: the linears over all their rows, the rest window by window
 * (for NB 1, the same calls as always). */
static void block(sotto__encoder *e, const sotto__blayer *L, int nb)
{
    sotto__backend *be = e->be;
    const sotto__backend_ops *o = be->ops;
    const int n = e->n_ctx, d = e->d, rows = nb * n;
    for (int w = 0; w < nb; w++) o->layernorm(be, win(e, e->x, w, d), n, d, &L->attn_ln, win(e, e->h, w, d));
    o->linear(be, e->h, rows, &L->q, e->q);
    o->linear(be, e->h, rows, &L->k, e->k);
    o->linear(be, e->h, rows, &L->v, e->v);
    for (int w = 0; w < nb; w++) {
        o->transpose(be, win(e, e->k, w, d), n, d, e->kt, kt_ld(e));
        o->attention(be, win(e, e->q, w, d), (size_t)d, e->kt, kt_ld(e), win(e, e->v, w, d), (size_t)d,
                     win(e, e->attn, w, d), (size_t)d, n, n, e->n_head, d / e->n_head, -1);
    }
    o->linear(be, e->attn, rows, &L->o, e->h);
    for (int w = 0; w < nb; w++) {
        o->add(be, win(e, e->x, w, d), win(e, e->h, w, d), (size_t)n * d);
        o->layernorm(be, win(e, e->x, w, d), n, d, &L->mlp_ln, win(e, e->h, w, d));
    }
    for (int r0 = 0; r0 < rows; r0 += e->ff_rows) { /* the MLP in blocks of rows, fc2 over its own input */
        const int m = rows - r0 < e->ff_rows ? rows - r0 : e->ff_rows;
        o->linear(be, sotto__buf_f32(e->h, (size_t)r0 * d), m, &L->fc1, e->ff);
        o->gelu(be, e->ff, (size_t)m * 4 * d);
        o->linear(be, e->ff, m, &L->fc2, sotto__buf_f32(e->h, (size_t)r0 * d));
    }
    for (int w = 0; w < nb; w++) o->add(be, win(e, e->x, w, d), win(e, e->h, w, d), (size_t)n * d);
}

void sotto__encoder_forward_batch(sotto__encoder *e, const float *mels, int nb)
{
    const size_t mel = (size_t)e->n_mels * e->n_frames;
    for (int w = 0; w < nb; w++) {
        e->be->ops->write(e->be, e->mel, mels + (size_t)w * mel, mel * sizeof(float));
        convs(e, win(e, e->x, w, e->d));
    }
    for (int l = 0; l < e->n_layer; l++) block(e, &e->blocks[l], nb);
    for (int w = 0; w < nb; w++)
        e->be->ops->layernorm(e->be, win(e, e->x, w, e->d), e->n_ctx, e->d, &e->ln_post, win(e, e->out, w, e->d));
}

void sotto__encoder_forward(sotto__encoder *e, const float *mel) { sotto__encoder_forward_batch(e, mel, 1); }
