/* kernels.c — picks the kernel set once from the CPU's features (no -march=native in the
 * build, so binaries move between machines). */
#include "kernels.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* F16C through CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports lacks it. */
static int has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
}
#endif

static const sotto__kernels scalar = {"scalar", sotto__matmul_ref, sotto__matmul_nn_ref, sotto__matmul_nn_f16_ref,
                                      sotto__exp_sum_ref,
                                      sotto__gelu_ref, sotto__quantize_q8_ref, sotto__matmul_f16_ref,
                                      sotto__matmul_q8_ref};
#if defined(__x86_64__) || defined(__i386__)
static const sotto__kernels avx2 = {"avx2", sotto__matmul_avx2, sotto__matmul_nn_avx2, sotto__matmul_nn_f16_avx2,
                                    sotto__exp_sum_avx2,
                                    sotto__gelu_avx2, sotto__quantize_q8_avx2, sotto__matmul_f16_avx2,
                                    sotto__matmul_q8_avx2};
#endif

const sotto__kernels *sotto__kernels_by_name(const char *name)
{
    if (strcmp(name, "scalar") == 0) return &scalar;
#if defined(__x86_64__) || defined(__i386__)
    if (strcmp(name, "avx2") == 0) {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c())
            return &avx2;
    }
#endif
    return NULL;
}

const sotto__kernels *sotto__kernels_get(void)
{
    const char *force = getenv("SOTTO_KERNELS");
    if (force) {
        const sotto__kernels *k = sotto__kernels_by_name(force);
        if (k) return k;
    }
    const sotto__kernels *k = sotto__kernels_by_name("avx2");
    return k ? k : &scalar;
}
