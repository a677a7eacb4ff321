/* kernels_neon_i8mm.c — the q8_0 GEMM of the neon_i8mm set: int8 matrix multiplies (smmla,
 * FEAT_I8MM), one instruction a 2x8 by 8x2 product into a 2x2 int32 tile, for pairs of
 * rows of A against pairs of rows of B; an odd last row takes the sdot tiles. Only this
 * file is compiled with -march=armv8.2-a+dotprod+i8mm and kernels.c calls it only where
 * the CPU reports both HWCAP_ASIMDDP and HWCAP2_I8MM. Float steps as int8_neon.h: the
 * scalar reference's bits. */
#include <arm_neon.h>

#include "kernels.h"

#if !defined(__ARM_FEATURE_DOTPROD) || !defined(__ARM_FEATURE_MATMUL_INT8)
#error "kernels_neon_i8mm.c needs -march=armv8.2-a+dotprod+i8mm (CMakeLists.txt sets it for this file)"
#endif

static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b) { return vdotq_s32(acc, a, b); }

#include "int8_neon.h"

/* The 32 values of blocks x and y as four 2x8 operands of smmla: bytes 8 i .. 8 i + 7 of x,
 * then the same of y. */
static inline void mm_pair(const sotto__block_q8_0 *x, const sotto__block_q8_0 *y, int8x16_t z[4])
{
    int64x2_t x0 = vreinterpretq_s64_s8(vld1q_s8(x->qs)), x1 = vreinterpretq_s64_s8(vld1q_s8(x->qs + 16));
    int64x2_t y0 = vreinterpretq_s64_s8(vld1q_s8(y->qs)), y1 = vreinterpretq_s64_s8(vld1q_s8(y->qs + 16));
    z[0] = vreinterpretq_s8_s64(vzip1q_s64(x0, y0)), z[1] = vreinterpretq_s8_s64(vzip2q_s64(x0, y0));
    z[2] = vreinterpretq_s8_s64(vzip1q_s64(x1, y1)), z[3] = vreinterpretq_s8_s64(vzip2q_s64(x1, y1));
}

/* C rows 0 .. 2 RP (RP = 1..4 row pairs, a constant where inlined) at columns n .. n + 3
 * against the rows b[] of B. Per block and pair of rows, per pair of columns q, one 2x2
 * int32 tile [r0 c0, r0 c1, r1 c0, r1 c1] from four smmla, times [d_r0 d_c0, d_r0 d_c1,
 * d_r1 d_c0, d_r1 d_c1], added to its float tile. */
SOTTO__INLINE void mm_tile(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *const b[4], int nb,
                           float32x4_t bias, float *C, size_t ldc, int n, int n1, const int RP)
{
    float32x4_t s[4][2];
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) s[p][0] = s[p][1] = vdupq_n_f32(0);
    for (int j = 0; j < nb; j++) {
        int8x16_t bz[2][4];
        float32x4_t db[2];
#pragma GCC unroll 4
        for (int q = 0; q < 2; q++) {
            mm_pair(b[2 * q] + j, b[2 * q + 1] + j, bz[q]);
            db[q] = q8_h4(b[2 * q][j].d, b[2 * q + 1][j].d, b[2 * q][j].d, b[2 * q + 1][j].d);
        }
#pragma GCC unroll 4
        for (int p = 0; p < RP; p++) {
            const sotto__block_q8_0 *a0 = A + (size_t)(2 * p) * lda + j, *a1 = a0 + lda;
            int8x16_t az[4];
            mm_pair(a0, a1, az);
            float32x4_t da = q8_h4(a0->d, a0->d, a1->d, a1->d);
#pragma GCC unroll 4
            for (int q = 0; q < 2; q++) {
                int32x4_t t = vmmlaq_s32(vdupq_n_s32(0), az[0], bz[q][0]);
                t = vmmlaq_s32(t, az[1], bz[q][1]);
                t = vmmlaq_s32(t, az[2], bz[q][2]);
                t = vmmlaq_s32(t, az[3], bz[q][3]);
                s[p][q] = vaddq_f32(s[p][q], vmulq_f32(vmulq_f32(da, db[q]), vcvtq_f32_s32(t)));
            }
        }
    }
#pragma GCC unroll 4
    for (int p = 0; p < RP; p++) {
        float *c0 = C + (size_t)(2 * p) * ldc, *c1 = c0 + ldc;
        q8_store4(c0, vaddq_f32(vcombine_f32(vget_low_f32(s[p][0]), vget_low_f32(s[p][1])), bias), n, n1);
        q8_store4(c1, vaddq_f32(vcombine_f32(vget_high_f32(s[p][0]), vget_high_f32(s[p][1])), bias), n, n1);
    }
}

/* 2 RP rows of A against B rows [n0, n1), four at a time. */
SOTTO__INLINE void mm_rows(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                           const float *bias, float *C, size_t ldc, int n0, int n1, int nb, const int RP)
{
    for (int n = n0; n < n1; n += 4) {
        const sotto__block_q8_0 *b[4];
        q8_cols(B, ldb, n, n1, b);
        mm_tile(A, lda, b, nb, q8_bias4(bias, n, n1), C, ldc, n, n1, RP);
    }
}

void sotto__matmul_q8_neon_i8mm(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                                const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    const int nb = K / SOTTO__QK8_0, panel = q8_panel_rows(nb);
    for (int n0 = 0; n0 < N; n0 += panel) {
        int n1 = n0 + panel < N ? n0 + panel : N, m = 0;
        for (; m + 8 <= M; m += 8) mm_rows(A + m * lda, lda, B, ldb, bias, C + m * ldc, ldc, n0, n1, nb, 4);
        const sotto__block_q8_0 *a = A + m * lda;
        float *c = C + m * ldc;
        int pairs = (M - m) / 2;
        if (pairs == 3) mm_rows(a, lda, B, ldb, bias, c, ldc, n0, n1, nb, 3);
        if (pairs == 2) mm_rows(a, lda, B, ldb, bias, c, ldc, n0, n1, nb, 2);
        if (pairs == 1) mm_rows(a, lda, B, ldb, bias, c, ldc, n0, n1, nb, 1);
        if ((M - m) % 2) q8_block_dot(A, lda, B, ldb, bias, C, ldc, M - 1, M, n0, n1, nb);
    }
}
