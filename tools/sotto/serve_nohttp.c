/* serve_nohttp.c — `sotto serve` in a build without libmicrohttpd: the command is there
 * and says what to install (CMake finds the library through pkg-config when present). */
#include "cli.h"
#include "serve.h"

bool serve_http_available(const char **missing)
{
    *missing = "this sotto was built without libmicrohttpd: install libmicrohttpd-dev (Debian/Ubuntu; "
               "scripts/setup.sh does) and rebuild";
    return false;
}

int serve_http_listen(const serve_config *cfg, int *lfd)
{
    (void)cfg;
    *lfd = -1;
    return EXIT_EXEC;
}

int serve_http_run(const serve_config *cfg, serve_pool *pool, int lfd)
{
    (void)cfg, (void)pool, (void)lfd;
    return EXIT_EXEC;
}
