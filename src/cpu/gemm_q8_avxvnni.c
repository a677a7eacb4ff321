/* gemm_q8_avxvnni.c — the q8_0 x q8_0 matmul of the avx_vnni set (AVX2 + AVX-VNNI:
 * VEX-encoded vpdpbusd on ymm, Alder Lake and later, Zen 5), compiled with those flags
 * for this file only: the kernels of gemm_q8_body.h, the reference's sums bit for bit. */
#define Q8_NAME(x) x##_avxvnni
#define Q8_DPBUSD(acc, u, s) _mm256_dpbusd_avx_epi32(acc, u, s)
#include "gemm_q8_body.h"
