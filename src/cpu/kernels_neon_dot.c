/* kernels_neon_dot.c — the int8 kernels of the neon_dot set: ARMv8.2 dot products (sdot,
 * FEAT_DotProd), four int8 products summed into each int32 lane by one instruction. Only
 * this file is compiled with -march=armv8.2-a+dotprod (the binary stays portable) and
 * kernels.c calls it only where the CPU reports HWCAP_ASIMDDP. The tiles are int8_neon.h's:
 * the scalar reference's bits. */
#include <arm_neon.h>

#include "kernels.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "kernels_neon_dot.c needs -march=armv8.2-a+dotprod (CMakeLists.txt sets it for this file)"
#endif

static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b) { return vdotq_s32(acc, a, b); }

#include "int8_neon.h"

void sotto__matmul_q8_neon_dot(const sotto__block_q8_0 *A, size_t lda, const sotto__block_q8_0 *B, size_t ldb,
                               const float *bias, float *C, size_t ldc, int M, int N, int K)
{
    q8_matmul_dot(A, lda, B, ldb, bias, C, ldc, M, N, K);
}

void sotto__scores_p5_neon_dot(const int8_t *a, const float *d, const float *g, const uint8_t *rows, float *u, int N,
                               int K)
{
    p5_scores(a, d, g, rows, u, N, K);
}
