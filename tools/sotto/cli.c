#define _DEFAULT_SOURCE /* realpath */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

int cli_threads(long requested)
{
    long cores = sotto_cpu_count(); /* those this process may use: taskset, a container's share */
    if (requested > cores)
        fprintf(stderr, "sotto: warning: %ld threads on %ld core%s: threads that share a core wait for each other at "
                        "every step, which can run many times slower; use -t %ld or leave -t out\n",
                requested, cores, cores == 1 ? "" : "s", cores);
    return requested > 0 ? (int)requested : (int)cores;
}


/* Where setup installs models: ${XDG_DATA_HOME:-$HOME/.local/share}/sotto/models ("" when
 * neither is set). */
static void models_dir(char *out, size_t n)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (xdg && *xdg) snprintf(out, n, "%s/sotto/models", xdg);
    else if (home && *home) snprintf(out, n, "%s/.local/share/sotto/models", home);
    else out[0] = 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Prints the models installed in DIR (NAME for each NAME.gguf, the VAD left out), sorted. */
static void list_installed(const char *dir)
{
    DIR *d = dir[0] ? opendir(dir) : NULL;
    char *names[256];
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && n < 256;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".gguf") == 0 && strncmp(e->d_name, "silero-vad", 10) != 0 &&
            (names[n] = strndup(e->d_name, len - 5)))
            n++;
    }
    if (d) closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    fprintf(stderr, "  installed in %s:", dir[0] ? dir : "~/.local/share/sotto/models");
    for (int i = 0; i < n; i++) fprintf(stderr, " %s", names[i]), free(names[i]);
    fprintf(stderr, "%s\n", n ? "" : " none (run `make demo` to install tiny.en)");
}

bool cli_model_path(const char *flag, char *out, size_t n)
{
    char dir[4096];
    struct stat st;
    models_dir(dir, sizeof dir);
    const char *env = getenv("SOTTO_MODEL"), *given = flag ? flag : env && *env ? env : NULL;
    if (given) {
        snprintf(out, n, "%s", given);
        if (lstat(given, &st) == 0 || strchr(given, '/')) return true; /* a path: the loader says what is wrong */
        /* a name, as openai's -m tiny.en: an installed model */
        size_t len = strlen(given);
        bool ext = len > 5 && strcmp(given + len - 5, ".gguf") == 0;
        snprintf(out, n, "%s/%s%s", dir, given, ext ? "" : ".gguf");
        if (dir[0] && stat(out, &st) == 0) return true;
        fprintf(stderr, "sotto: no model '%s'%s: not a file or directory here, nor an installed model\n", given,
                flag ? "" : " (SOTTO_MODEL)");
        list_installed(dir);
        return false;
    }
    if (dir[0]) snprintf(out, n, "%s/tiny.en.gguf", dir);
    else out[0] = 0;
    if (out[0] && stat(out, &st) == 0) return true;
    const char *at = out[0] ? out : "~/.local/share/sotto/models/tiny.en.gguf";
    fprintf(stderr, "sotto: no model given and none installed at %s\n"
                    "  pass -m MODEL, set SOTTO_MODEL, or install one there: `make demo` in sotto's source\n"
                    "  tree does, or `mkdir -p %.*s && sotto convert WHISPER_MODEL_DIR %s`\n"
                    "  (a CTranslate2 or Hugging Face Whisper directory, or a whisper.cpp .bin)\n",
            at, (int)(strrchr(at, '/') - at), at, at);
    return false;
}

bool cli_vad_model_path(const char *flag, char *out, size_t n, bool required)
{
    return cli_vad_model_path_of(flag, "SOTTO_VAD_MODEL", "silero-vad.gguf", out, n, required);
}

bool cli_vad_model_path_of(const char *flag, const char *env_name, const char *file, char *out, size_t n,
                           bool required)
{
    const char *env = getenv(env_name), *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (flag) snprintf(out, n, "%s", flag);
    else if (env && *env) snprintf(out, n, "%s", env);
    else if (xdg && *xdg) snprintf(out, n, "%s/sotto/models/%s", xdg, file);
    else if (home && *home) snprintf(out, n, "%s/.local/share/sotto/models/%s", home, file);
    else out[0] = 0;
    struct stat st;
    if (flag || (env && *env) || (out[0] && stat(out, &st) == 0)) return true;
    if (required)
        fprintf(stderr, "sotto: no VAD model given and none installed at %s\n"
                        "  pass --vad-model PATH, set %s, or run scripts/setup.sh to install it\n",
                out[0] ? out : "~/.local/share/sotto/models/", env_name);
    return false;
}

const char *cli_device(const char *cmd, const char *flag)
{
    const char *env = getenv("SOTTO_DEVICE");
    const char *d = flag ? flag : env && *env ? env : "auto";
    if (sotto_device_check(d) == SOTTO_OK) return d;
    fprintf(stderr, "sotto %s: %s %s (sotto info --devices lists them)\n", cmd, flag ? "--device" : "SOTTO_DEVICE",
            sotto_last_error());
    return NULL;
}

sotto_context *cli_context(const char *cmd, const sotto_model *model, const sotto_context_params *p)
{
    sotto_context *ctx = NULL;
    if (sotto_context_init(model, p, &ctx) != SOTTO_OK) {
        fprintf(stderr, "sotto %s: %s\n", cmd, sotto_last_error());
        return NULL;
    }
    fprintf(stderr, "sotto %s: device %s\n", cmd, sotto_context_device(ctx));
    return ctx;
}

sotto_model *cli_load_model(const char *path)
{
    sotto_model *m = NULL;
    if (sotto_model_load(path, &m) != SOTTO_OK) {
        const char *why = sotto_last_error(); /* named, when the loader's reason does not name it */
        if (strstr(why, path)) fprintf(stderr, "sotto: cannot load model: %s\n", why);
        else fprintf(stderr, "sotto: cannot load model %s: %s\n", path, why);
        return NULL;
    }
    return m;
}

char *cli_read_file(const char *path, size_t max, size_t *len, char *msg, size_t msg_len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(msg, msg_len, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            size_t grow = cap ? cap * 2 : 65536;
            if (grow > max + 1) grow = max + 1; /* one byte past MAX tells an oversized file */
            char *p = cap <= max ? realloc(buf, grow + 1) : NULL;
            cap = grow;
            if (!p) {
                snprintf(msg, msg_len, "%s: larger than %zu bytes", path, max);
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = p;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    bool bad = ferror(f);
    int why = errno; /* a directory: EISDIR */
    fclose(f);
    if (bad) snprintf(msg, msg_len, "%s: read error: %s", path, strerror(why));
    else if (n > max) snprintf(msg, msg_len, "%s: file too large", path);
    if (bad || n > max) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

bool cli_auto_language(const char *lang) { return !lang || strcasecmp(lang, "auto") == 0; }

bool cli_language_fits(const char *cmd, const sotto_model *model, const char **lang, bool translate)
{
    sotto_model_info mi;
    sotto_model_get_info(model, &mi);
    const char *code = cli_auto_language(*lang) ? NULL : sotto_language_code(*lang);
    if (!mi.multilingual && translate) {
        fprintf(stderr, "sotto %s: this model is English-only: it cannot translate\n", cmd);
        return false;
    }
    if (!mi.multilingual && code && strcmp(code, "en")) {
        fprintf(stderr, "sotto %s: warning: this model is English-only: it transcribes in English, not %s "
                "(openai-whisper's command does the same)\n", cmd, *lang);
        *lang = "en";
    }
    if (mi.multilingual && code && sotto_language_token(model, code) < 0) {
        fprintf(stderr, "sotto %s: this model has no language '%s'\n", cmd, *lang);
        return false;
    }
    return true;
}

bool cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool cli_make_dirs(const char *path, bool last)
{
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return errno = ENAMETOOLONG, false;
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/' || p[-1] == '/') continue;
        *p = 0;
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) return false;
        *p = '/';
    }
    return !last || mkdir(dir, 0777) == 0 || errno == EEXIST;
}

bool cli_output_writable(const char *cmd, const char *dir, const char *output)
{
    char probe[PATH_MAX + 32];
    if (dir) {
        if (!cli_make_dirs(dir, true)) {
            fprintf(stderr, "sotto %s: cannot create --output-dir %s: %s\n", cmd, dir, strerror(errno));
            return false;
        }
        snprintf(probe, sizeof probe, "%s/.sotto-write-test", dir); /* out_temp_open: .sotto-write-test.tmp.PID */
    } else if (output) {
        char real[PATH_MAX];
        const char *target = output; /* where out_write_file will put it: a link's target, ... */
        int how = out_target(&target, real);
        if (how != 0 && (how < 0 || access(target, W_OK) != 0)) { /* a directory, a dangling link */
            fprintf(stderr, "sotto %s: cannot write %s: %s%s\n", cmd, output, strerror(errno),
                    errno == EISDIR ? " (--output-dir DIR writes NAME.EXT files into a directory)" : "");
            return false;
        }
        if (how > 0) return true; /* a device or FIFO: written straight into */
        snprintf(probe, sizeof probe, "%s", target);
    } else {
        return true;
    }
    char tmp[PATH_MAX + 64]; /* the temporary the output will be written through, tried */
    FILE *f = out_temp_open(probe, tmp, sizeof tmp, "w");
    if (!f) {
        if (errno == ENAMETOOLONG && !dir) fprintf(stderr, "sotto %s: -o %s: the name is too long\n", cmd, output);
        else fprintf(stderr, "sotto %s: cannot write %s: %s (creating %s beside it)\n", cmd, dir ? dir : output,
                     strerror(errno), tmp);
        return false;
    }
    fclose(f);
    remove(tmp);
    return true;
}

bool cli_write_file(const char *path, const void *data, size_t n)
{
    char real[PATH_MAX], tmp[PATH_MAX + 32];
    if (strcmp(path, "-") == 0) return fwrite(data, 1, n, stdout) == n && fflush(stdout) == 0;
    int how = out_target(&path, real);
    if (how < 0) return false;
    /* a device or FIFO straight into, never replaced */
    FILE *f = how ? fopen(path, "wb") : out_temp_open(path, tmp, sizeof tmp, "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, n, f) == n;
    int e = errno;
    ok = (fclose(f) == 0) && ok;
    if (ok && !how) ok = rename(tmp, path) == 0;
    if (!ok && !how) e = errno, remove(tmp);
    errno = e;
    return ok;
}

double cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
