/* test_vulkan_ops.c — every op of the Vulkan backend against the CPU backend on its
 * scalar reference kernels (SOTTO_KERNELS=scalar), through the same op table, on odd
 * shapes: f32 results within NMSE 1e-7 (sum of squared differences over the sum of
 * squares), f16 and q8_0 weights against the references on the same stored values,
 * the cross-attention K/V layouts and embeddings bit for bit, the argmax's tie rule, and
 * a planted command the validation layer rejects, which must reach sync (proof that the
 * layer and the messenger are on). Tensors above maxStorageBufferRange (a large-v3 f32
 * embedding: 265 MB) are bound in pieces.
 * Both kernel families run: the tiled ones of GPUs and the direct ones of software
 * devices (SOTTO_VK_KERNELS), each on a backend of its own.
 * usage: test_vulkan_ops [--device vulkan[:N]] [--kernels direct|tiled] [--bench] [--no-big] */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "vulkan/backend_vulkan.h"
#include "cpu/backend_cpu.h"
#include "cpu/kernels.h"
#include "quant.h"

static sotto__backend *cpu, *gpu;
static double worst_nmse[3]; /* per weight type: f32, f16, q8_0 */

static float rnd(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* One tensor on both backends. */
typedef struct pair {
    sotto__buf c, g;
    size_t bytes;
} pair;

static pair make(size_t bytes)
{
    pair p = {.bytes = bytes};
    sotto__err err = {0};
    CHECK(!cpu->ops->alloc(cpu, bytes, &p.c, &err) && !gpu->ops->alloc(gpu, bytes, &p.g, &err), "alloc: %s", err.msg);
    return p;
}

static pair upload(const void *host, size_t bytes)
{
    pair p = make(bytes);
    cpu->ops->write(cpu, p.c, host, bytes);
    gpu->ops->write(gpu, p.g, host, bytes);
    return p;
}

static pair rand_f32(size_t n, unsigned seed)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = rnd(&seed);
    pair p = upload(x, n * sizeof *x);
    free(x);
    return p;
}

/* Reads both copies; NMSE of the device's against the CPU's over N floats at OFF. */
static double nmse(pair p, size_t off, size_t n)
{
    float *a = malloc(n * 4), *b = malloc(n * 4);
    cpu->ops->read(cpu, a, sotto__buf_f32(p.c, off), n * 4);
    gpu->ops->read(gpu, b, sotto__buf_f32(p.g, off), n * 4);
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - b[i];
        num += d * d, den += (double)a[i] * a[i];
        if (d != d) num = INFINITY;
    }
    free(a), free(b);
    return den > 0 ? num / den : num;
}

static bool same_bytes(pair p, size_t bytes)
{
    unsigned char *a = malloc(bytes), *b = malloc(bytes);
    cpu->ops->read(cpu, a, p.c, bytes);
    gpu->ops->read(gpu, b, p.g, bytes);
    bool same = memcmp(a, b, bytes) == 0;
    free(a), free(b);
    return same;
}

static void synced(const char *what)
{
    sotto__err err = {0};
    sotto_status st = gpu->ops->sync(gpu, &err);
    CHECK(st == SOTTO_OK, "%s: sync failed: %s", what, err.msg);
}

/* A linear layer of TYPE, N x K, with a bias when BIAS, on both backends (the CPU's
 * host copy in *HOST, to free after the backends). */
static void make_linear(sotto_type type, int N, int K, bool bias, unsigned seed, sotto__blinear *lc, sotto__blinear *lg,
                        void **host, float **hbias)
{
    size_t bytes;
    sotto__type_bytes(type, (int64_t)N * K, &bytes);
    float *w = malloc((size_t)N * K * sizeof *w);
    for (size_t i = 0; i < (size_t)N * K; i++) w[i] = rnd(&seed) * 0.5f;
    if (type == SOTTO_TYPE_F16) w[1] = 3e-6f; /* a subnormal half */
    *host = malloc(bytes);
    sotto__quantize(type, w, *host, (int64_t)N * K);
    free(w);
    *hbias = NULL;
    if (bias) {
        *hbias = malloc((size_t)N * sizeof **hbias);
        for (int i = 0; i < N; i++) (*hbias)[i] = rnd(&seed);
    }
    sotto__linear l = {type, *host, *hbias, N, K};
    sotto__err err = {0};
    CHECK(!sotto__import_linear(cpu, &l, lc, &err) && !sotto__import_linear(gpu, &l, lg, &err), "import: %s", err.msg);
}

static const char *tname(sotto_type t) { return t == SOTTO_TYPE_F32 ? "f32" : t == SOTTO_TYPE_F16 ? "f16" : "q8_0"; }
static int tslot(sotto_type t) { return t == SOTTO_TYPE_F32 ? 0 : t == SOTTO_TYPE_F16 ? 1 : 2; }

static void test_linear(void)
{
    static const int shapes[][3] = {{1, 1, 32},  {1, 37, 64},  {3, 5, 96},    {8, 65, 160},  {9, 17, 32},
                                    {67, 130, 96}, {130, 67, 224}, {200, 1, 64}, {5, 301, 384}, {64, 64, 64}};
    static const sotto_type types[] = {SOTTO_TYPE_F32, SOTTO_TYPE_F16, SOTTO_TYPE_Q8_0};
    for (size_t t = 0; t < 3; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2] + (types[t] == SOTTO_TYPE_Q8_0 ? 0 : (int)s % 3);
            sotto__blinear lc, lg;
            void *host;
            float *hb;
            make_linear(types[t], N, K, s % 2 == 0, (unsigned)(7 + s), &lc, &lg, &host, &hb);
            pair x = rand_f32((size_t)M * K, (unsigned)(100 + s)), y = make((size_t)M * N * 4);
            cpu->ops->linear(cpu, x.c, M, &lc, y.c);
            gpu->ops->linear(gpu, x.g, M, &lg, y.g);
            double e = nmse(y, 0, (size_t)M * N);
            synced("linear");
            CHECK(e <= 1e-7, "linear %s M=%d N=%d K=%d: NMSE %.3g", tname(types[t]), M, N, K, e);
            if (e > worst_nmse[tslot(types[t])]) worst_nmse[tslot(types[t])] = e;
            free(host), free(hb);
        }
    printf("linear: worst NMSE f32 %.2e, f16 %.2e, q8_0 %.2e\n", worst_nmse[0], worst_nmse[1], worst_nmse[2]);
}

/* q8_0 products sum as the scalar reference (sotto__matmul_q8_ref, whose bits every CPU
 * kernel set gives): block by block from 0, (d_a d_b) dot, the bias last, nothing fused. So
 * given the same blocks the device gives the CPU's bits, few rows (the decoder's: gemv.comp,
 * mmd.comp with one row) and many (the encoder's: mm.comp, mmd.comp with eight), on every
 * kernel family: required. */
static void test_q8_cpu_order(void)
{
    const sotto__kernels *k = sotto__kernels_by_name("scalar");
    static const int shapes[][3] = {{1, 301, 384}, {3, 65, 1536}, {8, 37, 96}, {1, 51, 32}, {5, 17, 224},
                                    {9, 70, 384}, {37, 33, 160}, {130, 66, 64}};
    int n_same = 0, n = (int)(sizeof shapes / sizeof *shapes);
    for (int s = 0; s < n; s++) {
        int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        sotto__blinear lc, lg;
        void *host;
        float *hb;
        make_linear(SOTTO_TYPE_Q8_0, N, K, s % 2 == 0, (unsigned)(50 + s), &lc, &lg, &host, &hb);
        float *x = malloc((size_t)M * K * 4), *want = malloc((size_t)M * N * 4), *got = malloc((size_t)M * N * 4);
        unsigned seed = (unsigned)(60 + s);
        for (int i = 0; i < M * K; i++) x[i] = rnd(&seed);
        sotto__block_q8_0 *xq = malloc((size_t)M * K / 32 * sizeof *xq);
        sotto__quantize(SOTTO_TYPE_Q8_0, x, xq, (int64_t)M * K);
        k->matmul_q8(xq, (size_t)K / 32, host, (size_t)K / 32, hb, want, (size_t)N, M, N, K);
        pair px = upload(x, (size_t)M * K * 4), y = make((size_t)M * N * 4);
        gpu->ops->linear(gpu, px.g, M, &lg, y.g);
        gpu->ops->read(gpu, got, y.g, (size_t)M * N * 4);
        synced("q8 order");
        bool same = memcmp(want, got, (size_t)M * N * 4) == 0;
        CHECK(same, "q8_0 linear M=%d N=%d K=%d: not the scalar reference's bits", M, N, K);
        n_same += same;
        free(x), free(want), free(got), free(xq), free(host), free(hb);
    }
    printf("q8_0 products (M = 1..130): %d of %d shapes bit-identical to the scalar reference\n", n_same, n);
}

static void test_rows(void)
{
    static const int shapes[][2] = {{1, 1}, {3, 7}, {5, 384}, {70, 257}, {1500, 384}};
    double w_ln = 0, w_gelu = 0, w_add = 0;
    bool t_ok = true;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int M = shapes[s][0], d = shapes[s][1];
        size_t n = (size_t)M * d;
        pair x = rand_f32(n, (unsigned)(3 + s)), y = make(n * 4), gb = rand_f32(2 * (size_t)d, 9);
        sotto__bnorm nc = {gb.c, sotto__buf_f32(gb.c, (size_t)d)}, ng = {gb.g, sotto__buf_f32(gb.g, (size_t)d)};
        cpu->ops->layernorm(cpu, x.c, M, d, &nc, y.c);
        gpu->ops->layernorm(gpu, x.g, M, d, &ng, y.g);
        double e = nmse(y, 0, n);
        CHECK(e <= 1e-7, "layernorm M=%d d=%d: NMSE %.3g", M, d, e);
        w_ln = fmax(w_ln, e);
        cpu->ops->layernorm(cpu, y.c, M, d, &nc, y.c); /* in place */
        gpu->ops->layernorm(gpu, y.g, M, d, &ng, y.g);
        e = nmse(y, 0, n);
        CHECK(e <= 1e-7, "layernorm in place M=%d d=%d: NMSE %.3g", M, d, e);
        /* GELU over a wide range, and the residual add */
        float *h = malloc(n * 4);
        unsigned seed = 11;
        for (size_t i = 0; i < n; i++) h[i] = rnd(&seed) * 8.0f;
        cpu->ops->write(cpu, y.c, h, n * 4);
        gpu->ops->write(gpu, y.g, h, n * 4);
        free(h);
        cpu->ops->gelu(cpu, y.c, n);
        gpu->ops->gelu(gpu, y.g, n);
        e = nmse(y, 0, n);
        CHECK(e <= 1e-7, "gelu n=%zu: NMSE %.3g", n, e);
        w_gelu = fmax(w_gelu, e);
        cpu->ops->add(cpu, y.c, x.c, n);
        gpu->ops->add(gpu, y.g, x.g, n);
        e = nmse(y, 0, n);
        CHECK(e <= 1e-7, "add n=%zu: NMSE %.3g", n, e);
        w_add = fmax(w_add, e);
        /* transpose into a wider destination: exact */
        size_t ld = (size_t)M + 3;
        pair t = make((size_t)d * ld * 4);
        cpu->ops->zero(cpu, t.c, t.bytes);
        gpu->ops->zero(gpu, t.g, t.bytes);
        cpu->ops->transpose(cpu, x.c, M, d, t.c, ld);
        gpu->ops->transpose(gpu, x.g, M, d, t.g, ld);
        t_ok &= same_bytes(t, t.bytes);
        synced("rows");
    }
    CHECK(t_ok, "transpose differs");
    printf("layernorm: worst NMSE %.2e; gelu %.2e; add %.2e; transpose %s\n", w_ln, w_gelu, w_add,
           t_ok ? "exact" : "DIFFERS");
}

static void test_conv(void)
{
    static const int shapes[][4] = {{5, 16, 7, 1}, {80, 100, 24, 1}, {24, 101, 24, 2}, {13, 64, 70, 2}};
    double worst = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int c_in = shapes[s][0], T = shapes[s][1], c_out = shapes[s][2], stride = shapes[s][3];
        int T_out = T / stride;
        pair x = rand_f32((size_t)c_in * T, 21), w = rand_f32((size_t)c_out * c_in * 3, 22), b = rand_f32((size_t)c_out, 23);
        pair patches = make((size_t)T_out * c_in * 3 * 4), y = make((size_t)T_out * c_out * 4);
        /* channel-major input (conv1: sc = T, st = 1) for stride 1, time-major for stride 2 */
        size_t sc = stride == 1 ? (size_t)T : 1, st = stride == 1 ? 1 : (size_t)c_in;
        cpu->ops->conv3(cpu, x.c, sc, st, c_in, T, stride, w.c, b.c, c_out, patches.c, y.c);
        gpu->ops->conv3(gpu, x.g, sc, st, c_in, T, stride, w.g, b.g, c_out, patches.g, y.g);
        double e = nmse(y, 0, (size_t)T_out * c_out);
        synced("conv3");
        CHECK(e <= 1e-7, "conv3 c_in=%d T=%d c_out=%d stride %d: NMSE %.3g", c_in, T, c_out, stride, e);
        worst = fmax(worst, e);
    }
    printf("conv3: worst NMSE %.2e\n", worst);
}

static void test_attention(void)
{
    /* T, S, heads, dh, causal_pos */
    static const int shapes[][5] = {{37, 37, 3, 64, -1}, {1, 17, 2, 64, 16}, {5, 23, 3, 24, 18},
                                    {300, 300, 2, 64, -1}, {4, 4, 6, 64, 0}};
    double worst = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int T = shapes[s][0], S = shapes[s][1], H = shapes[s][2], dh = shapes[s][3], cp = shapes[s][4];
        size_t d = (size_t)H * dh, ldkt = (size_t)S + 5;
        pair q = rand_f32((size_t)T * d, 31), kt = rand_f32(d * ldkt, 32), v = rand_f32((size_t)S * d, 33);
        pair o = make((size_t)T * d * 4);
        cpu->ops->attention(cpu, q.c, d, kt.c, ldkt, v.c, d, o.c, d, T, S, H, dh, cp);
        gpu->ops->attention(gpu, q.g, d, kt.g, ldkt, v.g, d, o.g, d, T, S, H, dh, cp);
        double e = nmse(o, 0, (size_t)T * d);
        synced("attention");
        CHECK(e <= 1e-7, "attention T=%d S=%d heads=%d dh=%d causal %d: NMSE %.3g", T, S, H, dh, cp, e);
        worst = fmax(worst, e);
    }
    printf("attention: worst NMSE %.2e\n", worst);
}

/* The decoder's rows over a shared prefix (attention_prefix) against the CPU's. */
static void test_attention_prefix(void)
{
    enum { H = 3, DH = 64, CTX = 300, N = 5 };
    static const int shapes[][3] = {{0, 1, 1}, {17, 1, 5}, {40, 9, 3}, {226, 60, 5}, {7, 2, 1}}; /* P, own, rows */
    const size_t d = (size_t)H * DH;
    pair q = rand_f32(N * d, 41), kt0 = rand_f32(d * CTX, 42), v0 = rand_f32((size_t)CTX * d, 43);
    pair kt[N], v[N];
    for (int r = 0; r < N; r++) kt[r] = rand_f32(d * CTX, 44 + r), v[r] = rand_f32((size_t)CTX * d, 54 + r);
    pair o = make(N * d * 4), u = make(N * d * 4);
    double worst = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int P = shapes[s][0], S = P + shapes[s][1], n = shapes[s][2];
        sotto__buf ktc[N], ktg[N], vc[N], vg[N];
        for (int r = 0; r < n; r++) ktc[r] = kt[r].c, ktg[r] = kt[r].g, vc[r] = v[r].c, vg[r] = v[r].g;
        cpu->ops->attention_prefix(cpu, q.c, d, n, kt0.c, v0.c, ktc, vc, CTX, d, P, S, H, DH, o.c, d, u.c);
        gpu->ops->attention_prefix(gpu, q.g, d, n, kt0.g, v0.g, ktg, vg, CTX, d, P, S, H, DH, o.g, d, u.g);
        double e = nmse(o, 0, (size_t)n * d);
        synced("attention_prefix");
        CHECK(e <= 1e-7, "attention_prefix P=%d S=%d rows=%d: NMSE %.3g", P, S, n, e);
        worst = fmax(worst, e);
    }
    printf("attention_prefix: worst NMSE %.2e\n", worst);
}

static void test_cross(void)
{
    static const sotto_type types[] = {SOTTO_TYPE_F32, SOTTO_TYPE_F16, SOTTO_TYPE_Q8_0};
    static const int shapes[][4] = {{1, 45, 3, 64}, {5, 45, 3, 64}, {2, 1500, 2, 64}, {9, 33, 1, 32}};
    for (size_t t = 0; t < 3; t++) {
        double worst = 0;
        bool layout_ok = true;
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            int T = shapes[s][0], S = shapes[s][1], H = shapes[s][2], dh = shapes[s][3];
            size_t d = (size_t)H * dh, kb, vb;
            sotto__cross_layout(types[t], S, H, dh, &kb, &vb);
            pair kx = rand_f32((size_t)S * d, 41), vx = rand_f32((size_t)S * d, 42), q = rand_f32((size_t)T * d, 43);
            /* two layers' worth, the second at an odd place for f16 and q8_0 layouts */
            pair k = make(2 * kb + 64), v = make(2 * vb + 64), o = make((size_t)T * d * 4);
            size_t at = types[t] == SOTTO_TYPE_F32 ? kb : kb + 2, vat = types[t] == SOTTO_TYPE_F32 ? vb : vb + 2;
            cpu->ops->zero(cpu, k.c, k.bytes), gpu->ops->zero(gpu, k.g, k.bytes);
            cpu->ops->zero(cpu, v.c, v.bytes), gpu->ops->zero(gpu, v.g, v.bytes);
            cpu->ops->cross_kv(cpu, kx.c, vx.c, S, H, dh, types[t], sotto__buf_at(k.c, at), sotto__buf_at(v.c, vat));
            gpu->ops->cross_kv(gpu, kx.g, vx.g, S, H, dh, types[t], sotto__buf_at(k.g, at), sotto__buf_at(v.g, vat));
            layout_ok &= same_bytes(k, k.bytes) && same_bytes(v, v.bytes);
            cpu->ops->cross_attention(cpu, q.c, d, types[t], sotto__buf_at(k.c, at), sotto__buf_at(v.c, vat), o.c, d,
                                      T, S, H, dh);
            gpu->ops->cross_attention(gpu, q.g, d, types[t], sotto__buf_at(k.g, at), sotto__buf_at(v.g, vat), o.g, d,
                                      T, S, H, dh);
            double e = nmse(o, 0, (size_t)T * d);
            synced("cross");
            CHECK(e <= 1e-7, "cross_attention %s T=%d S=%d heads=%d dh=%d: NMSE %.3g", tname(types[t]), T, S, H, dh, e);
            worst = fmax(worst, e);
        }
        CHECK(layout_ok, "cross_kv %s: the K/V bytes differ from the CPU's", tname(types[t]));
        printf("cross_kv %s: %s; cross_attention: worst NMSE %.2e\n", tname(types[t]),
               layout_ok ? "bit-identical" : "DIFFERS", worst);
    }
}

static void test_quantize_bits(void)
{
    /* the q8_0 activation path quantises as the CPU: compare through a q8_0 linear whose
     * weights are one-hot rows, so that each logit is one dequantised activation */
    const int K = 256, N = K, M = 9;
    size_t bytes;
    sotto__type_bytes(SOTTO_TYPE_Q8_0, (int64_t)N * K, &bytes);
    float *w = calloc((size_t)N * K, sizeof *w);
    for (int n = 0; n < N; n++) w[(size_t)n * K + n] = 1.0f;
    void *host = malloc(bytes);
    sotto__quantize(SOTTO_TYPE_Q8_0, w, host, (int64_t)N * K);
    sotto__linear l = {SOTTO_TYPE_Q8_0, host, NULL, N, K};
    sotto__blinear lc, lg;
    sotto__err err = {0};
    CHECK(!sotto__import_linear(cpu, &l, &lc, &err) && !sotto__import_linear(gpu, &l, &lg, &err), "%s", err.msg);
    float *x = malloc((size_t)M * K * 4);
    unsigned seed = 5;
    for (int i = 0; i < M * K; i++) x[i] = rnd(&seed) * (i % 7 ? 1.0f : 1e-3f) + (i % 13 == 0 ? 0.5f : 0.0f);
    pair px = upload(x, (size_t)M * K * 4), y = make((size_t)M * N * 4);
    cpu->ops->linear(cpu, px.c, M, &lc, y.c);
    gpu->ops->linear(gpu, px.g, M, &lg, y.g);
    bool same = same_bytes(y, y.bytes);
    synced("quantize");
    CHECK(same, "q8_0 activations quantised differently from the CPU");
    printf("quant (q8_0 activations): %s\n", same ? "bit-identical" : "DIFFERS");
    free(w), free(host), free(x);
}

static void test_embed(void)
{
    static const sotto_type types[] = {SOTTO_TYPE_F32, SOTTO_TYPE_F16, SOTTO_TYPE_Q8_0};
    for (size_t t = 0; t < 3; t++) {
        const int V = 301, d = 96, n = 5;
        sotto__blinear lc, lg;
        void *host;
        float *hb;
        make_linear(types[t], V, d, false, 77, &lc, &lg, &host, &hb);
        int32_t tok[5] = {0, 300, 17, 17, 150};
        pair pos = rand_f32((size_t)n * d, 78), x = make((size_t)n * d * 4);
        cpu->ops->embed(cpu, tok, n, &lc, pos.c, x.c);
        gpu->ops->embed(gpu, tok, n, &lg, pos.g, x.g);
        bool same = same_bytes(x, x.bytes);
        synced("embed");
        CHECK(same, "embed %s differs", tname(types[t]));
        free(host);
    }
    printf("embed f32/f16/q8_0: checked bit for bit\n");
}

/* argmax of X . W[n] over rows built to tie, with exclusions, NaN and all excluded. */
static void test_argmax(void)
{
    const int V = 1000, K = 64;
    float *w = malloc((size_t)V * K * 4), *x = malloc(K * 4);
    unsigned seed = 91;
    for (int i = 0; i < K; i++) x[i] = rnd(&seed);
    for (int n = 0; n < V; n++)
        for (int k = 0; k < K; k++) w[(size_t)n * K + k] = 0.1f * rnd(&seed);
    for (int k = 0; k < K; k++) w[5 * K + k] = w[17 * K + k] = w[900 * K + k] = x[k]; /* three equal maxima */
    w[333 * K + 3] = NAN;                                                              /* a NaN logit */
    pair px = upload(x, K * 4), u = make(V * 4);
    struct { const char *what; int32_t ids[3]; int n; int want; } cases[] = {
        {"ties", {0}, 0, 5}, {"first excluded", {5}, 1, 17}, {"two excluded", {5, 17}, 2, 900},
    };
    sotto__linear l = {SOTTO_TYPE_F32, w, NULL, V, K};
    sotto__blinear lc, lg;
    sotto__err err = {0};
    CHECK(!sotto__import_linear(cpu, &l, &lc, &err) && !sotto__import_linear(gpu, &l, &lg, &err), "%s", err.msg);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        sotto__i32list e = {cases[c].ids, cases[c].n};
        int32_t a = -1, b = -1;
        cpu->ops->argmax(cpu, px.c, &lc, &e, 1, u.c, &a);
        CHECK(gpu->ops->argmax(gpu, px.g, &lg, &e, 1, u.g, &b) == SOTTO_OK, "argmax failed");
        CHECK(a == cases[c].want && b == a, "argmax %s: cpu %d, vulkan %d, want %d", cases[c].what, a, b, cases[c].want);
    }
    /* every id excluded (in two lists): 0 */
    int32_t *all = malloc(V * sizeof *all);
    for (int i = 0; i < V; i++) all[i] = V - 1 - i;
    sotto__i32list two[2] = {{all, 600}, {all + 600, V - 600}};
    int32_t a = -1, b = -1;
    cpu->ops->argmax(cpu, px.c, &lc, two, 2, u.c, &a);
    gpu->ops->argmax(gpu, px.g, &lg, two, 2, u.g, &b);
    CHECK(a == 0 && b == 0, "argmax, all excluded: cpu %d, vulkan %d, want 0", a, b);
    /* a NaN first logit: the scan never leaves it */
    for (int k = 0; k < K; k++) w[k] = NAN;
    sotto__linear l2 = {SOTTO_TYPE_F32, w, NULL, V, K};
    sotto__blinear lc2, lg2;
    CHECK(!sotto__import_linear(cpu, &l2, &lc2, &err) && !sotto__import_linear(gpu, &l2, &lg2, &err), "%s", err.msg);
    cpu->ops->argmax(cpu, px.c, &lc2, NULL, 0, u.c, &a);
    gpu->ops->argmax(gpu, px.g, &lg2, NULL, 0, u.g, &b);
    CHECK(a == 0 && b == 0, "argmax, NaN first: cpu %d, vulkan %d, want 0", a, b);
    synced("argmax");
    printf("argmax: ties, exclusions, all excluded, NaN: as the CPU\n");
    free(all), free(w), free(x); /* no op reads the CPU's view of W again */
}

/* A table above maxStorageBufferRange (51866 x 1280 f32, large-v3's embedding): linear,
 * embed and argmax bind it in pieces. */
static void test_big(void)
{
    const int V = 51866, K = 1280;
    float *w = malloc((size_t)V * K * 4), *x = malloc(K * 4);
    unsigned seed = 17;
    for (size_t i = 0; i < (size_t)V * K; i++) w[i] = rnd(&seed) * 0.05f;
    for (int k = 0; k < K; k++) x[k] = rnd(&seed);
    for (int k = 0; k < K; k++) w[(size_t)51000 * K + k] = x[k]; /* the maximum, beyond 128 MiB */
    sotto__linear l = {SOTTO_TYPE_F32, w, NULL, V, K};
    sotto__blinear lc, lg;
    sotto__err err = {0};
    CHECK(!sotto__import_linear(cpu, &l, &lc, &err) && !sotto__import_linear(gpu, &l, &lg, &err), "%s", err.msg);
    pair px = upload(x, K * 4), u = make((size_t)V * 4);
    cpu->ops->linear(cpu, px.c, 1, &lc, u.c);
    gpu->ops->linear(gpu, px.g, 1, &lg, u.g);
    double e = nmse(u, 0, (size_t)V);
    CHECK(e <= 1e-7, "linear over a 265 MB table: NMSE %.3g", e);
    int32_t a = -1, b = -1;
    cpu->ops->argmax(cpu, px.c, &lc, NULL, 0, u.c, &a);
    gpu->ops->argmax(gpu, px.g, &lg, NULL, 0, u.g, &b);
    CHECK(a == 51000 && b == 51000, "argmax over a 265 MB table: cpu %d, vulkan %d", a, b);
    int32_t tok[3] = {3, 51000, 40000};
    pair pos = rand_f32(3 * (size_t)K, 5), xe = make(3 * (size_t)K * 4);
    cpu->ops->embed(cpu, tok, 3, &lc, pos.c, xe.c);
    gpu->ops->embed(gpu, tok, 3, &lg, pos.g, xe.g);
    CHECK(same_bytes(xe, xe.bytes), "embed from a 265 MB table differs");
    synced("big");
    printf("a 265 MB f32 table (above maxStorageBufferRange): linear NMSE %.2e, argmax %d, embed exact\n", e, b);
    free(x), free(w); /* no op reads the CPU's view of W again */
}

/* The planted validation error must fail sync, on a backend of its own. */
static void test_validation(const char *device_index_env)
{
    if (!getenv("VK_INSTANCE_LAYERS")) {
        printf("validation layer: off (VK_INSTANCE_LAYERS unset): planted-error check skipped\n");
        return;
    }
    sotto__limits lim = {.max_rows = 8, .max_in = 64, .max_keys = 8, .max_heads = 1, .max_dh = 32,
                         .cross_type = SOTTO_TYPE_F32, .cross_keys = 8, .vocab_in = 64};
    sotto__backend *be = NULL;
    char desc[256];
    sotto__err err = {0};
    sotto__vk_want want = {device_index_env ? atoi(device_index_env) : -1, false};
    CHECK(sotto__vk_backend_create(want, &lim, &be, desc, sizeof desc, &err) == SOTTO_OK, "%s", err.msg);
    if (!be) return;
    CHECK(sotto__vk_has_messenger(be), "no debug-utils messenger: validation errors would go uncounted");
    sotto__vk_plant_error(be);
    sotto_status st = be->ops->sync(be, &err);
    CHECK(st != SOTTO_OK && strstr(err.msg, "validation"), "a planted validation error did not fail sync (%s)",
          err.msg);
    printf("validation layer: on; a planted error fails sync: %.90s...\n", err.msg);
    be->ops->free(be);
}

/* --bench: the device's time for ops at tiny.en's shapes (not a check). */
static void bench(void)
{
    const int T = 1500, d = 384, V = 51864;
    sotto__blinear lc, lg, ec, eg;
    void *h1, *h2;
    float *b1, *b2;
    make_linear(SOTTO_TYPE_F32, d, d, true, 1, &lc, &lg, &h1, &b1);
    make_linear(SOTTO_TYPE_F32, V, d, false, 2, &ec, &eg, &h2, &b2);
    pair x = rand_f32((size_t)T * d, 3), y = make((size_t)T * d * 4), kt = rand_f32((size_t)T * d, 4);
    pair u = make((size_t)V * 4), o = make((size_t)T * d * 4);
    struct { const char *what; int reps; } items[] = {{"linear 1500x384x384", 8}, {"gemv 51864x384", 8},
                                                       {"attention 1500x1500, 6 heads", 1}, {"layernorm 1500x384", 5},
                                                       {"gelu 1500x1536", 5}};
    for (size_t i = 0; i < sizeof items / sizeof *items; i++) {
        sotto__err err;
        gpu->ops->sync(gpu, &err);
        double t0 = now_ms(), c0 = cpu_ms();
        for (int r = 0; r < items[i].reps; r++) {
            switch (i) {
            case 0: gpu->ops->linear(gpu, x.g, T, &lg, y.g); break;
            case 1: gpu->ops->linear(gpu, x.g, 1, &eg, u.g); break;
            case 2: gpu->ops->attention(gpu, x.g, d, kt.g, T, x.g, d, o.g, d, T, T, 6, 64, -1); break;
            case 3: gpu->ops->layernorm(gpu, x.g, T, d, &(sotto__bnorm){x.g, x.g}, y.g); break;
            case 4: gpu->ops->gelu(gpu, o.g, (size_t)T * d); break;
            }
            gpu->ops->sync(gpu, &err);
        }
        printf("bench %-32s %9.2f ms (%.2f ms of CPU time)\n", items[i].what, (now_ms() - t0) / items[i].reps,
               (cpu_ms() - c0) / items[i].reps);
    }
}

int main(int argc, char **argv)
{
    const char *device = "vulkan", *only = NULL;
    bool do_bench = false, big = true;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (strcmp(argv[i], "--kernels") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--bench") == 0) do_bench = true;
        else if (strcmp(argv[i], "--no-big") == 0) big = false;
    }
    setenv("SOTTO_KERNELS", "scalar", 1); /* the CPU backend on the reference kernels */
    sotto__limits lim = {.max_rows = 1500, .max_in = 1536, .max_keys = 1500, .max_heads = 6, .max_dh = 64,
                         .cross_type = SOTTO_TYPE_Q8_0, .cross_keys = 1500, .vocab_in = 1280};
    sotto__err err = {0};
    char desc[256];
    const char *index = strncmp(device, "vulkan:", 7) == 0 ? device + 7 : NULL;
    sotto__vk_want want = {index ? atoi(index) : -1, false};
    CHECK(sotto__cpu_backend_create(1, &lim, &cpu, &err) == SOTTO_OK, "%s", err.msg);
    /* both kernel families on this device: the tiled ones GPUs run, the direct ones of
     * software devices (SOTTO_VK_KERNELS picks; --bench: the device's own) */
    static const char *families[] = {"direct", "tiled"};
    for (int f = 0; f < (do_bench ? 1 : 2); f++) {
        if (only && strcmp(only, families[f]) != 0) continue;
        if (!do_bench) setenv("SOTTO_VK_KERNELS", families[f], 1);
        if (sotto__vk_backend_create(want, &lim, &gpu, desc, sizeof desc, &err) != SOTTO_OK) {
            printf("FAIL: no Vulkan backend: %s\n", err.msg);
            return 1;
        }
        printf("device: %s, %s kernels; CPU reference: scalar kernels\n", desc, do_bench ? "its own" : families[f]);
        memset(worst_nmse, 0, sizeof worst_nmse);
        double t0 = now_ms();
        if (do_bench) {
            bench();
        } else {
            test_validation(index);
            test_linear();
            test_quantize_bits();
            test_q8_cpu_order();
            test_rows();
            test_conv();
            test_attention();
            test_attention_prefix();
            test_cross();
            test_embed();
            test_argmax();
            if (big) test_big();
        }
        printf("%.1f s\n", (now_ms() - t0) / 1e3);
        gpu->ops->free(gpu);
        gpu = NULL;
    }
    cpu->ops->free(cpu);
    return check_summary();
}
