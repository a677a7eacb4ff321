/* row_avx512.c — the avx512 set's row math (backend_row.h, the op table's row_max and
 * row_exp_sum on the CPU): 16 lanes at a time in functions built for AVX-512 F alone
 * (chosen at run time with the set), then the 4-lane groups and tail every backend
 * shares, so every width gives the same bits (test_logits). A search step takes the
 * log-sum-exp of every row of logits, 51864 values, and its maximum, and sampling their
 * exponentials, on the host beside the decoder. */
#include <math.h>

#include "../backend_row.h"
#include "kernels.h"

typedef float v16f __attribute__((vector_size(64), aligned(4)));
typedef int32_t v16i __attribute__((vector_size(64)));
SOTTO__DEFINE_ROW_LANES(avx512, v16f, v16i, 16, __attribute__((target("avx512f"))))
