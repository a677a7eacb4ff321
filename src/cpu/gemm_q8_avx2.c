/* gemm_q8_avx2.c — the q8_0 x q8_0 matmul of the avx2 set (AVX2 + F16C, compiled with
 * those flags for this file only): vpmaddwd (GEMM) and vpmaddubsw (GEMV) in the kernels of
 * gemm_q8_body.h, the reference's sums bit for bit. */
#define Q8_NAME(x) x##_avx2
#include "gemm_q8_body.h"
