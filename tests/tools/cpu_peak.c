/* cpu_peak — what one core of this CPU can do at most, to read kernel_bench against: the
 * FMA's f32 rate and the rate of the AVX2 set's q8_0 product step (vpsignb, vpmaddubsw,
 * vpmaddwd, vpaddd: 32 int8 products), each on 10 independent chains, thread CPU time,
 * the best of 3 passes. Where the two are equal (AMD Zen 3 runs both integer multiplies
 * on one pipe) the q8_0 GEMM cannot beat the f32 one on arithmetic, only on the bytes it
 * reads. x86-64 only (built everywhere; elsewhere it says so).
 *
 *   build/tests/cpu_peak */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

enum { CHAINS = 10 };
static const long ROUNDS = 20000000;

/* GFLOP/s of ROUNDS x CHAINS ymm FMAs (16 flops each). */
__attribute__((target("avx2,fma"))) static double fma_peak(float *sink)
{
    __m256 a[CHAINS], x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
    for (int i = 0; i < CHAINS; i++) a[i] = _mm256_set1_ps(1.0f + (float)i * 1e-7f);
    double best = 1e30;
    for (int p = 0; p < 3; p++) {
        double t0 = cpu_s();
        for (long r = 0; r < ROUNDS; r++) {
#pragma GCC unroll 10
            for (int j = 0; j < CHAINS; j++) a[j] = _mm256_fmadd_ps(a[j], x, y);
        }
        double dt = cpu_s() - t0;
        if (dt < best) best = dt;
    }
    __m256 s = a[0];
    for (int i = 1; i < CHAINS; i++) s = _mm256_add_ps(s, a[i]);
    _mm256_storeu_ps(sink, s);
    return (double)ROUNDS * CHAINS * 16 / best * 1e-9;
}

/* G int8 products (x2: ops) per second of ROUNDS x CHAINS q8_0 steps of 32 products. */
__attribute__((target("avx2"))) static double int8_peak(int *sink)
{
    __m256i b[CHAINS], u = _mm256_set1_epi8(3), one = _mm256_set1_epi16(1);
    for (int i = 0; i < CHAINS; i++) b[i] = _mm256_set1_epi8((char)i);
    double best = 1e30;
    for (int p = 0; p < 3; p++) {
        double t0 = cpu_s();
        for (long r = 0; r < ROUNDS; r++) {
#pragma GCC unroll 10
            for (int j = 0; j < CHAINS; j++)
                b[j] = _mm256_add_epi32(b[j],
                                        _mm256_madd_epi16(_mm256_maddubs_epi16(u, _mm256_sign_epi8(b[j], u)), one));
        }
        double dt = cpu_s() - t0;
        if (dt < best) best = dt;
    }
    __m256i s = b[0];
    for (int i = 1; i < CHAINS; i++) s = _mm256_add_epi32(s, b[i]);
    _mm256_storeu_si256((__m256i *)sink, s);
    return (double)ROUNDS * CHAINS * 64 / best * 1e-9;
}

int main(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        fprintf(stderr, "cpu_peak: this CPU has no AVX2 + FMA\n");
        return 1;
    }
    float fs[8];
    int is[8];
    double f = fma_peak(fs), q = int8_peak(is);
    printf("f32 FMA (ymm): %.1f GFLOP/s\nq8_0 step on AVX2 (vpsignb, vpmaddubsw, vpmaddwd, vpaddd): %.1f Gop/s "
           "(%.2fx the FMA)\n", f, q, q / f);
    return fs[0] == 12345.0f && is[0] == 12345; /* keeps the chains' results alive */
}
#else
int main(void)
{
    fprintf(stderr, "cpu_peak: x86-64 only\n");
    return (int)(cpu_s() < 0);
}
#endif
