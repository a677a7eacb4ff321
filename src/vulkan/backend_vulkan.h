/* backend_vulkan.h — the Vulkan compute backend: the op table of backend.h on a Vulkan
 * device (src/vulkan/; the registry lists and opens it as "vulkan"), for its tests. The Vulkan loader is
 * opened at run time (dlopen), so a build with this backend still runs, on the CPU, where
 * there is none. Nothing here prints. */
#ifndef SOTTO_BACKEND_VULKAN_H
#define SOTTO_BACKEND_VULKAN_H

#include "../backend.h"

/* How a context asks for a device: INDEX >= 0 the device of that place in the listing;
 * INDEX < 0 the best one (discrete, integrated, virtual, then software), and with
 * GPU_ONLY only a discrete or integrated GPU (else SOTTO_ERR_UNSUPPORTED, message "no
 * GPU"). */
typedef struct sotto__vk_want {
    int index;
    bool gpu_only;
} sotto__vk_want;

/* A Vulkan backend on the device WANT names, with its pipelines, scratch for ops within
 * LIM and its own instance. DESC receives "vulkan:N NAME (TYPE)". Fails with a message:
 * no loader, no (such) device, a missing feature, out of device memory. */
sotto_status sotto__vk_backend_create(sotto__vk_want want, const sotto__limits *lim, sotto__backend **out,
                                      char *desc, size_t desc_len, sotto__err *err);

/* For tests: records a command the validation layer rejects (vkCmdFillBuffer at an
 * offset that is not a multiple of 4, inside the backend's own scratch), so that a test
 * can prove that layer errors reach sync. */
void sotto__vk_plant_error(sotto__backend *be);

/* Whether BE's direct kernels multiply-add with one rounding (doubles on its device). */
bool sotto__vk_exact_fma(const sotto__backend *be);

/* Whether BE (a Vulkan backend) counts validation-layer errors (VK_EXT_debug_utils). */
bool sotto__vk_has_messenger(const sotto__backend *be);

#endif
