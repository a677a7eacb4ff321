/* batch_run.c — the batches of batched transcription: the chunks of one or more inputs
 * (batch.c prepares each) taken in order, batch_size at a time, through the encoder as one
 * pass (encoder.c sotto__encoder_forward_batch), each chunk's cross K/V into a decoder
 * window of its own, and their searches stepped together (search.h groups): every
 * decoder step is one sotto__decoder_step_batch over the live rows of all of them; a
 * chunk whose search ends leaves the batch, and an input whose abort callback fires
 * leaves it alone; with batch_continue, the rest of each chunk that stopped early goes
 * through again from its last timestamp, in the next batch, ahead of new chunks (so the
 * batches stay full), and a chunk's segments are added once all of its pieces are
 * decoded, in the order of the chunks. sotto_transcribe_batch (many inputs, for the
 * server) and batch_size in sotto_transcribe* (one) both run here. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "lang.h"

enum {
    MAX_PIECES = 8, /* a chunk and its continuations (batch_continue) */
    FLY_BATCHES = 4 /* chunks in flight: this many batches' worth at most */
};

/* One window of a batch: chunk C of input IN from sample SKIP, decoded with *O, its
 * search's result *D. */
typedef struct bwin {
    sotto__bin *in;
    const sotto_batch_chunk *c;
    int64_t skip;
    const sotto__decode_opts *o;
    sotto__decode_result *d;
} bwin;

/* A chunk in flight: chunk C of input IN, its N pieces decoded so far (the chunk from
 * sample SKIP[i], decoded as D[i]; SKIP[N] the next one's start unless DONE), all with
 * O: IN's options, with multilingual in the start sequence SOT of the chunk's own
 * language LANG (-1: the input's). WIN: its last piece's window in the batch that
 * decoded it. */
typedef struct bchunk {
    sotto__bin *in;
    const sotto_batch_chunk *c;
    int n, win;
    bool done;
    int64_t skip[MAX_PIECES];
    sotto__decode_result d[MAX_PIECES];
    sotto__decode_opts o;
    int32_t sot[4];
    int32_t lang;
} bchunk;

/* The chunks in flight, in the order they were taken (ORDER [N]), each one of STORE
 * [CAP]; FREE [N_FREE] the unused entries. A chunk leaves when its segments are added
 * (it and every chunk of its input before it decoded) or its input fails or stops. */
typedef struct bfly {
    bchunk *store, **order, **free;
    int cap, n, n_free;
} bfly;

static bool fly_init(bfly *f, int cap)
{
    *f = (bfly){.cap = cap, .n_free = cap};
    f->store = malloc((size_t)cap * sizeof *f->store);
    f->order = malloc((size_t)cap * sizeof *f->order), f->free = malloc((size_t)cap * sizeof *f->free);
    for (int i = 0; f->free && i < cap; i++) f->free[i] = &f->store[cap - 1 - i];
    return f->store && f->order && f->free;
}

static void fly_free(bfly *f) { free(f->store), free(f->order), free(f->free); }

/* A new chunk in flight, last in order (the caller has checked f->n < f->cap). */
static bchunk *fly_new(bfly *f)
{
    bchunk *b = f->free[--f->n_free];
    f->order[f->n++] = b;
    return b;
}

/* The chunk at ORDER[I] leaves. */
static void fly_drop(bfly *f, int i)
{
    f->free[f->n_free++] = f->order[i];
    memmove(f->order + i, f->order + i + 1, (size_t)(f->n - i - 1) * sizeof *f->order);
    f->n--;
}

/* Encodes the NB windows' chunks in one pass and projects each one's cross K/V into
 * decoder window w. */
static sotto_status encode(sotto__brun *r, bwin *bw, int nb)
{
    sotto_context *ctx = r->ctx;
    const size_t mel = (size_t)ctx->model->info.n_mels * SOTTO_N_FRAMES;
    for (int w = 0; w < nb; w++) {
        sotto_status st = sotto__bin_mel(r, bw[w].in, bw[w].c, bw[w].skip, r->mels + (size_t)w * mel);
        if (st) return st;
    }
    ctx->encoded = ctx->have_state = ctx->have_logits = false;
    sotto__encoder_forward_batch(&ctx->enc, r->mels, nb);
    for (int w = 0; w < nb; w++) {
        ctx->dec.win = w;
        sotto__decoder_cross(&ctx->dec, sotto__buf_f32(ctx->enc.out, (size_t)w * ctx->enc.n_ctx * ctx->enc.d),
                             ctx->enc.k, ctx->enc.v);
    }
    return sotto__ctx_sync(ctx, "batched encode");
}

/* Every 16 steps: the inputs whose abort callback fires leave the batch (their groups
 * freed, the input failed as cancelled). */
static void poll_abort(sotto__brun *r, bwin *bw, int nb, sotto__group **g)
{
    for (int w = 0; w < nb; w++) {
        sotto__bin *in = bw[w].in;
        if (!g[w] || in->failed || sotto__group_finished(g[w])) continue;
        if (!in->o.abort_callback || !in->o.abort_callback(in->o.audio_s, in->o.user_data)) continue;
        sotto__bin_fail(r, in, sotto__ctx_fail(r->ctx, SOTTO_ERR_CANCELLED, "batched: cancelled by the caller"));
        for (int v = w; v < nb; v++) /* its other windows in this batch too */
            if (bw[v].in == in) sotto__group_free(g[v]), g[v] = NULL;
    }
}

/* The searches of windows 0 .. NB - 1 in lockstep, each with its input's options (their
 * start sequences of one length): *BW[w].d their results. */
static sotto_status decode(sotto__brun *r, bwin *bw, int nb)
{
    sotto_context *ctx = r->ctx;
    sotto__group *g[SOTTO_MAX_BATCH] = {0};
    const int S = ctx->dec.n_slots / ctx->max_batch; /* the sequences of one window */
    sotto_status st = SOTTO_OK;
    for (int w = 0; w < nb && !st; w++) {
        ctx->dec.win = w;
        st = sotto__group_begin(ctx, bw[w].o, w * S, bw[w].d, &g[w]);
        if (!st && !sotto__group_finished(g[w])) sotto__group_advance(g[w]);
    }
    int32_t *toks = malloc((size_t)nb * S * sizeof *toks);
    int *slots = malloc((size_t)nb * S * sizeof *slots), *wins = malloc((size_t)nb * S * sizeof *wins);
    int *pslots = malloc((size_t)nb * S * sizeof *pslots), *npre = malloc((size_t)nb * S * sizeof *npre);
    if (!st && (!toks || !slots || !wins || !pslots || !npre))
        st = sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "batched: out of memory");
    for (int step = 1; !st; step++) {
        if ((step & 15) == 15) poll_abort(r, bw, nb, g);
        int n = 0, pos = 0, live = 0, row0[SOTTO_MAX_BATCH];
        for (int w = 0; w < nb; w++) {
            if (!g[w] || sotto__group_finished(g[w])) continue;
            row0[w] = n;
            int k = sotto__group_rows(g[w], toks + n, slots + n), ps, np;
            sotto__group_prefix(g[w], &ps, &np);
            for (int i = 0; i < k; i++) wins[n + i] = w, pslots[n + i] = ps, npre[n + i] = np;
            n += k, live++;
            pos = sotto__group_pos(g[w]); /* the same for every live group: one token a step each */
        }
        if (!live) break;
        sotto__decoder_step_batch(&ctx->dec, toks, slots, wins, n, pos - 1, pslots, npre);
        sotto__decoder_logits_batch(&ctx->dec, n);
        for (int w = 0; w < nb; w++) {
            if (!g[w] || sotto__group_finished(g[w])) continue;
            sotto__group_fetch(g[w], row0[w]);
            sotto__group_advance(g[w]);
        }
    }
    free(toks), free(slots), free(wins), free(pslots), free(npre);
    for (int w = 0; w < nb; w++) {
        if (g[w] && !st) sotto__group_end(g[w]);
        else sotto__group_free(g[w]);
    }
    return st;
}

/* Whether IN has chunks left to take into a batch. */
static bool takes_more(sotto__bin *in, int n_sot)
{
    return !in->failed && in->n_sot == n_sot && !in->res->pub.stopped && in->next < in->n_chunks;
}

/* Up to ROOM chunks, in order, of the inputs IN [N] from *AT on, taken into flight and
 * into BT: the number taken. An input is asked its abort callback before its first chunk
 * of the batch. */
static int take(sotto__brun *r, sotto__bin *in, int n, int *at, int n_sot, int room, bfly *f, bchunk **bt)
{
    int nb = 0;
    for (; *at < n && nb < room; ++*at) {
        sotto__bin *x = &in[*at];
        if (!takes_more(x, n_sot)) continue;
        const sotto_transcribe_params *p = &x->p;
        if (p->abort_callback && p->abort_callback(x->res->pub.duration, p->user_data)) {
            sotto__bin_fail(r, x, sotto__ctx_fail(r->ctx, SOTTO_ERR_CANCELLED, "batched: cancelled by the caller"));
            continue;
        }
        while (nb < room && x->next < x->n_chunks) {
            bchunk *b = bt[nb++] = fly_new(f);
            *b = (bchunk){.in = x, .c = &x->chunks[x->next++], .lang = -1};
        }
        if (x->next < x->n_chunks) break; /* the next batch goes on with it */
    }
    return nb;
}

/* Where IN stands: the start of its first chunk whose segments are not yet added, in
 * seconds (its duration when none is left). */
static double done_s(const bfly *f, const sotto__bin *in)
{
    const sotto_batch_chunk *c = NULL;
    for (int i = 0; i < f->n && !c; i++)
        if (f->order[i]->in == in) c = f->order[i]->c;
    if (!c && in->next < in->n_chunks) c = &in->chunks[in->next];
    return c ? (double)in->speech[c->first].start / SOTTO_SAMPLE_RATE : in->res->pub.duration;
}

/* After a batch: the progress of each of its inputs, once each. */
static void progress(const bfly *f, bchunk **bt, int nb)
{
    for (int w = 0; w < nb; w++) {
        sotto__bin *in = bt[w]->in;
        bool later = false;
        for (int v = w + 1; v < nb && !later; v++) later = bt[v]->in == in;
        if (later || in->failed || in->res->pub.stopped || !in->p.on_progress) continue;
        if (in->p.on_progress(done_s(f, in), in->res->pub.duration, in->p.user_data)) in->res->pub.stopped = 1;
    }
}

/* The options of each chunk of the batch BT [NB] decoded for the first time: its
 * input's; with multilingual (and a multilingual model) the chunk's language detected
 * from its own encoder output (window w, just encoded) into its start sequence
 * (generate_segment_batched: the prompt's language token replaced by detect_language's
 * first), for every piece of it. */
static sotto_status chunk_languages(sotto__brun *r, bchunk **bt, int nb)
{
    sotto_context *ctx = r->ctx;
    sotto_status st = SOTTO_OK;
    for (int w = 0; w < nb && !st; w++) {
        bchunk *b = bt[w];
        const sotto__bin *in = b->in;
        if (b->n) continue; /* a continuation: its chunk's options */
        b->o = in->o, b->lang = -1;
        if (!in->p.multilingual || !ctx->model->info.multilingual) continue;
        double prob = 0;
        ctx->dec.win = w;
        ctx->encoded = true; /* window w's cross K/V are in place (encode) */
        st = sotto__detect_language(ctx, &b->lang, &prob);
        memcpy(b->sot, in->sot_seq, sizeof b->sot);
        b->sot[1] = b->lang;
        b->o.sot_seq = b->sot;
    }
    ctx->encoded = ctx->have_state = ctx->have_logits = false;
    return st;
}

/* The chunks in flight whose pieces are all decoded, in order: their segments added to
 * their inputs' results, each when every chunk of its input before it has left (WIN:
 * with word timestamps the window just decoded, whose cross K/V the alignment reads: an
 * input without batch_continue never waits). The chunks of failed and stopped inputs
 * leave without. */
static void emit(sotto__brun *r, bfly *f)
{
    for (int i = 0; i < f->n;) {
        bchunk *b = f->order[i];
        sotto__bin *x = b->in;
        bool leave = x->failed || x->res->pub.stopped, first = true;
        for (int j = 0; j < i && first; j++) first = f->order[j]->in != x;
        if (!leave && b->done && first) {
            for (int k = 0; k < b->n && !x->failed && !x->res->pub.stopped; k++) {
                sotto_status s = sotto__bin_add_chunk(r, x, b->c, b->skip[k], b->win, &b->d[k], b->lang);
                if (s) sotto__bin_fail(r, x, s);
            }
            leave = true;
        }
        if (leave) fly_drop(f, i);
        else i++;
    }
}

/* The next batch into BT: the chunks in flight with a piece left (batch_continue: the
 * rest of a chunk whose last piece ended a second or more before its speech did, from
 * its last timestamp), then new chunks while there is room in it and in flight, so
 * every batch is full while chunks or pieces are left. Its size returned. */
static int next_batch(sotto__brun *r, sotto__bin *in, int n, int *at, int n_sot, int B, bfly *f, bchunk **bt)
{
    int nb = 0;
    for (int i = 0; i < f->n && nb < B; i++) {
        bchunk *b = f->order[i];
        if (!b->done && !b->in->failed && !b->in->res->pub.stopped) bt[nb++] = b;
    }
    int room = B - nb < f->cap - f->n ? B - nb : f->cap - f->n;
    return nb + take(r, in, n, at, n_sot, room, f, bt + nb);
}

/* The batch BT [NB] (each chunk's next piece) encoded and decoded; then each chunk's
 * next piece, or done. */
static sotto_status run_batch(sotto__brun *r, bchunk **bt, int nb)
{
    bwin bw[SOTTO_MAX_BATCH];
    for (int w = 0; w < nb; w++) {
        bchunk *b = bt[w];
        bw[w] = (bwin){.in = b->in, .c = b->c, .skip = b->skip[b->n], .o = &b->o, .d = &b->d[b->n]};
    }
    sotto_status st = encode(r, bw, nb);
    if (!st) st = chunk_languages(r, bt, nb);
    if (!st) st = decode(r, bw, nb);
    if (st) return st;
    for (int w = 0; w < nb; w++) {
        bchunk *b = bt[w];
        b->win = w;
        b->n++;
        int64_t next = b->in->failed || b->n == MAX_PIECES
                           ? -1
                           : sotto__bin_next_skip(b->in, b->c, b->skip[b->n - 1], &b->d[b->n - 1]);
        if (next >= 0) b->skip[b->n] = next;
        else b->done = true;
    }
    return SOTTO_OK;
}

/* The chunks of the inputs with start sequences of N_SOT tokens, batch by batch. */
static void run_batches(sotto__brun *r, sotto__bin *in, int n, int n_sot)
{
    int B = 0;
    for (int i = 0; i < n; i++)
        if (!in[i].failed && in[i].n_sot == n_sot && in[i].p.batch_size > B) B = in[i].p.batch_size;
    bfly f;
    if (!fly_init(&f, FLY_BATCHES * (B > 0 ? B : 1))) {
        fly_free(&f);
        for (int i = 0; i < n; i++)
            if (!in[i].failed && in[i].n_sot == n_sot)
                sotto__bin_fail(r, &in[i], sotto__ctx_fail(r->ctx, SOTTO_ERR_NOMEM, "batched: out of memory"));
        return;
    }
    bchunk *bt[SOTTO_MAX_BATCH];
    for (int at = 0, nb; (nb = next_batch(r, in, n, &at, n_sot, B, &f, bt)) > 0;) {
        sotto_status st = run_batch(r, bt, nb);
        for (int w = 0; w < nb && st; w++) sotto__bin_fail(r, bt[w]->in, st); /* the batch failed: every input in it */
        emit(r, &f);
        if (!st) progress(&f, bt, nb);
    }
    fly_free(&f);
    r->ctx->dec.win = 0;
}

sotto_status sotto_transcribe_batch(sotto_context *ctx, sotto_batch_item *items, int n)
{
    if (!ctx || !items || n < 1) return SOTTO_ERR_INVALID_ARG;
    const sotto_model_info *h = &ctx->model->info;
    sotto__brun r = {.ctx = ctx};
    sotto__bin *in = calloc((size_t)n, sizeof *in);
    r.mels = malloc((size_t)ctx->max_batch * h->n_mels * SOTTO_N_FRAMES * sizeof *r.mels);
    r.audio = malloc(SOTTO_N_SAMPLES * sizeof *r.audio);
    r.cur = malloc((SOTTO__MAX_TOKENS + 1) * sizeof *r.cur);
    sotto_status st = in && r.mels && r.audio && r.cur ? SOTTO_OK : SOTTO_ERR_NOMEM;
    for (int i = 0; i < n; i++) {
        items[i].result = NULL, items[i].status = st, items[i].error[0] = 0;
        if (st) snprintf(items[i].error, sizeof items[i].error, "batched: out of memory");
    }
    for (int i = 0; i < n && !st; i++) {
        in[i].item = &items[i];
        sotto_status s = sotto__bin_prepare(&r, &in[i]);
        if (s) sotto__bin_fail(&r, &in[i], s);
    }
    int keys[8], n_keys = 0; /* the lengths of the start sequences, in order of first use */
    for (int i = 0; i < n && !st; i++) {
        bool seen = in[i].failed;
        for (int k = 0; k < n_keys && !seen; k++) seen = keys[k] == in[i].n_sot;
        if (!seen && n_keys < 8) keys[n_keys++] = in[i].n_sot;
    }
    for (int k = 0; k < n_keys; k++) run_batches(&r, in, n, keys[k]);
    for (int i = 0; i < n && !st; i++) sotto__bin_finish(&r, &in[i]);
    free(in), free(r.mels), free(r.audio), free(r.cur);
    for (int i = 0; i < n && !st; i++)
        if (items[i].status) st = items[i].status;
    return st;
}

sotto_status sotto__transcribe_batched_source(sotto_context *ctx, const sotto_audio_source *from, const float *samples,
                                              int64_t n_samples, const sotto_transcribe_params *p, sotto_result **out)
{
    sotto_batch_item item = {.source = from, .samples = samples, .n_samples = n_samples, .params = p};
    sotto_status st = sotto_transcribe_batch(ctx, &item, 1);
    *out = item.result;
    if (st) sotto__ctx_fail(ctx, st, "%s", item.error); /* the context's message is the item's */
    return st;
}
