/* kernels.c — picks the kernel set once from the CPU's features (no -march=native in the
 * build, so binaries move between machines). */
#include "kernels.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* F16C through CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports lacks it. */
static int has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
}

/* AVX-512 F, BW, VL and VNNI (CPUID leaf 7), with the OS saving the opmask and zmm state
 * (XCR0 bits 1, 2, 5, 6, 7). */
static int has_avx512_vnni(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0; /* OSXSAVE */
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 0xe6) != 0xe6) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    unsigned need_b = 1u << 16 | 1u << 30 | 1u << 31; /* F, BW, VL */
    return (b & need_b) == need_b && (c & (1u << 11));
}

/* AVX-VNNI (CPUID leaf 7 subleaf 1, EAX bit 4): vpdpbusd on ymm with a VEX encoding. */
static int has_avx_vnni(void)
{
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4));
}

enum { X86_AVX2 = 1, X86_AVX512 = 2, X86_AVX_VNNI = 4 };

/* The sets this CPU runs, asked once (CPUID traps to the hypervisor in a VM: the logit
 * code asks for every row). */
static int x86_sets(void)
{
    static atomic_int cached = -1;
    int f = atomic_load_explicit(&cached, memory_order_relaxed);
    if (f < 0) {
        __builtin_cpu_init();
        f = 0;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c())
            f = X86_AVX2 | (has_avx512_vnni() ? X86_AVX512 : 0) | (has_avx_vnni() ? X86_AVX_VNNI : 0);
        atomic_store_explicit(&cached, f, memory_order_relaxed);
    }
    return f;
}
#endif

/* One table per set; every slot named (test_kernels checks that none is left empty). */
static const sotto__kernels scalar = {
    .name = "scalar", .matmul = sotto__matmul_ref, .matmul_nn = sotto__matmul_nn_ref, .matmul_nn_acc = sotto__matmul_nn_acc_ref,
    .matmul_nn_f16 = sotto__matmul_nn_f16_ref, .softmax = sotto__softmax_ref, .gelu = sotto__gelu_ref,
    .quantize_q8 = sotto__quantize_q8_ref, .matmul_f16 = sotto__matmul_f16_ref, .matmul_q8 = sotto__matmul_q8_ref,
    .to_f16 = sotto__to_f16_ref, .from_f16 = sotto__from_f16_ref, .scores_p5 = sotto__scores_p5_ref,
    .quantize_p5 = sotto__quantize_p5_ref, .row_max = sotto__row_max_ref, .row_exp_sum = sotto__row_exp_sum_ref,
    .gemm = sotto__matmul_ref, .gemm_f16 = sotto__matmul_f16_ref, .gemm_f16p = sotto__gemm_f16p_ref,
};
#if defined(__x86_64__) || defined(__i386__)
static const sotto__kernels avx2 = {
    .name = "avx2", .matmul = sotto__matmul_avx2, .matmul_nn = sotto__matmul_nn_avx2, .matmul_nn_acc = sotto__matmul_nn_acc_avx2,
    .matmul_nn_f16 = sotto__matmul_nn_f16_avx2, .softmax = sotto__softmax_avx2, .gelu = sotto__gelu_avx2,
    .quantize_q8 = sotto__quantize_q8_avx2, .matmul_f16 = sotto__matmul_f16_avx2, .matmul_q8 = sotto__matmul_q8_avx2,
    .to_f16 = sotto__to_f16_avx2, .from_f16 = sotto__from_f16_avx2, .scores_p5 = sotto__scores_p5_avx2,
    .quantize_p5 = sotto__quantize_p5_avx2, .row_max = sotto__row_max_avx2, .row_exp_sum = sotto__row_exp_sum_avx2,
    .gemm = sotto__gemm_f32_avx2, .gemm_f16 = sotto__gemm_f16_avx2,
    .gemm_f16p = sotto__gemm_f16p_avx2,
};
static const sotto__kernels avx_vnni = {
    .name = "avx_vnni", .matmul = sotto__matmul_avx2, .matmul_nn = sotto__matmul_nn_avx2, .matmul_nn_acc = sotto__matmul_nn_acc_avx2,
    .matmul_nn_f16 = sotto__matmul_nn_f16_avx2, .softmax = sotto__softmax_avx2, .gelu = sotto__gelu_avx2,
    .quantize_q8 = sotto__quantize_q8_avx2, .matmul_f16 = sotto__matmul_f16_avx2,
    .matmul_q8 = sotto__matmul_q8_avxvnni, .to_f16 = sotto__to_f16_avx2, .from_f16 = sotto__from_f16_avx2,
    .scores_p5 = sotto__scores_p5_avx2, .quantize_p5 = sotto__quantize_p5_avx2, .row_max = sotto__row_max_avx2,
    .row_exp_sum = sotto__row_exp_sum_avx2, .gemm = sotto__gemm_f32_avx2, .gemm_f16 = sotto__gemm_f16_avx2,
    .gemm_f16p = sotto__gemm_f16p_avx2,
};
static const sotto__kernels avx512 = {
    .name = "avx512", .matmul = sotto__matmul_avx512, .matmul_nn = sotto__matmul_nn_avx512, .matmul_nn_acc = sotto__matmul_nn_acc_avx512,
    .matmul_nn_f16 = sotto__matmul_nn_f16_avx2, .softmax = sotto__softmax_avx512, .gelu = sotto__gelu_avx2,
    .quantize_q8 = sotto__quantize_q8_avx2, .matmul_f16 = sotto__matmul_f16_avx512,
    .matmul_q8 = sotto__matmul_q8_avx512, .to_f16 = sotto__to_f16_avx2, .from_f16 = sotto__from_f16_avx2,
    .scores_p5 = sotto__scores_p5_avx512, .quantize_p5 = sotto__quantize_p5_avx2,
    .row_max = sotto__row_max_avx512, .row_exp_sum = sotto__row_exp_sum_avx512,
    .gemm = sotto__gemm_f32_avx512, .gemm_f16 = sotto__gemm_f16_avx512,
    .gemm_f16p = sotto__gemm_f16p_avx512,
};
#endif

/* kernels.h: the extension sets of AArch64 from Linux's hwcap bits. */
int sotto__arm_sets(unsigned long hwcap, unsigned long hwcap2)
{
    if (!(hwcap & SOTTO__HWCAP_ASIMDDP)) return 0;
    return SOTTO__ARM_DOT | (hwcap2 & SOTTO__HWCAP2_I8MM ? SOTTO__ARM_I8MM : 0);
}

#if defined(__aarch64__)
#if defined(__linux__)
#if defined(HWCAP_ASIMDDP)
_Static_assert(HWCAP_ASIMDDP == SOTTO__HWCAP_ASIMDDP, "Linux's HWCAP_ASIMDDP bit");
#endif
#if defined(HWCAP2_I8MM)
_Static_assert(HWCAP2_I8MM == SOTTO__HWCAP2_I8MM, "Linux's HWCAP2_I8MM bit");
#endif

/* The extension sets this CPU runs, asked of the kernel once. */
static int arm_sets(void)
{
    static atomic_int cached = -1;
    int f = atomic_load_explicit(&cached, memory_order_relaxed);
    if (f < 0) {
        f = sotto__arm_sets(getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
        atomic_store_explicit(&cached, f, memory_order_relaxed);
    }
    return f;
}
#else
static int arm_sets(void) { return 0; } /* no hwcaps to ask: the plain neon set */
#endif

static const sotto__kernels neon = {
    .name = "neon", .matmul = sotto__matmul_neon, .matmul_nn = sotto__matmul_nn_neon, .matmul_nn_acc = sotto__matmul_nn_acc_neon,
    .matmul_nn_f16 = sotto__matmul_nn_f16_neon, .softmax = sotto__softmax_neon, .gelu = sotto__gelu_neon,
    .quantize_q8 = sotto__quantize_q8_neon, .matmul_f16 = sotto__matmul_f16_neon, .matmul_q8 = sotto__matmul_q8_neon,
    .to_f16 = sotto__to_f16_neon, .from_f16 = sotto__from_f16_neon, .scores_p5 = sotto__scores_p5_neon,
    .quantize_p5 = sotto__quantize_p5_ref, .row_max = sotto__row_max_ref, .row_exp_sum = sotto__row_exp_sum_ref,
    .gemm = sotto__gemm_neon, .gemm_f16 = sotto__gemm_f16_neon,
};
static const sotto__kernels neon_dot = {
    .name = "neon_dot", .matmul = sotto__matmul_neon, .matmul_nn = sotto__matmul_nn_neon, .matmul_nn_acc = sotto__matmul_nn_acc_neon,
    .matmul_nn_f16 = sotto__matmul_nn_f16_neon, .softmax = sotto__softmax_neon, .gelu = sotto__gelu_neon,
    .quantize_q8 = sotto__quantize_q8_neon, .matmul_f16 = sotto__matmul_f16_neon,
    .matmul_q8 = sotto__matmul_q8_neon_dot, .to_f16 = sotto__to_f16_neon, .from_f16 = sotto__from_f16_neon,
    .scores_p5 = sotto__scores_p5_neon_dot, .quantize_p5 = sotto__quantize_p5_ref, .row_max = sotto__row_max_ref,
    .row_exp_sum = sotto__row_exp_sum_ref, .gemm = sotto__gemm_neon, .gemm_f16 = sotto__gemm_f16_neon,
};
static const sotto__kernels neon_i8mm = {
    .name = "neon_i8mm", .matmul = sotto__matmul_neon, .matmul_nn = sotto__matmul_nn_neon, .matmul_nn_acc = sotto__matmul_nn_acc_neon,
    .matmul_nn_f16 = sotto__matmul_nn_f16_neon, .softmax = sotto__softmax_neon, .gelu = sotto__gelu_neon,
    .quantize_q8 = sotto__quantize_q8_neon, .matmul_f16 = sotto__matmul_f16_neon,
    .matmul_q8 = sotto__matmul_q8_neon_i8mm, .to_f16 = sotto__to_f16_neon, .from_f16 = sotto__from_f16_neon,
    .scores_p5 = sotto__scores_p5_neon_dot, .quantize_p5 = sotto__quantize_p5_ref, .row_max = sotto__row_max_ref,
    .row_exp_sum = sotto__row_exp_sum_ref, .gemm = sotto__gemm_neon, .gemm_f16 = sotto__gemm_f16_neon,
};
#endif

/* NAME in any case (SOTTO_KERNELS=AVX2, as CT2_FORCE_CPU_ISA and MKL_ENABLE_INSTRUCTIONS
 * spell theirs) */
const sotto__kernels *sotto__kernels_by_name(const char *name)
{
    if (strcasecmp(name, "scalar") == 0) return &scalar;
#if defined(__x86_64__) || defined(__i386__)
    static const struct { const char *name; int need; const sotto__kernels *k; } x86[] = {
        {"avx2", X86_AVX2, &avx2}, {"avx_vnni", X86_AVX2 | X86_AVX_VNNI, &avx_vnni}, {"avx512", X86_AVX512, &avx512},
    };
    for (size_t i = 0; i < sizeof x86 / sizeof *x86; i++)
        if (strcasecmp(name, x86[i].name) == 0) return (x86_sets() & x86[i].need) == x86[i].need ? x86[i].k : NULL;
#endif
#if defined(__aarch64__)
    if (strcasecmp(name, "neon") == 0) return &neon; /* AdvSIMD: part of every AArch64 CPU */
    if (strcasecmp(name, "neon_dot") == 0) return arm_sets() & SOTTO__ARM_DOT ? &neon_dot : NULL;
    if (strcasecmp(name, "neon_i8mm") == 0) return arm_sets() & SOTTO__ARM_I8MM ? &neon_i8mm : NULL;
#endif
    return NULL;
}

const char *const sotto__kernel_sets[] = {"scalar", "avx2", "avx_vnni", "avx512", "neon", "neon_dot", "neon_i8mm", NULL};

const sotto__kernels *sotto__kernels_best(void)
{
    const sotto__kernels *k = sotto__kernels_by_name("avx512");
    if (!k) k = sotto__kernels_by_name("avx_vnni");
    if (!k) k = sotto__kernels_by_name("avx2");
    if (!k) k = sotto__kernels_by_name("neon_i8mm");
    if (!k) k = sotto__kernels_by_name("neon_dot");
    if (!k) k = sotto__kernels_by_name("neon");
    return k ? k : &scalar;
}

const sotto__kernels *sotto__kernels_get(void)
{
    const char *force = getenv("SOTTO_KERNELS");
    const sotto__kernels *k = force ? sotto__kernels_by_name(force) : NULL;
    return k ? k : sotto__kernels_best();
}

const char *sotto_kernels_name(void) { return sotto__kernels_get()->name; }
