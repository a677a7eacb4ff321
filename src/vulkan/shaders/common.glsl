// common.glsl — helpers every sotto compute shader shares: exact f16 <-> f32 conversion
// (bit for bit as src/common.c), byte access to q8_0 blocks at any byte offset, packed
// int8 dot products, and the erf of the GELU. Only core Vulkan 1.0 shader features:
// buffers are 32-bit words, halves and bytes are unpacked by hand.

// f32 -> IEEE half bits, round to nearest even, exactly as sotto__f32_to_f16.
uint sotto_f2h(float f)
{
    uint x = floatBitsToUint(f);
    uint sign = (x >> 16) & 0x8000u;
    uint ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u);
    if (ax >= 0x477ff000u) return sign | 0x7c00u;
    if (ax < 0x38800000u) {
        if (ax < 0x33000000u) return sign;
        uint man = (ax & 0x7fffffu) | 0x800000u;
        uint shift = 126u - (ax >> 23);
        uint q = man >> shift;
        uint rem = man & ((1u << shift) - 1u);
        uint half_ = 1u << (shift - 1u);
        if (rem > half_ || (rem == half_ && (q & 1u) != 0u)) q++;
        return sign | q;
    }
    uint r = ax - 0x38000000u;
    uint q = r >> 13;
    uint rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u) != 0u)) q++;
    return sign | q;
}

// IEEE half bits -> f32, exact for every value (subnormal halves are normal floats).
float sotto_h2f(uint h)
{
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint man = h & 0x3ffu;
    if (e == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (man << 13));
    if (e != 0u) return uintBitsToFloat(sign | ((e + 112u) << 23) | (man << 13));
    float v = float(man) * 5.9604644775390625e-8; // man * 2^-24, exact
    return sign != 0u ? -v : v;
}

// The 32 bits starting SH bits into LO, continuing into HI (SH a multiple of 8, < 32).
uint sotto_funnel(uint lo, uint hi, uint sh)
{
    return sh == 0u ? lo : (lo >> sh) | (hi << (32u - sh));
}

// Sum of the four products of the signed bytes of A and B.
int sotto_dot4(uint a, uint b)
{
    int ia = int(a), ib = int(b);
    return bitfieldExtract(ia, 0, 8) * bitfieldExtract(ib, 0, 8) + bitfieldExtract(ia, 8, 8) * bitfieldExtract(ib, 8, 8)
         + bitfieldExtract(ia, 16, 8) * bitfieldExtract(ib, 16, 8) + bitfieldExtract(ia, 24, 8) * bitfieldExtract(ib, 24, 8);
}

// 1 + erf(x), with relative accuracy near 1e-7 also where it is small (x << 0): a Taylor
// series for |x| < 0.5, else erfc(|x|) by the Chebyshev fit of Numerical Recipes (erfcc,
// fractional error < 1.2e-7).
float sotto_one_plus_erf(float x)
{
    float ax = abs(x);
    if (ax < 0.5) {
        float x2 = x * x;
        float s = 1.0 + x2 * (-1.0 / 3.0 + x2 * (1.0 / 10.0 + x2 * (-1.0 / 42.0 + x2 * (1.0 / 216.0 + x2 * (-1.0 / 1320.0)))));
        return 1.0 + 1.1283791670955126 * x * s;
    }
    float t = 1.0 / (1.0 + 0.5 * ax);
    float c = t * exp(-ax * ax - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806
              + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
    return x >= 0.0 ? 2.0 - c : c;
}

// Workgroup counts beyond 65535 in x go to y: the flat id of this workgroup.
uint sotto_group_id()
{
    return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}
