/* attn_avx512.c — the encoder attention's kernels on 512-bit registers, compiled with
 * AVX-512 F/BW/VL (+ FMA) for this file only.
 *
 * matmul_nn, C = A B (Q K^T on keys stored transposed, and P V). The 12x32 micro-kernel
 * keeps 24 accumulators in registers; per step of K it loads 32 values of B and
 * broadcasts 12 of A (24 FMAs for 14 loads, where the 6x16 AVX2 kernel has 12 for 8), so
 * P V, whose B rows are 64 floats of a strided value matrix, waits less on the cache: on
 * the development EPYC (Zen 4, one core) one head of the tiny encoder's attention went
 * from 3.17 to 2.80 ms for Q K^T and 3.52 to 2.61 ms for P V. Each output is summed as in
 * the AVX2 kernel (k = 0, 1, ... one FMA each), so both sets give the same bits. Fewer
 * rows than one tile (the decoder's beams: P V over a window's values, [5, 1500] x [1500,
 * 64]) take up to 6 rows by 64 columns in one pass down B (one core, a head in L2: 17.1 us
 * on the AVX2 kernel's streamed rows, 5.7 here; from memory 21-24 -> 13.2); a single row
 * goes to the AVX2 kernel.
 * The linear layers' GEMM is gemm_avx512.c's (on Zen 4 it measured no faster than the
 * AVX2 one, 95-104 against 101-105 GFLOP/s; on an Intel Xeon with two 512-bit FMA units
 * 1.5-1.9x).
 *
 * softmax: kernels_avx2.c's on 16 lanes (the same exp polynomial, lane for lane, and the
 * same order of additions, so the same bits), 24 rows of 1500 in 13.1 us against 18.4
 * (12.6 against 16.8 since both find the maximum in four chains). */
#include <immintrin.h>
#include <math.h>
#include <stdbool.h>

#include "kernels.h"
#include "micro_avx512.h"

#define INLINE static inline __attribute__((always_inline))

enum { MR = SOTTO__ZMM_MR, NR = SOTTO__ZMM_NR };

/* The micro-kernel for any ROWS (1..12) and COLS (1..32), from C (ACC) or from 0. */
static void micro_any(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int rows,
                      int cols, int K, bool acc)
{
#define CASE(R)                                                                                       \
    case R:                                                                                           \
        if (cols == NR) sotto__micro_12x32(A, lda, B, ldb, C, ldc, R, true, true, NR, K, NULL, acc);   \
        else sotto__micro_12x32(A, lda, B, ldb, C, ldc, R, false, false, cols, K, NULL, acc);          \
        break;
    switch (rows) {
        CASE(12) CASE(11) CASE(10) CASE(9) CASE(8) CASE(7) CASE(6) CASE(5) CASE(4) CASE(3) CASE(2) CASE(1)
    }
#undef CASE
}

/* C[ROWS, COLS] (+)= A[ROWS, K] B[K, COLS] for ROWS <= 6 and COLS <= 64: the decoder's few
 * rows over one head's 64 values (P V) in one pass down B, 24 accumulators at most; each
 * output one chain in k order from C (ACC) or 0, as every matmul_nn. */
INLINE void rows_x64(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, const int rows,
                     int cols, int K, bool acc)
{
    __mmask16 m[4];
    for (int j = 0; j < 4; j++) m[j] = sotto__zmm_lanes(cols - 16 * j);
    __m512 c[6][4];
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++)
            c[i][j] = acc ? _mm512_maskz_loadu_ps(m[j], C + i * ldc + 16 * j) : _mm512_setzero_ps();
    for (int k = 0; k < K; k++) {
        const float *b = B + (size_t)k * ldb;
        if (k + 8 < K) /* 8 rows on (one head of a window's values from memory: 14.6 -> 13.2 us) */
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++) _mm_prefetch((const char *)(b + 8 * ldb + 16 * j), _MM_HINT_T0);
        __m512 x[4];
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) x[j] = _mm512_maskz_loadu_ps(m[j], b + 16 * j);
#pragma GCC unroll 6
        for (int i = 0; i < rows; i++) {
            const __m512 a = _mm512_set1_ps(A[i * lda + k]);
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++) c[i][j] = _mm512_fmadd_ps(a, x[j], c[i][j]);
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) _mm512_mask_storeu_ps(C + i * ldc + 16 * j, m[j], c[i][j]);
}

/* 2 ..< MR rows: groups of up to 6 rows, 64 columns at a time. */
static void rows_nn(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M, int N, int K,
                    bool acc)
{
    for (int m = 0; m < M; m += 6)
        for (int n = 0; n < N; n += 64) {
            const float *a = A + (size_t)m * lda;
            float *c = C + (size_t)m * ldc + n;
            int rows = M - m < 6 ? M - m : 6, cols = N - n < 64 ? N - n : 64;
            switch (rows) {
            case 6: rows_x64(a, lda, B + n, ldb, c, ldc, 6, cols, K, acc); break;
            case 5: rows_x64(a, lda, B + n, ldb, c, ldc, 5, cols, K, acc); break;
            case 4: rows_x64(a, lda, B + n, ldb, c, ldc, 4, cols, K, acc); break;
            case 3: rows_x64(a, lda, B + n, ldb, c, ldc, 3, cols, K, acc); break;
            case 2: rows_x64(a, lda, B + n, ldb, c, ldc, 2, cols, K, acc); break;
            default: rows_x64(a, lda, B + n, ldb, c, ldc, 1, cols, K, acc); break;
            }
        }
}

static void nn_any(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M, int N, int K,
                   bool acc)
{
    if (M == 1) {
        (acc ? sotto__matmul_nn_acc_avx2 : sotto__matmul_nn_avx2)(A, lda, B, ldb, C, ldc, M, N, K);
        return;
    }
    if (M < MR) {
        rows_nn(A, lda, B, ldb, C, ldc, M, N, K, acc);
        return;
    }
    for (int n = 0; n < N; n += NR) {
        int cols = N - n < NR ? N - n : NR;
        for (int m = 0; m < M; m += MR)
            micro_any(A + (size_t)m * lda, lda, B + n, ldb, C + (size_t)m * ldc + n, ldc, M - m < MR ? M - m : MR,
                      cols, K, acc);
    }
}

void sotto__matmul_nn_avx512(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                             int N, int K)
{
    nn_any(A, lda, B, ldb, C, ldc, M, N, K, false);
}

void sotto__matmul_nn_acc_avx512(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int M,
                                 int N, int K)
{
    nn_any(A, lda, B, ldb, C, ldc, M, N, K, true);
}

/* e^x as kernels_avx2.c's exp256, lane for lane: n = round(x log2 e), r = x - n ln 2 (in
 * two parts), its polynomial in r, times 2^n; 0 below -87.3. */
static inline __m512 exp512(__m512 x)
{
    const __m512 lo = _mm512_set1_ps(-87.3f);
    __mmask16 under = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
    x = _mm512_max_ps(x, lo);
    x = _mm512_min_ps(x, _mm512_set1_ps(88.3f));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_maskz_mul_ps((__mmask16)~under, p, _mm512_castsi512_ps(e));
}

/* The sum of the exponentials goes through one 8-lane accumulator, the low half of each
 * 16 values then the high half, and the AVX2 kernel's horizontal sum: the same additions
 * in the same order as softmax_avx2 (a masked-off half adds +0, which changes nothing). */
static inline void add_halves(__m256 *acc, __m512 v)
{
    *acc = _mm256_add_ps(*acc, _mm512_castps512_ps256(v));
    *acc = _mm256_add_ps(*acc, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

void sotto__softmax_avx512(float *x, int n, int visible, float scale)
{
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    /* the maximum in four chains, as softmax_avx2 (24 rows of 1500: 13.8 -> 12.6 us) */
    __m512 mx = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
    int i = 0;
    for (; i + 64 <= visible; i += 64) {
        mx = _mm512_max_ps(mx, _mm512_loadu_ps(x + i)), m1 = _mm512_max_ps(m1, _mm512_loadu_ps(x + i + 16));
        m2 = _mm512_max_ps(m2, _mm512_loadu_ps(x + i + 32)), m3 = _mm512_max_ps(m3, _mm512_loadu_ps(x + i + 48));
    }
    mx = _mm512_max_ps(_mm512_max_ps(mx, m1), _mm512_max_ps(m2, m3));
    for (; i + 16 <= visible; i += 16) mx = _mm512_max_ps(mx, _mm512_loadu_ps(x + i));
    __mmask16 tail = sotto__zmm_lanes(visible - i);
    if (i < visible) mx = _mm512_mask_max_ps(mx, tail, mx, _mm512_maskz_loadu_ps(tail, x + i));
    __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(mx)), sc = _mm512_set1_ps(scale);
    __m256 acc = _mm256_setzero_ps();
    for (i = 0; i + 16 <= visible; i += 16) {
        __m512 v = exp512(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), m), sc));
        _mm512_storeu_ps(x + i, v);
        add_halves(&acc, v);
    }
    if (i < visible) {
        __m512 v = exp512(_mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), m), sc));
        v = _mm512_maskz_mov_ps(tail, v);
        _mm512_mask_storeu_ps(x + i, tail, v);
        add_halves(&acc, v);
    }
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    __m512 inv = _mm512_set1_ps(1.0f / _mm_cvtss_f32(h));
    for (i = 0; i + 16 <= visible; i += 16) _mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), inv));
    if (i < visible) _mm512_mask_storeu_ps(x + i, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, x + i), inv));
    for (i = visible; i < n; i++) x[i] = 0.0f;
}
