/* batch_run.c — the windows of batched transcription: the chunks of one or more inputs
 * (batch.c prepares each) taken in order into batch_size decoder windows, each window's
 * chunk through the encoder (the chunks taken together in one pass) and its cross K/V
 * into that window, and the searches of all windows stepped together (search.h groups):
 * every decoder step is one sotto__decoder_step_batch over the live rows of all of them,
 * each window at its own position. A window whose search ends takes the next chunk at
 * once, so the rows of a step stay many while chunks are left (a batch that waited for
 * its longest chunk ran its tail at a few rows). An input whose abort callback fires
 * leaves alone; with batch_continue, the rest of each chunk that stopped early goes
 * through again from its last timestamp, ahead of new chunks; a chunk's segments are
 * added once all of its pieces are decoded, in the order of the chunks (with word
 * timestamps when no search is live: the alignment decodes through cache slot 0 and reads
 * the chunk's window, which waits for it). sotto_transcribe_batch (many inputs, for the
 * server) and batch_size in sotto_transcribe* (one) both run here. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "lang.h"

enum {
    MAX_PIECES = 8, /* a chunk and its continuations (batch_continue) */
    FLY_BATCHES = 4 /* chunks in flight: this many times the windows at most */
};

/* A chunk in flight: chunk C of input IN, its N pieces decoded so far (the chunk from
 * sample SKIP[i], decoded as D[i]; SKIP[N] the next one's start unless DONE), all with
 * O: IN's options, with multilingual in the start sequence SOT of the chunk's own
 * language LANG (-1: the input's). WIN: the window its last piece was decoded in (-1:
 * none yet). */
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

/* The decoder's windows in a run: window w decodes the next piece of chunk B[w] (its
 * piece B[w]->n, from sample skip[n] into d[n]; its search G[w]: NULL once the search is
 * freed) or is free (B[w] NULL). N windows, the batch size; S cache slots each. */
typedef struct bwins {
    bchunk *b[SOTTO_MAX_BATCH];
    sotto__group *g[SOTTO_MAX_BATCH];
    int n, S;
} bwins;

static bool live(const bwins *s, int w) { return s->g[w] && !sotto__group_finished(s->g[w]); }

static bool any_taken(const bwins *s)
{
    for (int w = 0; w < s->n; w++)
        if (s->b[w]) return true;
    return false;
}

/* Encodes the chunks of windows WS [K] in one pass and projects each one's cross K/V into
 * its decoder window (the other windows' searches go on with theirs). */
static sotto_status encode(sotto__brun *r, bwins *s, const int *ws, int k)
{
    sotto_context *ctx = r->ctx;
    const size_t mel = (size_t)ctx->model->info.n_mels * SOTTO_N_FRAMES;
    for (int i = 0; i < k; i++) {
        const bchunk *b = s->b[ws[i]];
        sotto_status st = sotto__bin_mel(r, b->in, b->c, b->skip[b->n], r->mels + (size_t)i * mel);
        if (st) return st;
    }
    ctx->encoded = ctx->have_state = ctx->have_logits = false;
    sotto__encoder_forward_batch(&ctx->enc, r->mels, k);
    for (int i = 0; i < k; i++) {
        ctx->dec.win = ws[i];
        sotto__decoder_cross(&ctx->dec, sotto__buf_f32(ctx->enc.out, (size_t)i * ctx->enc.n_ctx * ctx->enc.d),
                             ctx->enc.k, ctx->enc.v);
    }
    return sotto__ctx_sync(ctx, "batched encode");
}

/* Before a step: the inputs that were stopped (a callback of theirs returned nonzero) and,
 * when ASK (every 16 steps), those whose abort callback fires (failed as cancelled) leave:
 * their searches are freed at once, not decoded to their end. */
static void poll_abort(sotto__brun *r, bwins *s, bool ask)
{
    for (int w = 0; w < s->n; w++) {
        if (!live(s, w) || s->b[w]->in->failed) continue;
        sotto__bin *in = s->b[w]->in;
        if (!in->res->pub.stopped) {
            if (!ask || !in->o.abort_callback || !in->o.abort_callback(in->o.audio_s, in->o.user_data)) continue;
            sotto__bin_fail(r, in, sotto__ctx_fail(r->ctx, SOTTO_ERR_CANCELLED, "batched: cancelled by the caller"));
        }
        for (int v = 0; v < s->n; v++) /* its other windows too */
            if (s->b[v] && s->b[v]->in == in) sotto__group_free(s->g[v]), s->g[v] = NULL;
    }
}

/* One decoder step of every live search, as one sotto__decoder_step_batch over their
 * rows (each window's at its own position: windows start when one is free), then each
 * search's update. SC: the rows' scratch. */
typedef struct bscratch {
    int32_t *toks;
    int *slots, *wins, *past, *pslots, *npre;
} bscratch;

static void step(sotto__brun *r, bwins *s, const bscratch *x)
{
    sotto_context *ctx = r->ctx;
    int n = 0, row0[SOTTO_MAX_BATCH];
    for (int w = 0; w < s->n; w++) {
        if (!live(s, w)) continue;
        row0[w] = n;
        int k = sotto__group_rows(s->g[w], x->toks + n, x->slots + n), ps, np;
        sotto__group_prefix(s->g[w], &ps, &np);
        int pos = sotto__group_pos(s->g[w]) - 1;
        for (int i = 0; i < k; i++) x->wins[n + i] = w, x->past[n + i] = pos, x->pslots[n + i] = ps, x->npre[n + i] = np;
        n += k;
    }
    if (!n) return;
    sotto__decoder_step_batch(&ctx->dec, x->toks, x->slots, x->wins, n, x->past, x->pslots, x->npre);
    sotto__decoder_logits_batch(&ctx->dec, n);
    for (int w = 0; w < s->n; w++) {
        if (!live(s, w)) continue;
        sotto__group_fetch(s->g[w], row0[w]);
        sotto__group_advance(s->g[w]);
    }
}

/* Whether IN has chunks left to take into a batch. */
static bool takes_more(sotto__bin *in, int key)
{
    return !in->failed && in->key == key && !in->res->pub.stopped && in->next < in->n_chunks;
}

/* Up to ROOM chunks, in order, of the inputs IN [N] from *AT on, taken into flight and
 * into BT: the number taken. An input is asked its abort callback before its first chunk
 * is taken each time. */
static int take(sotto__brun *r, sotto__bin *in, int n, int *at, int key, int room, bfly *f, bchunk **bt)
{
    int nb = 0;
    for (; *at < n && nb < room; ++*at) {
        sotto__bin *x = &in[*at];
        if (!takes_more(x, key)) continue;
        const sotto_transcribe_params *p = &x->p;
        if (p->abort_callback && p->abort_callback(x->res->pub.duration, p->user_data)) {
            sotto__bin_fail(r, x, sotto__ctx_fail(r->ctx, SOTTO_ERR_CANCELLED, "batched: cancelled by the caller"));
            continue;
        }
        while (nb < room && x->next < x->n_chunks) {
            bchunk *b = bt[nb++] = fly_new(f);
            *b = (bchunk){.in = x, .c = &x->chunks[x->next++], .lang = -1, .win = -1};
        }
        if (x->next < x->n_chunks) break; /* the next window goes on with it */
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

/* After chunks BT [NB] ended a piece: the progress of each of their inputs, once each. */
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

/* The options of each chunk of windows WS [K] decoded for the first time: its input's;
 * with multilingual (and a multilingual model) the chunk's language detected from its own
 * encoder output (window w, just encoded, through the window's first cache slot) into its
 * start sequence (generate_segment_batched: the prompt's language token replaced by
 * detect_language's first), for every piece of it. */
static sotto_status chunk_languages(sotto__brun *r, bwins *s, const int *ws, int k)
{
    sotto_context *ctx = r->ctx;
    sotto_status st = SOTTO_OK;
    for (int i = 0; i < k && !st; i++) {
        const int w = ws[i];
        bchunk *b = s->b[w];
        const sotto__bin *in = b->in;
        if (b->n) continue; /* a continuation: its chunk's options */
        b->o = in->o, b->lang = -1;
        if (!in->p.multilingual || !ctx->model->info.multilingual) continue;
        double prob = 0;
        ctx->dec.win = w;
        ctx->encoded = true; /* window w's cross K/V are in place (encode) */
        st = sotto__detect_language_in(ctx, w * s->S, &b->lang, &prob);
        memcpy(b->sot, in->sot_seq, sizeof b->sot);
        b->sot[1] = b->lang;
        b->o.sot_seq = b->sot;
    }
    ctx->encoded = ctx->have_state = ctx->have_logits = false;
    return st;
}

/* Whether chunk B's segments wait for the alignment of word timestamps, which reads its
 * window's cross K/V and decodes through cache slot 0: until then the window is not
 * taken again, and the alignment runs only when no search is live (QUIET). */
static bool wants_words(const bchunk *b) { return b->in->p.word_timestamps && !b->in->failed && !b->in->res->pub.stopped; }

/* The chunks in flight whose pieces are all decoded, in order: their segments added to
 * their inputs' results, each when every chunk of its input before it has left (those
 * with word timestamps only when QUIET, wants_words). The chunks of failed and stopped
 * inputs leave without. */
static void emit(sotto__brun *r, bfly *f, bool quiet)
{
    for (int i = 0; i < f->n;) {
        bchunk *b = f->order[i];
        sotto__bin *x = b->in;
        bool leave = x->failed || x->res->pub.stopped, first = true;
        for (int j = 0; j < i && first; j++) first = f->order[j]->in != x;
        if (!leave && b->done && first && (quiet || !wants_words(b))) {
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

/* Whether window W is free to take a chunk: none decodes there, and none in flight waits
 * on its cross K/V for word timestamps. */
static bool window_free(const bwins *s, const bfly *f, int w)
{
    if (s->b[w]) return false;
    for (int i = 0; i < f->n; i++)
        if (f->order[i]->win == w && f->order[i]->done && wants_words(f->order[i])) return false;
    return true;
}

/* The free windows filled, into WS: first the chunks in flight with a piece left
 * (batch_continue: the rest of a chunk whose last piece ended a second or more before its
 * speech did, from its last timestamp), then new chunks while there is room in flight, so
 * the windows stay full while chunks or pieces are left. The number filled. */
static int fill(sotto__brun *r, sotto__bin *in, int n, int *at, int key, bwins *s, bfly *f, int *ws)
{
    int free_w[SOTTO_MAX_BATCH], n_free = 0;
    for (int w = 0; w < s->n; w++)
        if (window_free(s, f, w)) free_w[n_free++] = w;
    bchunk *bt[SOTTO_MAX_BATCH];
    int nb = 0;
    for (int i = 0; i < f->n && nb < n_free; i++) {
        bchunk *b = f->order[i];
        bool busy = false;
        for (int w = 0; w < s->n && !busy; w++) busy = s->b[w] == b;
        if (!busy && !b->done && !b->in->failed && !b->in->res->pub.stopped) bt[nb++] = b;
    }
    int room = n_free - nb < f->cap - f->n ? n_free - nb : f->cap - f->n;
    nb += take(r, in, n, at, key, room, f, bt + nb);
    for (int i = 0; i < nb; i++) {
        const int w = ws[i] = free_w[i];
        s->b[w] = bt[i];
        s->g[w] = NULL;
    }
    return nb;
}

/* Windows WS [K], just filled: encoded in one pass, their chunks' languages found, their
 * searches begun (prefilled in their own slots). */
static sotto_status start(sotto__brun *r, bwins *s, const int *ws, int k)
{
    sotto_context *ctx = r->ctx;
    sotto_status st = encode(r, s, ws, k);
    if (!st) st = chunk_languages(r, s, ws, k);
    for (int i = 0; i < k && !st; i++) {
        const int w = ws[i];
        ctx->dec.win = w;
        bchunk *b = s->b[w];
        st = sotto__group_begin(ctx, &b->o, w * s->S, &b->d[b->n], &s->g[w]);
        if (!st && !sotto__group_finished(s->g[w])) sotto__group_advance(s->g[w]);
    }
    return st;
}

/* The windows whose search ended, freed: each chunk's piece ranked into its result, then
 * its next piece, or done. Their chunks into ENDED: the number. A window whose search was
 * freed (its input failed) is freed without. */
static int finish(bwins *s, bchunk **ended)
{
    int n = 0;
    for (int w = 0; w < s->n; w++) {
        bchunk *b = s->b[w];
        if (!b || live(s, w)) continue;
        s->b[w] = NULL;
        if (!s->g[w]) continue;
        sotto__group_end(s->g[w]);
        s->g[w] = NULL;
        b->win = w;
        b->n++;
        int64_t next = b->in->failed || b->n == MAX_PIECES
                           ? -1
                           : sotto__bin_next_skip(b->in, b->c, b->skip[b->n - 1], &b->d[b->n - 1]);
        if (next >= 0) b->skip[b->n] = next;
        else b->done = true;
        ended[n++] = b;
    }
    return n;
}

/* Windows WS [K] failed to start with ST: their inputs fail and their searches are freed. */
static void fail_start(sotto__brun *r, bwins *s, const int *ws, int k, sotto_status st)
{
    for (int i = 0; i < k; i++) {
        const int w = ws[i];
        sotto__bin_fail(r, s->b[w]->in, st);
        sotto__group_free(s->g[w]);
        s->g[w] = NULL, s->b[w] = NULL;
    }
}

/* The chunks of the inputs whose prompts are KEY tokens long, through batch_size
 * windows: every step decodes the live searches of all windows together, and a window
 * whose search ends takes the next piece or chunk at once (encoded alone, or with the
 * others freed in the same step), so the windows stay full until the chunks run out. */
static void run_batches(sotto__brun *r, sotto__bin *in, int n, int key)
{
    sotto_context *ctx = r->ctx;
    int B = 0;
    for (int i = 0; i < n; i++)
        if (!in[i].failed && in[i].key == key && in[i].p.batch_size > B) B = in[i].p.batch_size;
    if (B < 1) return;
    bfly f;
    bwins s = {.n = B, .S = ctx->dec.n_slots / ctx->max_batch};
    const size_t rows = (size_t)B * s.S;
    bscratch x = {malloc(rows * sizeof *x.toks), malloc(rows * sizeof(int)), malloc(rows * sizeof(int)),
                  malloc(rows * sizeof(int)), malloc(rows * sizeof(int)), malloc(rows * sizeof(int))};
    bool ok = fly_init(&f, FLY_BATCHES * B) && x.toks && x.slots && x.wins && x.past && x.pslots && x.npre;
    if (!ok)
        for (int i = 0; i < n; i++)
            if (!in[i].failed && in[i].key == key)
                sotto__bin_fail(r, &in[i], sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "batched: out of memory"));
    for (int at = 0, steps = 0; ok;) {
        emit(r, &f, !any_taken(&s));
        int ws[SOTTO_MAX_BATCH], k = fill(r, in, n, &at, key, &s, &f, ws);
        sotto_status st = k ? start(r, &s, ws, k) : SOTTO_OK;
        if (st) fail_start(r, &s, ws, k, st);
        if (!any_taken(&s)) {
            if (!k) break;
            continue;
        }
        poll_abort(r, &s, (++steps & 15) == 15);
        step(r, &s, &x);
        bchunk *ended[SOTTO_MAX_BATCH];
        int ne = finish(&s, ended);
        if (ne) {
            emit(r, &f, !any_taken(&s));
            progress(&f, ended, ne);
        }
    }
    emit(r, &f, true);
    fly_free(&f);
    free(x.toks), free(x.slots), free(x.wins), free(x.past), free(x.pslots), free(x.npre);
    ctx->dec.win = 0;
}

sotto_status sotto_transcribe_batch(sotto_context *ctx, sotto_batch_item *items, int n)
{
    if (!ctx || !items || n < 1) return sotto__ctx_args(ctx, "transcribe_batch: no context, or no items");
    ctx->error[0] = 0;
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
    /* the inputs by the length of their prompts (start sequence and the pipeline's prompt),
     * in order of first use; KEY 0: an input that failed to prepare */
    for (int i = 0; i < n && !st; i++) {
        bool seen = in[i].key <= 0;
        for (int j = 0; j < i && !seen; j++) seen = in[j].key == in[i].key;
        if (!seen) run_batches(&r, in, n, in[i].key);
    }
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
