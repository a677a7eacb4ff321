/* test_audio.c — the audio input against today's WAV reader: for every WAV given,
 * sotto_audio_load (from the file, and from a pipe on standard input) gives the very
 * samples of sotto_wav_read, or, for a malformed RIFF/WAVE file, the same refusal; reads
 * in chunks of any size give the same samples; `sotto mel` of each clip equals the log-mel
 * of sotto_wav_read's samples bit for bit; the API's edge cases (invalid arguments, end
 * of stream, a failed stream staying failed); FFmpeg's libraries are mapped only when a
 * file needs them (not for a 16 kHz mono WAV file).
 * usage: test_audio SOTTO TMP_DIR FILE.wav... */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "sotto.h"

static const char *sotto_bin, *tmp;

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

/* sotto_audio_load("-") with PATH's bytes arriving through a pipe on standard input. */
static sotto_status load_from_pipe(const char *path, float **pcm, int64_t *n, char *msg, size_t msg_len)
{
    int fds[2], saved = dup(STDIN_FILENO);
    if (saved < 0 || pipe(fds) != 0) return SOTTO_ERR_IO;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        size_t len;
        unsigned char *b = slurp(path, &len);
        size_t off = 0;
        while (b && off < len) { /* in odd pieces, so reads see short pipe reads */
            size_t piece = len - off < 777 ? len - off : 777;
            ssize_t w = write(fds[1], b + off, piece);
            if (w <= 0) break;
            off += (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    dup2(fds[0], STDIN_FILENO);
    close(fds[0]);
    sotto_status st = sotto_audio_load("-", pcm, n);
    snprintf(msg, msg_len, "%s", sotto_last_error());
    dup2(saved, STDIN_FILENO);
    close(saved);
    kill(pid, SIGKILL); /* a refused input is not read to the end */
    waitpid(pid, NULL, 0);
    return st;
}

static bool riff_wave(const char *path)
{
    size_t n;
    unsigned char *b = slurp(path, &n);
    bool yes = b && n >= 12 && memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WAVE", 4) == 0;
    free(b);
    return yes;
}

/* Reading PATH CHUNK samples at a time gives REF[n]. */
static void check_chunks(const char *path, const float *ref, int64_t n, int64_t chunk)
{
    sotto_audio *a;
    if (sotto_audio_open(path, &a) != SOTTO_OK) {
        CHECK(false, "%s: %s", path, sotto_last_error());
        return;
    }
    float *buf = malloc((size_t)chunk * sizeof *buf);
    int64_t k = 0, got;
    bool same = true;
    while (sotto_audio_read(a, buf, chunk, &got) == SOTTO_OK && got > 0) {
        if (k + got > n || memcmp(buf, ref + k, (size_t)got * sizeof *buf) != 0) same = false;
        k += got;
    }
    CHECK(same && k == n, "%s in chunks of %lld: %lld samples, %s", path, (long long)chunk, (long long)k,
          same ? "same" : "different");
    CHECK(sotto_audio_read(a, buf, chunk, &got) == SOTTO_OK && got == 0, "%s: read after the end", path);
    free(buf);
    sotto_audio_close(a);
}

/* `sotto mel PATH` equals sotto_mel_window of sotto_wav_read's samples, bit for bit. */
static void check_mel(const char *path, const float *pcm, int64_t n)
{
    char out[4096], cmd[8192];
    snprintf(out, sizeof out, "%s/test_audio.mel", tmp);
    snprintf(cmd, sizeof cmd, "'%s' mel '%s' '%s'", sotto_bin, path, out);
    float *ref = malloc(80 * SOTTO_N_FRAMES * sizeof *ref);
    CHECK(sotto_mel_window(pcm, n, 80, ref) == SOTTO_OK, "mel of %s", path);
    size_t len = 0;
    unsigned char *got = system(cmd) == 0 ? slurp(out, &len) : NULL;
    CHECK(got && len == 80 * SOTTO_N_FRAMES * sizeof *ref && memcmp(got, ref, len) == 0,
          "sotto mel %s differs from the log-mel of sotto_wav_read's samples", path);
    free(got);
    free(ref);
}

static void check_wav(const char *path, bool is_clip)
{
    float *ref = NULL, *pcm = NULL, *pip = NULL;
    int64_t n_ref = 0, n = 0, n_pip = 0;
    sotto_status st_ref = sotto_wav_read(path, &ref, &n_ref);
    char msg_ref[1024], msg[1024], msg_pip[1024];
    snprintf(msg_ref, sizeof msg_ref, "%s", sotto_last_error());
    sotto_status st = sotto_audio_load(path, &pcm, &n);
    snprintf(msg, sizeof msg, "%s", sotto_last_error());
    CHECK(st == SOTTO_OK || (!pcm && n == 0), "%s: failed load leaves samples", path);
    if (st_ref == SOTTO_OK) {
        CHECK(st == SOTTO_OK && n == n_ref && memcmp(pcm, ref, (size_t)n * sizeof *pcm) == 0,
              "%s: sotto_audio_load differs from sotto_wav_read (%lld vs %lld samples; %s)", path, (long long)n,
              (long long)n_ref, msg);
        sotto_status st_pip = load_from_pipe(path, &pip, &n_pip, msg_pip, sizeof msg_pip);
        CHECK(st_pip == SOTTO_OK && n_pip == n_ref && memcmp(pip, ref, (size_t)n_pip * sizeof *pip) == 0,
              "%s through a pipe differs (%lld samples; %s)", path, (long long)n_pip, msg_pip);
        sotto_audio *a;
        if (sotto_audio_open(path, &a) == SOTTO_OK) {
            double d = sotto_audio_duration(a);
            CHECK(d == (double)n_ref / SOTTO_SAMPLE_RATE, "%s: duration %g", path, d);
            sotto_audio_close(a);
        }
        for (int64_t chunk = 1; chunk <= 100000; chunk = chunk * 37 + 3) check_chunks(path, ref, n_ref, chunk);
        if (is_clip) check_mel(path, ref, n_ref);
    } else if (riff_wave(path) && st_ref == SOTTO_ERR_FORMAT) {
        /* a malformed RIFF/WAVE file is refused by the built-in walk, in the same words,
         * from a file and from a pipe */
        CHECK(st == SOTTO_ERR_FORMAT && strcmp(msg, msg_ref) == 0, "%s: '%s' vs today's '%s'", path, msg, msg_ref);
        sotto_status st_pip = load_from_pipe(path, &pip, &n_pip, msg_pip, sizeof msg_pip);
        const char *tail_ref = strchr(msg_ref, ':'), *tail_pip = strchr(msg_pip, ':');
        CHECK(st_pip == SOTTO_ERR_FORMAT && tail_pip && tail_ref && strcmp(tail_pip, tail_ref) == 0,
              "%s through a pipe: '%s' vs today's '%s'", path, msg_pip, msg_ref);
    } else {
        /* not RIFF/WAVE, or a WAV format the built-in reader does not take: FFmpeg's
         * business (tests/audio/); here only: no crash, a message on failure */
        CHECK(st == SOTTO_OK || msg[0], "%s: failed without a message", path);
    }
    sotto_free(ref);
    sotto_free(pcm);
    sotto_free(pip);
}

/* Whether FFmpeg's libavformat is mapped into this process (Linux: /proc/self/maps), or
 * -1 when that cannot be told. */
static int libav_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, "/libavformat.") != NULL;
    fclose(f);
    return found;
}

/* A 16 kHz mono WAV file is read without FFmpeg's libraries; a file that needs them (an
 * 8 kHz WAV) maps them, in a build with FFmpeg. Run first, before any file could. */
static void check_ffmpeg_on_demand(const char *clip)
{
    float *pcm = NULL;
    int64_t n = 0;
    CHECK(sotto_audio_load(clip, &pcm, &n) == SOTTO_OK && n > 0, "%s: %s", clip, sotto_last_error());
    sotto_free(pcm);
    if (libav_mapped() < 0) return;
    CHECK(libav_mapped() == 0, "reading %s (16 kHz mono WAV) mapped FFmpeg's libraries", clip);
    /* 0.5 s of a 440 Hz tone at 8 kHz, 16-bit mono */
    enum { RATE = 8000, N = 4000 };
    unsigned char wav[44 + 2 * N];
    memcpy(wav, "RIFF", 4), memcpy(wav + 8, "WAVEfmt ", 8), memcpy(wav + 36, "data", 4);
    const uint32_t u32[][2] = {{4, 36 + 2 * N}, {16, 16}, {24, RATE}, {28, 2 * RATE}, {40, 2 * N}};
    for (size_t i = 0; i < sizeof u32 / sizeof *u32; i++)
        for (int b = 0; b < 4; b++) wav[u32[i][0] + b] = (unsigned char)(u32[i][1] >> (8 * b));
    const uint16_t u16[][2] = {{20, 1}, {22, 1}, {32, 2}, {34, 16}};
    for (size_t i = 0; i < sizeof u16 / sizeof *u16; i++)
        wav[u16[i][0]] = (unsigned char)u16[i][1], wav[u16[i][0] + 1] = (unsigned char)(u16[i][1] >> 8);
    for (int i = 0; i < N; i++) {
        int16_t v = (int16_t)(8000 * ((i * 440 * 4 / RATE) % 4 < 2 ? 1 : -1));
        wav[44 + 2 * i] = (unsigned char)(v & 0xff), wav[45 + 2 * i] = (unsigned char)((uint16_t)v >> 8);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/tone8k.wav", tmp);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(wav, 1, sizeof wav, f) == sizeof wav, "writing %s", path);
    if (f) fclose(f);
    bool ffmpeg = strstr(sotto_audio_formats(), "FFmpeg reads") != NULL;
    sotto_status st = sotto_audio_load(path, &pcm, &n);
    if (ffmpeg) {
        CHECK(st == SOTTO_OK && n == 2 * N, "8 kHz WAV: %lld samples (%s)", (long long)n, sotto_last_error());
        CHECK(libav_mapped() == 1, "8 kHz WAV read without FFmpeg's libraries mapped");
    } else {
        CHECK(st == SOTTO_ERR_UNSUPPORTED && libav_mapped() == 0, "8 kHz WAV without FFmpeg: %s", sotto_last_error());
    }
    sotto_free(pcm);
}

static void check_api(const char *clip)
{
    sotto_audio *a = (sotto_audio *)1;
    float buf[16];
    int64_t got = 5;
    CHECK(sotto_audio_open(NULL, &a) == SOTTO_ERR_INVALID_ARG && a == NULL, "open(NULL)");
    CHECK(sotto_audio_read(NULL, buf, 16, &got) == SOTTO_ERR_INVALID_ARG && got == 0, "read(NULL)");
    float *p = (float *)1;
    int64_t n = 5;
    CHECK(sotto_audio_load(NULL, &p, &n) == SOTTO_ERR_INVALID_ARG && !p && n == 0, "load(NULL)");
    CHECK(sotto_audio_duration(NULL) < 0, "duration(NULL)");
    sotto_audio_close(NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s/missing.wav", tmp);
    CHECK(sotto_audio_open(path, &a) == SOTTO_ERR_IO && strstr(sotto_last_error(), "missing.wav"), "missing: %s",
          sotto_last_error());
    CHECK(sotto_audio_open(tmp, &a) == SOTTO_ERR_IO && strstr(sotto_last_error(), "directory"), "directory: %s",
          sotto_last_error());
    if (sotto_audio_open(clip, &a) == SOTTO_OK) {
        CHECK(sotto_audio_read(a, buf, -1, &got) == SOTTO_ERR_INVALID_ARG, "negative cap");
        CHECK(sotto_audio_read(a, NULL, 16, &got) == SOTTO_ERR_INVALID_ARG, "NULL buffer");
        CHECK(sotto_audio_read(a, buf, 0, &got) == SOTTO_OK && got == 0, "cap 0");
        CHECK(sotto_audio_read(a, buf, 16, &got) == SOTTO_OK && got == 16, "first 16");
        sotto_audio_close(a);
    }
    /* a WAV cut in half: its data chunk is short */
    size_t len;
    unsigned char *b = slurp(clip, &len);
    snprintf(path, sizeof path, "%s/cut.wav", tmp);
    FILE *f = fopen(path, "wb");
    if (b && f) fwrite(b, 1, len / 2, f);
    if (f) fclose(f);
    free(b);
    /* it is read as far as it goes, with a warning (issue 23) */
    if (sotto_audio_open(path, &a) == SOTTO_OK) {
        CHECK(strstr(sotto_audio_warning(a), "(truncated file): read the") != NULL, "cut WAV: '%s'",
              sotto_audio_warning(a));
        sotto_audio_close(a);
    } else {
        CHECK(false, "a WAV cut in half: %s", sotto_last_error());
    }
    float *ref = NULL, *cut = NULL;
    int64_t n_ref = 0, n_cut = 0;
    CHECK(sotto_wav_read(clip, &ref, &n_ref) == SOTTO_OK && sotto_wav_read(path, &cut, &n_cut) == SOTTO_OK &&
          n_cut > 0 && n_cut < n_ref && memcmp(ref, cut, (size_t)n_cut * sizeof *cut) == 0,
          "cut WAV: %lld of %lld samples, the clip's", (long long)n_cut, (long long)n_ref);
    sotto_free(ref);
    sotto_free(cut);
    CHECK(sotto_audio_warning(NULL)[0] == 0, "no warning without a stream");
    const char *formats = sotto_audio_formats();
    CHECK(formats && (strstr(formats, "FFmpeg") || strstr(formats, "libavformat-dev")), "formats: %s",
          formats ? formats : "(null)");
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_audio SOTTO TMP_DIR FILE.wav...\n");
        return 2;
    }
    sotto_bin = argv[1];
    tmp = argv[2];
    signal(SIGPIPE, SIG_IGN);
    sotto_audio_ffmpeg_log(0);
    check_ffmpeg_on_demand(argv[3]);
    for (int i = 3; i < argc; i++) check_wav(argv[i], strstr(argv[i], "/clips/") != NULL);
    check_api(argv[3]);
    return check_summary();
}
