#version 450
// mmd.comp — the product of mm.comp and gemv.comp (same push constants, same operands)
// for software Vulkan devices (lavapipe), where shared memory and barriers cost more than
// the arithmetic: no shared memory, no barrier. Invocation l of a workgroup computes
// column n = 64 x + l of C over TM rows m0 = TM y ..; those rows' values of A are the
// same for every invocation and come from a uniform buffer (binding 4: a window of at
// most 64 KiB of A per dispatch, which the caller moves), B from a texel-buffer view of
// its whole block (binding 5, b_off counted from the block's start): llvmpipe reads a
// uniform buffer at a uniform offset with one load and fetches texels as vector gathers,
// where it reads a storage buffer lane by lane. Each sum runs over k in order, as the
// references' (q8_0: block by block from 0, the scalar reference's order, as gemv.comp).
// Variants (-D): B_F32 | B_F16 | B_Q8, NN, TM (rows per invocation: 8, or 1 for few rows).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform PC {
    uint M, N, K;
    uint a_off, lda;
    uint b_off, ldb;
    uint c_off, ldc;
    uint bias_off, has_bias;
    uint sa, sb, sc;
    uint ad_off, ldad, sad;
    uint c_trans;
} p;

layout(std430, set = 0, binding = 2) writeonly buffer BufC { float c[]; };
layout(std430, set = 0, binding = 3) readonly buffer BufBias { float bias[]; };
layout(std140, set = 0, binding = 4) uniform UboA { uvec4 ua[4096]; };
layout(set = 0, binding = 5) uniform usamplerBuffer tb;
layout(set = 0, binding = 6) uniform usamplerBuffer tb4; // the same block as RGBA32 texels

uint a_word(uint i) { return ua[i >> 2][i & 3u]; }

// a b + c rounded once, as the CPU's FMA: Vulkan lets fma() round twice (lavapipe does);
// with FMA_F64 (devices with shaderFloat64) through a double, where a b is exact (24 + 17
// bits for the q8_0 dots) and only the sum is rounded, then rounded to f32
#ifdef FMA_F64
#define FUSED(a, b, c) float(double(a) * double(b) + double(c))
#else
#define FUSED(a, b, c) fma(a, b, c)
#endif
uint b_word(uint i) { return texelFetch(tb, int(i)).r; }

void main()
{
    const uint n = gl_WorkGroupID.x * 64u + gl_LocalInvocationID.x, m0 = gl_WorkGroupID.y * TM, z = gl_WorkGroupID.z;
    const uint nn = min(n, p.N - 1u); // past N: compute a real column, store nothing
    const uint aoff = p.a_off + z * p.sa, boff = p.b_off + z * p.sb, coff = p.c_off + z * p.sc;
    uint arow[TM]; // rows past M read row M - 1 (stored nowhere)
    float acc[TM];
    for (int i = 0; i < TM; i++) {
        arow[i] = min(m0 + uint(i), p.M - 1u);
        acc[i] = 0.0;
    }
#ifdef B_Q8
    const uint adoff = p.ad_off + z * p.sad;
    precise float accq[TM];
    for (int i = 0; i < TM; i++) accq[i] = 0.0;
    for (uint kb = 0u; kb < p.K / 32u; kb++) {
        uint o = boff + (nn * p.ldb + kb) * 34u, sh = (o & 3u) * 8u, w0 = o >> 2;
        uint wd[10];
        for (int i = 0; i < 9; i++) wd[i] = b_word(w0 + uint(i));
        wd[9] = sh > 16u ? b_word(w0 + 9u) : 0u;
        float db = sotto_h2f(sotto_funnel(wd[0], wd[1], sh) & 0xffffu);
        uint sq = (sh + 16u) & 31u, q0 = sh + 16u >= 32u ? 1u : 0u;
        uint qs[8];
        for (int i = 0; i < 8; i++) qs[i] = sotto_funnel(wd[q0 + uint(i)], wd[q0 + uint(i) + 1u], sq);
        for (int i = 0; i < TM; i++) {
            uint ab = aoff + arow[i] * p.lda + kb * 8u;
            int dot = 0;
            for (int w = 0; w < 8; w++) dot += sotto_dot4(a_word(ab + uint(w)), qs[w]);
            /* the reference's (kernels_ref.c matmul_q8): (d_a d_b) dot added in block order,
             * each product and sum rounded on its own (precise: nothing fused) */
            precise float term = uintBitsToFloat(a_word(adoff + arow[i] * p.ldad + kb)) * db * float(dot);
            accq[i] = accq[i] + term;
        }
    }
    for (int i = 0; i < TM; i++) acc[i] = accq[i];
#else
    uint k = 0u;
#if !defined(NN) && !defined(B_F16)
    /* four steps of k at a time where A's rows and B's columns start on whole texels:
     * one uvec4 of each row of A, one RGBA texel of B (the same sums, in the same order) */
    if (p.K >= 4u && p.lda % 4u == 0u && aoff % 4u == 0u && p.ldb % 4u == 0u && boff % 4u == 0u) {
        const uint ab = aoff / 4u, bb = (boff + nn * p.ldb) / 4u, lda4 = p.lda / 4u;
        for (; k + 4u <= p.K; k += 4u) {
            vec4 bv = uintBitsToFloat(texelFetch(tb4, int(bb + k / 4u)));
            for (int i = 0; i < TM; i++) {
                vec4 av = uintBitsToFloat(ua[ab + arow[i] * lda4 + k / 4u]);
                acc[i] += av.x * bv.x;
                acc[i] += av.y * bv.y;
                acc[i] += av.z * bv.z;
                acc[i] += av.w * bv.w;
            }
        }
    }
#endif
#if !defined(NN) && defined(B_F16)
    /* eight steps of k at a time where rows start on whole texels: two uvec4s of each row
     * of A, one RGBA texel (eight halves) of B */
    if (p.K >= 8u && p.lda % 4u == 0u && aoff % 4u == 0u && p.ldb % 8u == 0u && boff % 8u == 0u) {
        const uint ab = aoff / 4u, bb = (boff + nn * p.ldb) / 8u, lda4 = p.lda / 4u;
        for (; k + 8u <= p.K; k += 8u) {
            uvec4 t = texelFetch(tb4, int(bb + k / 8u));
            vec2 b01 = unpackHalf2x16(t.x), b23 = unpackHalf2x16(t.y), b45 = unpackHalf2x16(t.z), b67 = unpackHalf2x16(t.w);
            for (int i = 0; i < TM; i++) {
                vec4 a0 = uintBitsToFloat(ua[ab + arow[i] * lda4 + k / 4u]);
                vec4 a1 = uintBitsToFloat(ua[ab + arow[i] * lda4 + k / 4u + 1u]);
                acc[i] += a0.x * b01.x;
                acc[i] += a0.y * b01.y;
                acc[i] += a0.z * b23.x;
                acc[i] += a0.w * b23.y;
                acc[i] += a1.x * b45.x;
                acc[i] += a1.y * b45.y;
                acc[i] += a1.z * b67.x;
                acc[i] += a1.w * b67.y;
            }
        }
    }
#endif
#if defined(NN) && !defined(B_F16)
    /* four steps of k at a time where A's rows start on whole uvec4s (B: one texel a k) */
    if (p.K >= 4u && p.lda % 4u == 0u && aoff % 4u == 0u) {
        const uint ab = aoff / 4u, lda4 = p.lda / 4u;
        for (; k + 4u <= p.K; k += 4u) {
            uint e = boff + k * p.ldb + nn;
            float b0 = uintBitsToFloat(b_word(e)), b1 = uintBitsToFloat(b_word(e + p.ldb));
            float b2 = uintBitsToFloat(b_word(e + 2u * p.ldb)), b3 = uintBitsToFloat(b_word(e + 3u * p.ldb));
            for (int i = 0; i < TM; i++) {
                vec4 av = uintBitsToFloat(ua[ab + arow[i] * lda4 + k / 4u]);
                acc[i] += av.x * b0;
                acc[i] += av.y * b1;
                acc[i] += av.z * b2;
                acc[i] += av.w * b3;
            }
        }
    }
#endif
    for (; k < p.K; k++) {
#ifdef NN
        uint e = boff + k * p.ldb + nn;
#else
        uint e = boff + nn * p.ldb + k;
#endif
#ifdef B_F16
        float bv = unpackHalf2x16(b_word(e >> 1))[e & 1u];
#else
        float bv = uintBitsToFloat(b_word(e));
#endif
        for (int i = 0; i < TM; i++) acc[i] += uintBitsToFloat(a_word(aoff + arow[i] * p.lda + k)) * bv;
    }
#endif
    if (n >= p.N) return;
    const float bn = p.has_bias != 0u ? bias[p.bias_off + n] : 0.0;
    for (int i = 0; i < TM; i++) {
        uint m = m0 + uint(i);
        if (m < p.M) c[coff + (p.c_trans != 0u ? n * p.ldc + m : m * p.ldc + n)] = acc[i] + bn;
    }
}
