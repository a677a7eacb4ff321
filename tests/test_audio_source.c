/* test_audio_source.c — the audio input from a caller's descriptor and from memory
 * (sotto_audio_open_source): for every file given, the samples equal those read from its
 * path, for a descriptor at offset 0 and at a later offset, and for its bytes in memory;
 * a restart (vad_filter's second pass) gives them again; messages name the source's name,
 * and sources without their descriptor or bytes are refused.
 * usage: test_audio_source TMP_DIR FILE... */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/audio/audio.h"
#include "check.h"

enum { JUNK = 1000 };

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    *n = b ? fread(b, 1, (size_t)len, f) : 0;
    fclose(f);
    return b;
}

/* Every sample of A in chunks, into *PCM (malloc'd). */
static sotto_status read_all(sotto_audio *a, float **pcm, int64_t *n)
{
    int64_t cap = 1 << 16, got = 1;
    *n = 0;
    *pcm = malloc((size_t)cap * sizeof **pcm);
    sotto_status st = SOTTO_OK;
    while (!st && got > 0) {
        if (*n + 4096 > cap) *pcm = realloc(*pcm, (size_t)(cap *= 2) * sizeof **pcm);
        st = sotto_audio_read(a, *pcm + *n, 4096, &got);
        *n += got;
    }
    return st;
}

/* SRC's samples equal REF [N], read once and again after a restart. */
static void check_source(const sotto_audio_source *src, const float *ref, int64_t n, const char *what)
{
    sotto_audio *a = NULL;
    sotto_status st = sotto_audio_open_source(src, &a);
    CHECK(st == SOTTO_OK, "%s: open: %s", what, sotto_last_error());
    if (st) return;
    for (int pass = 0; pass < 2; pass++) {
        float *pcm = NULL;
        int64_t got = 0;
        st = read_all(a, &pcm, &got);
        CHECK(st == SOTTO_OK && got == n && memcmp(pcm, ref, (size_t)n * sizeof *ref) == 0,
              "%s, pass %d: %lld samples of %lld (%s)", what, pass, (long long)got, (long long)n,
              st ? sotto_last_error() : "differ");
        free(pcm);
        sotto__err err = {0};
        CHECK(sotto__audio_seekable(a), "%s: seekable", what);
        if (pass == 0) CHECK(sotto__audio_restart(a, &err) == SOTTO_OK, "%s: restart: %s", what, err.msg);
    }
    sotto_audio_close(a);
}

static void check_file(const char *tmp, const char *path)
{
    float *ref = NULL;
    int64_t n = 0;
    sotto_status st = sotto_audio_load(path, &ref, &n);
    CHECK(st == SOTTO_OK, "%s: %s", path, sotto_last_error());
    if (st) return;
    size_t len = 0;
    unsigned char *bytes = slurp(path, &len);
    check_source(&(sotto_audio_source){.kind = SOTTO_SOURCE_MEMORY, .data = bytes, .n_bytes = len, .name = path}, ref,
                 n, "memory");
    int fd = open(path, O_RDONLY);
    check_source(&(sotto_audio_source){.kind = SOTTO_SOURCE_FD, .fd = fd}, ref, n, "descriptor");
    CHECK(lseek(fd, 0, SEEK_CUR) > 0, "the descriptor was read through");
    close(fd);
    /* a descriptor whose audio starts after JUNK bytes of something else: read from there */
    char at[4096];
    snprintf(at, sizeof at, "%s/source-offset.bin", tmp);
    FILE *f = fopen(at, "wb");
    for (int i = 0; i < JUNK; i++) fputc(0x5a, f);
    fwrite(bytes, 1, len, f);
    fclose(f);
    fd = open(at, O_RDONLY);
    lseek(fd, JUNK, SEEK_SET);
    check_source(&(sotto_audio_source){.kind = SOTTO_SOURCE_FD, .fd = fd, .name = "upload"}, ref, n,
                 "descriptor at an offset");
    close(fd);
    remove(at);
    free(bytes);
    free(ref);
}

/* Refusals, and messages naming the source as its caller named it. */
static void check_errors(void)
{
    sotto_audio *a = (sotto_audio *)1;
    static const char junk[] = "this is not audio, not even close to it, in any container FFmpeg knows";
    /* not WAV: FFmpeg's refusal, or in a build without it the packages to install */
    const sotto_status not_audio =
        strstr(sotto_audio_formats(), "FFmpeg reads") ? SOTTO_ERR_FORMAT : SOTTO_ERR_UNSUPPORTED;
    CHECK(sotto_audio_open_source(&(sotto_audio_source){.kind = SOTTO_SOURCE_MEMORY, .data = junk,
                                                        .n_bytes = sizeof junk, .name = "talk.bin"},
                                  &a) == not_audio &&
              !a && strstr(sotto_last_error(), "talk.bin"),
          "junk in memory: %s", sotto_last_error());
    CHECK(sotto_audio_open_source(&(sotto_audio_source){.kind = SOTTO_SOURCE_MEMORY, .data = junk}, &a) ==
                  SOTTO_ERR_FORMAT && strstr(sotto_last_error(), "the audio in memory: empty file (0 bytes)"),
          "no bytes: %s", sotto_last_error());
    CHECK(sotto_audio_open_source(&(sotto_audio_source){.kind = SOTTO_SOURCE_MEMORY, .n_bytes = 10}, &a) ==
              SOTTO_ERR_INVALID_ARG, "memory without data");
    CHECK(sotto_audio_open_source(&(sotto_audio_source){.kind = SOTTO_SOURCE_FD, .fd = -1}, &a) ==
              SOTTO_ERR_INVALID_ARG, "descriptor -1");
    CHECK(sotto_audio_open_source(&(sotto_audio_source){.kind = SOTTO_SOURCE_PATH}, &a) == SOTTO_ERR_INVALID_ARG,
          "path NULL");
    CHECK(sotto_audio_open_source(NULL, &a) == SOTTO_ERR_INVALID_ARG, "no source");
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    close(fds[1]); /* an empty pipe: named by its descriptor */
    char want[64];
    snprintf(want, sizeof want, "descriptor %d: empty file", fds[0]);
    CHECK(sotto_audio_open_source(&(sotto_audio_source){.kind = SOTTO_SOURCE_FD, .fd = fds[0]}, &a) ==
              SOTTO_ERR_FORMAT && strstr(sotto_last_error(), want),
          "empty pipe: %s", sotto_last_error());
    CHECK(fcntl(fds[0], F_GETFD) != -1, "the descriptor is left open");
    close(fds[0]);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_audio_source TMP_DIR FILE...\n");
        return 2;
    }
    sotto_audio_ffmpeg_log(0);
    for (int i = 2; i < argc; i++) check_file(argv[1], argv[i]);
    check_errors();
    return check_summary();
}
