/* test_melfile.c — the whole-file log-mel (src/audio/melfile.c) against the one-window
 * front end: on a clip shorter than 30 s the first 3000 frames of the file's mel are the
 * window's exactly (the appended zeros are the window's padding, the maximum is the
 * same), bit for bit, whatever the chunks the samples arrive in; the window slices zero
 * pad past N; the frame count is samples / 160. A window of a clip's first M samples is
 * that of them and zeros to 30 s, on 1 thread and on 2.
 *
 * usage: test_melfile CLIP.wav... */
#include <stdlib.h>
#include <string.h>

#include "audio/mel.h"
#include "audio/melfile.h"
#include "check.h"

static void one(const char *path)
{
    float *pcm = NULL;
    int64_t n = 0;
    CHECK(sotto_wav_read(path, &pcm, &n) == SOTTO_OK, "%s: %s", path, sotto_last_error());
    if (!pcm) return;
    static float want[80 * 3000], got[80 * 3000];
    /* the clip's first M samples against them and zeros to 30 s as one signal (every frame
     * computed): the same bits, the frames that read only zeros included */
    static float signal[SOTTO_N_SAMPLES];
    const int64_t cuts[] = {0, 1, 199, 200, 360, 16000, n / 2, n, SOTTO_N_SAMPLES - 362, SOTTO_N_SAMPLES - 41,
                            SOTTO_N_SAMPLES - 40};
    for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
        int64_t m = cuts[c];
        memset(signal, 0, sizeof signal);
        for (int64_t i = 0; i < m; i++) signal[i] = n > 0 ? pcm[i % n] : 0.0f;
        CHECK(sotto_mel_window(signal, m, 80, want) == SOTTO_OK &&
                  sotto_mel_window(signal, SOTTO_N_SAMPLES, 80, got) == SOTTO_OK &&
                  memcmp(want, got, sizeof got) == 0,
              "%s: the window of its first %lld samples is not that of them and zeros to 30 s", path, (long long)m);
        CHECK(sotto__mel_window_on(signal, m, 80, 2, got) == SOTTO_OK && memcmp(want, got, sizeof got) == 0,
              "%s: the window of its first %lld samples on 2 threads is not that on 1", path, (long long)m);
    }
    CHECK(sotto_mel_window(pcm, n, 80, want) == SOTTO_OK, "window");
    const int64_t chunks[] = {1, 7, 160, 4096, n > 0 ? n : 1};
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        sotto__melfile *m = NULL;
        CHECK(sotto__melfile_new(80, &m) == SOTTO_OK, "new");
        for (int64_t i = 0; i < n; i += chunks[c])
            sotto__melfile_push(m, pcm + i, n - i < chunks[c] ? n - i : chunks[c]);
        CHECK(sotto__melfile_finish(m) == SOTTO_OK, "finish");
        CHECK(sotto__melfile_content_frames(m) == n / 160, "%s: %lld content frames for %lld samples", path,
              (long long)sotto__melfile_content_frames(m), (long long)n);
        sotto__melfile_window(m, 0, 3000, got);
        CHECK(memcmp(want, got, sizeof got) == 0, "%s, chunks of %lld: the file's first 3000 frames differ from the "
              "window's", path, (long long)chunks[c]);
        int k = (int)(n / 160) / 2;
        sotto__melfile_window(m, 0, k, got);
        bool padded = true, kept = true;
        for (int i = 0; i < 80; i++)
            for (int t = 0; t < 3000; t++) {
                if (t < k) kept &= got[i * 3000 + t] == want[i * 3000 + t];
                else padded &= got[i * 3000 + t] == 0.0f;
            }
        CHECK(kept && padded, "%s: a slice of %d frames keeps them and pads with zeros", path, k);
        sotto__melfile_free(m);
    }
    free(pcm);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) one(argv[i]);
    sotto__melfile *m = NULL;
    CHECK(sotto__melfile_new(81, &m) != SOTTO_OK && !m, "81 bins are refused");
    CHECK(sotto__melfile_new(128, &m) == SOTTO_OK, "an empty file");
    CHECK(m && sotto__melfile_finish(m) == SOTTO_OK && sotto__melfile_content_frames(m) == 0, "no content frames");
    float x = 0;
    CHECK(m && sotto__melfile_push(m, &x, 1) != SOTTO_OK, "no push after finish");
    sotto__melfile_free(m);
    return check_summary();
}
