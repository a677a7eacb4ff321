#version 450
// gemv.comp — the product for few rows of A (M <= 8: decoder steps, beams, short
// prefills), batched over z: C[m,n] = sum_k A[m,k] B[n,k] (+ bias[n]) with B as rows
// (NT). 16 rows of B per workgroup, 16 threads on each splitting K (thread l takes
// elements l, l + 16, ...); the 16 partial sums are added in a tree. Variants (-D):
// B_F32 | B_F16 | B_Q8 (A then q8_0 activations as in mm.comp). B_Q8 sums as the scalar
// reference (kernels_ref.c matmul_q8, which every CPU kernel set matches): 32 rows per
// workgroup, 8 threads on each; 8 blocks at a time, thread i the term (d_a d_b) dot of block
// i with the int32 dot exact, then thread 0 adds the terms in block order from 0, the bias
// last, nothing fused (precise): the CPU's bits for the CPU's inputs.
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

#ifdef B_Q8
#define LANES 8u
#else
#define LANES 16u
#endif
#define ROWS (256u / LANES)
#define MAXM 8

shared float red[MAXM][256];

#ifdef B_Q8
void main()
{
    const uint t = gl_LocalInvocationID.x, lane = t % LANES;
    const uint n = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * ROWS + t / LANES;
    const uint z = gl_WorkGroupID.z;
    const uint aoff = p.a_off + z * p.sa, boff = p.b_off + z * p.sb, coff = p.c_off + z * p.sc;
    const uint adoff = p.ad_off + z * p.sad, nb = p.K / 32u;
    precise float s[MAXM];
    for (int m = 0; m < MAXM; m++) s[m] = 0.0;
    for (uint kb0 = 0u; kb0 < nb; kb0 += LANES) {
        /* lane l: block kb0 + l's term (d_a d_b) dot, the int32 dot of its 32 pairs exact */
        uint kb = kb0 + lane;
        if (n < p.N && kb < nb) {
            uint o = boff + (n * p.ldb + kb) * 34u, sh = (o & 3u) * 8u;
            float db = sotto_h2f(sotto_funnel(b[o >> 2], sh > 16u ? b[(o >> 2) + 1u] : 0u, sh) & 0xffffu);
            uint wb[8];
            for (uint w = 0u; w < 8u; w++) {
                uint q = o + 2u + 4u * w, sq = (q & 3u) * 8u;
                wb[w] = sotto_funnel(b[q >> 2], sq != 0u ? b[(q >> 2) + 1u] : 0u, sq);
            }
            for (uint m = 0u; m < p.M; m++) {
                int dot = 0;
                for (uint w = 0u; w < 8u; w++) dot += sotto_dot4(a[aoff + m * p.lda + kb * 8u + w], wb[w]);
                precise float dd = uintBitsToFloat(a[adoff + m * p.ldad + kb]) * db;
                precise float term = dd * float(dot);
                red[m][t] = term;
            }
        }
        barrier();
        /* lane 0 adds the blocks' terms in block order, as the reference */
        if (lane == 0u && n < p.N)
            for (uint m = 0u; m < p.M; m++)
                for (uint l = 0u; l < LANES && kb0 + l < nb; l++) s[m] = s[m] + red[m][t + l];
        barrier();
    }
    if (lane == 0u && n < p.N) {
        float bn = p.has_bias != 0u ? bias[p.bias_off + n] : 0.0;
        for (uint m = 0u; m < p.M; m++) {
            precise float sum = s[m] + bn;
            c[coff + (p.c_trans != 0u ? n * p.ldc + m : m * p.ldc + n)] = sum;
        }
    }
}
#else
void main()
{
    const uint t = gl_LocalInvocationID.x, lane = t % LANES;
    const uint n = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * ROWS + t / LANES;
    const uint z = gl_WorkGroupID.z;
    const uint aoff = p.a_off + z * p.sa, boff = p.b_off + z * p.sb, coff = p.c_off + z * p.sc;
    float acc[MAXM];
    for (int m = 0; m < MAXM; m++) acc[m] = 0.0;
    if (n < p.N) {
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
#endif
