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

#endif
