/* row_avx2.c — the avx2 and avx_vnni sets' row math (backend_row.h, the op table's
 * row_max and row_exp_sum on the CPU): 8 lanes at a time in functions built for AVX2
 * (chosen at run time with the set; no FMA: the products and sums stay apart), then the
 * 4-lane groups and tail every backend shares, so every width gives the same bits
 * (test_logits). A search step takes the log-sum-exp of every row of logits (51864
 * values) and its maximum, and sampling their exponentials, on the host. */
#include <math.h>

#include "../backend_row.h"
#include "kernels.h"

typedef float v8f __attribute__((vector_size(32), aligned(4)));
typedef int32_t v8i __attribute__((vector_size(32)));
SOTTO__DEFINE_ROW_LANES(avx2, v8f, v8i, 8, __attribute__((target("avx2"))))
