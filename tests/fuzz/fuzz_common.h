/* fuzz_common.h — shared plumbing of the libFuzzer targets in tests/fuzz: the loaders
 * take paths, so each input is written to a file in a per-process scratch directory
 * (under /dev/shm when it exists, so nothing touches a disk), next to fixture files
 * copied once from tests/fuzz/fixtures. Harness failures (not library failures) abort. */
#ifndef SOTTO_FUZZ_COMMON_H
#define SOTTO_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sotto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef SOTTO_FUZZ_FIXTURES
#define SOTTO_FUZZ_FIXTURES "tests/fuzz/fixtures"
#endif

static char fuzz_dir_path[512];
static pid_t fuzz_dir_pid;
static const char *fuzz_dir_files[8];
static int fuzz_n_dir_files;

static void fuzz_die(const char *what, const char *path)
{
    fprintf(stderr, "fuzz harness: %s %s: %s\n", what, path, strerror(errno));
    abort();
}

static void fuzz_cleanup(void)
{
    if (fuzz_dir_pid != getpid()) return;
    char p[1024];
    for (int i = 0; i < fuzz_n_dir_files; i++) {
        snprintf(p, sizeof p, "%s/%s", fuzz_dir_path, fuzz_dir_files[i]);
        unlink(p);
    }
    rmdir(fuzz_dir_path);
}

/* Remembers NAME as a file of the scratch directory, removed at exit. */
static void fuzz_track(const char *name)
{
    for (int i = 0; i < fuzz_n_dir_files; i++)
        if (strcmp(fuzz_dir_files[i], name) == 0) return;
    if (fuzz_n_dir_files < 8) fuzz_dir_files[fuzz_n_dir_files++] = name;
}

/* The scratch directory of this process (created on first use, again after a fork). */
static inline const char *fuzz_dir(const char *tag)
{
    if (fuzz_dir_pid == getpid()) return fuzz_dir_path;
    struct stat st;
    const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : getenv("TMPDIR");
    if (!base) base = "/tmp";
    snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/sotto-fuzz-%s-%ld", base, tag, (long)getpid());
    if (mkdir(fuzz_dir_path, 0700) != 0 && errno != EEXIST) fuzz_die("cannot create", fuzz_dir_path);
    fuzz_dir_pid = getpid();
    fuzz_n_dir_files = 0;
    atexit(fuzz_cleanup);
    return fuzz_dir_path;
}

/* Writes DATA[0..n) as DIR/NAME (replacing it) and returns the full path. */
static inline const char *fuzz_write(const char *dir, const char *name, const uint8_t *data, size_t n)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) fuzz_die("cannot create", path);
    for (size_t o = 0; o < n;) {
        ssize_t w = write(fd, data + o, n - o);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fuzz_die("cannot write", path);
        o += (size_t)w;
    }
    close(fd);
    fuzz_track(name);
    return path;
}

/* Copies fixture SUB/NAME (from $SOTTO_FUZZ_FIXTURES or the source tree) into DIR. */
static inline void fuzz_fixture(const char *dir, const char *sub, const char *name)
{
    const char *root = getenv("SOTTO_FUZZ_FIXTURES");
    if (!root) root = SOTTO_FUZZ_FIXTURES;
    char src[1024];
    snprintf(src, sizeof src, "%s/%s/%s", root, sub, name);
    FILE *f = fopen(src, "rb");
    if (!f) fuzz_die("cannot open fixture (set SOTTO_FUZZ_FIXTURES)", src);
    static uint8_t buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    if (ferror(f) || !feof(f)) fuzz_die("cannot read fixture (or larger than 1 MB)", src);
    fclose(f);
    fuzz_write(dir, name, buf, n);
}

/* Touches everything a loaded model exposes, so a bad pointer or size in the model
 * object shows up under the sanitizers; then frees it. */
static inline void fuzz_use_model(sotto_model *m)
{
    sotto_model_info info;
    sotto_model_get_info(m, &info);
    size_t sum = 0;
    for (int32_t id = -1; id <= info.n_vocab; id++) {
        size_t n = 0;
        const char *s = sotto_token_bytes(m, id, &n);
        if (!s) continue;
        for (size_t i = 0; i < n; i++) sum += (unsigned char)s[i];
    }
    if (sotto_language_token(m, "en") > info.n_vocab) abort();
    if (sum == 1) fprintf(stderr, "%s\n", info.source_format); /* keeps SUM observable */
}

#endif
