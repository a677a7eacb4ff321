/* fuzz_wav.c — libFuzzer target: the input as a .wav file -> sotto_wav_read; audio that
 * reads is turned into a log-mel window (80 bins, or 128 for an odd sample count).
 *
 * One sanitized mel window costs a second or more (a fixed 30 s STFT whatever the
 * input) while reading takes microseconds, so the mel runs once per process for each
 * case the mel code tells apart: n_mels x (n_samples below, at or above one window).
 * Replaying a single input always runs it. */
#include <math.h>

#include "fuzz_common.h"

static bool mel_case_is_new(int64_t n, int n_mels)
{
    static bool seen[2][3];
    bool *s = &seen[n_mels == 128][n < SOTTO_N_SAMPLES ? 0 : n == SOTTO_N_SAMPLES ? 1 : 2];
    bool fresh = !*s;
    *s = true;
    return fresh;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static float mel[128 * SOTTO_N_FRAMES];
    const char *path = fuzz_write(fuzz_dir("wav"), "audio.wav", data, size);
    float *samples = NULL;
    int64_t n = -1;
    if (sotto_wav_read(path, &samples, &n) != SOTTO_OK) {
        if (samples || n != 0) abort(); /* the header promises both are cleared on failure */
        return 0;
    }
    if (!samples || n <= 0) abort();
    for (int64_t i = 0; i < n; i++)
        if (!(samples[i] >= -1e6f && samples[i] <= 1e6f)) abort(); /* finite, as the reader checks */
    int n_mels = n % 2 ? 128 : 80;
    if (mel_case_is_new(n, n_mels) && sotto_mel_window(samples, n, n_mels, mel) == SOTTO_OK)
        for (int i = 0; i < n_mels * SOTTO_N_FRAMES; i++)
            if (!isfinite(mel[i])) abort();
    sotto_free(samples);
    return 0;
}
