/* vk.h — what the files of the Vulkan backend share: the Vulkan functions the backend
 * calls (loaded through vkGetInstanceProcAddr from the loader opened at run time; the
 * headers are used without prototypes), the device it runs on, its memory and its
 * recording state. Internal to src/vulkan/. */
#ifndef SOTTO_GPU_VK_H
#define SOTTO_GPU_VK_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "../backend.h"

/* The machine's Vulkan devices as sotto_device_list reports them (sotto.h
 * sotto_device_info; the registry's list, vk_device.c). */
sotto_status sotto__vk_list(sotto_device_info *out, int cap, int *n, sotto__err *err);

/* The loader's entry points and the instance (vk_device.c). */
typedef struct sotto__vki {
    void *lib;                 /* dlopen handle of libvulkan */
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    int n_validation_errors;   /* counted by the messenger */
    char first_error[512];
    PFN_vkGetInstanceProcAddr GetInstanceProcAddr;
    PFN_vkCreateInstance CreateInstance;
    PFN_vkEnumerateInstanceExtensionProperties EnumerateInstanceExtensionProperties;
    PFN_vkDestroyInstance DestroyInstance;
    PFN_vkEnumeratePhysicalDevices EnumeratePhysicalDevices;
    PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties;
    PFN_vkGetPhysicalDeviceFeatures GetPhysicalDeviceFeatures;
    PFN_vkGetPhysicalDeviceMemoryProperties GetPhysicalDeviceMemoryProperties;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties;
    PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties;
    PFN_vkCreateDevice CreateDevice;
    PFN_vkGetDeviceProcAddr GetDeviceProcAddr;
    PFN_vkCreateDebugUtilsMessengerEXT CreateDebugUtilsMessengerEXT;
    PFN_vkDestroyDebugUtilsMessengerEXT DestroyDebugUtilsMessengerEXT;
} sotto__vki;

/* The logical device and its functions (vk_device.c). */
typedef struct sotto__vkd {
    VkPhysicalDevice phys;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties mem;
    VkDevice dev;
    VkQueue queue;
    uint32_t family;
    bool f64;                  /* shaderFloat64 enabled */
    PFN_vkDestroyDevice DestroyDevice;
    PFN_vkGetDeviceQueue GetDeviceQueue;
    PFN_vkQueueSubmit QueueSubmit;
    PFN_vkDeviceWaitIdle DeviceWaitIdle;
    PFN_vkAllocateMemory AllocateMemory;
    PFN_vkFreeMemory FreeMemory;
    PFN_vkMapMemory MapMemory;
    PFN_vkCreateBuffer CreateBuffer;
    PFN_vkDestroyBuffer DestroyBuffer;
    PFN_vkGetBufferMemoryRequirements GetBufferMemoryRequirements;
    PFN_vkCreateBufferView CreateBufferView;
    PFN_vkDestroyBufferView DestroyBufferView;
    PFN_vkBindBufferMemory BindBufferMemory;
    PFN_vkCreateShaderModule CreateShaderModule;
    PFN_vkDestroyShaderModule DestroyShaderModule;
    PFN_vkCreateDescriptorSetLayout CreateDescriptorSetLayout;
    PFN_vkDestroyDescriptorSetLayout DestroyDescriptorSetLayout;
    PFN_vkCreatePipelineLayout CreatePipelineLayout;
    PFN_vkDestroyPipelineLayout DestroyPipelineLayout;
    PFN_vkCreateComputePipelines CreateComputePipelines;
    PFN_vkDestroyPipeline DestroyPipeline;
    PFN_vkCreateCommandPool CreateCommandPool;
    PFN_vkDestroyCommandPool DestroyCommandPool;
    PFN_vkAllocateCommandBuffers AllocateCommandBuffers;
    PFN_vkResetCommandBuffer ResetCommandBuffer;
    PFN_vkBeginCommandBuffer BeginCommandBuffer;
    PFN_vkEndCommandBuffer EndCommandBuffer;
    PFN_vkCreateFence CreateFence;
    PFN_vkDestroyFence DestroyFence;
    PFN_vkWaitForFences WaitForFences;
    PFN_vkResetFences ResetFences;
    PFN_vkCmdBindPipeline CmdBindPipeline;
    PFN_vkCmdPushConstants CmdPushConstants;
    PFN_vkCmdPushDescriptorSetKHR CmdPushDescriptorSetKHR;
    PFN_vkCmdDispatch CmdDispatch;
    PFN_vkCmdPipelineBarrier CmdPipelineBarrier;
    PFN_vkCmdCopyBuffer CmdCopyBuffer;
    PFN_vkCmdFillBuffer CmdFillBuffer;
    PFN_vkCmdUpdateBuffer CmdUpdateBuffer;
} sotto__vkd;

/* The one-time work of vk_device.c. Each fails with a message in ERR. */
sotto_status sotto__vki_open(sotto__vki *vi, sotto__err *err);     /* loader + instance (+ messenger) */
void sotto__vki_close(sotto__vki *vi);
/* The physical devices in listing order (*N of at most CAP). */
sotto_status sotto__vki_devices(sotto__vki *vi, VkPhysicalDevice *out, int cap, int *n, sotto__err *err);
/* The sotto_device_type of PROPS. */
sotto_device_type sotto__vk_type(const VkPhysicalDeviceProperties *props);
/* Why PHYS cannot run the backend ("" when it can), into WHY. */
void sotto__vkd_check(const sotto__vki *vi, VkPhysicalDevice phys, char *why, size_t n);
sotto_status sotto__vkd_open(const sotto__vki *vi, VkPhysicalDevice phys, sotto__vkd *d, sotto__err *err);
void sotto__vkd_close(sotto__vkd *d);

/* A device allocation: one VkBuffer over one VkDeviceMemory; a sotto__buf's mem points
 * at one of these, its off is bytes into it. */
typedef struct sotto__vk_block {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size, used;
    VkBufferView view, view4;  /* R32_UINT, R32G32B32A32_UINT texels over the whole block (the
                                  direct kernels' B), or null */
} sotto__vk_block;

/* One binding of an op: a range of a block as the descriptor holds it; DELTA is where
 * the op's data begin inside it, in bytes. */
typedef struct sotto__vk_range {
    VkBuffer buf;
    VkDeviceSize off, len;
    uint32_t delta;
    VkBufferView view, view4;  /* the texel bindings: its block's views */
} sotto__vk_range;

/* The pipelines (vk_pipe.c): one per shader variant (shaders/, embedded at build). */
typedef enum sotto__vk_pipe {
    VKP_MM_F32_NT, VKP_MM_F16_NT, VKP_MM_Q8_NT, VKP_MM_F32_NN, VKP_MM_F16_NN,
    VKP_GEMV_F32, VKP_GEMV_F16, VKP_GEMV_Q8,
    VKP_QUANT, VKP_LAYERNORM, VKP_SOFTMAX, VKP_GELU, VKP_ADD, VKP_TRANSPOSE, VKP_IM2COL,
    VKP_SPLIT_F32, VKP_SPLIT_F16, VKP_CROSS_K_SCALES, VKP_CROSS_K_PACK, VKP_CROSS_V_SCALES, VKP_CROSS_V_PACK,
    VKP_EMBED_F32, VKP_EMBED_F16, VKP_EMBED_Q8,
    VKP_MASK, VKP_ARGMAX1, VKP_ARGMAX2,
    /* the direct kernels of software devices (mmd.comp; layernorm, softmax DIRECT) */
    VKP_MMD_F32_NT, VKP_MMD_F16_NT, VKP_MMD_Q8_NT, VKP_MMD_F32_NN, VKP_MMD_F16_NN,
    VKP_MVD_F32_NT, VKP_MVD_F16_NT, VKP_MVD_Q8_NT, VKP_MVD_F32_NN, VKP_MVD_F16_NN,
    VKP_LAYERNORM_D, VKP_SOFTMAX_D, VKP_MVD_Q8_NT_F64,
    VKP_COUNT
} sotto__vk_pipe;

/* bindings 0-3: storage buffers; 4: a uniform buffer, 5 and 6: uniform texel buffers of
 * one block in 4- and 16-byte texels (the direct kernels' A rows and B) */
enum { SOTTO__VK_BINDINGS = 7, SOTTO__VK_STORAGE = 4, SOTTO__VK_UNIFORM = 4, SOTTO__VK_TEXELS = 5,
       SOTTO__VK_TEXELS4 = 6, SOTTO__VK_PUSH_BYTES = 128 };

/* The SPIR-V of every shader variant, compiled by glslc at build time and embedded
 * (vk_spirv.c, generated by cmake/spirv_embed.cmake). */
typedef struct sotto__vk_spirv {
    const char *name;          /* e.g. "mm_f32_nt" */
    const uint32_t *code;
    size_t bytes;
} sotto__vk_spirv;
extern const sotto__vk_spirv sotto__vk_shaders[];
extern const int sotto__vk_n_shaders;

typedef struct sotto__vk {
    sotto__backend base;
    sotto__vki vi;
    sotto__vkd d;
    int index;                     /* place in the listing */
    bool direct;                   /* the kernels for software devices (mmd.comp): on a
                                      software device, or SOTTO_VK_KERNELS=direct */
    VkDeviceSize max_range;        /* maxStorageBufferRange, rounded down to 256 bytes */
    VkDeviceSize align;            /* minStorageBufferOffsetAlignment (>= 4) */
    VkDeviceSize ubo_range, ubo_align; /* maxUniformBufferRange (<= 64 KiB), its offset alignment */
    uint32_t max_groups[3];
    uint32_t mem_type;             /* device-local type for blocks */
    uint32_t stage_type;           /* host-visible coherent type for staging */
    size_t mem_budget, mem_used;   /* SOTTO_VK_MAX_MEMORY_MB (0: none), bytes allocated */
    /* memory */
    sotto__vk_block **blocks;
    int n_blocks, cap_blocks;
    sotto__vk_block *weights;      /* the block imports fill, or NULL */
    VkBuffer stage_buf;
    VkDeviceMemory stage_mem;
    uint8_t *stage;                /* mapped */
    size_t stage_size, stage_used; /* used: by commands not yet waited for */
    /* recording */
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkFence fence;
    bool recording, pending;       /* pending: a command recorded since the last barrier */
    /* pipelines */
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkPipeline pipe[VKP_COUNT];
    /* scratch (one arena block, made at creation) */
    sotto__buf dummy;              /* 256 bytes for unused bindings */
    sotto__buf p;                  /* attention scores, p_bytes */
    sotto__buf qa, qb;             /* q8_0 activations: of a linear / the queries; of probabilities */
    sotto__buf scales;             /* cross_kv q8_0 scales */
    sotto__buf kr, vt;             /* direct attention: keys as rows, values transposed */
    sotto__buf part;               /* argmax partials and answer */
    sotto__buf ids;                /* token ids of embed */
    sotto__buf excl;               /* excluded ids of argmax */
    size_t p_bytes, qa_bytes, qb_bytes, scales_bytes, ids_cap, excl_cap, kr_floats;
    int32_t *excl_host;            /* the list the device holds, n_excl_host ids (-1: none) */
    int n_excl_host;
    /* the first failure since the last sync */
    sotto_status failed;
    char msg[SOTTO__ERR_LEN];
} sotto__vk;

/* Records the first failure on V (later ones are dropped); ops after it are skipped. */
void sotto__vk_fail(sotto__vk *v, sotto_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* memory and submission (vk_mem.c) */
sotto_status sotto__vk_mem_init(sotto__vk *v, sotto__err *err);
void sotto__vk_mem_free(sotto__vk *v);
sotto_status sotto__vk_alloc(sotto__vk *v, size_t bytes, sotto__buf *out, sotto__err *err);
sotto_status sotto__vk_import(sotto__vk *v, const void *host, size_t bytes, sotto__buf *out, sotto__err *err);
void sotto__vk_write(sotto__vk *v, sotto__buf dst, const void *src, size_t bytes);
void sotto__vk_zero(sotto__vk *v, sotto__buf dst, size_t bytes);
/* ROWS rows of ROW_BYTES from SRC to DST, DST_PITCH / SRC_PITCH bytes apart (one copy
 * command, its regions not overlapping). */
void sotto__vk_copy2d(sotto__vk *v, sotto__buf dst, size_t dst_pitch, sotto__buf src, size_t src_pitch, size_t rows,
                      size_t row_bytes);
void sotto__vk_read(sotto__vk *v, void *dst, sotto__buf src, size_t bytes);
/* The command buffer, begun if it was not; a barrier first when commands precede. */
VkCommandBuffer sotto__vk_cmd(sotto__vk *v);
/* Ends, submits and waits for the recorded commands; frees the staging space. */
void sotto__vk_flush(sotto__vk *v);
/* The binding of BYTES at B + OFF: false (and a failure on V) when the range exceeds
 * maxStorageBufferRange or the block. */
bool sotto__vk_bind(sotto__vk *v, sotto__buf b, size_t off, size_t bytes, sotto__vk_range *out);
/* The same as a uniform buffer (within ubo_range, offset aligned to ubo_align). */
bool sotto__vk_bind_uniform(sotto__vk *v, sotto__buf b, size_t off, size_t bytes, sotto__vk_range *out);

/* pipelines (vk_pipe.c) */
sotto_status sotto__vk_pipes_init(sotto__vk *v, sotto__err *err);
void sotto__vk_pipes_free(sotto__vk *v);
/* Records PIPE over the ranges R (NULL entries: the dummy; R[4] the uniform buffer, R[5]
 * a block's texel view), push constants PC (BYTES) and GX x GY x GZ workgroups (none
 * when one is 0). */
void sotto__vk_dispatch(sotto__vk *v, sotto__vk_pipe pipe, const sotto__vk_range *r[SOTTO__VK_BINDINGS], const void *pc,
                        size_t bytes, uint32_t gx, uint32_t gy, uint32_t gz);
/* Workgroups for N items of PER each, as gx (<= max) x gy. */
void sotto__vk_grid(const sotto__vk *v, size_t n, uint32_t per, uint32_t *gx, uint32_t *gy);

#endif
