/* prefix_attn.c — the decoder's self-attention for N rows at one position each (the beams
 * or samples of one window), whose first P positions are one shared prefix (the prompt and
 * start sequence, prefilled once into one cache): per head the prefix's keys and values
 * are read once for all N rows, then each row's own positions from its own cache. With 5
 * beams after a prompt of 224 tokens that is about a third of the bytes of a separate
 * pass per row over a full copy of the prefix. matmul_nn_acc continues each output's chain
 * from the prefix's part, so every output has the bits of sotto__op_attention over one
 * cache holding both parts. */
#include <assert.h>
#include <math.h>

#include "ops.h"

typedef struct prefix_job {
    const sotto__exec *ex;
    const float *Q, *KT0, *V0;
    const float *const *KT, *const *V;
    size_t ldq, ldkt, ldv, ldo;
    float *O;
    int n, P, S, n_head, dh;
    atomic_int next; /* the next head */
} prefix_job;

static void prefix_task(void *arg, int tid, int nt)
{
    (void)nt;
    prefix_job *j = arg;
    const sotto__kernels *k = j->ex->k;
    const size_t S = (size_t)j->S, P = (size_t)j->P, rows = (size_t)SOTTO__ATTN_ROWS * S * sizeof(float);
    const int own = j->S - j->P;
    float *sc = (float *)((char *)j->ex->scratch + (size_t)tid * ((rows + 63) & ~(size_t)63)); /* [n, S] */
    const float scale = 1.0f / sqrtf((float)j->dh);
    for (int h; (h = sotto__next_item(&j->next, j->n_head)) >= 0;) {
        const size_t hq = (size_t)h * j->dh, hk = hq * j->ldkt;
        k->matmul_nn(j->Q + hq, j->ldq, j->KT0 + hk, j->ldkt, sc, S, j->n, j->P, j->dh);
        for (int r = 0; r < j->n; r++) {
            k->matmul_nn(j->Q + r * j->ldq + hq, j->ldq, j->KT[r] + hk + P, j->ldkt, sc + r * S + P, S, 1, own, j->dh);
            k->softmax(sc + r * S, j->S, j->S, scale);
        }
        k->matmul_nn(sc, S, j->V0 + hq, j->ldv, j->O + hq, j->ldo, j->n, j->dh, j->P);
        for (int r = 0; r < j->n; r++)
            k->matmul_nn_acc(sc + r * S + P, S, j->V[r] + P * j->ldv + hq, j->ldv, j->O + r * j->ldo + hq, j->ldo, 1,
                             j->dh, own);
    }
}

void sotto__op_attention_prefix(const sotto__exec *ex, const float *Q, size_t ldq, int n, const float *KT0,
                                const float *V0, const float *const *KT, const float *const *V, size_t ldkt,
                                size_t ldv, int P, int S, int n_head, int dh, float *O, size_t ldo)
{
    assert(n >= 1 && n <= SOTTO__ATTN_ROWS && P >= 0 && P < S);
    assert(sotto__op_attention_scratch(sotto__pool_size(ex->pool), S, 0) <= ex->scratch_bytes); /* scores only */
    prefix_job j = {ex, Q, KT0, V0, KT, V, ldq, ldkt, ldv, ldo, O, n, P, S, n_head, dh, 0};
    sotto__parallel_for(ex->pool, prefix_task, &j);
}
