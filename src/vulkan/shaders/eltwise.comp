#version 450
// eltwise.comp — element-wise ops over N floats, grid-stride. Variants (-D): GELU
// (x = 0.5 x (1 + erf(x / sqrt 2)), exact GELU as torch.nn.GELU) | ADD (x += y).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint x_off, y_off, n;
} p;

layout(std430, set = 0, binding = 0) buffer BufX { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufY { float y[]; };

void main()
{
    const uint step = 256u * gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    for (uint i = sotto_group_id() * 256u + gl_LocalInvocationID.x; i < p.n; i += step) {
#ifdef GELU
        float v = x[p.x_off + i];
        x[p.x_off + i] = 0.5 * v * sotto_one_plus_erf(v * 0.70710678118654752);
#else
        x[p.x_off + i] += y[p.y_off + i];
#endif
    }
}
