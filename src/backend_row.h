/* backend_row.h — the host row math of a row of logits read back (the op table's
 * row_max and row_exp_sum slots): e^x on the compiler's vector extension, the 4-lane
 * groups every backend may fill those slots with (backend.c), and the macros a backend's
 * wider lanes are built from, so that every width gives the same bits. */
#ifndef SOTTO_BACKEND_ROW_H
#define SOTTO_BACKEND_ROW_H

#include <stdint.h>

typedef struct sotto__backend sotto__backend;

/* Both widths do the same operations on each value (no fused multiply-adds: C11 and the
 * pragma below keep the products and sums apart), and the sums of the log-sum-exp go to
 * the same four accumulators by index mod 4 in the same order. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* e^x for x <= 0 to about 2 ulp (Cody-Waite reduction by ln 2, the Taylor polynomial of
 * degree 6 on [-ln2/2, ln2/2], whose remainder is under 1.2e-7); below -87 (e^x under
 * the smallest normal float, -inf included) exactly 0. VF a float vector type, VI the
 * int32 one of its width, ATTR a target attribute or nothing. */
#define SOTTO__DEFINE_EXP(NAME, VF, VI, ATTR)                                                 \
    ATTR static inline VF NAME(VF x)                                                          \
    {                                                                                         \
        VI tiny = x < -87.0f;                                                                 \
        VF floor = (VF){0} - 87.0f;                                                           \
        x = (VF)(((VI)x & ~tiny) | ((VI)floor & tiny));                                       \
        VF k = x * 1.44269504f + 12582912.0f; /* round to nearest by the 1.5 * 2^23 bias */   \
        k -= 12582912.0f;                                                                     \
        VF r = x - k * 0.693145751953125f - k * 1.42860682030941723e-6f;                      \
        VF p = r * (1.0f / 720) + 1.0f / 120;                                                 \
        p = p * r + 1.0f / 24;                                                                \
        p = p * r + 1.0f / 6;                                                                 \
        p = p * r + 0.5f;                                                                     \
        p = p * r + 1.0f;                                                                     \
        p = p * r + 1.0f;                                                                     \
        VI e = (__builtin_convertvector(k, VI) + 127) << 23;                                  \
        return (VF)((VI)(p * (VF)e) & ~tiny);                                                 \
    }

/* The larger of the lanes of M and X, lane by lane (NaN in X never taken). */
#define SOTTO__VMAX(VI, m, x) (m) = (__typeof__(m))((((VI)(x)) & ((x) > (m))) | (((VI)(m)) & ~((x) > (m))))

/* A kernel set's row math on W-lane vectors (VF floats, VI int32s, W a multiple of 4,
 * ATTR its target attribute): float sotto__row_max_SUFFIX(x, n) and double
 * sotto__row_exp_sum_SUFFIX(x, n, m, scale, w), the op table's slots, whose W-lane groups
 * add each group's terms to the four accumulators in index order, then pass what they
 * left to the 4-lane code below: every width's bits are the 4 lanes'. */
typedef double sotto__v4d __attribute__((vector_size(32)));
#define SOTTO__DEFINE_ROW_LANES(SUFFIX, VF, VI, W, ATTR)                                       \
    SOTTO__DEFINE_EXP(exp_##SUFFIX, VF, VI, ATTR)                                             \
    ATTR static int exp_groups_##SUFFIX(const float *x, int n, float m, float scale, float *w, \
                                        double acc[4])                                        \
    {                                                                                         \
        sotto__v4d a = {acc[0], acc[1], acc[2], acc[3]};                                      \
        int i = 0;                                                                            \
        for (; i + (W) <= n; i += (W)) {                                                      \
            VF e = exp_##SUFFIX((*(const VF *)(x + i) - m) * scale);                          \
            if (w) *(VF *)(w + i) = e;                                                        \
            for (int q = 0; q < (W); q += 4) a += (sotto__v4d){e[q], e[q + 1], e[q + 2], e[q + 3]}; \
        }                                                                                     \
        acc[0] = a[0], acc[1] = a[1], acc[2] = a[2], acc[3] = a[3];                           \
        return i;                                                                             \
    }                                                                                         \
    ATTR static float max_groups_##SUFFIX(const float *x, int *i, int n, float m)             \
    {                                                                                         \
        VF v = (VF){0} + m;                                                                   \
        for (; *i + (W) <= n; *i += (W)) SOTTO__VMAX(VI, v, *(const VF *)(x + *i));           \
        for (int l = 0; l < (W); l++) m = v[l] > m ? v[l] : m;                                \
        return m;                                                                             \
    }                                                                                         \
    float sotto__row_max_##SUFFIX(const float *x, int n)                                      \
    {                                                                                         \
        int i = 0;                                                                            \
        float m = max_groups_##SUFFIX(x, &i, n, -INFINITY);                                   \
        return sotto__row_max_from(x, i, n, m);                                               \
    }                                                                                         \
    double sotto__row_exp_sum_##SUFFIX(const float *x, int n, float m, float scale, float *w) \
    {                                                                                         \
        double acc[4] = {0};                                                                  \
        int i = exp_groups_##SUFFIX(x, n, m, scale, w, acc);                                  \
        return sotto__row_exp_sum_from(x, i, n, m, scale, w, acc);                            \
    }

/* The largest of M and X[I .. n), four at a time then one by one (NaN skipped), of the
 * row X[0 .. n): a zero result is taken again by a scalar pass over the whole row, for the
 * sign of the zero it meets first. A wider backend passes what its lanes left. */
float sotto__row_max_from(const float *x, int i, int n, float m);

/* ACC[i mod 4] += e^((X[i] - M) SCALE) for I <= i < n four at a time (in order; W[i] gets
 * each term as float when W), then the tail one by one in double; returns the total sum. */
double sotto__row_exp_sum_from(const float *x, int i, int n, float m, float scale, float *w, double acc[4]);

/* The op table's slots on the 4-lane groups alone (BE unused), for a backend with no
 * wider host code (Vulkan reads its logits back and runs these). */
float sotto__row_max(sotto__backend *be, const float *x, int n);
double sotto__row_exp_sum(sotto__backend *be, const float *x, int n, float m, float scale, float *w);

/* The host_for slot on the caller's thread alone, items in order (BE unused). */
void sotto__host_for(sotto__backend *be, void (*fn)(void *arg, int i), void *arg, int n);

#endif
