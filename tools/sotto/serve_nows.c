/* serve_nows.c — `sotto serve` in a build without wslay or jansson: GET /v1/realtime
 * answers 501 naming what to install (CMake finds wslay by its CMake package, jansson and
 * nettle by pkg-config); every other route is served as in a full build. */
#include "serve.h"

bool serve_live_available(const char **missing)
{
    *missing = "this sotto was built without the WebSocket route: install libwslay-dev, libjansson-dev and "
               "nettle-dev (Debian/Ubuntu; scripts/setup.sh does) and rebuild";
    return false;
}

serve_live *serve_live_new(const serve_config *cfg, serve_pool *pool)
{
    (void)cfg, (void)pool;
    return NULL;
}

int serve_live_count(serve_live *l)
{
    (void)l;
    return 0;
}

void serve_live_stop(serve_live *l, int how)
{
    (void)l, (void)how;
}

void serve_live_free(serve_live *l)
{
    (void)l;
}

int serve_live_handshake(serve_live *l, struct MHD_Connection *c, char accept[29], serve_error *e)
{
    (void)l, (void)c, (void)accept;
    const char *missing;
    serve_live_available(&missing);
    serve_error_set(e, 501, "server_error", NULL, "not_implemented", "%s", missing);
    return -1;
}

void serve_live_cancel(serve_live *l)
{
    (void)l;
}

void serve_live_upgraded(serve_live *l, const char *extra, size_t n_extra, int fd,
                         struct MHD_UpgradeResponseHandle *urh)
{
    (void)l, (void)extra, (void)n_extra, (void)fd, (void)urh;
}
