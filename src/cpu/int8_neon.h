/* int8_neon.h — the int8 kernels the NEON sets share (kernels.h matmul_q8, scores_p5),
 * written once over the 16-byte dot product `dot16` that the including file defines with
 * its own instructions (vmull_s8 in kernels_neon.c, sdot in kernels_neon_dot.c and
 * kernels_neon_i8mm.c), so each is compiled with that file's -march flags.
 *
 * Integer sums are exact whatever their order; the float arithmetic is the scalar
 * reference's, in its order: per output s = 0, then for each block j in turn
 * s = s + (d_a d_b) * dot_j, and last s + bias (or + 0). The lanes of a vector hold
 * different outputs, never parts of one, so every output has the reference's bits, for
 * every row count, tile and tail. The files that include this are compiled with
 * -ffp-contract=off (CMakeLists.txt): no multiply and add fused into one rounding.
 *
 * Needs, before the #include: <arm_neon.h>, "kernels.h" and
 *   static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b);
 * whose four lanes, summed, add sum_i a[i] b[i] to those of ACC. */
#ifndef SOTTO_INT8_NEON_H
#define SOTTO_INT8_NEON_H

#define SOTTO__INLINE static inline __attribute__((always_inline))

enum { Q8_PANEL_BYTES = 256 * 1024 }; /* the B rows a GEMM keeps in L2 while rows of A pass */

/* How many rows of B (NB blocks each) fill a panel: at least 4, a multiple of 4. */
static inline int q8_panel_rows(int nb)
{
    int p = (int)(Q8_PANEL_BYTES / ((size_t)nb * sizeof(sotto__block_q8_0) + 1));
    return p < 4 ? 4 : p & ~3;
}

static inline float q8_h2f(uint16_t h) { return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0); }

/* Four halves to floats (exact, as sotto__f16_to_f32). */
static inline float32x4_t q8_h4(uint16_t h0, uint16_t h1, uint16_t h2, uint16_t h3)
{
    uint16x4_t v = vdup_n_u16(h0);
    v = vset_lane_u16(h1, v, 1), v = vset_lane_u16(h2, v, 2), v = vset_lane_u16(h3, v, 3);
    return vcvt_f32_f16(vreinterpret_f16_u16(v));
}

/* The four block rows of B a tile reads: rows n .. n + 3, the last one repeated past N1
 * (those lanes are computed and never stored). */
static inline void q8_cols(const sotto__block_q8_0 *B, size_t ldb, int n, int n1, const sotto__block_q8_0 *b[4])
{
    for (int c = 0; c < 4; c++) b[c] = B + (size_t)(n + c < n1 ? n + c : n1 - 1) * ldb;
}

/* Bias of columns n .. n + 3 (0 where there is none, as the reference adds 0). */
static inline float32x4_t q8_bias4(const float *bias, int n, int n1)
{
    float t[4] = {0, 0, 0, 0};
    if (bias)
        for (int c = 0; c < 4 && n + c < n1; c++) t[c] = bias[n + c];
    return vld1q_f32(t);
}

/* Row ROW's four outputs V into C at columns n .. min(n + 4, n1). */
static inline void q8_store4(float *c, float32x4_t v, int n, int n1)
{
    if (n + 4 <= n1) {
        vst1q_f32(c + n, v);
        return;
    }
    float t[4];
    vst1q_f32(t, v);
    for (int j = 0; n + j < n1; j++) c[n + j] = t[j];
}

/* C rows 0..R (R = 1..4, a constant where inlined) at columns n .. n + 3: R rows of A
 * against the four rows b[] of B, over NB blocks. Per block: the 4 x R int32 dots (the
 * four of a row folded into one vector by pairwise adds), to float, times d_a d_b, added. */
SOTTO__INLINE void q8_tile_dot(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *const b[4], int nb,
                               float32x4_t bias, float *C, size_t ldc, int n, int n1, const int R)
{
    float32x4_t s[4] = {vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0)};
    for (int j = 0; j < nb; j++) {
        int8x16_t lo[4], hi[4];
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) lo[c] = vld1q_s8(b[c][j].qs), hi[c] = vld1q_s8(b[c][j].qs + 16);
        float32x4_t db = q8_h4(b[0][j].d, b[1][j].d, b[2][j].d, b[3][j].d);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const sotto__block_q8_0 *a = A + (size_t)r * lda + j;
            int8x16_t a0 = vld1q_s8(a->qs), a1 = vld1q_s8(a->qs + 16);
            int32x4_t d[4];
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++) d[c] = dot16(dot16(vdupq_n_s32(0), a0, lo[c]), a1, hi[c]);
            int32x4_t dots = vpaddq_s32(vpaddq_s32(d[0], d[1]), vpaddq_s32(d[2], d[3]));
            float32x4_t scale = vmulq_f32(vdupq_n_f32(q8_h2f(a->d)), db);
            s[r] = vaddq_f32(s[r], vmulq_f32(scale, vcvtq_f32_s32(dots)));
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) q8_store4(C + (size_t)r * ldc, vaddq_f32(s[r], bias), n, n1);
}

/* R rows of A (1..4) against B rows [n0, n1), four at a time. */
SOTTO__INLINE void q8_rows_dot(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                               const float *bias, float *C, size_t ldc, int n0, int n1, int nb, const int R)
{
    for (int n = n0; n < n1; n += 4) {
        const sotto__block_q8_0 *b[4];
        q8_cols(B, ldb, n, n1, b);
        q8_tile_dot(A, lda, b, nb, q8_bias4(bias, n, n1), C, ldc, n, n1, R);
    }
}

/* Rows [m0, M) of A against B rows [n0, n1) in tiles of 4 rows (then 3, 2 or 1). */
static inline void q8_block_dot(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                                const float *bias, float *C, size_t ldc, int m0, int M, int n0, int n1, int nb)
{
    int m = m0;
    for (; m + 4 <= M; m += 4) q8_rows_dot(A + m * lda, lda, B, ldb, bias, C + m * ldc, ldc, n0, n1, nb, 4);
    const sotto__block_q8_0 *a = A + m * lda;
    float *c = C + m * ldc;
    if (M - m == 3) q8_rows_dot(a, lda, B, ldb, bias, c, ldc, n0, n1, nb, 3);
    if (M - m == 2) q8_rows_dot(a, lda, B, ldb, bias, c, ldc, n0, n1, nb, 2);
    if (M - m == 1) q8_rows_dot(a, lda, B, ldb, bias, c, ldc, n0, n1, nb, 1);
}

/* kernels.h matmul_q8 over panels of B, every row of A through dot16 tiles. */
static inline void q8_matmul_dot(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                                 const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    const int nb = K / SOTTO__QK8_0, panel = q8_panel_rows(nb);
    for (int n0 = 0; n0 < N; n0 += panel)
        q8_block_dot(A, lda, B, ldb, bias, C, ldc, 0, M, n0, n0 + panel < N ? n0 + panel : N, nb);
}

/* ---- vocabulary proxy scores (kernels.h scores_p5) ------------------------------------ */

/* Values 16 h .. 16 h + 15 of a chunk of 128: the nibbles NIB (low or high half of the
 * chunk's bytes) plus 16 where their bits (BITS, 2 bytes) are set. */
static inline int8x16_t p5_values(uint8x16_t nib, const uint8_t *bits)
{
    static const uint8_t pick[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    static const uint8_t mask[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    uint8x16_t b = vqtbl1q_u8(vcombine_u8(vld1_u8(bits), vdup_n_u8(0)), vld1q_u8(pick));
    b = vandq_u8(vtstq_u8(b, vld1q_u8(mask)), vdupq_n_u8(16));
    return vreinterpretq_s8_u8(vorrq_u8(nib, b));
}

/* kernels.h scores_p5: per block the exact int32 sum, then the reference's float steps. */
static inline void p5_scores(const int8_t *a, const float *d, const float *g, const uint8_t *rows, float *u, int N,
                             int K)
{
    const size_t rb = (size_t)K / 2 + K / 8 + K / 16;
    for (int n = 0; n < N; n++) {
        const uint8_t *row = rows + (size_t)n * rb, *bits = row + K / 2, *sr = bits + K / 8;
        float acc = 0;
        for (int c = 0; c < K / 128; c++) {
            int32x4_t s[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
            for (int q = 0; q < 4; q++) { /* bytes 16 q .. 16 q + 15: values 16 q.. and 64 + 16 q.. */
                uint8x16_t by = vld1q_u8(row + c * 64 + 16 * q);
                int8x16_t lo = p5_values(vandq_u8(by, vdupq_n_u8(15)), bits + c * 16 + 2 * q);
                int8x16_t hi = p5_values(vshrq_n_u8(by, 4), bits + c * 16 + 8 + 2 * q);
                const int8_t *ac = a + c * 128;
                s[q / 2] = dot16(s[q / 2], lo, vld1q_s8(ac + 16 * q));
                s[2 + q / 2] = dot16(s[2 + q / 2], hi, vld1q_s8(ac + 64 + 16 * q));
            }
            for (int j = 0; j < 4; j++) { /* block 4 c + j holds values 32 j .. 32 j + 31 */
                int b = 4 * c + j;
                float sc = q8_h2f((uint16_t)(sr[2 * b] | sr[2 * b + 1] << 8));
                acc += sc * (d[b] * (float)vaddvq_s32(s[j]) + g[b]);
            }
        }
        u[n] = acc;
    }
}

#endif
