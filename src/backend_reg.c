/* backend_reg.c — the device registry: one line per backend ({name, list, create}, each
 * defined in the backend's folder), the one parser of device strings ("auto", "name",
 * "name:N"), and the public device listing (sotto.h). A context and the VAD open their
 * backend here; nothing else names a backend. */
#include <stdio.h>
#include <string.h>

#include "backend.h"

extern const sotto__backend_reg sotto__cpu_reg;    /* src/cpu/backend_cpu.c */
extern const sotto__backend_reg sotto__vulkan_reg; /* src/vulkan/ (a stub that says "not built in" without it) */
#ifdef SOTTO_HAVE_NULL
extern const sotto__backend_reg sotto__null_reg;   /* tests/backend_null/: the test build's reference backend */
#endif

static const sotto__backend_reg *const registry[] = {
    &sotto__cpu_reg,
    &sotto__vulkan_reg,
#ifdef SOTTO_HAVE_NULL
    &sotto__null_reg,
#endif
    NULL,
};

const sotto__backend_reg *sotto__backend_reg_at(int i)
{
    return i >= 0 && i < (int)(sizeof registry / sizeof *registry) ? registry[i] : NULL;
}

static const sotto__backend_reg *by_name(const char *name, size_t len)
{
    for (int i = 0; registry[i]; i++)
        if (strlen(registry[i]->name) == len && strncmp(registry[i]->name, name, len) == 0) return registry[i];
    return NULL;
}

/* The backend DEVICE names (*REG NULL for auto) and the N of "name:N" (*INDEX, -1 when
 * none is given); false for anything else: an unknown name, ":N" on a backend that does
 * not count its devices, N not decimal digits or above 9999. */
static bool parse(const char *device, const sotto__backend_reg **reg, int *index)
{
    *reg = NULL, *index = -1;
    if (!device || strcmp(device, "auto") == 0) return true;
    const char *colon = strchr(device, ':');
    *reg = by_name(device, colon ? (size_t)(colon - device) : strlen(device));
    if (!*reg) return false;
    if (!colon) return true;
    if (!(*reg)->indexed || !colon[1]) return false;
    long v = 0;
    for (const char *p = colon + 1; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        v = v * 10 + (*p - '0');
        if (v > 9999) return false;
    }
    *index = (int)v;
    return true;
}

/* "'DEVICE' is not a device: use cpu, vulkan, vulkan:N or auto" (the registry's names). */
static sotto_status not_a_device(const char *device, sotto__err *err)
{
    char names[256] = "";
    size_t at = 0;
    for (int i = 0; registry[i] && at < sizeof names; i++) {
        const char *n = registry[i]->name;
        int k = registry[i]->indexed ? snprintf(names + at, sizeof names - at, "%s, %s:N, ", n, n)
                                     : snprintf(names + at, sizeof names - at, "%s, ", n);
        at += k > 0 ? (size_t)k : 0;
    }
    if (at >= 2 && at < sizeof names) names[at - 2] = 0;
    return sotto__fail(err, SOTTO_ERR_INVALID_ARG, "'%s' is not a device: use %s or auto", device, names);
}

/* The fallback backend (the CPU) on CFG with the index and GPU wish cleared. */
static sotto_status open_fallback(const sotto__backend_config *cfg, sotto__backend **out, char *desc,
                                  size_t desc_len, sotto__err *err)
{
    sotto__backend_config c = *cfg;
    c.index = -1, c.gpu_only = false;
    for (int i = 0; registry[i]; i++)
        if (registry[i]->fallback) return registry[i]->create(&c, out, desc, desc_len, err);
    return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "no fallback backend registered");
}

sotto_status sotto__backend_open(const char *device, const sotto__backend_config *cfg, sotto__backend **out,
                                 char *desc, size_t desc_len, sotto__err *err)
{
    *out = NULL;
    const sotto__backend_reg *reg;
    sotto__backend_config c = *cfg;
    if (!parse(device, &reg, &c.index)) return not_a_device(device, err);
    if (reg) {
        sotto__err why = {0};
        c.gpu_only = false;
        sotto_status st = reg->create(&c, out, desc, desc_len, &why);
        if (!st) return SOTTO_OK;
        size_t n = strlen(reg->name);
        bool named = strncmp(why.msg, reg->name, n) == 0 && strncmp(why.msg + n, ": ", 2) == 0;
        return sotto__fail(err, st, "device %s: %s", device, named ? why.msg + n + 2 : why.msg);
    }
    /* auto: the first GPU a backend finds, else the fallback */
    c.gpu_only = true;
    for (int i = 0; registry[i]; i++) {
        sotto__err ignored = {0};
        if (!registry[i]->fallback && registry[i]->create(&c, out, desc, desc_len, &ignored) == SOTTO_OK)
            return SOTTO_OK;
    }
    return open_fallback(cfg, out, desc, desc_len, err);
}

sotto_status sotto__backend_open_host(const sotto__backend_config *cfg, sotto__backend **out, sotto__err *err)
{
    char desc[320];
    return open_fallback(cfg, out, desc, sizeof desc, err);
}

/* ---- the public listing (sotto.h) ---- */

const char *sotto_backend_name(int i)
{
    const sotto__backend_reg *r = sotto__backend_reg_at(i);
    return r ? r->name : NULL;
}

const char *sotto_device_type_name(sotto_device_type type)
{
    switch (type) {
    case SOTTO_DEVICE_DISCRETE_GPU: return "discrete GPU";
    case SOTTO_DEVICE_INTEGRATED_GPU: return "integrated GPU";
    case SOTTO_DEVICE_VIRTUAL_GPU: return "virtual GPU";
    case SOTTO_DEVICE_SOFTWARE: return "software";
    default: return "other";
    }
}

sotto_status sotto_device_list(const char *backend, sotto_device_info *out, int cap, int *n)
{
    sotto__err err = {0};
    if (!n || cap < 0 || (cap && !out))
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "device list: no room given"});
    *n = 0;
    const sotto__backend_reg *reg = backend ? by_name(backend, strlen(backend)) : NULL;
    if (!reg) {
        sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "device list: no backend '%s'", backend ? backend : "(null)");
        return sotto__publish(&err);
    }
    int count = 0;
    if (reg->list(out, cap, &count, &err)) return sotto__publish(&err);
    for (int i = 0; i < count && i < cap; i++) {
        snprintf(out[i].backend, sizeof out[i].backend, "%s", reg->name);
        out[i].index = reg->indexed ? i : -1;
    }
    *n = count;
    return SOTTO_OK;
}

sotto_status sotto_device_check(const char *device)
{
    sotto__err err = {0};
    const sotto__backend_reg *reg;
    int index;
    if (parse(device, &reg, &index)) return SOTTO_OK;
    not_a_device(device, &err);
    return sotto__publish(&err);
}
