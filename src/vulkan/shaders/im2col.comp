#version 450
// im2col.comp — the rows of a kernel-3, padding-1 convolution: patches[t][i * 3 + k] =
// x(channel i, time stride t + k - 1), 0 outside 0..T_in, with x(i, s) at x[i sc + s st].
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint x_off, sc, st, c_in, T_in, stride, T_out, p_off;
} p;

layout(std430, set = 0, binding = 0) readonly buffer BufX { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer BufP { float patches[]; };

void main()
{
    const uint K = p.c_in * 3u, n = p.T_out * K, step = 256u * gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    for (uint e = sotto_group_id() * 256u + gl_LocalInvocationID.x; e < n; e += step) {
        uint t = e / K, col = e % K, i = col / 3u, k = col % 3u;
        int s = int(p.stride * t + k) - 1;
        patches[p.p_off + e] = s >= 0 && uint(s) < p.T_in ? x[p.x_off + i * p.sc + uint(s) * p.st] : 0.0;
    }
}
