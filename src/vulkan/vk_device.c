/* vk_device.c — the Vulkan loader opened at run time, the instance (with a debug-utils
 * messenger that counts validation-layer errors, when the layer is on), the physical
 * devices in listing order, the features the backend needs, and the logical device with
 * one compute queue. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk.h"

typedef struct fn_entry {
    const char *name;
    size_t off;
} fn_entry;

static const fn_entry instance_fns[] = {
    {"vkDestroyInstance", offsetof(sotto__vki, DestroyInstance)},
    {"vkEnumeratePhysicalDevices", offsetof(sotto__vki, EnumeratePhysicalDevices)},
    {"vkGetPhysicalDeviceProperties", offsetof(sotto__vki, GetPhysicalDeviceProperties)},
    {"vkGetPhysicalDeviceFeatures", offsetof(sotto__vki, GetPhysicalDeviceFeatures)},
    {"vkGetPhysicalDeviceMemoryProperties", offsetof(sotto__vki, GetPhysicalDeviceMemoryProperties)},
    {"vkGetPhysicalDeviceQueueFamilyProperties", offsetof(sotto__vki, GetPhysicalDeviceQueueFamilyProperties)},
    {"vkEnumerateDeviceExtensionProperties", offsetof(sotto__vki, EnumerateDeviceExtensionProperties)},
    {"vkCreateDevice", offsetof(sotto__vki, CreateDevice)},
    {"vkGetDeviceProcAddr", offsetof(sotto__vki, GetDeviceProcAddr)},
};

static const fn_entry device_fns[] = {
    {"vkDestroyDevice", offsetof(sotto__vkd, DestroyDevice)},
    {"vkGetDeviceQueue", offsetof(sotto__vkd, GetDeviceQueue)},
    {"vkQueueSubmit", offsetof(sotto__vkd, QueueSubmit)},
    {"vkDeviceWaitIdle", offsetof(sotto__vkd, DeviceWaitIdle)},
    {"vkAllocateMemory", offsetof(sotto__vkd, AllocateMemory)},
    {"vkFreeMemory", offsetof(sotto__vkd, FreeMemory)},
    {"vkMapMemory", offsetof(sotto__vkd, MapMemory)},
    {"vkCreateBuffer", offsetof(sotto__vkd, CreateBuffer)},
    {"vkDestroyBuffer", offsetof(sotto__vkd, DestroyBuffer)},
    {"vkGetBufferMemoryRequirements", offsetof(sotto__vkd, GetBufferMemoryRequirements)},
    {"vkCreateBufferView", offsetof(sotto__vkd, CreateBufferView)},
    {"vkDestroyBufferView", offsetof(sotto__vkd, DestroyBufferView)},
    {"vkBindBufferMemory", offsetof(sotto__vkd, BindBufferMemory)},
    {"vkCreateShaderModule", offsetof(sotto__vkd, CreateShaderModule)},
    {"vkDestroyShaderModule", offsetof(sotto__vkd, DestroyShaderModule)},
    {"vkCreateDescriptorSetLayout", offsetof(sotto__vkd, CreateDescriptorSetLayout)},
    {"vkDestroyDescriptorSetLayout", offsetof(sotto__vkd, DestroyDescriptorSetLayout)},
    {"vkCreatePipelineLayout", offsetof(sotto__vkd, CreatePipelineLayout)},
    {"vkDestroyPipelineLayout", offsetof(sotto__vkd, DestroyPipelineLayout)},
    {"vkCreateComputePipelines", offsetof(sotto__vkd, CreateComputePipelines)},
    {"vkDestroyPipeline", offsetof(sotto__vkd, DestroyPipeline)},
    {"vkCreateCommandPool", offsetof(sotto__vkd, CreateCommandPool)},
    {"vkDestroyCommandPool", offsetof(sotto__vkd, DestroyCommandPool)},
    {"vkAllocateCommandBuffers", offsetof(sotto__vkd, AllocateCommandBuffers)},
    {"vkResetCommandBuffer", offsetof(sotto__vkd, ResetCommandBuffer)},
    {"vkBeginCommandBuffer", offsetof(sotto__vkd, BeginCommandBuffer)},
    {"vkEndCommandBuffer", offsetof(sotto__vkd, EndCommandBuffer)},
    {"vkCreateFence", offsetof(sotto__vkd, CreateFence)},
    {"vkDestroyFence", offsetof(sotto__vkd, DestroyFence)},
    {"vkWaitForFences", offsetof(sotto__vkd, WaitForFences)},
    {"vkResetFences", offsetof(sotto__vkd, ResetFences)},
    {"vkCmdBindPipeline", offsetof(sotto__vkd, CmdBindPipeline)},
    {"vkCmdPushConstants", offsetof(sotto__vkd, CmdPushConstants)},
    {"vkCmdPushDescriptorSetKHR", offsetof(sotto__vkd, CmdPushDescriptorSetKHR)},
    {"vkCmdDispatch", offsetof(sotto__vkd, CmdDispatch)},
    {"vkCmdPipelineBarrier", offsetof(sotto__vkd, CmdPipelineBarrier)},
    {"vkCmdCopyBuffer", offsetof(sotto__vkd, CmdCopyBuffer)},
    {"vkCmdFillBuffer", offsetof(sotto__vkd, CmdFillBuffer)},
    {"vkCmdUpdateBuffer", offsetof(sotto__vkd, CmdUpdateBuffer)},
};

/* Stores FN at byte OFF of the function table OBJ (every PFN has the same size). */
static void put_fn(void *obj, size_t off, PFN_vkVoidFunction fn) { memcpy((char *)obj + off, &fn, sizeof fn); }

/* The messenger: counts validation errors and keeps the first message (the backend's
 * next sync reports it). Warnings, information and loader messages pass. */
static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    sotto__vki *vi = user;
    if ((severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) &&
        (types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT)) {
        if (vi->n_validation_errors++ == 0)
            snprintf(vi->first_error, sizeof vi->first_error, "%s", data && data->pMessage ? data->pMessage : "?");
    }
    return VK_FALSE;
}

static bool has_extension(const VkExtensionProperties *ext, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(ext[i].extensionName, name) == 0) return true;
    return false;
}

/* The loader: $SOTTO_VULKAN_LOADER if set (tests point it at nothing), else the
 * system's libvulkan. */
static sotto_status open_loader(sotto__vki *vi, sotto__err *err)
{
    const char *env = getenv("SOTTO_VULKAN_LOADER");
    const char *name = env && *env ? env : "libvulkan.so.1";
    vi->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!vi->lib) return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "vulkan: no Vulkan loader (%s): %s", name, dlerror());
    void *sym = dlsym(vi->lib, "vkGetInstanceProcAddr");
    if (!sym) return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "vulkan: %s has no vkGetInstanceProcAddr", name);
    memcpy(&vi->GetInstanceProcAddr, &sym, sizeof sym);
    put_fn(vi, offsetof(sotto__vki, CreateInstance), vi->GetInstanceProcAddr(NULL, "vkCreateInstance"));
    put_fn(vi, offsetof(sotto__vki, EnumerateInstanceExtensionProperties),
           vi->GetInstanceProcAddr(NULL, "vkEnumerateInstanceExtensionProperties"));
    PFN_vkEnumerateInstanceVersion version_fn;
    put_fn(&version_fn, 0, vi->GetInstanceProcAddr(NULL, "vkEnumerateInstanceVersion"));
    uint32_t version = VK_API_VERSION_1_0;
    if (version_fn) version_fn(&version);
    if (!vi->CreateInstance || !vi->EnumerateInstanceExtensionProperties || version < VK_API_VERSION_1_1)
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "vulkan: the loader %s supports only Vulkan 1.0 (1.1 needed)",
                           name);
    return SOTTO_OK;
}

sotto_status sotto__vki_open(sotto__vki *vi, sotto__err *err)
{
    memset(vi, 0, sizeof *vi);
    sotto_status st = open_loader(vi, err);
    if (st) return st;
    VkExtensionProperties ext[64];
    uint32_t n_ext = 64;
    if (vi->EnumerateInstanceExtensionProperties(NULL, &n_ext, ext) < 0) n_ext = 0;
    const char *want[2];
    uint32_t n_want = 0;
    bool debug = has_extension(ext, n_ext, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (debug) want[n_want++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    bool portability = has_extension(ext, n_ext, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    if (portability) want[n_want++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
    VkDebugUtilsMessengerCreateInfoEXT mci = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
        .pfnUserCallback = on_message,
        .pUserData = vi,
    };
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "sotto",
                             .pEngineName = "sotto", .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = debug ? &mci : NULL, /* messages of instance creation too */
        .flags = portability ? VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR : 0,
        .pApplicationInfo = &app,
        .enabledExtensionCount = n_want,
        .ppEnabledExtensionNames = want,
    };
    VkResult r = vi->CreateInstance(&ici, NULL, &vi->instance);
    if (r != VK_SUCCESS) {
        vi->instance = VK_NULL_HANDLE;
        if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
            return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "vulkan: no Vulkan driver (vkCreateInstance: %d)", (int)r);
        return sotto__fail(err, SOTTO_ERR_NOMEM, "vulkan: vkCreateInstance failed (%d%s)", (int)r,
                           r == VK_ERROR_OUT_OF_HOST_MEMORY ? ": out of host memory, or a driver's ICD file the "
                                                              "loader could not read (VK_ICD_FILENAMES?)" : "");
    }
    for (size_t i = 0; i < sizeof instance_fns / sizeof *instance_fns; i++) {
        PFN_vkVoidFunction fn = vi->GetInstanceProcAddr(vi->instance, instance_fns[i].name);
        if (!fn) return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "vulkan: the loader lacks %s", instance_fns[i].name);
        put_fn(vi, instance_fns[i].off, fn);
    }
    if (debug) {
        put_fn(vi, offsetof(sotto__vki, CreateDebugUtilsMessengerEXT),
               vi->GetInstanceProcAddr(vi->instance, "vkCreateDebugUtilsMessengerEXT"));
        put_fn(vi, offsetof(sotto__vki, DestroyDebugUtilsMessengerEXT),
               vi->GetInstanceProcAddr(vi->instance, "vkDestroyDebugUtilsMessengerEXT"));
        if (vi->CreateDebugUtilsMessengerEXT &&
            vi->CreateDebugUtilsMessengerEXT(vi->instance, &mci, NULL, &vi->messenger) != VK_SUCCESS)
            vi->messenger = VK_NULL_HANDLE;
    }
    return SOTTO_OK;
}

void sotto__vki_close(sotto__vki *vi)
{
    if (vi->instance) {
        if (vi->messenger) vi->DestroyDebugUtilsMessengerEXT(vi->instance, vi->messenger, NULL);
        vi->DestroyInstance(vi->instance, NULL);
    }
    /* the loader stays mapped: drivers unloaded at exit leave nothing behind for the
     * leak checkers to find unattributed, and a second context opens it again at no cost */
    vi->instance = VK_NULL_HANDLE;
    vi->lib = NULL;
}

sotto_status sotto__vki_devices(sotto__vki *vi, VkPhysicalDevice *out, int cap, int *n, sotto__err *err)
{
    uint32_t count = (uint32_t)cap;
    VkResult r = vi->EnumeratePhysicalDevices(vi->instance, &count, out);
    if (r < 0) return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "vulkan: vkEnumeratePhysicalDevices failed (%d)", (int)r);
    *n = (int)count;
    return SOTTO_OK;
}

sotto_device_type sotto__vk_type(const VkPhysicalDeviceProperties *p)
{
    switch (p->deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return SOTTO_DEVICE_DISCRETE_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return SOTTO_DEVICE_INTEGRATED_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return SOTTO_DEVICE_VIRTUAL_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return SOTTO_DEVICE_SOFTWARE;
    default: return SOTTO_DEVICE_OTHER;
    }
}

/* The first queue family with compute, or -1. */
static int compute_family(const sotto__vki *vi, VkPhysicalDevice phys)
{
    VkQueueFamilyProperties q[16];
    uint32_t n = 16;
    vi->GetPhysicalDeviceQueueFamilyProperties(phys, &n, q);
    for (uint32_t i = 0; i < n; i++)
        if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT && q[i].queueCount > 0) return (int)i;
    return -1;
}

void sotto__vkd_check(const sotto__vki *vi, VkPhysicalDevice phys, char *why, size_t n)
{
    VkPhysicalDeviceProperties p;
    vi->GetPhysicalDeviceProperties(phys, &p);
    const VkPhysicalDeviceLimits *l = &p.limits;
    VkExtensionProperties ext[512];
    uint32_t n_ext = 512;
    if (vi->EnumerateDeviceExtensionProperties(phys, NULL, &n_ext, ext) < 0) n_ext = 0;
    why[0] = 0;
    if (p.apiVersion < VK_API_VERSION_1_1)
        snprintf(why, n, "supports Vulkan %u.%u, 1.1 needed", VK_API_VERSION_MAJOR(p.apiVersion),
                 VK_API_VERSION_MINOR(p.apiVersion));
    else if (compute_family(vi, phys) < 0)
        snprintf(why, n, "has no compute queue");
    else if (!has_extension(ext, n_ext, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME))
        snprintf(why, n, "lacks %s", VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    else if (l->maxComputeWorkGroupInvocations < 256 || l->maxComputeWorkGroupSize[0] < 256)
        snprintf(why, n, "runs %u invocations per workgroup, 256 needed", l->maxComputeWorkGroupInvocations);
    else if (l->maxPushConstantsSize < SOTTO__VK_PUSH_BYTES)
        snprintf(why, n, "has %u bytes of push constants, %d needed", l->maxPushConstantsSize, SOTTO__VK_PUSH_BYTES);
    else if (l->maxPerStageDescriptorStorageBuffers < SOTTO__VK_STORAGE)
        snprintf(why, n, "binds fewer than %d storage buffers", SOTTO__VK_STORAGE);
}

sotto_status sotto__vkd_open(const sotto__vki *vi, VkPhysicalDevice phys, sotto__vkd *d, sotto__err *err)
{
    memset(d, 0, sizeof *d);
    d->phys = phys;
    vi->GetPhysicalDeviceProperties(phys, &d->props);
    vi->GetPhysicalDeviceMemoryProperties(phys, &d->mem);
    char why[160];
    sotto__vkd_check(vi, phys, why, sizeof why);
    if (why[0]) return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "vulkan: %s %s", d->props.deviceName, why);
    d->family = (uint32_t)compute_family(vi, phys);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = d->family,
                                   .queueCount = 1, .pQueuePriorities = &prio};
    const char *ext[] = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
    /* doubles only where they are as fast as floats (software devices: the direct kernels'
     * exact FMA, vk_pipe.c) */
    VkPhysicalDeviceFeatures have, want = {0};
    vi->GetPhysicalDeviceFeatures(phys, &have);
    d->f64 = have.shaderFloat64 && d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    want.shaderFloat64 = d->f64;
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci, .enabledExtensionCount = 1, .ppEnabledExtensionNames = ext,
                              .pEnabledFeatures = &want};
    VkResult r = vi->CreateDevice(phys, &dci, NULL, &d->dev);
    if (r != VK_SUCCESS) {
        d->dev = VK_NULL_HANDLE;
        return sotto__fail(err, r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY
                                    ? SOTTO_ERR_NOMEM : SOTTO_ERR_UNSUPPORTED,
                           "vulkan: vkCreateDevice on %s failed (%d)", d->props.deviceName, (int)r);
    }
    for (size_t i = 0; i < sizeof device_fns / sizeof *device_fns; i++) {
        PFN_vkVoidFunction fn = vi->GetDeviceProcAddr(d->dev, device_fns[i].name);
        if (!fn) {
            put_fn(d, offsetof(sotto__vkd, DestroyDevice), vi->GetDeviceProcAddr(d->dev, "vkDestroyDevice"));
            return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "vulkan: %s lacks %s", d->props.deviceName,
                               device_fns[i].name);
        }
        put_fn(d, device_fns[i].off, fn);
    }
    d->GetDeviceQueue(d->dev, d->family, 0, &d->queue);
    return SOTTO_OK;
}

void sotto__vkd_close(sotto__vkd *d)
{
    if (d->dev && d->DestroyDevice) d->DestroyDevice(d->dev, NULL);
    d->dev = VK_NULL_HANDLE;
}

static uint64_t device_memory(const VkPhysicalDeviceMemoryProperties *m)
{
    uint64_t best = 0;
    for (uint32_t i = 0; i < m->memoryHeapCount; i++)
        if (m->memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT && m->memoryHeaps[i].size > best)
            best = m->memoryHeaps[i].size;
    return best;
}

sotto_status sotto__vk_list(sotto_device_info *out, int cap, int *n, sotto__err *err)
{
    *n = 0;
    sotto__vki vi;
    sotto_status st = sotto__vki_open(&vi, err);
    VkPhysicalDevice phys[16];
    int count = 0;
    if (!st) st = sotto__vki_devices(&vi, phys, 16, &count, err);
    for (int i = 0; !st && i < count && i < cap; i++) {
        VkPhysicalDeviceProperties p;
        VkPhysicalDeviceMemoryProperties m;
        vi.GetPhysicalDeviceProperties(phys[i], &p);
        vi.GetPhysicalDeviceMemoryProperties(phys[i], &m);
        sotto_device_info *o = &out[i];
        memset(o, 0, sizeof *o);
        snprintf(o->name, sizeof o->name, "%s", p.deviceName);
        o->type = sotto__vk_type(&p);
        o->memory_bytes = device_memory(&m);
        snprintf(o->version, sizeof o->version, "Vulkan %u.%u.%u", VK_API_VERSION_MAJOR(p.apiVersion),
                 VK_API_VERSION_MINOR(p.apiVersion), VK_API_VERSION_PATCH(p.apiVersion));
        sotto__vkd_check(&vi, phys[i], o->unusable, sizeof o->unusable);
    }
    if (!st) *n = count;
    sotto__vki_close(&vi);
    return st;
}
