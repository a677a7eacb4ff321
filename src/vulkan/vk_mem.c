/* vk_mem.c — device memory of the Vulkan backend and the one command buffer ops record
 * into: blocks (a VkBuffer over its own allocation; weights share blocks, the context's
 * arena has its own), a host-visible staging buffer for uploads and read-backs, and the
 * submission that read, argmax and sync wait for. Ops enqueue; nothing here allocates
 * once the context exists, except the staging space a write takes until the next wait. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk.h"

enum {
    STAGE_BYTES = 16 << 20,     /* uploads and read-backs pass through this many at a time */
    WEIGHTS_BLOCK = 64 << 20,   /* imports share blocks of this size (larger tensors: their own) */
    BLOCK_ALIGN = 256,          /* every suballocation; >= any minStorageBufferOffsetAlignment */
};

void sotto__vk_fail(sotto__vk *v, sotto_status st, const char *fmt, ...)
{
    if (v->failed) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg, sizeof v->msg, fmt, ap);
    va_end(ap);
    v->failed = st;
}

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* A memory type in BITS with all of WANT (and, where one has them, all of PREFER), or -1. */
static int pick_type(const VkPhysicalDeviceMemoryProperties *m, uint32_t bits, VkMemoryPropertyFlags want,
                     VkMemoryPropertyFlags prefer)
{
    int fallback = -1;
    for (uint32_t i = 0; i < m->memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = m->memoryTypes[i].propertyFlags;
        if (!(bits & (1u << i)) || (f & want) != want) continue;
        if ((f & prefer) == prefer) return (int)i;
        if (fallback < 0) fallback = (int)i;
    }
    return fallback;
}

/* A VkBuffer of SIZE bytes with its own memory of a type in WANT (PREFER where it can). */
static sotto_status make_buffer(sotto__vk *v, VkDeviceSize size, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer,
                                VkBuffer *buf, VkDeviceMemory *mem, sotto__err *err)
{
    const sotto__vkd *d = &v->d;
    if (v->mem_budget && (v->mem_used + size > v->mem_budget || size > v->mem_budget))
        return sotto__fail(err, SOTTO_ERR_NOMEM,
                           "vulkan: out of device memory: %.1f MB more would pass the limit SOTTO_VK_MAX_MEMORY_MB=%zu "
                           "sets (%.1f MB in use)", size / 1e6, v->mem_budget >> 20, v->mem_used / 1e6);
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
                                       VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                              .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = d->CreateBuffer(d->dev, &bci, NULL, buf);
    if (r != VK_SUCCESS) {
        *buf = VK_NULL_HANDLE;
        return sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: cannot create a buffer of %.1f MB (%d)", size / 1e6, (int)r);
    }
    VkMemoryRequirements req;
    d->GetBufferMemoryRequirements(d->dev, *buf, &req);
    int type = pick_type(&d->mem, req.memoryTypeBits, want, prefer);
    if (type < 0) return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "vulkan: no memory type for a storage buffer");
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                                .memoryTypeIndex = (uint32_t)type};
    r = d->AllocateMemory(d->dev, &mai, NULL, mem);
    if (r != VK_SUCCESS) {
        *mem = VK_NULL_HANDLE;
        return sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: out of device memory allocating %.1f MB (%.1f MB in use, %d)",
                           req.size / 1e6, v->mem_used / 1e6, (int)r);
    }
    v->mem_used += req.size;
    if (d->BindBufferMemory(d->dev, *buf, *mem, 0) != VK_SUCCESS)
        return sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: cannot bind %.1f MB of memory", size / 1e6);
    return SOTTO_OK;
}

/* A new block of SIZE bytes in the backend's list. */
static sotto_status new_block(sotto__vk *v, size_t size, sotto__vk_block **out, sotto__err *err)
{
    if (v->n_blocks == v->cap_blocks) {
        int cap = v->cap_blocks ? 2 * v->cap_blocks : 16;
        sotto__vk_block **p = realloc(v->blocks, (size_t)cap * sizeof *p);
        if (!p) return sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: out of memory");
        v->blocks = p, v->cap_blocks = cap;
    }
    sotto__vk_block *b = calloc(1, sizeof *b);
    if (!b) return sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: out of memory");
    v->blocks[v->n_blocks++] = b;
    b->size = round_up(size ? size : 1, BLOCK_ALIGN);
    sotto_status st = make_buffer(v, b->size, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, &b->buf, &b->mem, err);
    if (!st && b->size / 4 <= v->d.props.limits.maxTexelBufferElements) {
        VkBufferViewCreateInfo vci = {.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO, .buffer = b->buf,
                                      .format = VK_FORMAT_R32_UINT, .offset = 0, .range = b->size};
        VkBufferViewCreateInfo vci4 = vci;
        vci4.format = VK_FORMAT_R32G32B32A32_UINT;
        if (v->d.CreateBufferView(v->d.dev, &vci, NULL, &b->view) != VK_SUCCESS ||
            v->d.CreateBufferView(v->d.dev, &vci4, NULL, &b->view4) != VK_SUCCESS) {
            if (b->view) v->d.DestroyBufferView(v->d.dev, b->view, NULL);
            b->view = b->view4 = VK_NULL_HANDLE;
        }
    }
    *out = b;
    return st;
}

sotto_status sotto__vk_mem_init(sotto__vk *v, sotto__err *err)
{
    const sotto__vkd *d = &v->d;
    const char *env = getenv("SOTTO_VK_MAX_MEMORY_MB");
    char *end = NULL;
    unsigned long long mb = env && *env ? strtoull(env, &end, 10) : 0;
    if (env && *env && (*end || mb == 0 || mb > (1ull << 30)))
        return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "vulkan: SOTTO_VK_MAX_MEMORY_MB='%s' is not a count of MB "
                           "(1 or more; unset: no limit)", env);
    v->mem_budget = (size_t)mb << 20;
    v->stage_size = STAGE_BYTES;
    sotto_status st = make_buffer(v, v->stage_size, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                  VK_MEMORY_PROPERTY_HOST_CACHED_BIT, &v->stage_buf, &v->stage_mem, err);
    void *map = NULL;
    if (!st && d->MapMemory(d->dev, v->stage_mem, 0, VK_WHOLE_SIZE, 0, &map) != VK_SUCCESS)
        st = sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: cannot map the staging buffer");
    v->stage = map;
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = d->family};
    if (!st && d->CreateCommandPool(d->dev, &pci, NULL, &v->pool) != VK_SUCCESS)
        st = sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: cannot create a command pool");
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = v->pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    if (!st && d->AllocateCommandBuffers(d->dev, &cai, &v->cmd) != VK_SUCCESS)
        st = sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: cannot allocate a command buffer");
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (!st && d->CreateFence(d->dev, &fci, NULL, &v->fence) != VK_SUCCESS)
        st = sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: cannot create a fence");
    return st;
}

void sotto__vk_mem_free(sotto__vk *v)
{
    const sotto__vkd *d = &v->d;
    if (!d->dev) return;
    d->DeviceWaitIdle(d->dev);
    if (v->fence) d->DestroyFence(d->dev, v->fence, NULL);
    if (v->pool) d->DestroyCommandPool(d->dev, v->pool, NULL);
    if (v->stage_buf) d->DestroyBuffer(d->dev, v->stage_buf, NULL);
    if (v->stage_mem) d->FreeMemory(d->dev, v->stage_mem, NULL);
    for (int i = 0; i < v->n_blocks; i++) {
        if (v->blocks[i]->view) d->DestroyBufferView(d->dev, v->blocks[i]->view, NULL);
        if (v->blocks[i]->view4) d->DestroyBufferView(d->dev, v->blocks[i]->view4, NULL);
        if (v->blocks[i]->buf) d->DestroyBuffer(d->dev, v->blocks[i]->buf, NULL);
        if (v->blocks[i]->mem) d->FreeMemory(d->dev, v->blocks[i]->mem, NULL);
        free(v->blocks[i]);
    }
    free(v->blocks);
    v->blocks = NULL;
    v->n_blocks = 0;
}

sotto_status sotto__vk_alloc(sotto__vk *v, size_t bytes, sotto__buf *out, sotto__err *err)
{
    sotto__vk_block *b;
    sotto_status st = new_block(v, bytes, &b, err);
    if (st) return st;
    b->used = b->size;
    *out = (sotto__buf){b, 0};
    return SOTTO_OK;
}

sotto_status sotto__vk_import(sotto__vk *v, const void *host, size_t bytes, sotto__buf *out, sotto__err *err)
{
    sotto__vk_block *b = v->weights;
    if (!b || b->used + round_up(bytes, BLOCK_ALIGN) > b->size) {
        sotto_status st = new_block(v, bytes > WEIGHTS_BLOCK ? bytes : WEIGHTS_BLOCK, &b, err);
        if (st) return st;
        if (bytes <= WEIGHTS_BLOCK) v->weights = b;
    }
    *out = (sotto__buf){b, b->used};
    b->used += round_up(bytes, BLOCK_ALIGN);
    sotto__vk_write(v, *out, host, bytes);
    if (v->failed) return sotto__fail(err, v->failed, "%s", v->msg);
    return SOTTO_OK;
}

/* A barrier between everything recorded and what follows: every compute and transfer
 * write made visible to every later read and write (ops never overlap). */
static void barrier(sotto__vk *v, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = dst_access};
    v->d.CmdPipelineBarrier(v->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, dst_stage,
                            0, 1, &mb, 0, NULL, 0, NULL);
}

VkCommandBuffer sotto__vk_cmd(sotto__vk *v)
{
    if (!v->recording) {
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        v->d.ResetCommandBuffer(v->cmd, 0);
        if (v->d.BeginCommandBuffer(v->cmd, &bi) != VK_SUCCESS)
            sotto__vk_fail(v, SOTTO_ERR_NOMEM, "vulkan: vkBeginCommandBuffer failed");
        v->recording = true;
        v->pending = false;
    }
    if (v->pending)
        barrier(v, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                    VK_ACCESS_TRANSFER_WRITE_BIT);
    v->pending = true;
    return v->cmd;
}

void sotto__vk_flush(sotto__vk *v)
{
    const sotto__vkd *d = &v->d;
    if (v->recording) {
        v->recording = false;
        VkResult r = d->EndCommandBuffer(v->cmd);
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &v->cmd};
        if (r == VK_SUCCESS) r = d->QueueSubmit(d->queue, 1, &si, v->fence);
        if (r == VK_SUCCESS) r = d->WaitForFences(d->dev, 1, &v->fence, VK_TRUE, UINT64_MAX);
        d->ResetFences(d->dev, 1, &v->fence);
        if (r != VK_SUCCESS)
            sotto__vk_fail(v, r == VK_ERROR_DEVICE_LOST ? SOTTO_ERR_UNSUPPORTED : SOTTO_ERR_NOMEM,
                           "vulkan: %s (%d)", r == VK_ERROR_DEVICE_LOST ? "device lost" : "submission failed", (int)r);
    }
    v->stage_used = 0;
    if (v->vi.n_validation_errors)
        sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: %d validation error(s), the first: %s",
                       v->vi.n_validation_errors, v->vi.first_error);
}

/* BYTES of staging space, waiting for the commands that hold it when it is short (at
 * most the whole staging buffer); its byte offset into the staging buffer. */
static size_t stage_take(sotto__vk *v, size_t bytes)
{
    if (v->stage_used + bytes > v->stage_size) sotto__vk_flush(v);
    size_t at = v->stage_used;
    v->stage_used = round_up(at + bytes, 16);
    return at;
}

static sotto__vk_block *block(sotto__buf b) { return b.mem; }

void sotto__vk_write(sotto__vk *v, sotto__buf dst, const void *src, size_t bytes)
{
    if (v->failed || !bytes) return;
    VkDeviceSize off = dst.off;
    if (bytes <= 65536 && off % 4 == 0 && bytes % 4 == 0) { /* inline in the command buffer */
        v->d.CmdUpdateBuffer(sotto__vk_cmd(v), block(dst)->buf, off, bytes, src);
        return;
    }
    for (size_t done = 0; done < bytes && !v->failed;) {
        size_t n = bytes - done < v->stage_size ? bytes - done : v->stage_size;
        size_t at = stage_take(v, n);
        memcpy(v->stage + at, (const char *)src + done, n);
        VkBufferCopy region = {.srcOffset = at, .dstOffset = off + done, .size = n};
        v->d.CmdCopyBuffer(sotto__vk_cmd(v), v->stage_buf, block(dst)->buf, 1, &region);
        done += n;
    }
}

void sotto__vk_zero(sotto__vk *v, sotto__buf dst, size_t bytes)
{
    if (v->failed || !bytes) return;
    if (dst.off % 4 == 0 && bytes % 4 == 0) {
        v->d.CmdFillBuffer(sotto__vk_cmd(v), block(dst)->buf, dst.off, bytes, 0);
        return;
    }
    for (size_t done = 0; done < bytes && !v->failed;) { /* any alignment: copy zeros */
        size_t n = bytes - done < v->stage_size ? bytes - done : v->stage_size;
        size_t at = stage_take(v, n);
        memset(v->stage + at, 0, n);
        VkBufferCopy region = {.srcOffset = at, .dstOffset = dst.off + done, .size = n};
        v->d.CmdCopyBuffer(sotto__vk_cmd(v), v->stage_buf, block(dst)->buf, 1, &region);
        done += n;
    }
}

void sotto__vk_copy2d(sotto__vk *v, sotto__buf dst, size_t dst_pitch, sotto__buf src, size_t src_pitch, size_t rows,
                      size_t row_bytes)
{
    if (v->failed || !rows || !row_bytes) return;
    enum { BATCH = 256 };
    VkBufferCopy regions[BATCH];
    for (size_t r0 = 0; r0 < rows; r0 += BATCH) {
        uint32_t n = (uint32_t)(rows - r0 < BATCH ? rows - r0 : BATCH);
        for (uint32_t i = 0; i < n; i++)
            regions[i] = (VkBufferCopy){.srcOffset = src.off + (r0 + i) * src_pitch,
                                        .dstOffset = dst.off + (r0 + i) * dst_pitch, .size = row_bytes};
        v->d.CmdCopyBuffer(sotto__vk_cmd(v), block(src)->buf, block(dst)->buf, n, regions);
    }
}

void sotto__vk_read(sotto__vk *v, void *dst, sotto__buf src, size_t bytes)
{
    for (size_t done = 0; done < bytes && !v->failed;) {
        size_t n = bytes - done < v->stage_size ? bytes - done : v->stage_size;
        size_t at = stage_take(v, n);
        VkBufferCopy region = {.srcOffset = src.off + done, .dstOffset = at, .size = n};
        v->d.CmdCopyBuffer(sotto__vk_cmd(v), block(src)->buf, v->stage_buf, 1, &region);
        barrier(v, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
        sotto__vk_flush(v);
        if (!v->failed) memcpy((char *)dst + done, v->stage + at, n);
        done += n;
    }
    if (v->failed) memset(dst, 0, bytes);
}

static bool bind(sotto__vk *v, sotto__buf b, size_t off, size_t bytes, VkDeviceSize align, VkDeviceSize max,
                 sotto__vk_range *out)
{
    const sotto__vk_block *blk = block(b);
    VkDeviceSize at = b.off + off, start = at - at % align;
    VkDeviceSize len = round_up((size_t)(at - start + bytes), 4);
    if (!blk || at + bytes > blk->size || (start + len > blk->size ? blk->size - start : len) > max) {
        sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: a binding of %zu bytes at %zu exceeds %s", bytes, (size_t)at,
                       !blk || at + bytes > blk->size ? "its buffer" : "the device's binding range");
        return false;
    }
    if (start + len > blk->size) len = blk->size - start;
    *out = (sotto__vk_range){blk->buf, start, len ? len : 4, (uint32_t)(at - start), blk->view, blk->view4};
    return true;
}

bool sotto__vk_bind(sotto__vk *v, sotto__buf b, size_t off, size_t bytes, sotto__vk_range *out)
{
    return bind(v, b, off, bytes, v->align, v->max_range, out);
}

bool sotto__vk_bind_uniform(sotto__vk *v, sotto__buf b, size_t off, size_t bytes, sotto__vk_range *out)
{
    return bind(v, b, off, bytes, v->ubo_align, v->ubo_range, out);
}
