/* fuzz_audio.c — libFuzzer target: the input as a file -> sotto_audio_open and
 * sotto_audio_read in odd-sized chunks to the end (the sniff, the built-in streaming WAV
 * walk and, in a build with FFmpeg, the FFmpeg path: our AVIOContext, the stream choice,
 * the resampler set-up and its re-creation when a frame's format changes). FFmpeg itself
 * is not instrumented; what this finds is ours. Every sample must be finite and, from
 * FFmpeg or a PCM16 WAV, a multiple of 1/32768 in [-1, 1). */
#include <math.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool quiet;
    if (!quiet) {
        sotto_audio_ffmpeg_log(0);
        quiet = true;
    }
    const char *path = fuzz_write(fuzz_dir("audio"), "audio.bin", data, size);
    sotto_audio *a = (sotto_audio *)1;
    if (sotto_audio_open(path, &a) != SOTTO_OK) {
        if (a != NULL || !sotto_last_error()[0]) abort(); /* cleared, and a message */
        return 0;
    }
    float buf[4097];
    int64_t got, total = 0, chunk = 1 + (int64_t)(size % 4096);
    while (sotto_audio_read(a, buf, chunk, &got) == SOTTO_OK && got > 0) {
        if (got > chunk) abort();
        for (int64_t i = 0; i < got; i++)
            if (!isfinite(buf[i])) abort();
        total += got;
        if (total > (int64_t)SOTTO_SAMPLE_RATE * 3600) break; /* a tiny file that claims hours */
    }
    sotto_audio_close(a);
    return 0;
}
