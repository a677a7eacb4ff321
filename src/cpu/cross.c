/* cross.c — cross-attention over a window's resident keys and values, stored per head so
 * that each head's keys and values are one contiguous stream (a decoder step reads all of
 * them; strided or interleaved reads ran them from memory at a fraction of the speed of
 * one sequential stream: docs/BENCHMARKS.md). */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "ops.h"

/* Bytes of one head's row of DH values in TYPE. */
static size_t head_row_bytes(sotto_type type, int dh)
{
    size_t b = 0;
    sotto__type_bytes(type, dh, &b);
    return b;
}

typedef struct split_job {
    const sotto__kernels *k;
    const float *X;
    int S, n_head, dh;
    sotto_type type;
    char *dst;
} split_job;

static void split_task(void *arg, int tid, int nt)
{
    split_job *j = arg;
    const long rows = (long)j->n_head * j->S;
    const size_t rb = head_row_bytes(j->type, j->dh), d = (size_t)j->n_head * j->dh;
    for (long r = rows * tid / nt; r < rows * (tid + 1) / nt; r++) {
        int h = (int)(r / j->S), s = (int)(r % j->S);
        const float *x = j->X + (size_t)s * d + (size_t)h * j->dh;
        char *out = j->dst + (size_t)r * rb;
        switch (j->type) {
        case SOTTO_TYPE_F32: memcpy(out, x, rb); break;
        case SOTTO_TYPE_F16: j->k->to_f16(x, (uint16_t *)out, (size_t)j->dh); break;
        case SOTTO_TYPE_Q8_0: j->k->quantize_q8(x, (sotto__block_q8_0 *)out, j->dh); break;
        }
    }
}

size_t sotto__op_cross_kv_scratch(int S, int n_head, int dh, sotto_type type)
{
    return type == SOTTO_TYPE_Q8_0 ? (size_t)n_head * dh * sotto__cross_padded(S) * sizeof(float) : 0;
}

void sotto__op_cross_kv(const sotto__exec *ex, const float *Kx, const float *Vx, int S, int n_head, int dh,
                        sotto_type type, void *K, void *V)
{
    split_job j = {ex->k, Kx, S, n_head, dh, type, K};
    sotto__parallel_for(ex->pool, split_task, &j);
    if (type != SOTTO_TYPE_Q8_0) {
        j.X = Vx, j.dst = V;
        sotto__parallel_for(ex->pool, split_task, &j);
        return;
    }
    /* values transposed over the positions padded to Sp: rows [n_head * dh][Sp] */
    const int d = n_head * dh, Sp = sotto__cross_padded(S);
    assert(sotto__op_cross_kv_scratch(S, n_head, dh, type) <= ex->scratch_bytes);
    float *tmp = ex->scratch;
    sotto__op_transpose(ex, Vx, S, d, tmp, (size_t)Sp);
    for (int c = 0; c < d; c++) memset(tmp + (size_t)c * Sp + S, 0, (size_t)(Sp - S) * sizeof *tmp);
    sotto__op_quantize_rows(ex, tmp, d, Sp, V);
}

typedef struct cross_job {
    const sotto__exec *ex;
    const float *Q;
    sotto_type type;
    const void *K, *V;
    size_t ldq, ldo;
    float *O;
    int T, S, n_head, dh;
    atomic_int next; /* the next (head, block of rows) item */
} cross_job;

/* One thread's scratch: P [ATTN_ROWS, Sp] floats, then for q8_0 the quantised queries
 * QQ [ATTN_ROWS][dh / 32] and probabilities PQ [ATTN_ROWS][Sp / 32] blocks; each part
 * 64-byte aligned. */
static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }
static size_t p_bytes(int S) { return round64((size_t)SOTTO__ATTN_ROWS * sotto__cross_padded(S) * sizeof(float)); }
static size_t qq_bytes(int dh) { return round64((size_t)SOTTO__ATTN_ROWS * (dh / SOTTO__QK8_0) * sizeof(sotto__block_q8_0)); }
static size_t thread_bytes(int S, int dh, sotto_type type)
{
    size_t b = p_bytes(S);
    if (type == SOTTO_TYPE_Q8_0)
        b += qq_bytes(dh) + round64((size_t)SOTTO__ATTN_ROWS * (sotto__cross_padded(S) / SOTTO__QK8_0) *
                                    sizeof(sotto__block_q8_0));
    return b;
}

size_t sotto__op_cross_attention_scratch(int n_threads, int S, int dh, sotto_type type)
{
    return (size_t)n_threads * thread_bytes(S, dh, type);
}

/* Query rows t0.. (ROWS of them) of head H with q8_0 keys and values: scores and output
 * are both q8_0 GEMVs, the queries and probabilities quantised (in the thread's scratch
 * after P). */
static void head_q8(const cross_job *j, float *P, int h, int t0, int rows)
{
    const sotto__kernels *k = j->ex->k;
    const int nbh = j->dh / SOTTO__QK8_0, S = j->S, Sp = sotto__cross_padded(S), nbs = Sp / SOTTO__QK8_0;
    sotto__block_q8_0 *qq = (sotto__block_q8_0 *)((char *)P + p_bytes(S));
    sotto__block_q8_0 *pq = (sotto__block_q8_0 *)((char *)qq + qq_bytes(j->dh));
    const float *q = j->Q + (size_t)t0 * j->ldq + (size_t)h * j->dh;
    for (int r = 0; r < rows; r++) k->quantize_q8(q + (size_t)r * j->ldq, qq + r * nbh, j->dh);
    const sotto__block_q8_0 *kh = (const sotto__block_q8_0 *)j->K + (size_t)h * S * nbh;
    k->matmul_q8(qq, (size_t)nbh, kh, (size_t)nbh, NULL, P, (size_t)Sp, rows, S, j->dh);
    float scale = 1.0f / sqrtf((float)j->dh);
    for (int r = 0; r < rows; r++) {
        float *p = P + (size_t)r * Sp;
        k->softmax(p, S, S, scale);
        for (int s = S; s < Sp; s++) p[s] = 0.0f;
        k->quantize_q8(p, pq + (size_t)r * nbs, Sp);
    }
    const sotto__block_q8_0 *vt = (const sotto__block_q8_0 *)j->V + (size_t)h * j->dh * nbs;
    k->matmul_q8(pq, (size_t)nbs, vt, (size_t)nbs, NULL,
                 j->O + (size_t)t0 * j->ldo + (size_t)h * j->dh, j->ldo, rows, j->dh, Sp);
}

static void cross_task(void *arg, int tid, int nt)
{
    (void)nt;
    cross_job *j = arg;
    const sotto__kernels *k = j->ex->k;
    float *P = (float *)((char *)j->ex->scratch + (size_t)tid * thread_bytes(j->S, j->dh, j->type));
    const int n_blocks = (j->T + SOTTO__ATTN_ROWS - 1) / SOTTO__ATTN_ROWS, S = j->S, dh = j->dh;
    const float scale = 1.0f / sqrtf((float)dh);
    for (int item; (item = sotto__next_item(&j->next, j->n_head * n_blocks)) >= 0;) {
        int h = item / n_blocks, t0 = (item % n_blocks) * SOTTO__ATTN_ROWS;
        int rows = j->T - t0 < SOTTO__ATTN_ROWS ? j->T - t0 : SOTTO__ATTN_ROWS;
        if (j->type == SOTTO_TYPE_Q8_0) {
            head_q8(j, P, h, t0, rows);
            continue;
        }
        const float *q = j->Q + (size_t)t0 * j->ldq + (size_t)h * dh;
        float *o = j->O + (size_t)t0 * j->ldo + (size_t)h * dh;
        size_t off = (size_t)h * S * dh;
        if (j->type == SOTTO_TYPE_F16)
            k->matmul_f16(q, j->ldq, (const uint16_t *)j->K + off, (size_t)dh, NULL, P, (size_t)S, rows, S, dh);
        else
            k->matmul(q, j->ldq, (const float *)j->K + off, (size_t)dh, NULL, P, (size_t)S, rows, S, dh);
        for (int r = 0; r < rows; r++) k->softmax(P + (size_t)r * S, S, S, scale);
        if (j->type == SOTTO_TYPE_F16)
            k->matmul_nn_f16(P, (size_t)S, (const uint16_t *)j->V + off, (size_t)dh, o, j->ldo, rows, dh, S);
        else
            k->matmul_nn(P, (size_t)S, (const float *)j->V + off, (size_t)dh, o, j->ldo, rows, dh, S);
    }
}

void sotto__op_cross_attention(const sotto__exec *ex, const float *Q, size_t ldq, sotto_type type, const void *K,
                               const void *V, float *O, size_t ldo, int T, int S, int n_head, int dh)
{
    cross_job j = {ex, Q, type, K, V, ldq, ldo, O, T, S, n_head, dh, 0};
    assert(sotto__op_cross_attention_scratch(sotto__pool_size(ex->pool), S, dh, type) <= ex->scratch_bytes);
    sotto__parallel_for(ex->pool, cross_task, &j);
}
