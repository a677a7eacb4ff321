/* audio_dump.c — test tool: decodes FILE (or - for standard input) through
 * sotto_audio_read, CHUNK samples at a time, and writes the samples to OUT as raw
 * little-endian s16 (each must be an exact multiple of 1/32768, as the FFmpeg path
 * promises) or f32; OUT "none" discards them. Prints one line: the sample count, the
 * container's duration and the process's peak resident set (getrusage), for the
 * streaming-memory test.
 * usage: audio_dump FILE OUT [--s16|--f32] [--chunk N]
 * exit: 0 ok, 1 sotto refused the input (message on stderr), 2 usage or I/O, 3 a sample
 * that is not a 16-bit value in --s16 mode */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sotto.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: audio_dump FILE OUT [--s16|--f32] [--chunk N]\n");
        return 2;
    }
    bool s16 = true;
    long chunk = 4096;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--f32") == 0) s16 = false;
        else if (strcmp(argv[i], "--s16") == 0) s16 = true;
        else if (strcmp(argv[i], "--chunk") == 0 && i + 1 < argc) chunk = strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "audio_dump: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (chunk < 1 || chunk > 1 << 24) return 2;
    sotto_audio_ffmpeg_log(0);
    sotto_audio *a;
    if (sotto_audio_open(argv[1], &a) != SOTTO_OK) {
        fprintf(stderr, "audio_dump: %s\n", sotto_last_error());
        return 1;
    }
    FILE *out = strcmp(argv[2], "none") == 0 ? NULL : strcmp(argv[2], "-") == 0 ? stdout : fopen(argv[2], "wb");
    if (!out && strcmp(argv[2], "none") != 0) {
        fprintf(stderr, "audio_dump: cannot write %s\n", argv[2]);
        return 2;
    }
    float *buf = malloc((size_t)chunk * sizeof *buf);
    int16_t *pcm = malloc((size_t)chunk * sizeof *pcm);
    int64_t total = 0, got;
    int rc = 0;
    for (;;) {
        if (sotto_audio_read(a, buf, chunk, &got) != SOTTO_OK) {
            fprintf(stderr, "audio_dump: %s\n", sotto_last_error());
            rc = 1;
            break;
        }
        if (got == 0) break;
        if (s16) {
            for (int64_t i = 0; i < got; i++) {
                float v = buf[i] * 32768.0f;
                if (v != (float)(int16_t)v || v > 32767.0f || v < -32768.0f) {
                    fprintf(stderr, "audio_dump: sample %lld is %.9g, not k/32768\n", (long long)(total + i), buf[i]);
                    rc = 3;
                }
                pcm[i] = (int16_t)v;
            }
            if (out) fwrite(pcm, sizeof *pcm, (size_t)got, out);
        } else if (out) {
            fwrite(buf, sizeof *buf, (size_t)got, out);
        }
        total += got;
        if (rc == 3) break;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(out == stdout ? stderr : stdout, "samples %lld duration %.3f peak_rss_kb %ld\n", (long long)total,
            sotto_audio_duration(a), ru.ru_maxrss);
    sotto_audio_close(a);
    free(buf);
    free(pcm);
    if (out && out != stdout && fclose(out) != 0) rc = rc ? rc : 2;
    return rc;
}
