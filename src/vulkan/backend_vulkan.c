/* backend_vulkan.c — the Vulkan backend's op table (backend.h) and its registry entry:
 * creation on the chosen device (pipelines on first use, one block of scratch sized from
 * the context's limits), the cross-attention K/V layouts, the embedding and the argmax,
 * whose one id is all that comes back per greedy step (the products: vk_matmul.c; the
 * element-wise and row ops: vk_eltwise.c). Ops record into one command buffer; read,
 * argmax and sync submit it and wait. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backend_row.h"
#include "../quant.h"
#include "backend_vulkan.h"
#include "vk_ops.h"

static sotto__vk *vk(sotto__backend *be) { return (sotto__vk *)be; }

/* The usable binding size: maxStorageBufferRange less its worst misalignment. */
static size_t room(const sotto__vk *v) { return (size_t)v->max_range - (size_t)v->align; }

static void vk_free(sotto__backend *be)
{
    sotto__vk *v = vk(be);
    if (!v) return;
    sotto__vk_pipes_free(v);
    sotto__vk_mem_free(v);
    sotto__vkd_close(&v->d);
    sotto__vki_close(&v->vi);
    free(v->excl_host);
    free(v);
}

static sotto_status vk_alloc(sotto__backend *be, size_t bytes, sotto__buf *out, sotto__err *err)
{
    return sotto__vk_alloc(vk(be), bytes, out, err);
}

static sotto_status vk_import(sotto__backend *be, const void *host, size_t bytes, sotto__buf *out, sotto__err *err)
{
    return sotto__vk_import(vk(be), host, bytes, out, err);
}

static void vk_write(sotto__backend *be, sotto__buf dst, const void *src, size_t bytes) { sotto__vk_write(vk(be), dst, src, bytes); }
static void vk_zero(sotto__backend *be, sotto__buf dst, size_t bytes) { sotto__vk_zero(vk(be), dst, bytes); }
static void vk_read(sotto__backend *be, void *dst, sotto__buf src, size_t bytes) { sotto__vk_read(vk(be), dst, src, bytes); }
static void vk_copy2d(sotto__backend *be, sotto__buf dst, size_t dst_pitch, sotto__buf src, size_t src_pitch,
                      size_t rows, size_t row_bytes)
{
    sotto__vk_copy2d(vk(be), dst, dst_pitch, src, src_pitch, rows, row_bytes);
}
static const void *vk_host(sotto__backend *be, sotto__buf b) { return NULL; }

static sotto_status vk_sync(sotto__backend *be, sotto__err *err)
{
    sotto__vk *v = vk(be);
    sotto__vk_flush(v);
    if (!v->failed) return SOTTO_OK;
    sotto_status st = sotto__fail(err, v->failed, "%s", v->msg);
    v->failed = SOTTO_OK; /* reported: the next pass starts clean */
    v->vi.n_validation_errors = 0;
    return st;
}

typedef struct pc_split {
    uint32_t s_off, d_off, d_half, S, n_head, dh;
} pc_split;

typedef struct pc_cross_q8 {
    uint32_t x_off, S, n_head, dh, Sp, sc_off, o_off, o_delta;
} pc_cross_q8;

/* One of K or V (q8_0: KEYS selects the layout) from the projected rows X. */
static void cross_one(sotto__vk *v, sotto__buf X, int S, int n_head, int dh, sotto_type type, bool keys, sotto__buf dst)
{
    const size_t d = (size_t)n_head * dh;
    size_t kb, vb;
    sotto__cross_layout(type, S, n_head, dh, &kb, &vb);
    sotto__vk_range rx, ro;
    if (!sotto__vk_bind(v, X, 0, 4 * (size_t)S * d, &rx) || !sotto__vk_bind(v, dst, 0, keys ? kb : vb, &ro)) return;
    uint32_t gx = 4096;
    if (type != SOTTO_TYPE_Q8_0) {
        pc_split pc = {rx.delta / 4, ro.delta / 4, (ro.delta % 4) / 2, (uint32_t)S, (uint32_t)n_head, (uint32_t)dh};
        const sotto__vk_range *r[SOTTO__VK_BINDINGS] = {&rx, &ro, NULL, NULL};
        size_t groups = ((size_t)S * d + 255) / 256;
        if (groups < gx) gx = (uint32_t)groups;
        sotto__vk_dispatch(v, type == SOTTO_TYPE_F16 ? VKP_SPLIT_F16 : VKP_SPLIT_F32, r, &pc, sizeof pc, gx, 1, 1);
        return;
    }
    sotto__vk_range rs;
    const size_t Sp = (size_t)sotto__cross_padded(S), blocks = keys ? (size_t)S * d / 32 : d * Sp / 32;
    if (2 * 4 * blocks > v->scales_bytes) {
        sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: cross_kv of %d x %zu exceeds the scratch", S, d);
        return;
    }
    if (!sotto__vk_bind(v, v->scales, 0, 2 * 4 * blocks, &rs)) return;
    pc_cross_q8 pc = {rx.delta / 4, (uint32_t)S, (uint32_t)n_head, (uint32_t)dh, (uint32_t)Sp, rs.delta / 4,
                      ro.delta / 4, ro.delta % 4};
    const sotto__vk_range *r[SOTTO__VK_BINDINGS] = {&rx, &rs, &ro, NULL};
    size_t groups = (blocks + 255) / 256;
    sotto__vk_dispatch(v, keys ? VKP_CROSS_K_SCALES : VKP_CROSS_V_SCALES, r, &pc, sizeof pc,
                       (uint32_t)(groups < 4096 ? groups : 4096), 1, 1);
    groups = (blocks * 34 / 4 + 256) / 256;
    sotto__vk_dispatch(v, keys ? VKP_CROSS_K_PACK : VKP_CROSS_V_PACK, r, &pc, sizeof pc,
                       (uint32_t)(groups < 4096 ? groups : 4096), 1, 1);
}

static void vk_cross_kv(sotto__backend *be, sotto__buf Kx, sotto__buf Vx, int S, int n_head, int dh, sotto_type type,
                        sotto__buf K, sotto__buf V)
{
    cross_one(vk(be), Kx, S, n_head, dh, type, true, K);
    cross_one(vk(be), Vx, S, n_head, dh, type, false, V);
}

typedef struct pc_embed {
    uint32_t e_off, row0, n_rows, d, n, pos_off, x_off, ids_off;
} pc_embed;

static void vk_embed(sotto__backend *be, const int32_t *tokens, int n, const sotto__blinear *emb, sotto__buf pos,
                     sotto__buf X)
{
    sotto__vk *v = vk(be);
    if (n <= 0) return;
    if ((size_t)n > v->ids_cap) {
        sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: embed of %d tokens exceeds the %zu the context holds", n,
                       v->ids_cap);
        return;
    }
    const size_t d = (size_t)emb->n_in;
    size_t row_bytes = 0;
    sotto__type_bytes(emb->type, (int64_t)d, &row_bytes);
    sotto__vk_write(v, v->ids, tokens, (size_t)n * sizeof *tokens); /* the only upload of a step */
    sotto__vk_range rp, rx, ri;
    if (!sotto__vk_bind(v, pos, 0, 4 * (size_t)n * d, &rp) || !sotto__vk_bind(v, X, 0, 4 * (size_t)n * d, &rx) ||
        !sotto__vk_bind(v, v->ids, 0, 4 * (size_t)n, &ri))
        return;
    sotto__vk_pipe p = emb->type == SOTTO_TYPE_Q8_0 ? VKP_EMBED_Q8 : emb->type == SOTTO_TYPE_F16 ? VKP_EMBED_F16
                                                                                                : VKP_EMBED_F32;
    uint32_t unit = emb->type == SOTTO_TYPE_Q8_0 ? 1 : emb->type == SOTTO_TYPE_F16 ? 2 : 4;
    /* the table in pieces of whole rows within the binding limit (even row counts keep
     * q8_0 pieces 4-aligned); a piece none of the tokens falls in is skipped */
    size_t piece = room(v) / row_bytes;
    if (piece > 1) piece &= ~(size_t)1;
    for (size_t r0 = 0; r0 < (size_t)emb->n_out; r0 += piece) {
        size_t rows = (size_t)emb->n_out - r0 < piece ? (size_t)emb->n_out - r0 : piece;
        bool any = false;
        for (int i = 0; i < n; i++) any |= (size_t)tokens[i] >= r0 && (size_t)tokens[i] < r0 + rows;
        sotto__vk_range re;
        if (!any) continue;
        if (!sotto__vk_bind(v, emb->w, r0 * row_bytes, rows * row_bytes, &re)) return;
        pc_embed pc = {re.delta / unit, (uint32_t)r0, (uint32_t)rows, (uint32_t)d, (uint32_t)n, rp.delta / 4,
                       rx.delta / 4, ri.delta / 4};
        const sotto__vk_range *r[SOTTO__VK_BINDINGS] = {&re, &rp, &rx, &ri};
        size_t groups = ((size_t)n * d + 255) / 256;
        sotto__vk_dispatch(v, p, r, &pc, sizeof pc, (uint32_t)(groups < 4096 ? groups : 4096), 1, 1);
    }
}

typedef struct pc_argmax {
    uint32_t x_off, n, part_off, n_part, out_off, ids_off, n_ids;
} pc_argmax;

enum { ARGMAX_PARTS = 256, EXCL_CAP = 1 << 16 };

/* The excluded ids of the N lists on the device (uploaded only when they differ from
 * the list it holds); their count, or -1 when there are more than it can hold. */
static int excl_upload(sotto__vk *v, const sotto__i32list *excl, int n)
{
    size_t total = 0;
    bool same = true;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < excl[i].n && same; j++)
            same = total + (size_t)j < (size_t)v->n_excl_host && v->excl_host[total + (size_t)j] == excl[i].v[j];
        total += (size_t)excl[i].n;
    }
    if (total > v->excl_cap) return -1;
    if (same && total == (size_t)v->n_excl_host) return (int)total;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        memcpy(v->excl_host + at, excl[i].v, (size_t)excl[i].n * sizeof *excl[i].v);
        at += (size_t)excl[i].n;
    }
    v->n_excl_host = (int)total;
    for (size_t o = 0; o < total; o += 16384) /* vkCmdUpdateBuffer takes 64 KiB at a time */
        sotto__vk_write(v, sotto__buf_at(v->excl, 4 * o), v->excl_host + o, 4 * (total - o < 16384 ? total - o : 16384));
    return (int)total;
}

static sotto_status vk_argmax(sotto__backend *be, sotto__buf X, const sotto__blinear *emb, const sotto__i32list *excl,
                              int n_excl, sotto__buf U, int32_t *out)
{
    sotto__vk *v = vk(be);
    const size_t n = (size_t)emb->n_out;
    *out = 0;
    sotto__vk_linear(be, X, 1, emb, U);
    int n_ids = excl_upload(v, excl, n_excl);
    if (n_ids < 0) sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: argmax: more than %zu excluded ids", v->excl_cap);
    sotto__vk_range ru, rpart, rids;
    if (!sotto__vk_bind(v, U, 0, 4 * n, &ru) || !sotto__vk_bind(v, v->part, 0, 8 * (ARGMAX_PARTS + 1), &rpart) ||
        !sotto__vk_bind(v, v->excl, 0, 4 * v->excl_cap, &rids))
        return v->failed;
    uint32_t parts = (uint32_t)((n + 255) / 256 < ARGMAX_PARTS ? (n + 255) / 256 : ARGMAX_PARTS);
    pc_argmax pc = {ru.delta / 4, (uint32_t)n, rpart.delta / 4, parts, rpart.delta / 4 + 2 * ARGMAX_PARTS,
                    rids.delta / 4, (uint32_t)(n_ids > 0 ? n_ids : 0)};
    const sotto__vk_range *r[SOTTO__VK_BINDINGS] = {&ru, &rpart, &rids, NULL};
    if (n_ids > 0) sotto__vk_dispatch(v, VKP_MASK, r, &pc, sizeof pc, (uint32_t)(n_ids + 255) / 256, 1, 1);
    sotto__vk_dispatch(v, VKP_ARGMAX1, r, &pc, sizeof pc, parts, 1, 1);
    sotto__vk_dispatch(v, VKP_ARGMAX2, r, &pc, sizeof pc, 1, 1, 1);
    uint32_t pair[2] = {0, 0};
    sotto__vk_read(v, pair, sotto__buf_at(v->part, 8 * ARGMAX_PARTS), sizeof pair);
    *out = (int32_t)pair[1];
    return v->failed;
}

static const sotto__backend_ops vk_ops = {
    .name = "vulkan",
    .free = vk_free,
    .alloc = vk_alloc,
    .import = vk_import,
    .write = vk_write,
    .zero = vk_zero,
    .copy2d = vk_copy2d,
    .read = vk_read,
    .host = vk_host,
    .sync = vk_sync,
    .conv3 = sotto__vk_conv3,
    .linear = sotto__vk_linear,
    .linear_rows = sotto__vk_linear, /* exact_rows 0: no rows promised */
    .layernorm = sotto__vk_layernorm,
    .gelu = sotto__vk_gelu,
    .add = sotto__vk_add,
    .transpose = sotto__vk_transpose_op,
    .attention = sotto__vk_attention,
    .attention_prefix = sotto__vk_attention_prefix,
    .cross_kv = vk_cross_kv,
    .cross_attention = sotto__vk_cross_attention,
    .embed = vk_embed,
    .argmax = vk_argmax,
    .row_max = sotto__row_max,         /* the logits are read back: the host's 4 lanes */
    .row_exp_sum = sotto__row_exp_sum,
    .host_for = sotto__host_for,       /* the host's rows one after the other */
};

static const char *type_word(sotto_device_type t)
{
    switch (t) {
    case SOTTO_DEVICE_DISCRETE_GPU: return "discrete GPU";
    case SOTTO_DEVICE_INTEGRATED_GPU: return "integrated GPU";
    case SOTTO_DEVICE_VIRTUAL_GPU: return "virtual GPU";
    case SOTTO_DEVICE_SOFTWARE: return "software";
    default: return "other";
    }
}

/* The device WANT names among PHYS[0..n), or -1 with the reason in ERR. */
static int choose(const sotto__vk *v, sotto__vk_want want, const VkPhysicalDevice *phys, int n, sotto__err *err)
{
    if (want.index >= 0) {
        if (want.index < n) return want.index;
        sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "vulkan: no device vulkan:%d (%d found)", want.index, n);
        return -1;
    }
    static const sotto_device_type rank[] = {SOTTO_DEVICE_DISCRETE_GPU, SOTTO_DEVICE_INTEGRATED_GPU,
                                             SOTTO_DEVICE_VIRTUAL_GPU, SOTTO_DEVICE_SOFTWARE, SOTTO_DEVICE_OTHER};
    for (int r = 0; r < (want.gpu_only ? 2 : 5); r++)
        for (int i = 0; i < n; i++) {
            VkPhysicalDeviceProperties p;
            v->vi.GetPhysicalDeviceProperties(phys[i], &p);
            if (sotto__vk_type(&p) == rank[r]) return i;
        }
    sotto__fail(err, SOTTO_ERR_UNSUPPORTED, n ? "vulkan: no GPU (only software or other devices)" : "vulkan: no Vulkan device");
    return -1;
}

static size_t round256(size_t n) { return (n + 255) & ~(size_t)255; }

/* The scratch every op shares, sized from LIM, as one block. */
static sotto_status scratch(sotto__vk *v, const sotto__limits *lim, sotto__err *err)
{
    const size_t rows = (size_t)lim->max_rows, Sp = (size_t)sotto__cross_padded(lim->cross_keys);
    const size_t keys = (size_t)lim->max_keys > Sp ? (size_t)lim->max_keys : Sp;
    const size_t d = (size_t)lim->max_heads * (size_t)lim->max_dh;
    size_t p = (size_t)lim->max_heads * rows * keys * 4;
    if (p > room(v)) p = room(v) / (4 * keys) * (4 * keys);
    v->p_bytes = p;
    v->qa_bytes = rows * (size_t)lim->max_in * 9 / 8;
    v->qb_bytes = lim->cross_type == SOTTO_TYPE_Q8_0 ? p / 4 * 9 / 8 : 0;
    v->scales_bytes = lim->cross_type == SOTTO_TYPE_Q8_0 ? 2 * 4 * d * Sp / 32 : 0;
    v->ids_cap = rows;
    v->excl_cap = EXCL_CAP;
    v->kr_floats = v->direct ? (size_t)lim->max_keys * d : 0;
    size_t sizes[] = {v->p_bytes, v->qa_bytes, v->qb_bytes, v->scales_bytes, 8 * (ARGMAX_PARTS + 1),
                      4 * v->ids_cap, 4 * v->excl_cap, 4 * v->kr_floats, 4 * v->kr_floats};
    sotto__buf *bufs[] = {&v->p, &v->qa, &v->qb, &v->scales, &v->part, &v->ids, &v->excl, &v->kr, &v->vt};
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) total += round256(sizes[i] ? sizes[i] : 4);
    sotto__buf base;
    /* the dummy of unused bindings in a block of its own: small enough for texel views */
    sotto_status st = sotto__vk_alloc(v, 256, &v->dummy, err);
    if (!st) st = sotto__vk_alloc(v, total, &base, err);
    if (st) return st;
    size_t at = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        *bufs[i] = sotto__buf_at(base, at);
        at += round256(sizes[i] ? sizes[i] : 4);
    }
    sotto__vk_zero(v, v->dummy, 256);
    v->excl_host = malloc(4 * v->excl_cap);
    v->n_excl_host = -1;
    if (!v->excl_host) return sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: out of memory");
    return SOTTO_OK;
}

/* Whether this machine has a GPU device node at all (Linux: a DRM render node, or
 * NVIDIA's proprietary device). Without one only software Vulkan drivers can answer, and
 * loading them to find that out costs tens of MB (lavapipe maps LLVM): auto skips it. */
static bool gpu_node_present(void)
{
#ifdef __linux__
    DIR *d = opendir("/dev/dri");
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d));) found = strncmp(e->d_name, "renderD", 7) == 0;
    if (d) closedir(d);
    return found || access("/dev/nvidia0", F_OK) == 0 || access("/dev/nvidiactl", F_OK) == 0;
#else
    return true;
#endif
}

sotto_status sotto__vk_backend_create(sotto__vk_want want, const sotto__limits *lim, sotto__backend **out,
                                      char *desc, size_t desc_len, sotto__err *err)
{
    *out = NULL;
    if (want.gpu_only && !gpu_node_present())
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "vulkan: no GPU (no /dev/dri render node or NVIDIA device)");
    sotto__vk *v = calloc(1, sizeof *v);
    if (!v) return sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: out of memory");
    v->base.ops = &vk_ops;
    VkPhysicalDevice phys[16];
    int n = 0;
    sotto_status st = sotto__vki_open(&v->vi, err);
    if (!st) st = sotto__vki_devices(&v->vi, phys, 16, &n, err);
    if (!st && (v->index = choose(v, want, phys, n, err)) < 0) st = err->status;
    if (!st) st = sotto__vkd_open(&v->vi, phys[v->index], &v->d, err);
    if (!st) {
        const VkPhysicalDeviceLimits *l = &v->d.props.limits;
        VkDeviceSize range = l->maxStorageBufferRange < (1u << 30) ? l->maxStorageBufferRange : (1u << 30);
        v->max_range = range & ~(VkDeviceSize)255;
        v->align = l->minStorageBufferOffsetAlignment > 4 ? l->minStorageBufferOffsetAlignment : 4;
        v->ubo_range = l->maxUniformBufferRange < 65536 ? l->maxUniformBufferRange & ~(VkDeviceSize)255 : 65536;
        v->ubo_align = l->minUniformBufferOffsetAlignment > 4 ? l->minUniformBufferOffsetAlignment : 4;
        memcpy(v->max_groups, l->maxComputeWorkGroupCount, sizeof v->max_groups);
        const char *k = getenv("SOTTO_VK_KERNELS");
        if (k && *k && strcmp(k, "direct") && strcmp(k, "tiled"))
            st = sotto__fail(err, SOTTO_ERR_INVALID_ARG, "vulkan: SOTTO_VK_KERNELS='%s' (direct or tiled; unset: "
                             "the device's kind decides)", k);
        v->direct = k && strcmp(k, "direct") == 0 ? true
                  : k && strcmp(k, "tiled") == 0  ? false
                                                  : sotto__vk_type(&v->d.props) == SOTTO_DEVICE_SOFTWARE;
        if (!st) st = sotto__vk_mem_init(v, err);
    }
    if (!st) st = sotto__vk_pipes_init(v, err);
    if (!st) st = scratch(v, lim, err);
    if (!st) st = vk_sync(&v->base, err);
    if (st) {
        vk_free(&v->base);
        return st;
    }
    snprintf(desc, desc_len, "vulkan:%d %s (%s)", v->index, v->d.props.deviceName,
             type_word(sotto__vk_type(&v->d.props)));
    *out = &v->base;
    return SOTTO_OK;
}

void sotto__vk_plant_error(sotto__backend *be)
{
    sotto__vk *v = vk(be);
    /* size 0 is invalid (VUID-vkCmdFillBuffer-size-00026) and writes nothing */
    v->d.CmdFillBuffer(sotto__vk_cmd(v), ((sotto__vk_block *)v->dummy.mem)->buf, v->dummy.off, 0, 0);
}

bool sotto__vk_has_messenger(const sotto__backend *be) { return ((const sotto__vk *)be)->vi.messenger != VK_NULL_HANDLE; }

bool sotto__vk_exact_fma(const sotto__backend *be) { return ((const sotto__vk *)be)->d.f64; }

static sotto_status vk_create(const sotto__backend_config *cfg, sotto__backend **out, char *desc, size_t desc_len,
                              sotto__err *err)
{
    sotto__vk_want want = {.index = cfg->index, .gpu_only = cfg->gpu_only};
    return sotto__vk_backend_create(want, &cfg->lim, out, desc, desc_len, err);
}

const sotto__backend_reg sotto__vulkan_reg = {
    .name = "vulkan", .indexed = true, .fallback = false, .list = sotto__vk_list, .create = vk_create, .ops = &vk_ops,
};
