/* channels.c — `sotto transcribe --channel` (channels.h): the option's values, a file's
 * transcription by channel (one file at a time or many: cmd_transcribe.c, batch.c), and
 * the merge of per-channel transcripts by time into one labelled result that every
 * writer of output.c takes as it takes a transcription's. */
#include "channels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opt.h"

bool channel_parse(void *field, const char *v, const char **what)
{
    static const char *const names[] = {"mix", "left", "right"};
    *what = "left, right, each, mix or a channel number in 1..64";
    for (int i = 0; i < 3; i++)
        if (strcmp(v, names[i]) == 0) return *(int *)field = i, true;
    if (strcmp(v, "each") == 0) return *(int *)field = CHANNEL_EACH, true;
    long n;
    if (!cli_parse_int(v, 1, CHANNEL_MAX, &n)) return false;
    *(int *)field = (int)n;
    return true;
}

const char *channel_label(int c, int n, char *buf, size_t cap)
{
    if (n == 2) return c == 1 ? "left" : "right";
    snprintf(buf, cap, "channel %d", c);
    return buf;
}

void channel_merge_free(channel_merge *m)
{
    for (int i = 0; m->texts && i < m->pub.n_segments; i++) free(m->texts[i]);
    free(m->texts), free(m->seg), free(m->text);
    memset(m, 0, sizeof *m);
}

bool channel_merge_results(const sotto_result *const *rs, int n, channel_merge *m)
{
    memset(m, 0, sizeof *m);
    int total = 0;
    for (int i = 0; i < n; i++) total += rs[i]->n_segments;
    m->seg = malloc((size_t)(total ? total : 1) * sizeof *m->seg);
    m->texts = calloc((size_t)(total ? total : 1), sizeof *m->texts);
    if (!m->seg || !m->texts) return channel_merge_free(m), false;
    int at[CHANNEL_MAX] = {0};
    size_t len = 0;
    char buf[32];
    for (int k = 0; k < total; k++) {
        int best = -1; /* the earliest next segment of any channel, the lower channel first */
        for (int i = 0; i < n; i++)
            if (at[i] < rs[i]->n_segments &&
                (best < 0 || rs[i]->segments[at[i]].start < rs[best]->segments[at[best]].start))
                best = i;
        sotto_segment s = rs[best]->segments[at[best]++];
        const char *label = channel_label(best + 1, n, buf, sizeof buf);
        size_t need = strlen(label) + strlen(s.text) + 3;
        if (!(m->texts[k] = malloc(need))) return m->pub.n_segments = k, channel_merge_free(m), false;
        snprintf(m->texts[k], need, "[%s]%s%s", label, s.text[0] == ' ' ? "" : " ", s.text);
        len += strlen(m->texts[k]) + 1;
        s.id = k, s.text = m->texts[k];
        m->seg[k] = s;
        m->pub.n_segments = k + 1;
    }
    if (!(m->text = malloc(len + 1))) return channel_merge_free(m), false;
    m->text[0] = 0;
    for (int k = 0, pos = 0; k < total; k++) /* a space between: each label took its segment's */
        pos += sprintf(m->text + pos, "%s%s", k ? " " : "", m->texts[k]);
    m->pub = (sotto_result){.text = m->text, .language = rs[0]->language,
                            .language_probability = rs[0]->language_probability,
                            .language_detected = rs[0]->language_detected, .segments = m->seg,
                            .n_segments = total, .word_timestamps = rs[0]->word_timestamps};
    for (int i = 0; i < n; i++)
        if (rs[i]->duration > m->pub.duration) m->pub.duration = rs[i]->duration;
    return true;
}

sotto_status channel_transcribe(sotto_context *ctx, const char *path, int channel, const sotto_transcribe_params *tp,
                                bool quiet, channel_run *r)
{
    memset(r, 0, sizeof *r);
    sotto_status st;
    if (channel != CHANNEL_EACH) {
        sotto_audio_source src = {.kind = SOTTO_SOURCE_PATH, .path = path, .channel = channel};
        st = channel ? sotto_transcribe_source(ctx, &src, tp, &r->one) : sotto_transcribe_file(ctx, path, tp, &r->one);
        if (st) snprintf(r->error, sizeof r->error, "%s", sotto_context_error(ctx));
        r->result = r->one;
        return st;
    }
    sotto_audio *a = NULL;
    if ((st = sotto_audio_open(path, &a))) {
        snprintf(r->error, sizeof r->error, "%s", sotto_last_error());
        return st;
    }
    int n = sotto_audio_channels(a);
    sotto_audio_close(a);
    n = n < 1 ? 1 : n > CHANNEL_MAX ? CHANNEL_MAX : n;
    sotto_transcribe_params one = *tp;
    one.on_warning = NULL;
    bool stopped = false;
    for (int c = 1; c <= n && !stopped; c++) {
        char buf[32];
        if (!quiet) fprintf(stderr, "sotto: %s: %s (%d of %d)\n", path, channel_label(c, n, buf, sizeof buf), c, n);
        sotto_audio_source src = {.kind = SOTTO_SOURCE_PATH, .path = path, .channel = c};
        if ((st = sotto_transcribe_source(ctx, &src, &one, &r->rs[c - 1]))) {
            snprintf(r->error, sizeof r->error, "%s", sotto_context_error(ctx));
            return st;
        }
        r->n = c;
        stopped = r->rs[c - 1]->stopped;
    }
    if (!channel_merge_results((const sotto_result *const *)r->rs, r->n, &r->merge)) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return SOTTO_ERR_NOMEM;
    }
    r->merge.pub.stopped = stopped;
    r->result = &r->merge.pub;
    return SOTTO_OK;
}

void channel_run_free(channel_run *r)
{
    channel_merge_free(&r->merge);
    for (int c = 0; c < r->n; c++) sotto_result_free(r->rs[c]);
    sotto_result_free(r->one);
    memset(r, 0, sizeof *r);
}
