#version 450
// gemv.comp — the product for few rows of A (M <= 8: decoder steps, beams, short
// prefills), batched over z: C[m,n] = sum_k A[m,k] B[n,k] (+ bias[n]) with B as rows
// (NT). 16 rows of B per workgroup, 16 threads on each splitting K (thread l takes
// elements, or q8_0 blocks, l, l + 16, ...); the 16 partial sums are added in a tree.
// Variants (-D): B_F32 | B_F16 | B_Q8 (A then q8_0 activations as in mm.comp).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;

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

layout(std430, set = 0, binding = 0) readonly buffer BufA { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { uint b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufC { float c[]; };
layout(std430, set = 0, binding = 3) readonly buffer BufBias { float bias[]; };

#define LANES 16u
#define ROWS (256u / LANES)
#define MAXM 8

shared float red[MAXM][256];

void main()
{
    const uint t = gl_LocalInvocationID.x, lane = t % LANES;
    const uint n = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * ROWS + t / LANES;
    const uint z = gl_WorkGroupID.z;
    const uint aoff = p.a_off + z * p.sa, boff = p.b_off + z * p.sb, coff = p.c_off + z * p.sc;
    float acc[MAXM];
    for (int m = 0; m < MAXM; m++) acc[m] = 0.0;
    if (n < p.N) {
#if defined(B_Q8)
        const uint adoff = p.ad_off + z * p.sad;
        for (uint kb = lane; kb < p.K / 32u; kb += LANES) {
            uint o = boff + (n * p.ldb + kb) * 34u, sh = (o & 3u) * 8u, w0 = o >> 2;
            uint wd[10];
            for (int i = 0; i < 9; i++) wd[i] = b[w0 + uint(i)];
            wd[9] = sh > 16u ? b[w0 + 9u] : 0u;
            float db = sotto_h2f(sotto_funnel(wd[0], wd[1], sh) & 0xffffu);
            uint qs[8]; // the block's 32 bytes after its scale: 2 bytes past O
            uint sq = (sh + 16u) & 31u;
            uint q0 = sh + 16u >= 32u ? 1u : 0u;
            for (int i = 0; i < 8; i++) qs[i] = sotto_funnel(wd[q0 + uint(i)], wd[q0 + uint(i) + 1u], sq);
            for (uint m = 0u; m < p.M; m++) {
                uint ab = aoff + m * p.lda + kb * 8u;
                int dot = 0;
                for (int i = 0; i < 8; i++) dot += sotto_dot4(a[ab + uint(i)], qs[i]);
                acc[m] += uintBitsToFloat(a[adoff + m * p.ldad + kb]) * db * float(dot);
            }
        }
#else
        const uint row = boff + n * p.ldb;
        for (uint k = lane; k < p.K; k += LANES) {
#if defined(B_F16)
            uint e = row + k;
            float w = unpackHalf2x16(b[e >> 1])[e & 1u];
#else
            float w = uintBitsToFloat(b[row + k]);
#endif
            for (uint m = 0u; m < p.M; m++) acc[m] += uintBitsToFloat(a[aoff + m * p.lda + k]) * w;
        }
#endif
    }
    for (int m = 0; m < MAXM; m++) red[m][t] = acc[m];
    barrier();
    for (uint s = LANES / 2u; s > 0u; s >>= 1) {
        if (lane < s)
            for (uint m = 0u; m < p.M; m++) red[m][t] += red[m][t + s];
        barrier();
    }
    if (lane == 0u && n < p.N) {
        float bn = p.has_bias != 0u ? bias[p.bias_off + n] : 0.0;
        for (uint m = 0u; m < p.M; m++) c[coff + (p.c_trans != 0u ? n * p.ldc + m : m * p.ldc + n)] = red[m][t] + bn;
    }
}
