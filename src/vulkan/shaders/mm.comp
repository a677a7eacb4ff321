#version 450
// mm.comp — tiled matrix product, batched over z: C[m,n] = sum_k A[m,k] B(k,n) (+ bias[n]),
// 64 x 64 outputs per workgroup of 16 x 16 threads, each thread 4 x 4 of them (rows
// ty + 16 i, columns tx + 16 j), K in steps of 16 (q8_0: half a block of 32) through shared
// memory. Each output's sum runs over k in order, as the scalar references' (bias last).
// Variants (-D): B_F32 | B_F16 | B_Q8, and NN (B[k][n], ldb per k) or else NT (B[n][k]).
// B_Q8: A is q8_0 activations in the internal layout of quant.comp (packed int8 words
// [M][lda], scales as f32 [M][ldad]), B q8_0 blocks of 34 bytes at byte offsets; per
// block an exact int32 dot, scaled by d_a d_b and summed in f32 (sotto__matmul_q8_ref).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint M, N, K;
    uint a_off, lda;        // floats (B_Q8: words of packed int8)
    uint b_off, ldb;        // f32: floats, f16: halves, q8_0: b_off bytes and ldb blocks
    uint c_off, ldc;
    uint bias_off, has_bias;
    uint sa, sb, sc;        // per-z steps of a_off, b_off, c_off
    uint ad_off, ldad, sad; // B_Q8: A's scales (floats), their row stride and per-z step
    uint c_trans;           // 1: C stored transposed, C[m,n] at c[n * ldc + m]
} p;

layout(std430, set = 0, binding = 0) readonly buffer BufA { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { uint b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufC { float c[]; };
layout(std430, set = 0, binding = 3) readonly buffer BufBias { float bias[]; };

#define BM 64
#define BN 64
#define BK 16
#ifdef B_Q8
shared int As[BK][BM + 1];
shared int Bs[BK][BN + 1];
shared float Ad[BM];
shared float Bd[BN];
#else
shared float As[BK][BM + 1];
shared float Bs[BK][BN + 1];
#endif

#ifndef B_Q8
float load_b(uint n, uint k, uint boff)
{
#ifdef NN
    uint e = boff + k * p.ldb + n;
#else
    uint e = boff + n * p.ldb + k;
#endif
#ifdef B_F16
    return unpackHalf2x16(b[e >> 1])[e & 1u];
#else
    return uintBitsToFloat(b[e]);
#endif
}
#endif

void main()
{
    const uint t = gl_LocalInvocationID.x, tx = t % 16u, ty = t / 16u;
    const uint n0 = gl_WorkGroupID.x * BN, m0 = gl_WorkGroupID.y * BM, z = gl_WorkGroupID.z;
    const uint aoff = p.a_off + z * p.sa, boff = p.b_off + z * p.sb, coff = p.c_off + z * p.sc;
    float acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = 0.0;
#ifdef B_Q8
    const uint adoff = p.ad_off + z * p.sad;
    for (uint kb = 0u; kb < p.K / 32u; kb++) {
        if (t < 64u) {
            uint gm = m0 + t;
            Ad[t] = gm < p.M ? uintBitsToFloat(a[adoff + gm * p.ldad + kb]) : 0.0;
        } else if (t < 128u) {
            uint gn = n0 + t - 64u;
            float d = 0.0;
            if (gn < p.N) {
                uint o = boff + (gn * p.ldb + kb) * 34u, sh = (o & 3u) * 8u;
                d = sotto_h2f(sotto_funnel(b[o >> 2], sh > 16u ? b[(o >> 2) + 1u] : 0u, sh) & 0xffffu);
            }
            Bd[t - 64u] = d;
        }
        int dot[4][4];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) dot[i][j] = 0;
        for (uint half_ = 0u; half_ < 2u; half_++) { // 16 of the block's 32 values at a time
            uint w = half_ * 4u + t % 4u, row = t / 4u, gm = m0 + row, gn = n0 + row; // 64 rows x 4 words
            uint wa = gm < p.M ? a[aoff + gm * p.lda + kb * 8u + w] : 0u;
            uint wb = 0u;
            if (gn < p.N) {
                uint q = boff + (gn * p.ldb + kb) * 34u + 2u + 4u * w, sh = (q & 3u) * 8u;
                wb = sotto_funnel(b[q >> 2], sh != 0u ? b[(q >> 2) + 1u] : 0u, sh);
            }
            for (int i = 0; i < 4; i++) {
                As[4u * (t % 4u) + uint(i)][row] = bitfieldExtract(int(wa), 8 * i, 8);
                Bs[4u * (t % 4u) + uint(i)][row] = bitfieldExtract(int(wb), 8 * i, 8);
            }
            barrier();
            for (uint k = 0u; k < BK; k++) {
                int av[4], bv[4];
                for (int i = 0; i < 4; i++) av[i] = As[k][ty + 16u * uint(i)];
                for (int j = 0; j < 4; j++) bv[j] = Bs[k][tx + 16u * uint(j)];
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) dot[i][j] += av[i] * bv[j];
            }
            if (half_ == 1u) // before the barrier: the next block writes Ad and Bd after it
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) { // nothing fused (precise), as the reference
                        precise float term = Ad[ty + 16u * uint(i)] * Bd[tx + 16u * uint(j)] * float(dot[i][j]);
                        acc[i][j] = acc[i][j] + term;
                    }
            barrier();
        }
    }
#else
    for (uint k0 = 0u; k0 < p.K; k0 += BK) {
        for (uint r = 0u; r < 4u; r++) { // 64 x 16 of A, of B
            uint e = t + 256u * r, kk = e % BK, row = e / BK, gm = m0 + row, gk = k0 + kk;
            As[kk][row] = gm < p.M && gk < p.K ? uintBitsToFloat(a[aoff + gm * p.lda + gk]) : 0.0;
#ifdef NN
            uint nn = e % BN, kn = e / BN, gn = n0 + nn, gkn = k0 + kn;
            Bs[kn][nn] = gn < p.N && gkn < p.K ? load_b(gn, gkn, boff) : 0.0;
#else
            uint gn = n0 + row;
            Bs[kk][row] = gn < p.N && gk < p.K ? load_b(gn, gk, boff) : 0.0;
#endif
        }
        barrier();
        for (uint k = 0u; k < BK; k++) {
            float av[4], bv[4];
            for (int i = 0; i < 4; i++) av[i] = As[k][ty + 16u * uint(i)];
            for (int j = 0; j < 4; j++) bv[j] = Bs[k][tx + 16u * uint(j)];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) acc[i][j] += av[i] * bv[j];
        }
        barrier();
    }
#endif
    for (int i = 0; i < 4; i++) {
        uint m = m0 + ty + 16u * uint(i);
        if (m >= p.M) continue;
        for (int j = 0; j < 4; j++) {
            uint n = n0 + tx + 16u * uint(j);
            if (n < p.N)
                c[coff + (p.c_trans != 0u ? n * p.ldc + m : m * p.ldc + n)] =
                    acc[i][j] + (p.has_bias != 0u ? bias[p.bias_off + n] : 0.0);
        }
    }
}
