/* ops.c — threaded operations: matmul cut into pieces of output, attention into (head,
 * block of query rows) items, the element-wise ops (layer norm, GELU, add, transposes,
 * quantisation) into pieces of rows or values, all taken by the threads in turn. */
#include "ops.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

bool sotto__exec_init(sotto__exec *ex, const sotto__kernels *k, int n_threads, size_t scratch_bytes)
{
    *ex = (sotto__exec){.k = k, .scratch_bytes = round64(scratch_bytes)};
    ex->scratch = aligned_alloc(64, ex->scratch_bytes ? ex->scratch_bytes : 64);
    ex->pool = ex->scratch ? sotto__pool_create(n_threads) : NULL;
    if (!ex->pool) {
        free(ex->scratch);
        *ex = (sotto__exec){0};
        return false;
    }
    return true;
}

void sotto__exec_free(sotto__exec *ex)
{
    sotto__pool_free(ex->pool);
    free(ex->scratch);
    *ex = (sotto__exec){0};
}

size_t sotto__op_linear_scratch(int M, int n_in, sotto_type type)
{
    return type == SOTTO_TYPE_Q8_0 ? (size_t)M * (size_t)(n_in / SOTTO__QK8_0) * sizeof(sotto__block_q8_0) : 0;
}

/* The scores' row stride: S rounded up to 16 floats, so that rows start a cache line */
static size_t attn_scores_ld(int S) { return ((size_t)S + 15) & ~(size_t)15; }

static size_t attn_scores_bytes(int S) { return round64((size_t)SOTTO__ATTN_ROWS * attn_scores_ld(S) * sizeof(float)); }

static size_t attn_values_bytes(int S, int dh) { return round64((size_t)S * (size_t)dh * sizeof(float)); }

size_t sotto__op_attention_scratch(int n_threads, int S, int dh)
{
    return (size_t)n_threads * (attn_scores_bytes(S) + attn_values_bytes(S, dh));
}

size_t sotto__op_argmax_scratch(int n_in) { return sotto__op_linear_scratch(1, n_in, SOTTO_TYPE_Q8_0); }

typedef struct mm_job {
    const sotto__exec *ex;
    sotto_type type;           /* of B (and of A when q8_0) */
    const void *A, *B;
    const float *bias;
    size_t lda, ldb, ldc;      /* in elements of the stored type (blocks for q8_0) */
    float *C;
    int M, N, K;
    bool rows;                 /* f32/f16: the kernels' gemm (a GEMM's bits at any M) */
    const uint16_t *panels;    /* f16 rows: B in panels (gemm_f16p), or NULL */
    /* the pieces (mm_plan): row parts of per_m rows by column groups of per_n columns */
    int per_m, per_n, row_parts, pieces;
    atomic_int next;
} mm_job;

static void mm_range(const mm_job *j, int m0, int m1, int n0, int n1)
{
    const sotto__kernels *k = j->ex->k;
    const float *bias = j->bias ? j->bias + n0 : NULL;
    float *C = j->C + (size_t)m0 * j->ldc + n0;
    switch (j->type) {
    case SOTTO_TYPE_F32:
        (j->rows ? k->gemm : k->matmul)((const float *)j->A + (size_t)m0 * j->lda, j->lda,
                                        (const float *)j->B + (size_t)n0 * j->ldb, j->ldb, bias, C, j->ldc, m1 - m0,
                                        n1 - n0, j->K);
        break;
    case SOTTO_TYPE_F16:
        if (j->panels) { /* n0 is a multiple of SOTTO__PANEL_W (mm_task) */
            k->gemm_f16p((const float *)j->A + (size_t)m0 * j->lda, j->lda, sotto__panel_at(j->panels, j->K, n0), bias,
                         C, j->ldc, m1 - m0, n1 - n0, j->K);
            break;
        }
        (j->rows ? k->gemm_f16 : k->matmul_f16)((const float *)j->A + (size_t)m0 * j->lda, j->lda,
                                                (const uint16_t *)j->B + (size_t)n0 * j->ldb, j->ldb, bias, C, j->ldc,
                                                m1 - m0, n1 - n0, j->K);
        break;
    case SOTTO_TYPE_Q8_0:
        k->matmul_q8((const sotto__block_q8_0 *)j->A + (size_t)m0 * j->lda, j->lda,
                     (const sotto__block_q8_0 *)j->B + (size_t)n0 * j->ldb, j->ldb, bias, C, j->ldc, m1 - m0,
                     n1 - n0, j->K);
        break;
    }
}

/* A product is cut into pieces that the threads take in turn (sotto__next_item), at most
 * MM_PIECES a thread and each of MM_PIECE_MACS multiply-adds or more: a thread that other
 * processes preempt, or a slower core, then leaves its pieces to the others instead of
 * holding up every operation by its fixed half (2 threads beside one busy loop on 2 cores:
 * docs/BENCHMARKS.md). Many rows of A (the encoder) keep one part of rows a thread, cut
 * into groups of columns (q8_0: into smaller parts of rows); few rows (the decoder) are
 * cut by columns only. An output's chain does not depend on the piece that computes it
 * (the kernels' row and column independence, test_kernels), so the bits are those of one
 * call. */
enum { MM_PIECES = 4, MM_PIECE_MACS = 1 << 20, MM_GROUP_ALIGN = 32, MM_Q8_ROWS = 24 };

static int align_up(int n, int a) { return (n + a - 1) / a * a; }

static void mm_plan(mm_job *j, int nt, bool split_n)
{
    double macs = (double)j->M * j->N * j->K;
    int want = macs / MM_PIECE_MACS < MM_PIECES * nt ? (int)(macs / MM_PIECE_MACS) : MM_PIECES * nt;
    if (want < nt) want = nt;
    if (split_n) {
        j->per_m = j->M, j->row_parts = 1;
        j->per_n = align_up((j->N + want - 1) / want, j->panels ? SOTTO__PANEL_W : 8);
    } else if (j->type == SOTTO_TYPE_Q8_0) {
        /* its GEMMs prepare A and pack B once per block of rows anyway: cut by rows only
         * (column groups would prepare each block's A again for every group: the avx2
         * q8_0 encoder 280 -> 300-360 ms) */
        j->per_m = align_up((j->M + want - 1) / want, MM_Q8_ROWS), j->per_n = j->N;
        j->row_parts = (j->M + j->per_m - 1) / j->per_m;
    } else {
        j->per_m = align_up((j->M + nt - 1) / nt, 4);
        j->row_parts = (j->M + j->per_m - 1) / j->per_m;
        int groups = want / nt;
        j->per_n = align_up((j->N + groups - 1) / groups, MM_GROUP_ALIGN);
    }
    j->pieces = j->row_parts * ((j->N + j->per_n - 1) / j->per_n);
    atomic_init(&j->next, 0);
}

/* Pieces in the order row part, then column group: with 2 threads and 2 row parts each
 * thread keeps to its own rows of A (in its L2) until one runs out of pieces. */
static void mm_task(void *arg, int tid, int nt)
{
    (void)tid, (void)nt;
    mm_job *j = arg;
    for (int p; (p = sotto__next_item(&j->next, j->pieces)) >= 0;) {
        int m0 = p % j->row_parts * j->per_m, n0 = p / j->row_parts * j->per_n;
        int m1 = m0 + j->per_m < j->M ? m0 + j->per_m : j->M, n1 = n0 + j->per_n < j->N ? n0 + j->per_n : j->N;
        mm_range(j, m0, m1, n0, n1);
    }
}

static void mm_run(mm_job *j)
{
    int nt = sotto__pool_size(j->ex->pool);
    if (nt == 1 || (size_t)j->M * j->N * j->K < 32768) {
        mm_range(j, 0, j->M, 0, j->N);
        return;
    }
    mm_plan(j, nt, j->N >= j->M || j->M < 4 * nt);
    sotto__parallel_for(j->ex->pool, mm_task, j);
}

void sotto__op_matmul(const sotto__exec *ex, const float *A, size_t lda, const float *B, size_t ldb,
                      const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    mm_job j = {ex, SOTTO_TYPE_F32, A, B, bias, lda, ldb, ldc, C, M, N, K, false, NULL, 0, 0, 0, 0, 0};
    mm_run(&j);
}

/* Element-wise work in pieces of about ELT_PIECE values (at least one a thread, at most
 * MM_PIECES), taken by the threads in turn as the products' pieces are: PER values a
 * piece, a multiple of ALIGN, and the number of pieces. */
enum { ELT_PIECE = 1 << 16 };

static int elt_pieces(size_t n, size_t align, int nt, size_t *per)
{
    size_t want = n / ELT_PIECE;
    if (want < (size_t)nt) want = (size_t)nt;
    if (want > (size_t)(MM_PIECES * nt)) want = (size_t)(MM_PIECES * nt);
    *per = (n + want - 1) / want;
    *per = (*per + align - 1) / align * align;
    return (int)((n + *per - 1) / *per);
}

typedef struct quant_job {
    const sotto__kernels *k;
    const float *X;
    sotto__block_q8_0 *out;
    int M, K;
    int per, pieces; /* rows a piece, pieces */
    atomic_int next;
} quant_job;

static void quant_task(void *arg, int tid, int nt)
{
    (void)tid, (void)nt;
    quant_job *q = arg;
    size_t nb = (size_t)q->K / SOTTO__QK8_0;
    for (int p; (p = sotto__next_item(&q->next, q->pieces)) >= 0;)
        for (int m = p * q->per; m < (p + 1) * q->per && m < q->M; m++)
            q->k->quantize_q8(q->X + (size_t)m * q->K, q->out + m * nb, q->K);
}

void sotto__op_quantize_rows(const sotto__exec *ex, const float *X, int M, int K, sotto__block_q8_0 *out)
{
    quant_job q = {ex->k, X, out, M, K, M, 1, 0};
    if (M >= 8) {
        size_t per = 0;
        q.pieces = elt_pieces((size_t)M * K, (size_t)K, sotto__pool_size(ex->pool), &per);
        q.per = (int)(per / (size_t)K);
        sotto__parallel_for(ex->pool, quant_task, &q);
    } else quant_task(&q, 0, 1);
}

static void linear(const sotto__exec *ex, const float *X, int M, const sotto__linear *l, float *Y, bool rows,
                   const uint16_t *panels)
{
    mm_job j = {ex, l->type, X, l->w, l->b, (size_t)l->n_in, (size_t)l->n_in, (size_t)l->n_out, Y, M, l->n_out,
                l->n_in, rows, rows && l->type == SOTTO_TYPE_F16 && ex->k->gemm_f16p ? panels : NULL, 0, 0, 0, 0, 0};
    if (l->type == SOTTO_TYPE_Q8_0) {
        size_t nb = (size_t)l->n_in / SOTTO__QK8_0;
        assert(sotto__op_linear_scratch(M, l->n_in, l->type) <= ex->scratch_bytes);
        sotto__op_quantize_rows(ex, X, M, l->n_in, ex->scratch);
        j.A = ex->scratch;
        j.lda = j.ldb = nb;
    }
    mm_run(&j);
}

void sotto__op_linear(const sotto__exec *ex, const float *X, int M, const sotto__linear *l, float *Y)
{
    linear(ex, X, M, l, Y, false, NULL);
}

/* q8_0: matmul_q8 gives every row the reference's bits at any M already */
void sotto__op_linear_rows(const sotto__exec *ex, const float *X, int M, const sotto__linear *l,
                           const uint16_t *panels, float *Y)
{
    linear(ex, X, M, l, Y, true, panels);
}

typedef double v8d __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32), aligned(4)));

/* x[0..8) widened to double (a macro: no vector crosses a call, so no ABI question). */
#define LOAD8D(x) __builtin_convertvector(*(const v8f *)(x), v8d)

static void layernorm_rows(const float *X, int m0, int m1, int d, const sotto__norm *n, float *Y)
{
    for (int m = m0; m < m1; m++) {
        const float *restrict x = X + (size_t)m * d;
        float *restrict y = Y + (size_t)m * d;
        const float *restrict g = n->g, *restrict b = n->b;
        /* sums in double, 8 interleaved partial sums in vectors: independent chains, not
         * one 2d-long chain of dependent adds (whose latency was 2 % of the encoder) */
        v8d ms = {0}, vs = {0};
        int i8 = d & ~7;
        for (int i = 0; i < i8; i += 8) ms += LOAD8D(x + i);
        double mean = 0, var = 0;
        for (int i = i8; i < d; i++) mean += x[i];
        for (int j = 0; j < 8; j++) mean += ms[j];
        mean /= d;
        for (int i = 0; i < i8; i += 8) {
            v8d c = LOAD8D(x + i) - mean;
            vs += c * c;
        }
        for (int i = i8; i < d; i++) var += (x[i] - mean) * (x[i] - mean);
        for (int j = 0; j < 8; j++) var += vs[j];
        var /= d;
        float inv = (float)(1.0 / sqrt(var + 1e-5));
        float mu = (float)mean;
        for (int i = 0; i < i8; i += 8)
            *(v8f *)(y + i) = (*(const v8f *)(x + i) - mu) * inv * *(const v8f *)(g + i) + *(const v8f *)(b + i);
        for (int i = i8; i < d; i++) y[i] = (x[i] - mu) * inv * g[i] + b[i];
    }
}

typedef struct rows_job {
    const float *X;
    float *Y;
    int M, d, ld_dst;
    const sotto__norm *n;
    int per, pieces; /* rows a piece, pieces */
    atomic_int next;
} rows_job;

static void layernorm_task(void *arg, int tid, int nt)
{
    (void)tid, (void)nt;
    rows_job *j = arg;
    for (int p; (p = sotto__next_item(&j->next, j->pieces)) >= 0;) {
        int b = p * j->per, e = b + j->per < j->M ? b + j->per : j->M;
        layernorm_rows(j->X, b, e, j->d, j->n, j->Y);
    }
}

void sotto__op_layernorm(const sotto__exec *ex, const float *X, int M, int d, const sotto__norm *n, float *Y)
{
    if (M < 64) {
        layernorm_rows(X, 0, M, d, n, Y);
        return;
    }
    size_t per = 0;
    int pieces = elt_pieces((size_t)M * d, (size_t)d, sotto__pool_size(ex->pool), &per);
    rows_job j = {X, Y, M, d, 0, n, (int)(per / (size_t)d), pieces, 0};
    sotto__parallel_for(ex->pool, layernorm_task, &j);
}

/* dst[c * ld_dst + r] = src[r * cols + c] for rows [r0, r1), in 32 x 32 tiles. */
static void transpose_rows(const float *src, int r0, int r1, int cols, float *dst, size_t ld_dst)
{
    const int B = 32;
    for (int rb = r0; rb < r1; rb += B)
        for (int c0 = 0; c0 < cols; c0 += B)
            for (int r = rb; r < rb + B && r < r1; r++)
                for (int c = c0; c < c0 + B && c < cols; c++) dst[(size_t)c * ld_dst + r] = src[(size_t)r * cols + c];
}

static void transpose_task(void *arg, int tid, int nt)
{
    (void)tid, (void)nt;
    rows_job *j = arg;
    for (int p; (p = sotto__next_item(&j->next, j->pieces)) >= 0;) {
        int b = p * j->per, e = b + j->per < j->M ? b + j->per : j->M;
        transpose_rows(j->X, b, e, j->d, j->Y, (size_t)j->ld_dst);
    }
}

/* in pieces of whole 32-row tiles */
void sotto__op_transpose(const sotto__exec *ex, const float *src, int rows, int cols, float *dst, size_t ld_dst)
{
    if (rows < 64) {
        transpose_rows(src, 0, rows, cols, dst, ld_dst);
        return;
    }
    size_t per = 0;
    int pieces = elt_pieces((size_t)rows * cols, (size_t)cols * 32, sotto__pool_size(ex->pool), &per);
    rows_job j = {src, dst, rows, cols, (int)ld_dst, NULL, (int)(per / (size_t)cols), pieces, 0};
    sotto__parallel_for(ex->pool, transpose_task, &j);
}

typedef struct elt_job {
    const sotto__kernels *k;
    float *x;
    const float *y; /* add: the second operand */
    size_t n, per;  /* values, values a piece (a multiple of 16: the vector tail stays the last piece's) */
    int pieces;
    atomic_int next;
} elt_job;

static void gelu_task(void *arg, int tid, int nt)
{
    (void)tid, (void)nt;
    elt_job *j = arg;
    for (int p; (p = sotto__next_item(&j->next, j->pieces)) >= 0;) {
        size_t b = j->per * (size_t)p, e = b + j->per < j->n ? b + j->per : j->n;
        j->k->gelu(j->x + b, e - b);
    }
}

static void add_task(void *arg, int tid, int nt)
{
    (void)tid, (void)nt;
    elt_job *j = arg;
    float *restrict x = j->x;
    const float *restrict y = j->y;
    for (int p; (p = sotto__next_item(&j->next, j->pieces)) >= 0;) {
        size_t b = j->per * (size_t)p, e = b + j->per < j->n ? b + j->per : j->n;
        for (size_t i = b; i < e; i++) x[i] += y[i];
    }
}

static void elt_run(const sotto__exec *ex, sotto__task fn, float *x, const float *y, size_t n)
{
    elt_job j = {ex->k, x, y, n, n, 1, 0};
    if (n < 16384) fn(&j, 0, 1);
    else {
        j.pieces = elt_pieces(n, 16, sotto__pool_size(ex->pool), &j.per);
        sotto__parallel_for(ex->pool, fn, &j);
    }
}

void sotto__op_gelu(const sotto__exec *ex, float *x, size_t n) { elt_run(ex, gelu_task, x, NULL, n); }

void sotto__op_add(const sotto__exec *ex, float *x, const float *y, size_t n) { elt_run(ex, add_task, x, y, n); }

typedef struct attn_job {
    const sotto__exec *ex;
    const float *Q;
    const float *KT, *V;
    size_t ldq, ldkt, ldv, ldo;
    float *O;
    int T, S, n_head, dh, causal_pos;
    atomic_int next; /* the next (head, block of rows) item */
} attn_job;

/* A thread that takes several blocks of rows of one head (the encoder: 63 a head) first
 * copies the head's values, [S, dh] at a stride of d, side by side into its scratch: at
 * the stride of base's d = 512 (2 KB) the 1500 rows of one head (375 KB) fall into a
 * sixteenth of L2's sets and were read from L3 by every block (one core, AVX2, P V of two
 * heads over 1500 query rows: 8.3 -> 6.0 ms with the copy; tiny.en's d = 384: 6.6 -> 5.8).
 * The products read the same values in the same order, so the same bits. */
static void attn_task(void *arg, int tid, int nt)
{
    attn_job *j = arg;
    const sotto__kernels *k = j->ex->k;
    /* [ATTN_ROWS, S] scores, then [S, dh] values, of this thread's share of the scratch */
    char *mine = (char *)j->ex->scratch + (size_t)tid * (attn_scores_bytes(j->S) + attn_values_bytes(j->S, j->dh));
    float *P = (float *)mine, *Vh = (float *)(mine + attn_scores_bytes(j->S));
    const size_t ldp = attn_scores_ld(j->S);
    int n_blocks = (j->T + SOTTO__ATTN_ROWS - 1) / SOTTO__ATTN_ROWS, copied = -1;
    const bool copy = n_blocks > nt;
    float scale = 1.0f / sqrtf((float)j->dh);
    for (int item; (item = sotto__next_item(&j->next, j->n_head * n_blocks)) >= 0;) {
        int h = item / n_blocks, t0 = (item % n_blocks) * SOTTO__ATTN_ROWS;
        int rows = j->T - t0 < SOTTO__ATTN_ROWS ? j->T - t0 : SOTTO__ATTN_ROWS;
        int S = j->S;
        if (j->causal_pos >= 0 && j->causal_pos + t0 + rows < S) S = j->causal_pos + t0 + rows;
        const float *q = j->Q + (size_t)t0 * j->ldq + (size_t)h * j->dh;
        size_t kt_off = (size_t)h * j->dh * j->ldkt;
        k->matmul_nn(q, j->ldq, j->KT + kt_off, j->ldkt, P, ldp, rows, S, j->dh);
        for (int r = 0; r < rows; r++) {
            int visible = j->causal_pos >= 0 ? j->causal_pos + t0 + r + 1 : S;
            k->softmax(P + (size_t)r * ldp, S, visible < S ? visible : S, scale);
        }
        const float *v = j->V + (size_t)h * j->dh;
        size_t ldv = j->ldv;
        if (copy) {
            if (copied != h)
                for (int s = 0; s < j->S; s++)
                    memcpy(Vh + (size_t)s * j->dh, v + (size_t)s * ldv, (size_t)j->dh * sizeof *Vh);
            copied = h, v = Vh, ldv = (size_t)j->dh;
        }
        float *o = j->O + (size_t)t0 * j->ldo + (size_t)h * j->dh;
        k->matmul_nn(P, ldp, v, ldv, o, j->ldo, rows, j->dh, S);
    }
}

void sotto__op_attention(const sotto__exec *ex, const float *Q, size_t ldq, const float *KT, size_t ldkt,
                         const float *V, size_t ldv, float *O, size_t ldo, int T, int S, int n_head, int dh,
                         int causal_pos)
{
    attn_job j = {ex, Q, KT, V, ldq, ldkt, ldv, ldo, O, T, S, n_head, dh, causal_pos, 0};
    assert(sotto__op_attention_scratch(sotto__pool_size(ex->pool), S, dh) <= ex->scratch_bytes);
    sotto__parallel_for(ex->pool, attn_task, &j);
}
