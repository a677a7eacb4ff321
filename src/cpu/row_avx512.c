/* row_avx512.c — the avx512 set's row math (backend_row.h, the op table's row_max and
 * row_exp_sum on the CPU): 16 lanes at a time in functions built for AVX-512 F alone
 * (chosen at run time with the set), then the 4-lane groups and tail every backend
 * shares, so both widths give the same bits (test_logits). A search step takes the
 * log-sum-exp of every row of logits, 51864 values, and its maximum, and sampling their
 * exponentials, on the host beside the decoder. */
#include <math.h>

#include "../backend_row.h"
#include "kernels.h"

typedef float v16f __attribute__((vector_size(64), aligned(4)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef double v4d __attribute__((vector_size(32)));
#define AVX512 __attribute__((target("avx512f")))
SOTTO__DEFINE_EXP(exp16, v16f, v16i, AVX512)

AVX512 static int exp_groups16(const float *x, int n, float m, float scale, float *w, double acc[4])
{
    v4d a = {acc[0], acc[1], acc[2], acc[3]};
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        v16f e = exp16((*(const v16f *)(x + i) - m) * scale);
        if (w) *(v16f *)(w + i) = e;
        a += __builtin_convertvector(__builtin_shufflevector(e, e, 0, 1, 2, 3), v4d);
        a += __builtin_convertvector(__builtin_shufflevector(e, e, 4, 5, 6, 7), v4d);
        a += __builtin_convertvector(__builtin_shufflevector(e, e, 8, 9, 10, 11), v4d);
        a += __builtin_convertvector(__builtin_shufflevector(e, e, 12, 13, 14, 15), v4d);
    }
    acc[0] = a[0], acc[1] = a[1], acc[2] = a[2], acc[3] = a[3];
    return i;
}

AVX512 static float max_groups16(const float *x, int *i, int n, float m)
{
    v16f v = (v16f){0} + m;
    for (; *i + 16 <= n; *i += 16) SOTTO__VMAX(v16i, v, *(const v16f *)(x + *i));
    for (int l = 0; l < 16; l++) m = v[l] > m ? v[l] : m;
    return m;
}

float sotto__row_max_avx512(const float *x, int n)
{
    int i = 0;
    float m = max_groups16(x, &i, n, -INFINITY);
    return sotto__row_max_from(x, i, n, m);
}

double sotto__row_exp_sum_avx512(const float *x, int n, float m, float scale, float *w)
{
    double acc[4] = {0};
    int i = exp_groups16(x, n, m, scale, w, acc);
    return sotto__row_exp_sum_from(x, i, n, m, scale, w, acc);
}
