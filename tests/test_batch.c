/* test_batch.c — batched transcription (faster-whisper's BatchedInferencePipeline): the
 * chunk boundaries identical to faster-whisper 1.2.1's (tests/golden/batch, made by
 * scripts/golden_batch_chunks.py).
 *
 * usage: test_batch chunks VAD.gguf GOLDEN_DIR DIR...   (each golden NAME.chunks read
 *        against NAME.wav in the first DIR that has it)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sotto.h"

/* The WAV NAME.wav from the first of DIRS that has it. */
static int load(const char *name, char **dirs, int n_dirs, float **x, int64_t *n)
{
    for (int i = 0; i < n_dirs; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.wav", dirs[i], name);
        if (access(path, R_OK) == 0) return sotto_wav_read(path, x, n) == SOTTO_OK ? 0 : -1;
    }
    return -1;
}

/* Our rows for a signal, in the golden's format. */
static char *our_rows(const sotto_vad *vad, const float *x, int64_t n)
{
    sotto_vad_interval *sp;
    sotto_batch_chunk *ch;
    int64_t n_sp, n_ch;
    if (sotto_batch_chunks(vad, x, n, 30.0, 1, &sp, &n_sp, &ch, &n_ch)) return NULL;
    size_t cap = 64 + (size_t)(n_sp + n_ch) * 48, at = 0;
    char *s = malloc(cap);
    for (int64_t i = 0; s && i < n_sp; i++)
        at += (size_t)snprintf(s + at, cap - at, "speech %" PRId64 " %" PRId64 "\n", sp[i].start, sp[i].end);
    for (int64_t i = 0; s && i < n_ch; i++) {
        int64_t len = 0; /* the chunk's audio: its intervals end to end */
        for (int64_t k = ch[i].first; k < ch[i].first + ch[i].n_speech; k++) len += sp[k].end - sp[k].start;
        CHECK(len == ch[i].n_samples, "chunk %" PRId64 ": %" PRId64 " samples, its intervals hold %" PRId64, i,
              ch[i].n_samples, len);
        at += (size_t)snprintf(s + at, cap - at, "chunk %" PRId64 " %" PRId64 "\n", ch[i].offset, ch[i].n_samples);
    }
    sotto_free(sp), sotto_free(ch);
    return s;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

static void test_chunks(const char *vad_path, const char *golden, char **dirs, int n_dirs)
{
    sotto_vad *vad;
    CHECK(sotto_vad_load(vad_path, &vad) == SOTTO_OK, "%s", sotto_last_error());
    DIR *d = opendir(golden);
    CHECK(d != NULL, "%s", golden);
    int n_files = 0;
    for (struct dirent *e; vad && d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 8 || strcmp(e->d_name + len - 7, ".chunks")) continue;
        char name[256], path[4096];
        snprintf(name, sizeof name, "%.*s", (int)(len - 7), e->d_name);
        snprintf(path, sizeof path, "%s/%s", golden, e->d_name);
        char *want = slurp(path);
        float *x = NULL;
        int64_t n = 0;
        CHECK(want && load(name, dirs, n_dirs, &x, &n) == 0, "%s: no golden or no audio", name);
        char *body = want ? strchr(want, '\n') : NULL; /* after the comment line */
        char *got = x ? our_rows(vad, x, n) : NULL;
        CHECK(got && body && strcmp(body + 1, got) == 0, "%s: chunks differ from faster-whisper's:\n%s--- ours:\n%s",
              name, body ? body + 1 : "", got ? got : "(none)");
        n_files++;
        free(want), free(got), sotto_free(x);
    }
    CHECK(n_files >= 3, "%d golden files in %s", n_files, golden);
    if (d) closedir(d);
    /* no speech: no chunk; a bad chunk length refused */
    float zeros[16000] = {0};
    sotto_vad_interval *sp;
    sotto_batch_chunk *ch;
    int64_t n_sp = -1, n_ch = -1;
    CHECK(vad && sotto_batch_chunks(vad, zeros, 16000, 30, 1, &sp, &n_sp, &ch, &n_ch) == SOTTO_OK && n_sp == 0 &&
              n_ch == 0 && !ch,
          "silence: %" PRId64 " intervals, %" PRId64 " chunks", n_sp, n_ch);
    CHECK(vad && sotto_batch_chunks(vad, zeros, 16000, 31, 1, &sp, &n_sp, &ch, &n_ch) == SOTTO_ERR_INVALID_ARG &&
              strstr(sotto_last_error(), "chunk length"),
          "a 31 s chunk length: %s", sotto_last_error());
    sotto_vad_free(vad);
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "chunks")) test_chunks(argv[2], argv[3], argv + 4, argc - 4);
    else {
        fprintf(stderr, "usage: test_batch chunks VAD.gguf GOLDEN_DIR DIR...\n");
        return 2;
    }
    return check_summary();
}
