/* decoder.h — the text decoder's state: its weights as the backend holds them, the
 * window's resident cross-attention K/V, the static self-attention KV cache and the
 * activations for up to n_text_ctx tokens at once, declared on the context's arena. */
#ifndef SOTTO_DECODER_H
#define SOTTO_DECODER_H

#include "arena.h"
#include "layer.h"

typedef struct sotto__decoder {
    sotto__backend *be;
    int n_vocab, n_ctx, d, n_head, n_layer, n_audio;
    int n_slots;                   /* sequences with a cache of their own (beams, best-of) */
    int n_win;                     /* windows with cross K/V of their own (batched chunks) */
    int win;                       /* the window sotto__decoder_cross writes and forward,
                                      forward_all and cross_keys read (0 unless batched) */
    sotto__blinear emb;            /* [n_vocab, d]: token lookup and, tied, the logits */
    sotto__buf pos;                /* [n_ctx, d] */
    sotto__blayer *layers;         /* [n_layer] */
    sotto__bnorm ln;
    /* cross-attention K/V of every layer, projected once per window, stored in f32 for
     * an f32 decoder, f16 for an f16 one, q8_0 for a q8_0 one where the shape allows
     * (backend.h sotto__cross_layout) */
    sotto_type cross_type;
    size_t cross_k_bytes, cross_v_bytes; /* one layer's */
    sotto__buf cross_k, cross_v;   /* [n_win][n_layer] of those */
    /* static self-attention cache, one slot per sequence, written at the cache position */
    sotto__buf self_kt;            /* [n_slots, n_layer, d, n_ctx] keys transposed */
    sotto__buf self_v;             /* [n_slots, n_layer, n_ctx, d] */
    sotto__buf x, h, q, attn, tmp, k; /* [n_ctx, d] */
    sotto__buf ff;                 /* [n_ctx, 4d] */
    sotto__buf logits;             /* [max(2, n_slots), n_vocab]; the argmax's scratch too */
} sotto__decoder;

/* The storage of M's cross-attention K/V: f32 for f32 and f16 weights (an f16 model then
 * gives its f32 copy's results), q8_0 for q8_0, or f16 where the shape has no q8_0 layout
 * (backend.h sotto__cross_q8_ok). */
sotto_type sotto__decoder_cross_type(const sotto_model *m);

/* Imports M's decoder weights through BE and declares the buffers on A, with N_SLOTS
 * cache slots (>= 1) and N_WIN windows of cross K/V (>= 1). */
sotto_status sotto__decoder_init(sotto__decoder *dec, sotto__backend *be, const sotto_model *m, int n_slots,
                                 int n_win, sotto__arena *a, sotto__err *err);
/* Declares on A the buffers of DEC (its dimensions, n_slots, n_win and cross layout set,
 * as by init): what init declares, alone, so that a context can size other batches. */
void sotto__decoder_declare(sotto__decoder *dec, sotto__arena *a);
/* After the arena is placed: touches the cache once, so that the first decode does not
 * pay its page faults. */
void sotto__decoder_ready(sotto__decoder *dec);
void sotto__decoder_free(sotto__decoder *dec);

/* Projects every layer's cross-attention K/V from the encoder output AUDIO [n_audio,
 * d_audio], with KX and VX ([n_audio, d] each) as scratch. */
void sotto__decoder_cross(sotto__decoder *dec, sotto__buf audio, sotto__buf kx, sotto__buf vx);

/* Runs N tokens of one sequence at positions N_PAST.. of cache SLOT (checked by the
 * caller) and leaves the last token's final state in h row 0 and, when EXTRA >= 0, that
 * of token EXTRA in h row 1. */
void sotto__decoder_forward(sotto__decoder *dec, const int32_t *tokens, int n, int n_past, int slot, int extra);

/* One token for each of N sequences (N <= SOTTO_MAX_SEQUENCES), all at position N_PAST:
 * sequence r's token TOKENS[r] attends positions 0 .. N_PREFIX-1 of cache slot PSLOT (a
 * prefix the N sequences share, prefilled once) and N_PREFIX .. N_PAST of slot SLOTS[r]
 * (its own, whose first N_PREFIX positions are not read); final states in h rows
 * 0 .. N-1. */
void sotto__decoder_step(sotto__decoder *dec, const int32_t *tokens, const int *slots, int n, int n_past, int pslot,
                         int n_prefix);

/* One token for each of N rows of several windows' sequences: row r's token TOKENS[r], at
 * position PAST[r], attends positions 0 .. N_PREFIX[r]-1 of cache slot PSLOTS[r] (its
 * group's shared prefix), then its own slot SLOTS[r] up to PAST[r], and window WINS[r]'s
 * cross K/V; rows of one window are adjacent (N <= n_slots), and so are rows of one prefix
 * (which share one position: windows started at different steps stand at their own). Final states
 * in h rows 0 .. N-1. Every linear runs over all N rows at once through the backend's
 * linear_rows (the bits of be->exact_rows rows or more, however few), so that each row's
 * bits do not depend on the rows beside it: a row gives what it gives in a step of its
 * window's rows alone through this function. */
void sotto__decoder_step_batch(sotto__decoder *dec, const int32_t *tokens, const int *slots, const int *wins, int n,
                               const int *past, const int *pslots, const int *n_prefix);

/* logits rows [N_ROWS, n_vocab] as sotto__decoder_logits, through linear_rows as in
 * sotto__decoder_step_batch. */
void sotto__decoder_logits_batch(sotto__decoder *dec, int n_rows);

/* The alignment pass of word timestamps: N tokens from position 0 of cache SLOT, every
 * token's final state in h rows 0 .. N-1 (N <= n_ctx), and for each layer l with WANT[l]
 * its cross-attention queries [N, d] read into host memory Q + l * N * d (waits). */
void sotto__decoder_forward_all(sotto__decoder *dec, const int32_t *tokens, int n, int slot, const bool *want,
                                float *q);

/* OUT [N_ROWS, n_vocab] = the final states h rows ROW0 .. ROW0 + N_ROWS - 1 times the tied
 * embedding (N_ROWS <= n_ctx). */
void sotto__decoder_logits_rows(sotto__decoder *dec, int row0, int n_rows, sotto__buf out);

/* Layer L's cross-attention keys of head H as f32 host rows OUT [n_audio, d / n_head]
 * (read back and widened from the cross storage; waits). SOTTO_ERR_NOMEM when the
 * staging copy cannot be allocated. */
sotto_status sotto__decoder_cross_keys(sotto__decoder *dec, int l, int h, float *out);

/* Cache positions [FROM, N_POS) of slot SRC copied into slot DST. */
void sotto__decoder_copy_slot(sotto__decoder *dec, int dst, int src, int from, int n_pos);

/* logits rows [N_ROWS, n_vocab] = the final states h rows 0 .. N_ROWS-1 times the tied
 * embedding (N_ROWS <= max(2, n_slots)). */
void sotto__decoder_logits(sotto__decoder *dec, int n_rows);

/* Logits [FIRST, FIRST + N) of row 0 alone (the rest of the row untouched), each with the
 * bits sotto__decoder_logits gives it where the backend has few_logits. */
void sotto__decoder_logits_at(sotto__decoder *dec, int first, int n);

/* The argmax of those logits with the ids of the N_EXCL lists EXCL taken out, without
 * computing every logit where the backend can (the same id either way). */
sotto_status sotto__decoder_argmax(sotto__decoder *dec, const sotto__i32list *excl, int n_excl, int32_t *out);

#endif
