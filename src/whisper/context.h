/* context.h — per-stream engine state: the thread pool, every activation buffer, the
 * resident cross-attention K/V of the current window and the static self-attention KV
 * cache, all carved from one allocation made when the context is created. */
#ifndef SOTTO_CONTEXT_H
#define SOTTO_CONTEXT_H

#include "../model/model.h"
#include "../nn/ops.h"

struct sotto_context {
    const sotto_model *model;
    sotto__exec ex;
    char error[SOTTO__ERR_LEN];
    void *arena;

    /* encoder, n = n_audio_ctx, d = n_audio_state */
    float *im2col;             /* [2n, 3 * max(n_mels, d)] conv input patches */
    float *conv1;              /* [2n, d]; both inside enc_h .. enc_ff where they fit */
    float *enc_x;              /* [n, d] residual stream */
    float *enc_out;            /* [n, d] output of ln_post */
    float *enc_h, *enc_q, *enc_k, *enc_v, *enc_attn; /* [n, d] each */
    float *enc_kt;             /* [d, n] keys transposed */
    float *enc_ff;             /* [n, 4d] */
    bool encoded;

    /* cross-attention, per decoder layer, projected once per window; stored in f32 for an
     * f32 decoder, in f16 for an f16 one, in q8_0 for a q8_0 one (a quarter of the f32
     * bytes read per token), per head so that a step reads each head's keys and values
     * as one stream (ops.h sotto__op_cross_kv: q8_0 values transposed in blocks of 32
     * positions, n_audio_ctx padded to Sp = a multiple of 32 with zeros) */
    sotto_type cross_type;
    void *cross_k;             /* [n_text_layer][n_text_head][n_audio_ctx][head width] */
    void *cross_v;             /* the same (q8_0: [n_text_layer][d_text][Sp / 32] blocks) */

    /* static self-attention cache, written at the cache position */
    float *self_kt;            /* [n_text_layer, d_text, n_text_ctx] keys transposed */
    float *self_v;             /* [n_text_layer, n_text_ctx, d_text] */

    /* decoder activations for up to n_text_ctx tokens at once */
    float *dec_x, *dec_h, *dec_q, *dec_attn, *dec_tmp; /* [n_text_ctx, d_text] */
    float *dec_k;              /* [n_text_ctx, d_text] */
    float *dec_ff;             /* [n_text_ctx, 4 d_text] */
    float *logits;             /* [n_vocab]; the proxy scores during a greedy argmax */
    bool have_state;           /* dec_h row 0 holds the final state of the last decode */
    bool have_logits;          /* logits holds its projection (made on demand) */
    bool use_proxy;            /* greedy argmax through the vocabulary proxy (SOTTO_VOCAB_PROXY=0: off) */
};

/* Records a message on CTX and returns STATUS. */
sotto_status sotto__ctx_fail(sotto_context *ctx, sotto_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Decoder layer L's cross-attention keys *K and values *V within cross_k, cross_v. */
void sotto__cross_layer(const sotto_context *ctx, int l, void **k, void **v);

void sotto__encoder_forward(sotto_context *ctx, const float *mel);
/* Runs the decoder over N_TOKENS tokens at cache positions N_PAST.. (arguments checked
 * by the caller) and leaves the last token's final state in dec_h row 0. */
void sotto__decoder_forward(sotto_context *ctx, const int32_t *tokens, int n_tokens, int n_past);

/* sotto_decode without computing the logits (sotto_logits still makes them on demand). */
sotto_status sotto__decode_state(sotto_context *ctx, const int32_t *tokens, int n_tokens, int n_past);

#endif
