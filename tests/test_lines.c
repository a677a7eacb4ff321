/* test_lines.c — srt/vtt cues cut from word times (tools/sotto/output.c, --max-line-len and
 * --split-on-word; without them a cue a segment, timed by its words): the exact files for
 * synthetic segments, English words (every one with
 * its leading space) and words of a language written without spaces; and the lrc writer's
 * lines. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "output.h"

static const sotto_word EN[] = {{" Alice", 0.0, 0.5, 0.9}, {" and", 0.5, 0.7, 0.9}, {" Robert", 0.7, 1.2, 0.9},
                                {" flew", 1.2, 1.5, 0.9}, {" to", 1.5, 1.6, 0.9},   {" Paris.", 1.6, 2.25, 0.9}};
static const sotto_word ZH[] = {{"我们", 3.0, 3.4, 0.9}, {"明天", 3.4, 3.9, 0.9}, {"去", 3.9, 4.0, 0.9},
                                {" 北京", 4.0, 4.6, 0.9}, {"吧", 4.6, 4.8, 0.9}};

/* The srt of the two segments with LINES. */
static char *srt(const out_lines *lines)
{
    sotto_segment seg[2] = {
        {.id = 0, .start = 0.0, .end = 2.3, .text = " Alice and Robert flew to Paris.", .words = EN, .n_words = 6},
        {.id = 1, .start = 3.0, .end = 4.8, .text = "我们明天去 北京吧", .words = ZH, .n_words = 5}};
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    const out_writer *w = out_find("srt");
    out_state st = {.lines = lines ? *lines : (out_lines){0}};
    w->begin(f, &st);
    for (int i = 0; i < 2; i++) CHECK(w->segment(f, &seg[i], &st), "segment %d", i);
    fclose(f);
    return buf;
}

static void expect(const out_lines *lines, const char *want, const char *what)
{
    char *got = srt(lines);
    CHECK(strcmp(got, want) == 0, "%s:\n--- got\n%s--- want\n%s", what, got, want);
    free(got);
}

int main(void)
{
    /* a cue a segment, timed by its words as openai's SubtitlesWriter times it: the first
     * segment ends at 2.30, its last word at 2.25 */
    expect(NULL,
           "1\n00:00:00,000 --> 00:00:02,250\nAlice and Robert flew to Paris.\n\n"
           "2\n00:00:03,000 --> 00:00:04,800\n我们明天去 北京吧\n\n",
           "whole segments");
    /* 12 characters: " Alice and" (10) + " Robert" would be 17, " Robert flew" is 12, and
     * " to Paris." 10; the Chinese segment is 9 characters */
    expect(&(out_lines){.max_len = 12, .split_on_word = 0},
           "1\n00:00:00,000 --> 00:00:00,700\nAlice and\n\n"
           "2\n00:00:00,700 --> 00:00:01,500\nRobert flew\n\n"
           "3\n00:00:01,500 --> 00:00:02,250\nto Paris.\n\n"
           "4\n00:00:03,000 --> 00:00:04,800\n我们明天去 北京吧\n\n",
           "max 12");
    /* 4 characters: a word longer than the limit is a cue of its own */
    expect(&(out_lines){.max_len = 4, .split_on_word = 0},
           "1\n00:00:00,000 --> 00:00:00,500\nAlice\n\n"
           "2\n00:00:00,500 --> 00:00:00,700\nand\n\n"
           "3\n00:00:00,700 --> 00:00:01,200\nRobert\n\n"
           "4\n00:00:01,200 --> 00:00:01,500\nflew\n\n"
           "5\n00:00:01,500 --> 00:00:01,600\nto\n\n"
           "6\n00:00:01,600 --> 00:00:02,250\nParis.\n\n"
           "7\n00:00:03,000 --> 00:00:03,900\n我们明天\n\n"
           "8\n00:00:03,900 --> 00:00:04,600\n去 北京\n\n"
           "9\n00:00:04,600 --> 00:00:04,800\n吧\n\n",
           "max 4");
    /* split on word: the same English cues; the Chinese words only before " 北京" */
    expect(&(out_lines){.max_len = 4, .split_on_word = 1},
           "1\n00:00:00,000 --> 00:00:00,500\nAlice\n\n"
           "2\n00:00:00,500 --> 00:00:00,700\nand\n\n"
           "3\n00:00:00,700 --> 00:00:01,200\nRobert\n\n"
           "4\n00:00:01,200 --> 00:00:01,500\nflew\n\n"
           "5\n00:00:01,500 --> 00:00:01,600\nto\n\n"
           "6\n00:00:01,600 --> 00:00:02,250\nParis.\n\n"
           "7\n00:00:03,000 --> 00:00:04,000\n我们明天去\n\n"
           "8\n00:00:04,000 --> 00:00:04,800\n北京吧\n\n",
           "max 4, split on word");
    { /* lrc: [mm:ss.xx] lines, the start rounded to hundredths, minutes past an hour, blank
       * segments left out; -f all and -f lrc find it */
        sotto_segment seg[] = {{.start = 0.0, .end = 2.3, .text = " Alice and\nRobert. "},
                               {.start = 3.005, .end = 3.5, .text = "  "},
                               {.start = 61.994, .end = 62.5, .text = "我们明天去"},
                               {.start = 3725.5, .end = 3726.0, .text = " late"}};
        sotto_result r = {.text = "", .language = "en", .segments = seg, .n_segments = 4};
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);
        out_state st = {0};
        const out_writer *w = out_find("lrc");
        CHECK(w && out_write(f, w, &r, &st), "lrc written");
        fclose(f);
        const char *want = "[by:sotto]\n[00:00.00] Alice and Robert.\n[01:01.99] 我们明天去\n[62:05.50] late\n";
        CHECK(buf && strcmp(buf, want) == 0, "lrc:\n--- got\n%s--- want\n%s", buf ? buf : "", want);
        free(buf);
        CHECK(w && !strcmp(w->ext, "lrc") && (out_format("all") & out_format("lrc")) && strstr(out_names(), "lrc"),
              "lrc in the table");
    }
    return check_summary();
}
