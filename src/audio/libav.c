/* libav.c — FFmpeg's libraries opened on first use (libav.h): dlopen of each library by
 * the soname of the version compiled against, dlsym of every function decode.c calls.
 * The libraries stay open for the life of the process. A failure is kept, so every
 * later file gets the same message without trying again. */
#include <dlfcn.h>
#include <libavcodec/version.h>
#include <libavformat/version.h>
#include <libavutil/version.h>
#include <libswresample/version.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "libav.h"

enum { AVUTIL, AVCODEC, AVFORMAT, SWRESAMPLE, N_LIBS };

#ifdef __APPLE__
#define SONAME(name, major) "lib" name "." AV_STRINGIFY(major) ".dylib"
#else
#define SONAME(name, major) "lib" name ".so." AV_STRINGIFY(major)
#endif

static const char *const soname[N_LIBS] = {
    SONAME("avutil", LIBAVUTIL_VERSION_MAJOR),
    SONAME("avcodec", LIBAVCODEC_VERSION_MAJOR),
    SONAME("avformat", LIBAVFORMAT_VERSION_MAJOR),
    SONAME("swresample", LIBSWRESAMPLE_VERSION_MAJOR),
};

sotto__av sotto__libav;
static sotto__err failure;            /* status 0 once loaded */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_bool loaded;
static atomic_int log_level = INT32_MIN; /* INT32_MIN: never set, FFmpeg's default stays */

#define HINT "install FFmpeg's libraries (Debian/Ubuntu: libavformat%d libavcodec%d libswresample%d)"

/* SONAME from the library directory FFmpeg's pkg-config names when the linker would not
 * look there (an FFmpeg built into a prefix of its own), else from the loader's paths. */
static void *open_lib(const char *name)
{
    char path[4096];
    const char *dir = SOTTO_LIBAV_DIR;
    void *h = NULL;
    if (dir[0] && snprintf(path, sizeof path, "%s/%s", dir, name) < (int)sizeof path)
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    return h ? h : dlopen(name, RTLD_NOW | RTLD_LOCAL);
}

static void load(void)
{
    void *lib[N_LIBS];
    for (int i = 0; i < N_LIBS; i++) {
        if (!(lib[i] = open_lib(soname[i]))) {
            const char *why = dlerror();
            if (why && (strstr(why, "failed to map") || strstr(why, "annot allocate memory")))
                /* installed, but no room to map it: an address-space limit (ulimit -v) the
                 * model's and a batch's buffers have filled */
                sotto__fail(&failure, SOTTO_ERR_NOMEM, "its %s cannot be loaded for want of memory (%s): "
                            "raise the process's memory limit (ulimit -v) or use a smaller --batch-size",
                            soname[i], why);
            else
                sotto__fail(&failure, SOTTO_ERR_UNSUPPORTED, "its %s cannot be opened (%s): " HINT, soname[i],
                            why ? why : "not found", LIBAVFORMAT_VERSION_MAJOR, LIBAVCODEC_VERSION_MAJOR,
                            LIBSWRESAMPLE_VERSION_MAJOR);
            return;
        }
    }
    void *sym;
#define SOTTO__AV_RESOLVE(l, name)                                                                       \
    if (!(sym = dlsym(lib[l], #name))) {                                                                \
        sotto__fail(&failure, SOTTO_ERR_UNSUPPORTED,                                                    \
                    "its %s has no %s (not the FFmpeg sotto was built with)", soname[l], #name);        \
        return;                                                                                         \
    }                                                                                                   \
    memcpy(&sotto__libav.name, &sym, sizeof sym);
    SOTTO__AV_FUNCS(SOTTO__AV_RESOLVE)
#undef SOTTO__AV_RESOLVE
    /* loaded first, the level read after: a concurrent sotto__av_log_level either sees
     * loaded and sets its level itself, or stored it before the read below */
    atomic_store(&loaded, true);
    int level = atomic_load(&log_level);
    if (level != INT32_MIN) sotto__libav.av_log_set_level(level);
}

sotto_status sotto__av_load(sotto__err *err)
{
    pthread_once(&once, load);
    if (atomic_load(&loaded)) return SOTTO_OK;
    if (err) *err = failure;
    return failure.status;
}

void sotto__av_log_level(int level)
{
    atomic_store(&log_level, level);
    if (atomic_load(&loaded)) sotto__libav.av_log_set_level(level);
}
