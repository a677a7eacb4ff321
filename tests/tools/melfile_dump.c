/* melfile_dump.c — writes the whole-file log-mel of a 16 kHz WAV as openai-whisper's
 * transcribe() sees it ([n_mels, frames] raw f32, frames = samples / 160 + 3000), pushed
 * in chunks of CHUNK samples, for comparison with the eager reference (tests/mel_file.py).
 *
 * usage: melfile_dump WAV N_MELS CHUNK OUT */
#include <stdio.h>
#include <stdlib.h>

#include "audio/melfile.h"

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: melfile_dump WAV N_MELS CHUNK OUT\n");
        return 2;
    }
    float *pcm = NULL;
    int64_t n = 0, chunk = atol(argv[3]);
    sotto__melfile *m = NULL;
    if (sotto_wav_read(argv[1], &pcm, &n) || sotto__melfile_new(atoi(argv[2]), &m) || chunk < 1) {
        fprintf(stderr, "melfile_dump: %s\n", sotto_last_error());
        return 1;
    }
    for (int64_t i = 0; i < n; i += chunk) sotto__melfile_push(m, pcm + i, n - i < chunk ? n - i : chunk);
    sotto__melfile_finish(m);
    int64_t frames = sotto__melfile_content_frames(m) + 3000, n_mels = atoi(argv[2]);
    float *win = malloc((size_t)n_mels * 3000 * sizeof *win), *all = malloc((size_t)(n_mels * frames) * sizeof *all);
    for (int64_t s = 0; s < frames; s += 3000) {
        int k = frames - s < 3000 ? (int)(frames - s) : 3000;
        sotto__melfile_window(m, s, k, win);
        for (int64_t i = 0; i < n_mels; i++)
            for (int t = 0; t < k; t++) all[i * frames + s + t] = win[i * 3000 + t];
    }
    FILE *f = fopen(argv[4], "wb");
    fwrite(all, sizeof *all, (size_t)(n_mels * frames), f);
    fclose(f);
    printf("%lld frames\n", (long long)frames);
    free(win), free(all), free(pcm);
    sotto__melfile_free(m);
    return 0;
}
