/* backend_vulkan_none.c — the Vulkan entry points of a build without the Vulkan backend
 * (CMake SOTTO_VULKAN=OFF, or no Vulkan headers or glslc when it was built): each says
 * that vulkan is not built in. */
#include "backend_vulkan.h"

static sotto_status not_built(sotto__err *err)
{
    return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "vulkan is not built in (configure with the Vulkan headers and "
                                                   "glslc installed, or -DSOTTO_VULKAN=ON)");
}

static sotto_status list_none(sotto_device_info *out, int cap, int *n, sotto__err *err)
{
    *n = 0;
    return not_built(err);
}

sotto_status sotto__vk_backend_create(sotto__vk_want want, const sotto__limits *lim, sotto__backend **out,
                                      char *desc, size_t desc_len, sotto__err *err)
{
    *out = NULL;
    return not_built(err);
}

void sotto__vk_plant_error(sotto__backend *be) {}

bool sotto__vk_has_messenger(const sotto__backend *be) { return false; }

bool sotto__vk_exact_fma(const sotto__backend *be) { return false; }

static sotto_status create_none(const sotto__backend_config *cfg, sotto__backend **out, char *desc, size_t desc_len,
                                sotto__err *err)
{
    *out = NULL;
    return not_built(err);
}

const sotto__backend_reg sotto__vulkan_reg = {
    .name = "vulkan", .indexed = true, .fallback = false, .list = list_none, .create = create_none,
};
