/* vk_eltwise.c — the Vulkan backend's element-wise and row ops (backend.h layernorm,
 * gelu, add, transpose) and the transpose the products use (vk_ops.h): one dispatch per
 * piece within the storage-binding limit. */
#include "vk_ops.h"

static sotto__vk *vk(sotto__backend *be) { return (sotto__vk *)be; }

/* The usable binding size: maxStorageBufferRange less its worst misalignment. */
static size_t room(const sotto__vk *v) { return (size_t)v->max_range - (size_t)v->align; }

typedef struct pc_layernorm {
    uint32_t x_off, y_off, g_off, b_off, d, rows;
} pc_layernorm;

void sotto__vk_layernorm(sotto__backend *be, sotto__buf X, int M, int d, const sotto__bnorm *n, sotto__buf Y)
{
    sotto__vk *v = vk(be);
    const size_t D = (size_t)d, piece = room(v) / (4 * D);
    sotto__vk_range rg, rb;
    if (!sotto__vk_bind(v, n->g, 0, 4 * D, &rg) || !sotto__vk_bind(v, n->b, 0, 4 * D, &rb)) return;
    for (size_t m0 = 0; m0 < (size_t)M; m0 += piece) {
        size_t rows = (size_t)M - m0 < piece ? (size_t)M - m0 : piece;
        sotto__vk_range rx, ry;
        if (!sotto__vk_bind(v, X, 4 * m0 * D, 4 * rows * D, &rx) || !sotto__vk_bind(v, Y, 4 * m0 * D, 4 * rows * D, &ry))
            return;
        pc_layernorm pc = {rx.delta / 4, ry.delta / 4, rg.delta / 4, rb.delta / 4, (uint32_t)D, (uint32_t)rows};
        const sotto__vk_range *r[SOTTO__VK_BINDINGS] = {&rx, &ry, &rg, &rb};
        uint32_t gx, gy;
        sotto__vk_grid(v, rows, v->direct ? 64 : 1, &gx, &gy);
        sotto__vk_dispatch(v, v->direct ? VKP_LAYERNORM_D : VKP_LAYERNORM, r, &pc, sizeof pc, gx, gy, 1);
    }
}

typedef struct pc_eltwise {
    uint32_t x_off, y_off, n;
} pc_eltwise;

/* GELU (Y mem NULL) or X += Y over N floats, in pieces within the binding limit. */
static void eltwise(sotto__vk *v, sotto__vk_pipe p, sotto__buf X, sotto__buf Y, size_t n)
{
    const size_t piece = room(v) / 4;
    for (size_t i = 0; i < n; i += piece) {
        size_t k = n - i < piece ? n - i : piece;
        sotto__vk_range rx, ry;
        if (!sotto__vk_bind(v, X, 4 * i, 4 * k, &rx) || (Y.mem && !sotto__vk_bind(v, Y, 4 * i, 4 * k, &ry))) return;
        pc_eltwise pc = {rx.delta / 4, Y.mem ? ry.delta / 4 : 0, (uint32_t)k};
        const sotto__vk_range *r[SOTTO__VK_BINDINGS] = {&rx, Y.mem ? &ry : NULL, NULL, NULL};
        size_t groups = (k + 255) / 256;
        sotto__vk_dispatch(v, p, r, &pc, sizeof pc, (uint32_t)(groups < 4096 ? groups : 4096), 1, 1);
    }
}

void sotto__vk_gelu(sotto__backend *be, sotto__buf x, size_t n) { eltwise(vk(be), VKP_GELU, x, (sotto__buf){0}, n); }
void sotto__vk_add(sotto__backend *be, sotto__buf x, sotto__buf y, size_t n) { eltwise(vk(be), VKP_ADD, x, y, n); }

typedef struct pc_transpose {
    uint32_t s_off, d_off, rows, cols, ld_dst, ld_src;
} pc_transpose;

void sotto__vk_transpose(sotto__vk *v, sotto__buf src, size_t ld_src, int rows, int cols, sotto__buf dst, size_t ld_dst)
{
    if (rows <= 0 || cols <= 0) return;
    sotto__vk_range rs, rd;
    size_t s_ext = (size_t)(rows - 1) * ld_src + (size_t)cols, d_ext = (size_t)(cols - 1) * ld_dst + (size_t)rows;
    if (!sotto__vk_bind(v, src, 0, 4 * s_ext, &rs) || !sotto__vk_bind(v, dst, 0, 4 * d_ext, &rd)) return;
    pc_transpose pc = {rs.delta / 4, rd.delta / 4, (uint32_t)rows, (uint32_t)cols, (uint32_t)ld_dst, (uint32_t)ld_src};
    const sotto__vk_range *r[SOTTO__VK_BINDINGS] = {&rs, &rd, NULL, NULL};
    sotto__vk_dispatch(v, VKP_TRANSPOSE, r, &pc, sizeof pc, (uint32_t)(cols + 31) / 32, (uint32_t)(rows + 31) / 32, 1);
}

void sotto__vk_transpose_op(sotto__backend *be, sotto__buf src, int rows, int cols, sotto__buf dst, size_t ld_dst)
{
    sotto__vk_transpose(vk(be), src, (size_t)cols, rows, cols, dst, ld_dst);
}

