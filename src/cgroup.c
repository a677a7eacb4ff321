/* cgroup.c — reading this process's cgroups, v1 and v2: the path of its cgroup in a
 * hierarchy (/proc/self/cgroup), and a walk from that cgroup up to the hierarchy's root,
 * since a limit on any parent (a systemd slice, a container's own cgroup) binds every
 * cgroup below it. cpus.c reads the CPU quotas through it, memroom.c the memory limits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strtok_r */
#endif
#include <stdio.h>
#include <string.h>

#include "common.h"

bool sotto__first_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    return ok;
}

bool sotto__cgroup_path(const char *controller, char *out, size_t n)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = '\0';
        const char *ctl = c1 + 1, *path = c2 + 1;
        if (controller) {
            char *save = NULL; /* strtok_r: contexts may be made on several threads at once */
            for (char *tok = strtok_r((char *)ctl, ",", &save); tok && !found; tok = strtok_r(NULL, ",", &save))
                found = strcmp(tok, controller) == 0;
        } else {
            found = strncmp(line, "0:", 2) == 0 && *ctl == '\0';
        }
        if (found) snprintf(out, n, "%.*s", (int)strcspn(path, "\n"), path);
    }
    fclose(f);
    return found;
}

void sotto__cgroup_walk(const char *mount, const char *rel, void (*fn)(void *arg, const char *dir), void *arg)
{
    char dir[4200];
    const size_t root = strlen(mount);
    snprintf(dir, sizeof dir, "%s%s", mount, strcmp(rel, "/") == 0 ? "" : rel);
    for (;;) {
        fn(arg, dir);
        char *slash = strrchr(dir, '/');
        if (strlen(dir) <= root || !slash || (size_t)(slash - dir) < root) break;
        *slash = '\0';
    }
}
