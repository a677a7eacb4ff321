/* kernel_bench — GFLOP/s of the linear layers' kernels per kernel set, on Whisper's
 * shapes, one core, thread CPU time (so other processes on the machine cost it little).
 *
 *   build/tests/kernel_bench [MODEL]     MODEL: tiny (d 384, the default) or base (d 512)
 *
 * Rows: the encoder's linear layers (M = 750, the rows one of 2 threads takes), the
 * beams' and greedy decoder's layers and the vocabulary projection (M = 5 and 1), and the
 * batched decoder's logits (M = 40: 8 chunks x 5 beams). Columns: every kernel set this
 * CPU runs, for B in f32, f16 and q8_0 (A quantised as the engine does). Decoder rows
 * read B cold, as a step does after the rest of the model went through the cache: each
 * call takes the next of enough copies to fill 160 MB. Each figure is the best of 5
 * passes. Prints one markdown table. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/kernels.h"
#include "quant.h"

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct shape {
    const char *what;
    int M, N, K;
} shape;

enum { F32, F16, Q8, N_TYPES };
static const char *const type_name[N_TYPES] = {"f32", "f16", "q8_0"};

/* The best seconds of one call of set K's matmul of type T on shape S. */
static double measure(const sotto__kernels *k, int t, const shape *s, const float *A, const sotto__block_q8_0 *Aq,
                      void *const *B, int copies, float *C)
{
    double best = 1e30;
    for (int pass = 0; pass < 5; pass++) {
        double t0 = cpu_s();
        for (int c = 0; c < copies; c++) {
            if (t == F32) k->matmul(A, s->K, B[c], s->K, NULL, C, s->N, s->M, s->N, s->K);
            else if (t == F16) k->matmul_f16(A, s->K, B[c], s->K, NULL, C, s->N, s->M, s->N, s->K);
            else k->matmul_q8(Aq, s->K / 32, B[c], s->K / 32, NULL, C, s->N, s->M, s->N, s->K);
        }
        double dt = (cpu_s() - t0) / copies;
        if (dt < best) best = dt;
    }
    return best;
}

int main(int argc, char **argv)
{
    const int d = argc > 1 && strcmp(argv[1], "base") == 0 ? 512 : 384;
    if (argc > 1 && strcmp(argv[1], "base") != 0 && strcmp(argv[1], "tiny") != 0) {
        fprintf(stderr, "usage: kernel_bench [tiny|base]\n");
        return 1;
    }
    const shape shapes[] = {
        {"encoder q/k/v/out", 750, d, d}, {"encoder fc1", 750, 4 * d, d}, {"encoder fc2", 750, d, 4 * d},
        {"beams fc1", 5, 4 * d, d},       {"beams fc2", 5, d, 4 * d},      {"beams logits", 5, 51864, d},
        {"greedy fc1", 1, 4 * d, d},      {"greedy logits", 1, 51864, d},  {"batch 8x5 logits", 40, 51864, d},
    };
    const sotto__kernels *sets[16];
    int n_sets = 0;
    for (int i = 0; sotto__kernel_sets[i]; i++) {
        const sotto__kernels *k = sotto__kernels_by_name(sotto__kernel_sets[i]);
        if (k && strcmp(k->name, "scalar") != 0) sets[n_sets++] = k;
    }
    printf("| M x N x K (d = %d) | what |", d);
    for (int i = 0; i < n_sets; i++)
        for (int t = 0; t < N_TYPES; t++) printf(" %s %s |", sets[i]->name, type_name[t]);
    printf("\n|---|---|");
    for (int i = 0; i < n_sets * N_TYPES; i++) printf("---|");
    printf("\n");
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const shape *s = &shapes[si];
        size_t nk = (size_t)s->N * s->K;
        int copies = s->M >= 24 ? 1 : (int)(160e6 / (4.0 * (double)nk)) + 1;
        float *A = malloc((size_t)s->M * s->K * sizeof *A), *C = malloc((size_t)s->M * s->N * sizeof *C);
        float *Bf = malloc(nk * sizeof *Bf);
        sotto__block_q8_0 *Aq = malloc((size_t)s->M * s->K / 32 * sizeof *Aq);
        void **B[N_TYPES];
        if (!A || !C || !Bf || !Aq) return 2;
        unsigned seed = 7;
        for (size_t i = 0; i < (size_t)s->M * s->K; i++) A[i] = (float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1;
        for (size_t i = 0; i < nk; i++) Bf[i] = (float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1;
        sotto__quantize(SOTTO_TYPE_Q8_0, A, Aq, (int64_t)s->M * s->K);
        const size_t bytes[N_TYPES] = {nk * 4, nk * 2, nk / 32 * sizeof(sotto__block_q8_0)};
        const sotto_type st[N_TYPES] = {SOTTO_TYPE_F32, SOTTO_TYPE_F16, SOTTO_TYPE_Q8_0};
        for (int t = 0; t < N_TYPES; t++) {
            B[t] = malloc((size_t)copies * sizeof *B[t]);
            if (!B[t]) return 2;
            for (int c = 0; c < copies; c++) {
                if (!(B[t][c] = malloc(bytes[t]))) return 2;
                if (t == F32) memcpy(B[t][c], Bf, bytes[t]);
                else sotto__quantize(st[t], Bf, B[t][c], (int64_t)nk);
            }
        }
        printf("| %d x %d x %d | %s |", s->M, s->N, s->K, s->what);
        for (int i = 0; i < n_sets; i++)
            for (int t = 0; t < N_TYPES; t++) {
                double sec = measure(sets[i], t, s, A, Aq, B[t], copies, C);
                printf(" %.0f |", 2.0 * s->M * (double)nk / sec / 1e9);
            }
        printf("\n");
        fflush(stdout);
        for (int t = 0; t < N_TYPES; t++) {
            for (int c = 0; c < copies; c++) free(B[t][c]);
            free(B[t]);
        }
        free(A), free(C), free(Bf), free(Aq);
    }
    return 0;
}
