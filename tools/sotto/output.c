/* output.c — the table of transcript writers (output.h) and the plain-text ones, mirroring
 * openai/whisper utils.py: WriteTXT (each segment's text stripped, a line each), WriteSRT
 * (numbered cues, hours always, decimal comma), WriteVTT ("WEBVTT", cues with dotted
 * milliseconds), WriteTSV (integer milliseconds); whisper.cpp's LRC (lyrics: a
 * "[mm:ss.xx] text" line per segment); json is output_json.c's. Timestamps round half to
 * even (to milliseconds, LRC's to hundredths), as Python's round. */
#define _XOPEN_SOURCE 700
#include "output.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

void out_timestamp(char *buf, size_t n, double seconds, bool always_hours, char marker)
{
    long long ms = llrint(seconds * 1000.0);
    long long h = ms / 3600000, m = ms % 3600000 / 60000, s = ms % 60000 / 1000;
    ms %= 1000;
    if (always_hours || h > 0) snprintf(buf, n, "%02lld:%02lld:%02lld%c%03lld", h, m, s, marker, ms);
    else snprintf(buf, n, "%02lld:%02lld%c%03lld", m, s, marker, ms);
}

/* TEXT stripped of surrounding whitespace, with every occurrence of FROM replaced by TO. */
static void put_stripped(FILE *f, const char *text, const char *from, const char *to)
{
    size_t a = 0, b = strlen(text);
    while (a < b && strchr(" \t\n\r\v\f", text[a])) a++;
    while (b > a && strchr(" \t\n\r\v\f", text[b - 1])) b--;
    size_t k = from ? strlen(from) : 0;
    for (size_t i = a; i < b; i++) {
        if (k && i + k <= b && memcmp(text + i, from, k) == 0) {
            fputs(to, f);
            i += k - 1;
        } else {
            fputc(text[i], f);
        }
    }
}

static bool blank(const char *text)
{
    for (; *text; text++)
        if (!strchr(" \t\n\r\v\f", *text)) return false;
    return true;
}

/* One srt/vtt cue from START to END of TEXT (left out when blank). */
static void put_cue(FILE *f, bool srt, double start, double end, const char *text, int *index)
{
    char a[32], b[32];
    if (blank(text)) return;
    out_timestamp(a, sizeof a, start, srt, srt ? ',' : '.');
    out_timestamp(b, sizeof b, end, srt, srt ? ',' : '.');
    if (srt) fprintf(f, "%d\n", ++*index);
    fprintf(f, "%s --> %s\n", a, b);
    put_stripped(f, text, "-->", "->");
    fputs("\n\n", f);
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* The cue of words W [N] (their texts joined); false when out of memory. */
static bool put_words(FILE *f, bool srt, const sotto_word *w, int n, int *index)
{
    size_t len = 1;
    for (int i = 0; i < n; i++) len += strlen(w[i].word);
    char *text = malloc(len);
    if (!text) return false;
    text[0] = 0;
    for (int i = 0, o = 0; i < n; i++) o += sprintf(text + o, "%s", w[i].word);
    put_cue(f, srt, w[0].start, w[n - 1].end, text, index);
    free(text);
    return true;
}

/* S's words packed into cues as L says (whisper.cpp whisper_wrap_segment's rule, at word
 * boundaries); false when out of memory. */
static bool put_lines(FILE *f, bool srt, const sotto_segment *s, const out_lines *l, int *index)
{
    size_t acc = 0;
    int first = 0;
    for (int i = 0; i < s->n_words; i++) {
        size_t cur = utf8_chars(s->words[i].word);
        if (acc + cur > (size_t)l->max_len && i > first && (!l->split_on_word || s->words[i].word[0] == ' ')) {
            if (!put_words(f, srt, s->words + first, i - first, index)) return false;
            first = i, acc = 0;
        }
        acc += cur;
    }
    return put_words(f, srt, s->words + first, s->n_words - first, index);
}

/* ---- openai-whisper's subtitle layout (out_lines: max_line_width and the rest) ---- */

static bool openai_layout(const out_lines *l)
{
    return l->max_line_width > 0 || l->max_words_per_line > 0 || l->highlight_words;
}

static const char *ws = " \t\n\r\v\f";

/* One cue of openai's layout: "START --> END" and TEXT as its writers print them (srt with
 * its index; a "-->" in TEXT as "->"), left out when TEXT is blank as every cue here is. */
static void put_raw_cue(FILE *f, bool srt, const char *start, const char *end, const char *text, int *index)
{
    if (blank(text)) return;
    if (srt) fprintf(f, "%d\n", ++*index);
    fprintf(f, "%s --> %s\n", start, end);
    put_stripped(f, text, "-->", "->"); /* as every cue here (openai keeps it in cues of words) */
    fputs("\n\n", f);
}

/* The cue ST holds, written and emptied: its words joined, or with highlight_words a cue
 * for each word, underlined (its leading whitespace, a line break among it, kept before
 * the <u>), after a cue of the plain text over any gap since the last word's end (openai
 * compares the times as written). */
static void flush_cue(FILE *f, bool srt, out_state *st)
{
    if (st->n_cue == 0) return;
    char a[32], b[32], last[32];
    const char marker = srt ? ',' : '.';
    char text[OUT_CUE_TEXT + 8];
    size_t n = 0;
    for (int i = 0; i < st->n_cue; i++) n += (size_t)snprintf(text + n, sizeof text - n, "%s", st->pool + st->cue[i].text);
    out_timestamp(a, sizeof a, st->cue[0].start, srt, marker);
    if (!st->lines.highlight_words) {
        out_timestamp(b, sizeof b, st->cue[st->n_cue - 1].end, srt, marker);
        put_raw_cue(f, srt, a, b, text, &st->index);
    } else {
        snprintf(last, sizeof last, "%s", a);
        for (int i = 0; i < st->n_cue; i++) {
            out_timestamp(a, sizeof a, st->cue[i].start, srt, marker);
            out_timestamp(b, sizeof b, st->cue[i].end, srt, marker);
            if (strcmp(last, a) != 0) put_raw_cue(f, srt, last, a, text, &st->index);
            char lit[OUT_CUE_TEXT + 16];
            size_t k = 0;
            for (int j = 0; j < st->n_cue; j++) {
                const char *w = st->pool + st->cue[j].text;
                if (j != i) {
                    k += (size_t)snprintf(lit + k, sizeof lit - k, "%s", w);
                    continue;
                }
                size_t lead = strspn(w, ws);
                k += (size_t)snprintf(lit + k, sizeof lit - k, "%.*s<u>%s</u>", (int)lead, w, w + lead);
            }
            put_raw_cue(f, srt, a, b, lit, &st->index);
            snprintf(last, sizeof last, "%s", b);
        }
    }
    st->n_cue = st->pool_used = 0;
}

/* Appends word W (its text from FROM, with a line break first when BREAK_LINE) to ST's cue,
 * writing the cue first where it is full. */
static void add_word(FILE *f, bool srt, out_state *st, const sotto_word *w, const char *from, bool break_line)
{
    size_t len = strlen(from) + 1 + break_line;
    if (st->n_cue == OUT_CUE_WORDS || st->pool_used + len > OUT_CUE_TEXT) flush_cue(f, srt, st);
    if (len > OUT_CUE_TEXT) return; /* a "word" of 16 KB: no cue holds it */
    st->cue[st->n_cue++] = (out_word){w->start, w->end, st->pool_used};
    snprintf(st->pool + st->pool_used, OUT_CUE_TEXT - (size_t)st->pool_used, "%s%s", break_line ? "\n" : "", from);
    st->pool_used += (int)len;
}

/* S's words into openai's cues (iterate_subtitles, line by line of it): a word goes on the
 * line while it fits (widths in characters, a word's leading space counted), else it
 * starts a new line, stripped, and a new cue where the cue is full (max_line_count
 * lines, or a pause of more than 3 s, when both width and count are set) or at each
 * segment's (each chunk of max_words_per_line words') first word otherwise. */
static void openai_words(FILE *f, bool srt, const sotto_segment *s, out_state *st)
{
    const out_lines *l = &st->lines;
    const bool preserve = l->max_line_count <= 0 || l->max_line_width <= 0;
    const int width = l->max_line_width > 0 ? l->max_line_width : 1000;
    const int per_chunk = l->max_words_per_line > 0 ? l->max_words_per_line : 1000;
    int words_count = per_chunk;
    for (int chunk = 0; chunk < s->n_words; chunk += per_chunk) {
        if (per_chunk > s->n_words - chunk) words_count = s->n_words - chunk;
        for (int i = 0; i < words_count; i++) {
            const sotto_word *w = &s->words[chunk + i];
            if (!st->have_last) st->last = w->start, st->have_last = 1, st->line_count = 1; /* openai's start */
            const bool long_pause = !preserve && w->start - st->last > 3.0;
            const int chars = (int)utf8_chars(w->word);
            const bool has_room = st->line_len + chars <= width;
            const bool seg_break = i == 0 && st->n_cue > 0 && preserve;
            if (st->line_len > 0 && has_room && !long_pause && !seg_break) {
                st->line_len += chars;
                add_word(f, srt, st, w, w->word, false);
            } else {
                const char *stripped = w->word + strspn(w->word, ws);
                char buf[OUT_CUE_TEXT];
                size_t n = (size_t)snprintf(buf, sizeof buf, "%s", stripped);
                while (n > 0 && strchr(ws, buf[n - 1])) buf[--n] = 0;
                bool break_line = false;
                if ((st->n_cue > 0 && l->max_line_count > 0 && (long_pause || st->line_count >= l->max_line_count)) ||
                    seg_break) {
                    flush_cue(f, srt, st);
                    st->line_count = 1;
                } else if (st->line_len > 0) {
                    st->line_count++;
                    break_line = true;
                }
                st->line_len = (int)utf8_chars(buf);
                add_word(f, srt, st, w, buf, break_line);
            }
            st->last = w->start;
        }
    }
}

static void no_begin(FILE *f, out_state *st) {}
static bool no_segment(FILE *f, const sotto_segment *s, out_state *st) { return true; }
static void no_end(FILE *f, const sotto_result *r, out_state *st) {}

static bool txt_segment(FILE *f, const sotto_segment *s, out_state *st)
{
    put_stripped(f, s->text, NULL, NULL);
    fputc('\n', f);
    return true;
}

/* An srt or vtt cue per segment, or cues cut at its words as ST's lines say. A segment
 * with words is timed by them, from its first word's start to its last word's end, as
 * openai's SubtitlesWriter times its cues (a segment may start before its first word:
 * openai's timing.py keeps a segment's start when that word is too long). */
static bool put_segment_cues(FILE *f, bool srt, const sotto_segment *s, out_state *st)
{
    if (openai_layout(&st->lines)) { /* every cue from words, as openai's writer with word timestamps */
        openai_words(f, srt, s, st);
        return true;
    }
    if (s->n_words > 0 && !blank(s->text)) {
        if (st->lines.max_len > 0) return put_lines(f, srt, s, &st->lines, &st->index);
        return put_words(f, srt, s->words, s->n_words, &st->index);
    }
    put_cue(f, srt, s->start, s->end, s->text, &st->index);
    return true;
}

static bool srt_segment(FILE *f, const sotto_segment *s, out_state *st) { return put_segment_cues(f, true, s, st); }
static bool vtt_segment(FILE *f, const sotto_segment *s, out_state *st) { return put_segment_cues(f, false, s, st); }
/* the last cue of openai's layout, which a later segment could have gone on */
static void srt_end(FILE *f, const sotto_result *r, out_state *st) { flush_cue(f, true, st); }
static void vtt_end(FILE *f, const sotto_result *r, out_state *st) { flush_cue(f, false, st); }
static void vtt_begin(FILE *f, out_state *st) { fputs("WEBVTT\n\n", f); }
static void tsv_begin(FILE *f, out_state *st) { fputs("start\tend\ttext\n", f); }

static bool tsv_segment(FILE *f, const sotto_segment *s, out_state *st)
{
    fprintf(f, "%lld\t%lld\t", llrint(1000 * s->start), llrint(1000 * s->end));
    put_stripped(f, s->text, "\t", " ");
    fputc('\n', f);
    return true;
}

static void lrc_begin(FILE *f, out_state *st) { fputs("[by:sotto]\n", f); }

/* A lyrics line: the segment's start as [mm:ss.xx] (minutes past 59 go on counting, as
 * whisper.cpp's output_lrc writes them), its text stripped, on one line. Blank segments
 * are left out, as in srt and vtt. */
static bool lrc_segment(FILE *f, const sotto_segment *s, out_state *st)
{
    if (blank(s->text)) return true;
    long long cs = llrint(s->start * 100.0);
    fprintf(f, "[%02lld:%02lld.%02lld] ", cs / 6000, cs % 6000 / 100, cs % 100);
    put_stripped(f, s->text, "\n", " ");
    fputc('\n', f);
    return true;
}

const out_writer out_writers[] = {
    {"txt", "txt", "text/plain; charset=utf-8", no_begin, txt_segment, no_end},
    {"srt", "srt", "text/plain; charset=utf-8", no_begin, srt_segment, srt_end},
    {"vtt", "vtt", "text/vtt; charset=utf-8", vtt_begin, vtt_segment, vtt_end},
    {"tsv", "tsv", "text/tab-separated-values; charset=utf-8", tsv_begin, tsv_segment, no_end},
    {"json", "json", "application/json", no_begin, no_segment, out_json_end},
    {"lrc", "lrc", "text/plain; charset=utf-8", lrc_begin, lrc_segment, no_end},
};
const int out_n_writers = sizeof out_writers / sizeof *out_writers;

bool out_writes_segments(const out_writer *w)
{
    return w->segment != no_segment;
}

const out_writer *out_find(const char *name)
{
    for (int i = 0; i < out_n_writers; i++)
        if (strcmp(name, out_writers[i].name) == 0) return &out_writers[i];
    return NULL;
}

unsigned out_format(const char *name)
{
    if (strcmp(name, "all") == 0) return (1u << out_n_writers) - 1;
    const out_writer *w = out_find(name);
    return w ? 1u << (w - out_writers) : 0;
}

const char *out_names(void)
{
    static char names[256];
    if (!names[0])
        for (int i = 0, n = 0; i < out_n_writers; i++)
            n += snprintf(names + n, sizeof names - (size_t)n, "%s%s", i ? ", " : "", out_writers[i].name);
    return names;
}

bool out_write(FILE *f, const out_writer *w, const sotto_result *r, out_state *st)
{
    bool ok = true;
    w->begin(f, st);
    for (int i = 0; i < r->n_segments && ok; i++) ok = w->segment(f, &r->segments[i], st);
    if (ok) w->end(f, r, st);
    return ok && !ferror(f);
}

/* W of R straight into PATH, which is not a regular file (a device, a FIFO, a terminal,
 * /dev/stdout's pipe): no temporary file can stand for it. */
static bool write_into(const char *path, const out_writer *w, const sotto_result *r, const out_lines *lines)
{
    FILE *f = fopen(path, "w");
    if (!f) return false;
    out_state st = {.lines = lines ? *lines : (out_lines){0}};
    bool ok = out_write(f, w, r, &st);
    int e = errno;
    ok = fclose(f) == 0 && ok;
    if (!ok && !errno) errno = e;
    return ok;
}

int out_target(const char **path, char *real)
{
    struct stat st;
    if (lstat(*path, &st) == 0 && S_ISLNK(st.st_mode)) {
        if (realpath(*path, real)) *path = real; /* the file it points to is replaced; the link stays */
        else if (stat(*path, &st) != 0) return -1; /* dangling: its target's directory is not known */
        /* else it names what has no path (/dev/stdout onto a pipe): written into below */
    }
    if (stat(*path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) return errno = EISDIR, -1;
        return 1;
    }
    return 0;
}

bool out_temp_name(const char *path, char *tmp, size_t n)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char pid[24];
    int k = snprintf(pid, sizeof pid, ".tmp.%ld", (long)getpid());
    int w = strlen(base) + (size_t)k <= 255 ? snprintf(tmp, n, "%s%s", path, pid)
                                            : snprintf(tmp, n, "%.*s.sotto%s", (int)(base - path), path, pid);
    if (w < 0 || (size_t)w >= n) return errno = ENAMETOOLONG, false;
    return true;
}

FILE *out_temp_open(const char *path, char *tmp, size_t n, const char *mode)
{
    if (!out_temp_name(path, tmp, n)) return NULL;
    struct stat st;
    mode_t perm = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? st.st_mode & 07777 : 0666;
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 8; tries++) {
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, perm);
        if (fd < 0 && (errno != EEXIST || (unlink(tmp) != 0 && errno != ENOENT))) return NULL;
    }
    if (fd < 0) return errno = EEXIST, NULL;
    if (perm != 0666) (void)fchmod(fd, perm); /* the replaced file's own, whatever the umask */
    FILE *f = fdopen(fd, mode);
    if (!f) {
        int e = errno;
        close(fd), unlink(tmp);
        errno = e;
    }
    return f;
}

bool out_write_file(const char *path, const out_writer *w, const sotto_result *r, const out_lines *lines)
{
    char real[PATH_MAX], tmp[PATH_MAX + 32];
    int how = out_target(&path, real);
    if (how < 0) return false;
    if (how > 0) return write_into(path, w, r, lines);
    FILE *f = out_temp_open(path, tmp, sizeof tmp, "w");
    if (!f) return false;
    out_state os = {.lines = lines ? *lines : (out_lines){0}};
    bool ok = out_write(f, w, r, &os);
    ok = fclose(f) == 0 && ok;
    if (ok) ok = rename(tmp, path) == 0;
    int e = errno;
    if (!ok) remove(tmp);
    errno = e; /* the write's reason, for the caller's message */
    return ok;
}
