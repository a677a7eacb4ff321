/* vk_pipe.c — the compute pipelines of the Vulkan backend, one per shader variant, all on
 * one layout (four storage buffers as push descriptors, 128 bytes of push constants), each
 * created the first time an op needs it and kept until the backend goes; and the recording
 * of one dispatch. */
#include <string.h>

#include "vk.h"

/* The embedded shader of each pipeline (CMakeLists.txt names the same variants). */
static const char *const shader_of[VKP_COUNT] = {
    [VKP_MM_F32_NT] = "mm_f32_nt", [VKP_MM_F16_NT] = "mm_f16_nt", [VKP_MM_Q8_NT] = "mm_q8_nt",
    [VKP_MM_F32_NN] = "mm_f32_nn", [VKP_MM_F16_NN] = "mm_f16_nn",
    [VKP_GEMV_F32] = "gemv_f32", [VKP_GEMV_F16] = "gemv_f16", [VKP_GEMV_Q8] = "gemv_q8",
    [VKP_QUANT] = "quant", [VKP_LAYERNORM] = "layernorm", [VKP_SOFTMAX] = "softmax",
    [VKP_GELU] = "gelu", [VKP_ADD] = "add", [VKP_TRANSPOSE] = "transpose", [VKP_IM2COL] = "im2col",
    [VKP_SPLIT_F32] = "split_f32", [VKP_SPLIT_F16] = "split_f16",
    [VKP_CROSS_K_SCALES] = "cross_k_scales", [VKP_CROSS_K_PACK] = "cross_k_pack",
    [VKP_CROSS_V_SCALES] = "cross_v_scales", [VKP_CROSS_V_PACK] = "cross_v_pack",
    [VKP_EMBED_F32] = "embed_f32", [VKP_EMBED_F16] = "embed_f16", [VKP_EMBED_Q8] = "embed_q8",
    [VKP_MASK] = "mask", [VKP_ARGMAX1] = "argmax1", [VKP_ARGMAX2] = "argmax2",
    [VKP_MMD_F32_NT] = "mmd_f32_nt", [VKP_MMD_F16_NT] = "mmd_f16_nt", [VKP_MMD_Q8_NT] = "mmd_q8_nt",
    [VKP_MMD_F32_NN] = "mmd_f32_nn", [VKP_MMD_F16_NN] = "mmd_f16_nn",
    [VKP_MVD_F32_NT] = "mvd_f32_nt", [VKP_MVD_F16_NT] = "mvd_f16_nt", [VKP_MVD_Q8_NT] = "mvd_q8_nt",
    [VKP_MVD_F32_NN] = "mvd_f32_nn", [VKP_MVD_F16_NN] = "mvd_f16_nn",
    [VKP_LAYERNORM_D] = "layernorm_d", [VKP_SOFTMAX_D] = "softmax_d", [VKP_MVD_Q8_NT_F64] = "mvd_q8_nt_f64",
};

static VkDescriptorType binding_type(int i)
{
    return i < SOTTO__VK_STORAGE     ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
         : i == SOTTO__VK_UNIFORM    ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                     : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
}

sotto_status sotto__vk_pipes_init(sotto__vk *v, sotto__err *err)
{
    const sotto__vkd *d = &v->d;
    VkDescriptorSetLayoutBinding b[SOTTO__VK_BINDINGS];
    for (int i = 0; i < SOTTO__VK_BINDINGS; i++)
        b[i] = (VkDescriptorSetLayoutBinding){.binding = (uint32_t)i, .descriptorType = binding_type(i),
                                              .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                           .flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR,
                                           .bindingCount = SOTTO__VK_BINDINGS, .pBindings = b};
    if (d->CreateDescriptorSetLayout(d->dev, &dci, NULL, &v->dsl) != VK_SUCCESS)
        return sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: cannot create the descriptor set layout");
    VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = SOTTO__VK_PUSH_BYTES};
    VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                      .pSetLayouts = &v->dsl, .pushConstantRangeCount = 1, .pPushConstantRanges = &pcr};
    if (d->CreatePipelineLayout(d->dev, &lci, NULL, &v->layout) != VK_SUCCESS)
        return sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: cannot create the pipeline layout");
    return SOTTO_OK;
}

void sotto__vk_pipes_free(sotto__vk *v)
{
    const sotto__vkd *d = &v->d;
    if (!d->dev) return;
    for (int i = 0; i < VKP_COUNT; i++)
        if (v->pipe[i]) d->DestroyPipeline(d->dev, v->pipe[i], NULL);
    if (v->layout) d->DestroyPipelineLayout(d->dev, v->layout, NULL);
    if (v->dsl) d->DestroyDescriptorSetLayout(d->dev, v->dsl, NULL);
}

/* The pipeline of P, made now if it was not; VK_NULL_HANDLE (and a failure on V) when it
 * cannot be. */
static VkPipeline pipeline(sotto__vk *v, sotto__vk_pipe p)
{
    if (v->pipe[p]) return v->pipe[p];
    const sotto__vkd *d = &v->d;
    const sotto__vk_spirv *s = NULL;
    for (int i = 0; i < sotto__vk_n_shaders; i++)
        if (strcmp(sotto__vk_shaders[i].name, shader_of[p]) == 0) s = &sotto__vk_shaders[i];
    if (!s) {
        sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: shader %s is not built in", shader_of[p]);
        return VK_NULL_HANDLE;
    }
    VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = s->bytes,
                                    .pCode = s->code};
    VkShaderModule mod;
    VkResult r = d->CreateShaderModule(d->dev, &mci, NULL, &mod);
    if (r == VK_SUCCESS) {
        VkComputePipelineCreateInfo pci = {
            .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                      .module = mod, .pName = "main"},
            .layout = v->layout,
        };
        r = d->CreateComputePipelines(d->dev, VK_NULL_HANDLE, 1, &pci, NULL, &v->pipe[p]);
        d->DestroyShaderModule(d->dev, mod, NULL);
    }
    if (r != VK_SUCCESS) {
        v->pipe[p] = VK_NULL_HANDLE;
        sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: cannot create the %s pipeline (%d)", shader_of[p], (int)r);
    }
    return v->pipe[p];
}

void sotto__vk_dispatch(sotto__vk *v, sotto__vk_pipe p, const sotto__vk_range *r[SOTTO__VK_BINDINGS], const void *pc,
                        size_t bytes, uint32_t gx, uint32_t gy, uint32_t gz)
{
    if (v->failed || !gx || !gy || !gz) return;
    if (gx > v->max_groups[0] || gy > v->max_groups[1] || gz > v->max_groups[2]) {
        sotto__vk_fail(v, SOTTO_ERR_UNSUPPORTED, "vulkan: %s: %u x %u x %u workgroups exceed the device's limit",
                       shader_of[p], gx, gy, gz);
        return;
    }
    VkPipeline pipe = pipeline(v, p);
    if (!pipe) return;
    const sotto__vkd *d = &v->d;
    VkDescriptorBufferInfo info[SOTTO__VK_BINDINGS];
    VkWriteDescriptorSet w[SOTTO__VK_BINDINGS];
    sotto__vk_range dummy;
    if (!sotto__vk_bind(v, v->dummy, 0, 16, &dummy)) return;
    for (int i = 0; i < SOTTO__VK_BINDINGS; i++) {
        const sotto__vk_range *ri = r[i] ? r[i] : &dummy;
        info[i] = (VkDescriptorBufferInfo){ri->buf, ri->off, ri->len};
        w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstBinding = (uint32_t)i,
                                      .descriptorCount = 1, .descriptorType = binding_type(i)};
        if (i == SOTTO__VK_TEXELS) w[i].pTexelBufferView = &ri->view;
        else if (i == SOTTO__VK_TEXELS4) w[i].pTexelBufferView = &ri->view4;
        else w[i].pBufferInfo = &info[i];
    }
    VkCommandBuffer cmd = sotto__vk_cmd(v);
    d->CmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    d->CmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, v->layout, 0, SOTTO__VK_BINDINGS, w);
    d->CmdPushConstants(cmd, v->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)bytes, pc);
    d->CmdDispatch(cmd, gx, gy, gz);
}

void sotto__vk_grid(const sotto__vk *v, size_t n, uint32_t per, uint32_t *gx, uint32_t *gy)
{
    size_t groups = (n + per - 1) / per, mx = v->max_groups[0];
    *gx = (uint32_t)(groups < mx ? groups : mx);
    *gy = (uint32_t)(groups ? (groups + mx - 1) / mx : 0);
}
