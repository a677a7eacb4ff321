/* batch.c — `sotto transcribe` over many files (batch.h): the inputs expanded into a
 * sorted list of audio files with their output names, the ones already done skipped, the
 * rest taken in order by JOBS worker threads, each with its own context on the one model;
 * transcripts go to DIR/NAME.EXT through out_write_file (temporary name, rename). */
#define _POSIX_C_SOURCE 200809L
#include "batch.h"
#include "channels.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

/* Extensions of the files a directory contributes (what FFmpeg reads as audio or video). */
static const char *const media_ext[] = {"wav", "flac", "mp3", "ogg", "oga", "opus", "m4a", "aac", "mp4", "m4v",
                                        "mkv", "mka", "webm", "mov", "avi", "wma", "aif", "aiff", "caf", "amr",
                                        "3gp", "ac3", "wv", "ape", "mpga", NULL};

typedef struct item {
    char *path;                /* the input */
    char *stem;                /* DIR-relative output name without extension: "a", "sub/b" */
    bool skip;                 /* every output exists */
    bool again;                /* the same file as an earlier input: left out */
} item;

typedef struct list {
    item *v;
    int n, cap;
} list;

static volatile sig_atomic_t interrupted; /* the signal that stopped the run (SIGINT, SIGTERM), else 0 */

static void on_stop(int sig)
{
    interrupted = sig;
    signal(sig, SIG_DFL); /* a second one ends the process at once */
}

/* The length of DIR without its trailing slashes ("o/" names o: no "o//a.txt"). */
static int dir_len(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    return (int)n;
}

static bool push(list *l, const char *path, const char *stem, size_t stem_len)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        item *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return false;
        l->v = v, l->cap = cap;
    }
    item *it = &l->v[l->n];
    it->path = strdup(path);
    it->stem = strndup(stem, stem_len);
    it->skip = it->again = false;
    if (!it->path || !it->stem) {
        free(it->path), free(it->stem);
        return false;
    }
    l->n++;
    return true;
}

/* The name of PATH from OFFSET on, without its extension, as the output stem. */
static bool push_file(list *l, const char *path, size_t offset)
{
    const char *name = path + offset, *slash = strrchr(name, '/'), *dot = strrchr(name, '.');
    size_t len = strlen(name);
    if (dot && dot > (slash ? slash + 1 : name)) len = (size_t)(dot - name);
    return push(l, path, name, len);
}

static bool is_media(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot) return false;
    for (int i = 0; media_ext[i]; i++)
        if (strcasecmp(dot + 1, media_ext[i]) == 0) return true;
    return false;
}

/* The directories from the root down to the one being walked (a link back to one of them
 * would walk it again and again, down to the kernel's limit on links). */
typedef struct ancestors {
    dev_t dev;
    ino_t ino;
    const struct ancestors *up;
} ancestors;

/* Every media file under DIR (hidden entries left out), its stem relative to ROOT_LEN; a
 * directory that is DIR itself or one above it (a symbolic link to it) is left out with a
 * note. */
static bool walk(list *l, const char *dir, size_t root_len, const ancestors *up)
{
    struct stat self;
    if (stat(dir, &self) != 0) {
        fprintf(stderr, "sotto transcribe: cannot read directory %s: %s\n", dir, strerror(errno));
        return false;
    }
    for (const ancestors *a = up; a; a = a->up)
        if (a->dev == self.st_dev && a->ino == self.st_ino) {
            fprintf(stderr, "sotto transcribe: %s: a link to a directory above it, not walked again\n", dir);
            return true;
        }
    const ancestors here = {self.st_dev, self.st_ino, up};
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "sotto transcribe: cannot read directory %s: %s\n", dir, strerror(errno));
        return false;
    }
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
        struct stat st;
        if (stat(path, &st) != 0) { /* a broken link named as media: an input that fails, said and counted */
            if (is_media(e->d_name)) ok = push_file(l, path, root_len);
            continue;
        }
        if (S_ISDIR(st.st_mode)) ok = walk(l, path, root_len, &here);
        else if (S_ISREG(st.st_mode) && is_media(e->d_name)) ok = push_file(l, path, root_len);
    }
    closedir(d);
    return ok;
}

/* @FILE: one path per line (LF or CRLF; blanks at a line's end dropped, an editor's);
 * blank lines and lines starting with # skipped. */
static bool read_list(list *l, const char *file)
{
    char msg[512];
    size_t len;
    char *text = cli_read_file(file, (size_t)64 << 20, &len, msg, sizeof msg);
    if (!text) {
        fprintf(stderr, "sotto transcribe: @%s: %s\n", file, msg);
        return false;
    }
    bool ok = true;
    for (char *line = text, *next; ok && line < text + len; line = next) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        next = nl ? nl + 1 : text + len;
        if (nl) *nl = 0;
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) line[--n] = 0;
        if (!n || line[0] == '#') continue;
        const char *slash = strrchr(line, '/');
        ok = push_file(l, line, slash ? (size_t)(slash + 1 - line) : 0);
    }
    free(text);
    return ok;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const item *)a)->path, ((const item *)b)->path);
}

static int by_stem(const void *a, const void *b)
{
    return strcmp((*(const item *const *)a)->stem, (*(const item *const *)b)->stem);
}

/* The inputs as a list; false (message printed) for an unreadable directory or list, no
 * file at all, or two inputs with one output name. */
static bool expand(const batch_job *job, list *l)
{
    for (int i = 0; i < job->n_inputs; i++) {
        const char *in = job->inputs[i];
        struct stat st;
        int start = l->n;
        bool ok;
        if (strcmp(in, "-") == 0) {
            fprintf(stderr, "sotto transcribe: - (standard input) is one file: not with -j, directories or @lists\n");
            return false;
        }
        if (in[0] == '@') ok = read_list(l, in + 1);
        else if (stat(in, &st) == 0 && S_ISDIR(st.st_mode)) {
            char root[4096];
            size_t n = (size_t)snprintf(root, sizeof root, "%s", in);
            while (n > 1 && root[n - 1] == '/') root[--n] = 0; /* "dir/" walks as "dir" */
            ok = walk(l, root, n + 1, NULL);
        } else {
            const char *slash = strrchr(in, '/');
            ok = push_file(l, in, slash ? (size_t)(slash + 1 - in) : 0);
        }
        if (!ok) return false;
        if (in[0] != '@' && l->n - start > 1) qsort(l->v + start, (size_t)(l->n - start), sizeof *l->v, by_path);
    }
    if (l->n == 0) {
        fprintf(stderr, "sotto transcribe: no audio files in the inputs given\n");
        return false;
    }
    const item **sorted = malloc((size_t)l->n * sizeof *sorted);
    if (!sorted) return false;
    for (int i = 0; i < l->n; i++) sorted[i] = &l->v[i];
    qsort(sorted, (size_t)l->n, sizeof *sorted, by_stem);
    for (int i = 1; i < l->n; i++)
        if (strcmp(sorted[i - 1]->stem, sorted[i]->stem) == 0) {
            if (cli_same_file(sorted[i - 1]->path, sorted[i]->path)) { /* given twice (a path and its folder): once */
                fprintf(stderr, "sotto transcribe: note: %s is %s again: transcribed once\n", sorted[i]->path,
                        sorted[i - 1]->path);
                ((item *)sorted[i])->again = true;
                continue;
            }
            fprintf(stderr, "sotto transcribe: %s and %s would both write %.*s/%s.*: rename one or transcribe them "
                            "into different --output-dir\n", sorted[i - 1]->path, sorted[i]->path, dir_len(job->dir),
                    job->dir, sorted[i]->stem);
            free(sorted);
            return false;
        }
    free(sorted);
    int kept = 0;
    for (int i = 0; i < l->n; i++) {
        if (l->v[i].again) free(l->v[i].path), free(l->v[i].stem);
        else l->v[kept++] = l->v[i];
    }
    l->n = kept;
    return true;
}

static void output_path(char *out, size_t n, const batch_job *job, const item *it, const out_writer *w)
{
    snprintf(out, n, "%.*s/%s.%s", dir_len(job->dir), job->dir, it->stem, w->ext);
}

/* Whether every requested output of IT exists (each was renamed into place whole). */
static bool done_before(const batch_job *job, const item *it)
{
    char path[8192];
    struct stat st;
    for (int i = 0; i < out_n_writers; i++) {
        if (!(job->formats & 1u << i)) continue;
        output_path(path, sizeof path, job, it, &out_writers[i]);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    }
    return true;
}

enum { MAX_SHOWN = 4 }; /* files in progress the status line names */

typedef struct shared {
    const batch_job *job;
    list *l;
    int next;                  /* the next item to take */
    int n_todo, n_done, n_failed, write_failed;
    int write_errno;           /* ENOSPC, EDQUOT, EROFS on an output: the rest cannot be written either */
    double audio_s, t0_ms;
    bool tty, status_shown;    /* a status line of the files in progress is on the terminal */
    struct slot *slots;        /* [n_slots]: each worker's file in progress */
    int n_slots;
    pthread_mutex_t mu;
} shared;

/* A worker's file in progress, for the status line (under the lock). */
typedef struct slot {
    shared *sh;
    const char *name;          /* NULL: none */
    double done, total;        /* audio seconds */
} slot;

static int stop_cb(const sotto_segment *s, void *user) { return interrupted; }

/* Erases the status line (under the lock), before a line of its own is printed. */
static void status_clear(shared *sh)
{
    if (sh->status_shown) fputs("\r\033[K", stderr), sh->status_shown = false;
}

/* The status line on a terminal: files done of all, and each file in progress with its
 * share of audio done (a long file shows it moves; the workers run at once under -j). */
static int on_progress(double done, double total, void *user)
{
    slot *me = user;
    shared *sh = me->sh;
    pthread_mutex_lock(&sh->mu);
    me->done = done, me->total = total;
    if (sh->tty && !sh->job->quiet) {
        status_clear(sh);
        fprintf(stderr, "  %d/%d done", sh->n_done + sh->n_failed, sh->n_todo);
        for (int i = 0, shown = 0; i < sh->n_slots; i++) {
            const slot *w = &sh->slots[i];
            if (!w->name) continue;
            if (shown++ == MAX_SHOWN) {
                fputs(", ...", stderr);
                break;
            }
            const char *base = strrchr(w->name, '/');
            fprintf(stderr, "%s %.40s %.0f%% of %.0f s", shown == 1 ? "; in progress:" : ",", base ? base + 1 : w->name,
                    w->total > 0 ? 100 * w->done / w->total : 0.0, w->total);
        }
        sh->status_shown = true;
    }
    pthread_mutex_unlock(&sh->mu);
    return interrupted;
}

/* One item on CTX (the worker's status slot ME): transcribe, write every format; the
 * outcome counted under the lock. */
static void one(shared *sh, sotto_context *ctx, slot *me, item *it)
{
    const batch_job *job = sh->job;
    sotto_transcribe_params tp = job->tp;
    tp.on_segment = stop_cb, tp.on_progress = on_progress, tp.user_data = me;
    pthread_mutex_lock(&sh->mu);
    me->name = it->path, me->done = 0, me->total = 0;
    pthread_mutex_unlock(&sh->mu);
    double t0 = cli_now_ms();
    channel_run run; /* the mix, one channel, or each merged (--channel) */
    sotto_status st = channel_transcribe(ctx, it->path, job->channel, &tp, true, &run);
    const sotto_result *r = run.result;
    char path[8192], err[8192 + 64] = "";
    bool wrote = st == SOTTO_OK && !r->stopped;
    int werr = 0;
    if (st != SOTTO_OK) snprintf(err, sizeof err, "%s", run.error);
    for (int i = 0; wrote && i < out_n_writers; i++) {
        if (!(job->formats & 1u << i)) continue;
        output_path(path, sizeof path, job, it, &out_writers[i]);
        errno = 0;
        if (!cli_make_dirs(path, false) || !out_write_file(path, &out_writers[i], r, &job->lines)) {
            werr = errno;
            snprintf(err, sizeof err, "cannot write %s: %s", path, werr ? strerror(werr) : "error");
            wrote = false;
        }
    }
    pthread_mutex_lock(&sh->mu);
    me->name = NULL;
    status_clear(sh);
    if (st != SOTTO_OK) { /* counted as the files done are: [n/N] */
        sh->n_failed++;
        fprintf(stderr, "sotto transcribe: [%d/%d] %s\n", sh->n_done + sh->n_failed, sh->n_todo, err);
    } else if (r->stopped) {
        /* interrupted: nothing written for it */
    } else if (!wrote) {
        sh->n_failed++, sh->write_failed = 1;
        if (werr == ENOSPC || werr == EDQUOT || werr == EROFS) sh->write_errno = werr;
        fprintf(stderr, "sotto transcribe: [%d/%d] %s\n", sh->n_done + sh->n_failed, sh->n_todo, err);
    } else {
        sh->n_done++;
        sh->audio_s += r->duration;
        if (!job->quiet)
            fprintf(stderr, "sotto transcribe: [%d/%d] %s: %.1f s of audio in %.1f s\n", sh->n_done + sh->n_failed,
                    sh->n_todo, it->path, r->duration, (cli_now_ms() - t0) / 1000);
    }
    pthread_mutex_unlock(&sh->mu);
    channel_run_free(&run);
}

typedef struct worker {
    shared *sh;
    sotto_context *ctx;
    slot *me;
    pthread_t tid;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    for (;;) {
        pthread_mutex_lock(&sh->mu);
        while (sh->next < sh->l->n && sh->l->v[sh->next].skip) sh->next++;
        int i = interrupted || sh->write_errno ? sh->l->n : sh->next++;
        pthread_mutex_unlock(&sh->mu);
        if (i >= sh->l->n) return NULL;
        one(sh, w->ctx, w->me, &sh->l->v[i]);
    }
}

bool batch_wanted(const char *const *inputs, int n_inputs, int jobs)
{
    if (jobs > 0) return true;
    struct stat st;
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i][0] == '@' || (stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode))) return true;
    return false;
}

/* Runs the workers over SH's list; their contexts made first (any failure: none runs). */
static int run_workers(shared *sh)
{
    const batch_job *job = sh->job;
    int n = job->jobs < sh->n_todo ? job->jobs : sh->n_todo, rc = EXIT_OK, started = 0;
    worker *w = calloc((size_t)(n > 0 ? n : 1), sizeof *w);
    slot *slots = calloc((size_t)(n > 0 ? n : 1), sizeof *slots);
    if (!w || !slots) {
        free(w), free(slots);
        return EXIT_EXEC;
    }
    sh->slots = slots, sh->n_slots = n;
    sotto_context_params cp = job->cp; /* the cores shared by the contexts that run: -j over the files left */
    if (job->share_threads && n > 1) cp.n_threads = cp.n_threads / n > 1 ? cp.n_threads / n : 1;
    long cores = sotto_cpu_count();
    if (!job->share_threads && n > 1 && (long)n * cp.n_threads > cores && cp.n_threads <= cores)
        fprintf(stderr, "sotto: warning: -j %d -t %d runs %d threads on %ld core%s: threads that share a core wait "
                "for each other at every step; leave -t out (the files at once share the cores) or make -j x -t at "
                "most %ld\n", n, cp.n_threads, n * cp.n_threads, cores, cores == 1 ? "" : "s", cores);
    for (int i = 0; i < n && rc == EXIT_OK; i++) {
        w[i].sh = sh, w[i].me = &slots[i], slots[i].sh = sh;
        if (sotto_context_init(job->model, &cp, &w[i].ctx) != SOTTO_OK) {
            fprintf(stderr, "sotto transcribe: context %d of %d: %s\n", i + 1, n, sotto_last_error());
            rc = EXIT_EXEC;
        } else if (i == 0 && !job->quiet) {
            if (n == 1) fprintf(stderr, "sotto transcribe: one file at a time, on device %s\n",
                                sotto_context_device(w[0].ctx));
            else fprintf(stderr, "sotto transcribe: %d files at once, each on device %s\n", n,
                         sotto_context_device(w[0].ctx));
        }
    }
    for (int i = 0; i < n && rc == EXIT_OK; i++, started++)
        if (pthread_create(&w[i].tid, NULL, work, &w[i]) != 0) {
            fprintf(stderr, "sotto transcribe: cannot start worker thread %d\n", i + 1);
            interrupted = SIGINT; /* the ones started stop after their file */
            rc = EXIT_EXEC;
        }
    for (int i = 0; i < started; i++) pthread_join(w[i].tid, NULL);
    for (int i = 0; i < n; i++) sotto_context_free(w[i].ctx);
    status_clear(sh);
    free(w), free(slots);
    sh->slots = NULL, sh->n_slots = 0;
    return rc;
}

int batch_transcribe(const batch_job *job)
{
    shared sh = {.job = job, .t0_ms = cli_now_ms(), .tty = isatty(STDERR_FILENO)};
    list l = {0};
    sh.l = &l;
    int rc = expand(job, &l) ? EXIT_OK : EXIT_INPUT, skipped = 0;
    for (int i = 0; rc == EXIT_OK && i < l.n; i++) {
        l.v[i].skip = !job->overwrite && done_before(job, &l.v[i]);
        skipped += l.v[i].skip;
    }
    sh.n_todo = l.n - skipped;
    if (rc == EXIT_OK && sh.n_todo > 0) {
        pthread_mutex_init(&sh.mu, NULL);
        struct sigaction sa = {.sa_handler = on_stop}, old_int, old_term;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term); /* as Ctrl-C: the files done stay, a summary */
        rc = run_workers(&sh);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        pthread_mutex_destroy(&sh.mu);
    }
    if (l.n > 0 && (rc == EXIT_OK || rc == EXIT_EXEC)) {
        double wall = (cli_now_ms() - sh.t0_ms) / 1000;
        int left = l.n - sh.n_done - skipped - sh.n_failed; /* stopped: interrupted or a full disk */
        char rest[48] = "";
        if (left > 0) snprintf(rest, sizeof rest, ", %d not done", left);
        fprintf(stderr, "sotto transcribe: %d file%s: %d transcribed, %d skipped (outputs exist), %d failed%s; %.3f h "
                        "of audio in %.1f s wall (%.1fx real time)\n", l.n, l.n == 1 ? "" : "s", sh.n_done, skipped,
                sh.n_failed, rest, sh.audio_s / 3600, wall, wall > 0.05 ? sh.audio_s / wall : 0.0);
    }
    if (sh.write_errno) {
        fprintf(stderr, "sotto transcribe: stopped: %s; the files left were not transcribed\n",
                strerror(sh.write_errno));
        rc = EXIT_EXEC;
    } else if (interrupted) {
        fprintf(stderr, "sotto transcribe: %s; files done so far are written, run again to go on\n",
                interrupted == SIGTERM ? "terminated (SIGTERM)" : "interrupted");
        rc = 128 + interrupted; /* 130 for SIGINT, 143 for SIGTERM, as a shell reports them */
    } else if (rc == EXIT_OK && sh.write_failed) {
        rc = EXIT_EXEC;
    } else if (rc == EXIT_OK && sh.n_failed) {
        rc = EXIT_INPUT;
    }
    for (int i = 0; i < l.n; i++) free(l.v[i].path), free(l.v[i].stem);
    free(l.v);
    return rc;
}
