/* search.c — the searches over the decoder (openai/whisper decoding.py): the token-level
 * runner's greedy decoding (sotto_greedy: temperature 0, beam 1, no timestamps; prefill the
 * forced prefix in one pass, then argmax -> append -> advance the cache position through
 * the backend's argmax, computing no logit that cannot win; SuppressBlank and
 * SuppressTokens from the model's lists), and one long-form window's decoding
 * (search.h: DecodingTask._main_loop with GreedyDecoder (argmax, or sampling at
 * temperature > 0, best_of sequences) and BeamSearchDecoder (patience, finished
 * candidates), then MaximumLikelihoodRanker). Sums of log-probabilities are kept in float,
 * as the reference's tensors are; finished sequences are not stepped further (their next
 * token would be <|endoftext|> again and add nothing). The logit rules: logits.c; the seek
 * loop: transcribe.c. */
#include "search.h"
#include "prompt.h"
#include "text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

sotto_greedy_params sotto_greedy_params_default(void)
{
    return (sotto_greedy_params){.prefix = NULL, .n_prefix = 0, .eos = NULL, .n_eos = 0, .max_new_tokens = 32,
                                 .suppress = 1};
}

/* The model's start sequence: [sot] for English-only models, [sot, language, task]
 * for multilingual ones, then <|notimestamps|>. Returns its length (<= 4). */
static int default_prefix(const sotto_model *m, int32_t lang, bool translate, int32_t *out)
{
    const sotto_model_info *h = &m->info;
    int n = 0;
    out[n++] = h->token_sot;
    if (h->multilingual) {
        out[n++] = lang >= 0 ? lang : h->token_lang_first;
        out[n++] = translate ? h->token_translate : h->token_transcribe;
    }
    out[n++] = h->token_notimestamps;
    return n;
}

/* The next token: the argmax of the last decode's logits with the suppressed ids out
 * (through the backend's shortcut where it has one: the same token either way); 0 and
 * the backend's failure on CTX when it fails. */
static sotto_status next_token(sotto_context *ctx, bool suppress, bool first, int32_t *tok)
{
    const sotto_model *m = ctx->model;
    sotto__i32list lists[2];
    int n_lists = 0;
    if (suppress) {
        lists[n_lists++] = m->suppress;
        if (first) lists[n_lists++] = m->suppress_begin;
    }
    *tok = 0;
    sotto_status st = sotto__decoder_argmax(&ctx->dec, lists, n_lists, tok);
    ctx->have_logits = false; /* the logits buffer was scratch */
    return st ? sotto__ctx_sync(ctx, "greedy") : SOTTO_OK;
}

sotto_status sotto_greedy(sotto_context *ctx, const sotto_greedy_params *params, int32_t *out, int *n_out,
                          sotto_decode_stats *stats)
{
    if (!ctx || !out || !n_out) return sotto__ctx_args(ctx, "greedy: no context, or no room for the tokens");
    const sotto_model_info *h = &ctx->model->info;
    sotto_greedy_params p = params ? *params : sotto_greedy_params_default();
    sotto_decode_stats s = {0};
    int32_t def[4];
    if (!p.prefix) {
        p.n_prefix = default_prefix(ctx->model, -1, false, def);
        p.prefix = def;
    }
    int32_t eot = h->token_eot;
    if (!p.eos) {
        p.eos = &eot;
        p.n_eos = 1;
    }
    if (p.n_prefix < 1 || p.n_prefix > h->n_text_ctx || p.max_new_tokens < 0 || p.n_eos < 1)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG,
                               "greedy: prefix of %d tokens (1..%d allowed), budget %d, %d eos ids", p.n_prefix,
                               h->n_text_ctx, p.max_new_tokens, p.n_eos);
    if (!ctx->encoded) return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "greedy: no window was encoded");
    memcpy(out, p.prefix, (size_t)p.n_prefix * sizeof *out);
    int n = p.n_prefix;
    int budget = p.max_new_tokens < h->n_text_ctx - n ? p.max_new_tokens : h->n_text_ctx - n;
    sotto_status st = SOTTO_OK;
    if (budget <= 0) {
        *n_out = n;
        if (stats) *stats = s;
        return SOTTO_OK;
    }
    /* each timed pass is a forward pass and the argmax of its logits */
    double t0 = sotto__now_ms();
    st = sotto__decode_state(ctx, p.prefix, p.n_prefix, 0);
    int32_t tok = 0;
    if (!st) st = next_token(ctx, p.suppress, true, &tok);
    s.prefill_ms = sotto__now_ms() - t0;
    s.n_prefill = 1;
    for (int g = 0; !st && g < budget; g++) {
        out[n++] = tok;
        bool stop = false;
        for (int e = 0; e < p.n_eos; e++) stop |= tok == p.eos[e];
        if (stop || g == budget - 1) break; /* no forward pass for a token that won't be emitted */
        t0 = sotto__now_ms();
        st = sotto__decode_state(ctx, &tok, 1, n - 1);
        if (!st) st = next_token(ctx, p.suppress, false, &tok);
        s.steps_ms += sotto__now_ms() - t0;
        s.n_steps++;
    }
    *n_out = n;
    if (stats) *stats = s;
    return st;
}

/* ---- one window of long-form decoding -------------------------------------------- */

typedef struct seq {
    int32_t tok[SOTTO__MAX_TOKENS]; /* sampled tokens */
    int n;
    float sum;                 /* summed log-probabilities */
    int slot;                  /* its KV-cache slot */
    bool done;                 /* ended in <|endoftext|> (greedy and sampling) */
} seq;

struct sotto__group {
    sotto_context *ctx;
    const sotto__decode_opts *o;
    int V, G, n_init;          /* vocabulary, sequences, prompt + start sequence */
    int slot0;                 /* its cache slots: slot0 .. slot0 + G - 1 */
    int i;                     /* steps done (tokens sampled per sequence) */
    bool beam, finished;
    bool lazy;                 /* few_logits taken: lazy_logits, no log-sum-exp */
    sotto__i32list specials;   /* lazy: the ids from <|endoftext|> on, out of its argmax */
    int32_t lazy_best;         /* lazy: the text id the host row holds a logit of, the row's
                                  other text ids -inf (the filters only ever write -inf);
                                  -1 before the first lazy step (the prefill's whole row) */
    int max_candidates;
    int sample_len;            /* the most tokens sampled (prompt.h sotto__sample_len) */
    sotto__decode_result *res;
    float *logits;             /* [G][V] host copies, filtered in place */
    /* each live row's own work of a step (prep_row, on the backend's host threads): */
    double lse[SOTTO_MAX_SEQUENCES];   /* its log-sum-exp, after the filters */
    int32_t best[SOTTO_MAX_SEQUENCES]; /* greedy at temperature 0: its argmax */
    int top[SOTTO_MAX_SEQUENCES][2 * SOTTO_MAX_SEQUENCES]; /* beam search: its G + 1 best (2G: ct2_beams) */
    float *weights;            /* [V] sampling's scratch */
    seq *s;                    /* [G] live sequences */
    seq *fin;                  /* beam search: finished candidates */
    int n_fin, cap_fin;
    seq *next;                 /* [G] the next beams being built */
};
typedef sotto__group group;

/* xorshift64*: the sampling's generator (its state never 0). */
static double uniform(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    *state = x;
    return (double)((x * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

/* A draw from softmax(LOGITS / T) (Categorical(logits=logits / T).sample()): the weights
 * e^((l - max) / T) once into W, then the first id whose running sum passes a uniform
 * draw of their total. */
static int sample(sotto__backend *be, const float *logits, int V, double T, uint64_t *rng, float *w)
{
    double total = sotto__exp_weights(be, logits, V, (float)(1.0 / T), w);
    double u = uniform(rng) * total, c = 0;
    int last = 0;
    for (int i = 0; i < V; i++) {
        if (w[i] == 0) continue;
        c += w[i];
        last = i;
        if (c > u) return i;
    }
    return last;
}

/* log_softmax(LOGITS)[T] as the reference's float tensor holds it. */
static float logprob(const float *logits, double lse, int t) { return (float)((double)logits[t] - lse); }

/* Whether sequence Q's text so far compresses by more than the group's bound: the same
 * text and ratio the caller's fallback check computes. */
static bool ratio_exceeded(const group *g, const seq *q)
{
    if (!isfinite(g->o->stop_ratio_above) || q->n < 16) return false; /* a loop shows by then; 1 zlib pass a step */
    char *text = sotto__detok(g->ctx->model, q->tok, q->n, true);
    if (!text) return false;
    size_t a, n;
    sotto__strip(text, strlen(text), &a, &n);
    bool over = sotto__compression_ratio(text + a, n) > g->o->stop_ratio_above;
    free(text);
    return over;
}

/* GreedyDecoder.update over the live sequences; true when all are done. */
static bool greedy_update(group *g)
{
    sotto__backend *be = g->ctx->be;
    bool all_done = true;
    for (int r = 0; r < g->G; r++) {
        seq *q = &g->s[r];
        if (q->done) continue;
        const float *L = g->logits + (size_t)r * g->V;
        int t = g->o->temperature == 0 ? g->best[r] : sample(be, L, g->V, g->o->temperature, g->o->rng, g->weights);
        q->sum += logprob(L, g->lse[r], t);
        q->tok[q->n++] = t;
        q->done = t == g->o->rules->eot;
        if (!q->done && ratio_exceeded(g, q)) q->done = true; /* stopped: it cannot pass */
        all_done &= q->done;
    }
    return all_done;
}

typedef struct cand {
    int parent;
    int32_t tok;
    float score;
} cand;

static bool same_tokens(const seq *a, const seq *b)
{
    return a->n == b->n && memcmp(a->tok, b->tok, (size_t)a->n * sizeof *a->tok) == 0;
}

/* The K largest of X[0 .. n) in descending order, the lower index first among equals.
 * Once K are held, runs of 16 values none of which beats the K-th are passed over with
 * one test (a branch-free comparison the compiler vectorises; a row of logits has few
 * values that enter the K largest). */
static void topk(const float *x, int n, int k, int *out)
{
    enum { RUN = 16 };
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m == k) {
            const float t = x[out[k - 1]];
            for (; i + RUN <= n; i += RUN) {
                int any = 0;
                for (int j = 0; j < RUN; j++) any |= x[i + j] > t;
                if (any) break;
            }
            if (i == n) break;
            if (!(x[i] > t)) continue;
        }
        int j = m < k ? m++ : k - 1;
        while (j > 0 && x[i] > x[out[j - 1]]) out[j] = out[j - 1], j--;
        out[j] = i;
    }
}

/* Candidates sorted by score, descending, stable (insertion sort: at most G (G + 1), or
 * 2G x G under CTranslate2's search, 50 at beam 5). */
static void sort_cands(cand *c, int n)
{
    for (int i = 1; i < n; i++) {
        cand x = c[i];
        int j = i;
        while (j > 0 && c[j - 1].score < x.score) c[j] = c[j - 1], j--;
        c[j] = x;
    }
}

/* Gives each new beam a cache slot: a parent's slot goes to its first child; further
 * children take the slots of beams that had none, with the parent's own positions (past
 * the shared prefix) up to N_POS copied in. */
static void rearrange(group *g, int n_pos)
{
    int G = g->G, taken[SOTTO_MAX_SEQUENCES] = {0}, free_slots[SOTTO_MAX_SEQUENCES], n_free = 0;
    int owner[SOTTO_MAX_SEQUENCES]; /* new beam b's parent's slot, or -1 once given away */
    for (int b = 0; b < G; b++) owner[b] = g->next[b].slot;
    for (int b = 0; b < G; b++) {
        for (int c = 0; c < G; c++)
            if (g->s[c].slot == owner[b] && !taken[c]) {
                taken[c] = 1;
                owner[b] = -1;
                break;
            }
    }
    for (int c = 0; c < G; c++)
        if (!taken[c]) free_slots[n_free++] = g->s[c].slot;
    for (int b = 0; b < G; b++) {
        if (owner[b] < 0) continue;
        int dst = free_slots[--n_free];
        sotto__decoder_copy_slot(&g->ctx->dec, dst, owner[b], g->n_init, n_pos);
        g->next[b].slot = dst;
    }
    memcpy(g->s, g->next, (size_t)G * sizeof *g->s);
}

/* Q := P's tokens and TOK, scored SUM, in P's cache slot. */
static void extend(seq *q, const seq *p, int32_t tok, float sum)
{
    memcpy(q->tok, p->tok, (size_t)p->n * sizeof *p->tok);
    q->n = p->n;
    q->tok[q->n++] = tok;
    q->sum = sum;
    q->slot = p->slot;
    q->done = false;
}

/* BeamSearchDecoder.update; true when enough sequences have finished. */
static bool beam_update(group *g, int n_pos, int max_candidates)
{
    const int G = g->G, V = g->V;
    const int32_t eot = g->o->rules->eot;
    cand c[SOTTO_MAX_SEQUENCES * (SOTTO_MAX_SEQUENCES + 1)];
    int n = 0;
    for (int j = 0; j < G; j++) {
        const float *L = g->logits + (size_t)j * V;
        const int *top = g->top[j];
        for (int k = 0; k < G + 1; k++) {
            cand x = {j, top[k], g->s[j].sum + logprob(L, g->lse[j], top[k])};
            int dup = -1; /* the same sequence from an identical beam: the reference's dict keeps
                             the first place, the last score and source */
            for (int e = 0; e < n && dup < 0; e++)
                if (c[e].tok == x.tok && same_tokens(&g->s[c[e].parent], &g->s[j])) dup = e;
            if (dup >= 0) c[dup].score = x.score, c[dup].parent = j;
            else c[n++] = x;
        }
    }
    sort_cands(c, n);
    int saved = 0; /* finished candidates are kept while there is room, best first */
    for (int e = 0; e < n && saved < G; e++) {
        const seq *p = &g->s[c[e].parent];
        seq *q = c[e].tok == eot ? (g->n_fin < max_candidates ? &g->fin[g->n_fin++] : NULL) : &g->next[saved++];
        if (q) extend(q, p, c[e].tok, c[e].score);
    }
    for (int b = saved; b < G; b++) g->next[b] = g->next[0]; /* no fewer than G live: unreachable with
                                                                the first step's blank suppressed */
    rearrange(g, n_pos);
    return g->n_fin >= max_candidates;
}

/* CTranslate2 4.8's BeamSearch step (decoding.cc; faster-whisper's beams), where openai's
 * differs: the 2G best continuations of the live beams together (of the first alone at the
 * first step, where every beam is the start sequence) are the candidates; of the first G,
 * one that ends in <|endoftext|> is a finished hypothesis, and its place goes to the next
 * candidate past the first G that does not end (none left: it stays, as there); an
 * <|endoftext|> past the first G is not a hypothesis. At the last step (LAST) the first G
 * are all hypotheses. True when max_candidates have finished (a step may finish more). */
static bool beam_update_ct2(group *g, int n_pos, int max_candidates, bool last)
{
    const int G = g->G, V = g->V, K = 2 * G;
    const int32_t eot = g->o->rules->eot;
    cand c[SOTTO_MAX_SEQUENCES * 2 * SOTTO_MAX_SEQUENCES];
    int n = 0;
    for (int j = 0; j < (g->i == 0 ? 1 : G); j++) {
        const float *L = g->logits + (size_t)j * V;
        for (int k = 0; k < K; k++) c[n++] = (cand){j, g->top[j][k], g->s[j].sum + logprob(L, g->lse[j], g->top[j][k])};
    }
    sort_cands(c, n); /* stable: of equal scores the lower beam, then the lower id, as its flat top-k */
    if (n > K) n = K;
    for (int k = 0, more = G; k < G; k++) {
        const seq *p = &g->s[c[k].parent];
        int pick = k;
        if (c[k].tok == eot || last) {
            extend(&g->fin[g->n_fin++], p, c[k].tok, c[k].score);
            for (int j = more; j < n; j++)
                if (c[j].tok != eot) {
                    pick = j, more = j + 1;
                    break;
                }
        }
        extend(&g->next[k], &g->s[c[pick].parent], c[pick].tok, c[pick].score);
    }
    rearrange(g, n_pos);
    /* with no length penalty (0) the search ends when the best candidate ends, as
     * CTranslate2's early exit: no later hypothesis can outrank it by its sum */
    if (g->o->use_length_penalty && g->o->length_penalty == 0 && c[0].tok == eot) return true;
    return g->n_fin >= max_candidates;
}

/* BeamSearchDecoder.finalize: too few finished sequences are made up from the live ones,
 * best first (the reference's np.argsort(...)[::-1]: of equal sums the later beam first). */
static void beam_finalize(group *g)
{
    if (g->n_fin >= g->G) return;
    int order[SOTTO_MAX_SEQUENCES];
    for (int b = 0; b < g->G; b++) order[b] = b;
    for (int i = 1; i < g->G; i++) {
        int x = order[i], j = i;
        while (j > 0 && g->s[order[j - 1]].sum <= g->s[x].sum) order[j] = order[j - 1], j--;
        order[j] = x;
    }
    for (int b = 0; b < g->G && g->n_fin < g->G; b++) g->fin[g->n_fin++] = g->s[order[b]];
}

/* MaximumLikelihoodRanker.rank: the first best of sum / length, or with the length
 * penalty sum / ((5 + length) / 6) ^ penalty; CTranslate2's (ct2_beams) sum / length ^
 * penalty, in float as its finalize_hypothesis_score. */
static const seq *rank(const group *g, const seq *cands, int n)
{
    const seq *best = NULL;
    double top = -INFINITY;
    for (int i = 0; i < n; i++) {
        int len = cands[i].n - (cands[i].n && cands[i].tok[cands[i].n - 1] == g->o->rules->eot);
        const float lp = g->o->length_penalty;
        double score;
        if (g->o->use_length_penalty && g->o->ct2_beams) score = cands[i].sum / powf((float)len, lp);
        else if (g->o->use_length_penalty) score = (double)cands[i].sum / pow((5.0 + len) / 6.0, lp);
        else score = (double)cands[i].sum / len;
        if (!best || score > top) best = &cands[i], top = score;
    }
    return best;
}

/* The logits of rows ROW0 .. ROW0 + N - 1 of the decoder's output into the host rows
 * ROWS[0 .. n). */
static void fetch(group *g, int n, const int *rows, int row0)
{
    sotto__backend *be = g->ctx->be;
    size_t bytes = (size_t)g->V * sizeof(float);
    for (int r = 0; r < n; r++)
        be->ops->read(be, g->logits + (size_t)rows[r] * g->V,
                      sotto__buf_at(g->ctx->dec.logits, (size_t)(row0 + r) * bytes), bytes);
}

/* The prompt and start sequence prefilled into slot 0 once, the prefix every row's steps
 * read there (sotto__decoder_step); every row's first logits and the no-speech
 * probability at <|startoftranscript|>. */
static void prefill(group *g, const int32_t *init, int sot_index, sotto__decode_result *res)
{
    sotto__decoder *dec = &g->ctx->dec;
    int extra = sot_index == g->n_init - 1 ? -1 : sot_index;
    sotto__decoder_forward(dec, init, g->n_init, 0, g->slot0, extra);
    sotto__decoder_logits(dec, extra < 0 ? 1 : 2);
    int rows[2] = {0, 1}; /* row 1 of the host copy is free until the group fills it */
    fetch(g, extra < 0 ? 1 : 2, rows, 0);
    int32_t ns = g->ctx->model->info.token_nospeech;
    const float *sot = g->logits + (size_t)(extra < 0 ? 0 : 1) * g->V;
    res->no_speech_prob = ns >= 0 ? sotto__softmax_at(g->ctx->be, sot, g->V, ns) : NAN;
    for (int r = 1; r < g->G; r++) {
        memcpy(g->logits + (size_t)r * g->V, g->logits, (size_t)g->V * sizeof(float));
    }
    for (int r = 0; r < g->G; r++) {
        g->s[r] = (seq){.n = g->o->n_prefix, .sum = 0, .slot = g->slot0 + r, .done = false};
        if (g->o->n_prefix > 0) memcpy(g->s[r].tok, g->o->prefix, (size_t)g->o->n_prefix * sizeof *g->o->prefix);
    }
}

/* A lazy greedy step's row of logits: the argmax of the text ids without every logit
 * (the suppressed ids out, as the filters take them out), then the exact logits of that id
 * and of every special and timestamp, the other text ids -inf. The filters and the argmax
 * choose on this row what they choose on the whole one: they take text ids out only all at
 * once or by the suppress list (penalties, which take single ids, are never lazy), and
 * read only the text ids' largest logit and the timestamps' (logits.c). False when the
 * backend's argmax failed (the caller then computes every logit). */
static bool lazy_logits(group *g)
{
    sotto_context *ctx = g->ctx;
    sotto__backend *be = ctx->be;
    const int eot = g->o->rules->eot, V = g->V;
    sotto__i32list lists[2] = {g->o->rules->suppress, g->specials};
    int32_t best = 0;
    if (sotto__decoder_argmax(&ctx->dec, lists, 2, &best) || best < 0 || best >= eot) {
        g->lazy_best = -1; /* the caller fills the whole row */
        return false;
    }
    sotto__decoder_logits_at(&ctx->dec, eot, V - eot);
    sotto__decoder_logits_at(&ctx->dec, best, 1);
    float *L = g->logits;
    if (g->lazy_best < 0)
        for (int i = 0; i < eot; i++) L[i] = -INFINITY;
    else
        L[g->lazy_best] = -INFINITY; /* the one text id the last step filled */
    g->lazy_best = best;
    be->ops->read(be, L + eot, sotto__buf_f32(ctx->dec.logits, (size_t)eot), (size_t)(V - eot) * sizeof *L);
    be->ops->read(be, L + best, sotto__buf_f32(ctx->dec.logits, (size_t)best), sizeof *L);
    return true;
}

/* One decoder step for the live sequences: their last tokens at position N_POS - 1. */
static void step(group *g, int n_pos)
{
    int32_t toks[SOTTO_MAX_SEQUENCES];
    int slots[SOTTO_MAX_SEQUENCES];
    int n = sotto__group_rows(g, toks, slots);
    sotto__decoder_step(&g->ctx->dec, toks, slots, n, n_pos - 1, g->slot0, g->n_init);
    if (g->lazy && lazy_logits(g)) return;
    sotto__decoder_logits(&g->ctx->dec, n);
    sotto__group_fetch(g, 0);
}

int sotto__group_rows(const sotto__group *g, int32_t *toks, int *slots)
{
    int n = 0;
    for (int r = 0; r < g->G; r++) {
        if (g->s[r].done) continue;
        toks[n] = g->s[r].tok[g->s[r].n - 1], slots[n] = g->s[r].slot;
        n++;
    }
    return n;
}

void sotto__group_fetch(sotto__group *g, int row0)
{
    int rows[SOTTO_MAX_SEQUENCES], n = 0;
    for (int r = 0; r < g->G; r++)
        if (!g->s[r].done) rows[n++] = r;
    fetch(g, n, rows, row0);
}

int sotto__group_pos(const sotto__group *g) { return g->n_init + g->i; }

void sotto__group_prefix(const sotto__group *g, int *slot, int *n)
{
    *slot = g->slot0;
    *n = g->n_init;
}

bool sotto__group_finished(const sotto__group *g) { return g->finished; }

static void group_free(group *g)
{
    if (!g) return;
    free(g->logits), free(g->weights), free(g->s), free(g->next), free(g->fin), free(g->specials.v);
    free(g);
}

sotto_status sotto__group_begin(sotto_context *ctx, const sotto__decode_opts *o, int slot0, sotto__decode_result *res,
                               sotto__group **out)
{
    *out = NULL;
    const sotto_model_info *h = &ctx->model->info;
    const bool beam = o->temperature == 0 && o->beam_size > 1;
    const int G = beam ? o->beam_size : o->temperature > 0 && o->best_of > 1 ? o->best_of : 1;
    if (G > SOTTO_MAX_SEQUENCES || slot0 < 0 || slot0 + G > ctx->dec.n_slots)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "decode: %d sequences, but the context was made for %d "
                               "(sotto_context_params.max_sequences)", G, ctx->dec.n_slots);
    /* [<|startofprev|> [hotwords] prompt[-(n_ctx / 2 - 1):]] start sequence [prefix] */
    int32_t init[2 * SOTTO__MAX_TOKENS];
    int n_init = 0, keep = o->n_prompt < h->n_text_ctx / 2 - 1 ? o->n_prompt : h->n_text_ctx / 2 - 1;
    if (keep > 0 || o->n_hotwords > 0) {
        init[n_init++] = h->token_startofprev;
        if (o->n_hotwords > 0) memcpy(init + n_init, o->hotwords, (size_t)o->n_hotwords * sizeof *init);
        n_init += o->n_hotwords;
        if (keep > 0) memcpy(init + n_init, o->prompt + o->n_prompt - keep, (size_t)keep * sizeof *init);
        n_init += keep;
    }
    int sot_index = n_init;
    memcpy(init + n_init, o->sot_seq, (size_t)o->n_sot * sizeof *init);
    n_init += o->n_sot;
    int sample_len = sotto__sample_len(o->sample_len, o->max_new_tokens, o->ct2_beams, o->n_prefix, n_init,
                                       h->n_text_ctx);
    if (o->n_prefix > 0) memcpy(init + n_init, o->prefix, (size_t)o->n_prefix * sizeof *init); /* NULL when none */
    n_init += o->n_prefix;
    if (n_init >= h->n_text_ctx || sample_len < 0)
        return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "decode: a prompt of %d tokens%s leaves no room in the "
                               "decoder's %d positions", n_init, sample_len < 0 ? " and max_new_tokens" : "",
                               h->n_text_ctx);
    group *g = calloc(1, sizeof *g);
    if (!g) return sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "decode: out of memory");
    int max_candidates = beam ? (int)lrint(o->beam_size * (o->patience > 0 ? o->patience : 1.0)) : 0;
    if (max_candidates < 1) max_candidates = 1;
    *g = (group){.ctx = ctx, .o = o, .V = h->n_vocab, .G = G, .n_init = n_init, .slot0 = slot0, .beam = beam,
                 .max_candidates = max_candidates, .res = res, .sample_len = sample_len};
    g->logits = malloc((size_t)G * g->V * sizeof *g->logits + sizeof(float) * g->V); /* + row 1 for G = 1 */
    g->weights = malloc((size_t)g->V * sizeof *g->weights);
    g->s = malloc((size_t)G * sizeof *g->s);
    g->next = malloc((size_t)G * sizeof *g->next);
    g->cap_fin = max_candidates + G;
    g->fin = malloc((size_t)g->cap_fin * sizeof *g->fin);
    if (!g->logits || !g->weights || !g->s || !g->next || !g->fin) {
        group_free(g);
        return sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "decode: out of memory");
    }
    prefill(g, init, sot_index, res);
    res->skipped = res->no_speech_prob > o->skip_above;
    g->finished = res->skipped || g->sample_len <= 0;
    const sotto__rules *ru = o->rules;
    const bool penalties = (ru->repetition_penalty > 0 && ru->repetition_penalty != 1) || ru->no_repeat_ngram > 0;
    if (o->few_logits && ctx->be->few_logits && G == 1 && !beam && o->temperature == 0 && !penalties &&
        !(res->no_speech_prob > o->logprobs_above) && ru->eot > 0 && ru->eot < g->V &&
        (g->specials.v = malloc((size_t)(g->V - ru->eot) * sizeof *g->specials.v))) {
        for (int i = ru->eot; i < g->V; i++) g->specials.v[g->specials.n++] = i;
        g->lazy = true;
        g->lazy_best = -1;
    }
    *out = g;
    return SOTTO_OK;
}

/* Row R's own work of a step: the filters on its logits, then their log-sum-exp, and the
 * argmax (greedy at temperature 0) or the G + 1 best (beam search). Rows do not share
 * data, so the backend runs them at once (host_for); sampling's draws stay in the
 * update, in row order. */
static void prep_row(void *arg, int r)
{
    group *g = arg;
    const sotto__decode_opts *o = g->o;
    const seq *q = &g->s[r];
    if (q->done) return;
    sotto__backend *be = g->ctx->be;
    float *L = g->logits + (size_t)r * g->V;
    sotto__penalties_apply(o->rules, q->tok + o->n_prefix, q->n - o->n_prefix, L); /* CTranslate2's first */
    float m = sotto__rules_apply(be, o->rules, q->tok + o->n_prefix, q->n - o->n_prefix, o->n_prefix > 0, L);
    g->lse[r] = g->lazy ? NAN : sotto__logsumexp_max(be, L, g->V, m);
    if (g->beam) topk(L, g->V, o->ct2_beams ? 2 * g->G : g->G + 1, g->top[r]);
    else if (o->temperature == 0) g->best[r] = sotto__argmax_max(be, L, g->V, m);
}

void sotto__group_advance(sotto__group *g)
{
    int n_pos = g->n_init + g->i; /* tokens so far: their K/V are in the caches */
    g->ctx->be->ops->host_for(g->ctx->be, prep_row, g, g->G);
    const bool last = n_pos + 1 > g->ctx->model->info.n_text_ctx || g->i + 1 >= g->sample_len; /* as below */
    bool completed = !g->beam              ? greedy_update(g)
                     : g->o->ct2_beams ? beam_update_ct2(g, n_pos, g->max_candidates, last)
                                       : beam_update(g, n_pos, g->max_candidates);
    g->i++;
    if (completed || n_pos + 1 > g->ctx->model->info.n_text_ctx || g->i >= g->sample_len) g->finished = true;
}

void sotto__group_end(sotto__group *g)
{
    sotto__decode_result *res = g->res;
    const sotto__decode_opts *o = g->o;
    const seq *best;
    if (res->skipped) {
        g->s[0].n = 0, g->s[0].sum = 0;
        best = &g->s[0];
    } else if (g->beam) {
        beam_finalize(g);
        best = rank(g, g->fin, g->n_fin);
    } else {
        best = rank(g, g->s, g->G);
    }
    res->n_tokens = best->n - (best->n && best->tok[best->n - 1] == o->rules->eot);
    memcpy(res->tokens, best->tok, (size_t)res->n_tokens * sizeof *res->tokens);
    res->sum_logprob = best->sum;
    res->avg_logprob = (double)best->sum / (res->n_tokens + 1);
    res->temperature = o->temperature;
    group_free(g);
}

void sotto__group_free(sotto__group *g) { group_free(g); }

sotto_status sotto__decode_window(sotto_context *ctx, const sotto__decode_opts *o, sotto__decode_result *res)
{
    group *g;
    sotto_status st = sotto__group_begin(ctx, o, 0, res, &g);
    if (st) return st;
    while (!g->finished) {
        if ((g->i & 15) == 15 && o->abort_callback && o->abort_callback(o->audio_s, o->user_data)) {
            group_free(g);
            return sotto__ctx_fail(ctx, SOTTO_ERR_CANCELLED, "decode: cancelled by the caller");
        }
        if (g->i > 0) step(g, g->n_init + g->i);
        sotto__group_advance(g);
    }
    sotto__group_end(g);
    return SOTTO_OK;
}
