/* hallucination.c — the skip of silences around hallucinated segments, line for line as
 * openai/whisper 20250625 transcribe.py does it (word_anomaly_score, is_segment_anomaly,
 * the leading-silence and surrounded-by-silence rules). */
#include "hallucination.h"

#include <math.h>
#include <string.h>

#include "words.h"

static const char PUNCTUATION[] = "\"'“¿([{-\"'.。,，!！?？:：”)]}、";

/* anomalous words are very long/short/improbable */
static double word_anomaly_score(const sotto_word *w)
{
    double duration = w->end - w->start, score = 0;
    if (w->probability < 0.15) score += 1.0;
    if (duration < 0.133) score += (0.133 - duration) * 15;
    if (duration > 2.0) score += duration - 2.0;
    return score;
}

static bool is_segment_anomaly(const sotto__wseg *s)
{
    if (!s || s->n_words == 0) return false;
    double score = 0;
    int n = 0;
    for (int i = 0; i < s->n_words && n < 8; i++) {
        if (sotto__py_in(s->words[i].word, strlen(s->words[i].word), PUNCTUATION)) continue;
        score += word_anomaly_score(&s->words[i]);
        n++;
    }
    return score >= 3 || score + 0.01 >= n;
}

static const sotto__wseg *next_words_segment(const sotto__wseg *segs, int n)
{
    for (int i = 0; i < n; i++)
        if (segs[i].n_words > 0) return &segs[i];
    return NULL;
}

bool sotto__segments_end(const sotto__wseg *segs, int n, double *end)
{
    for (int i = n - 1; i >= 0; i--)
        if (segs[i].n_words > 0) return *end = segs[i].words[segs[i].n_words - 1].end, true;
    if (n == 0) return false;
    *end = segs[n - 1].end;
    return true;
}

bool sotto__skip_hallucinations(const sotto__hal_window *w, sotto__wseg *segs, int *n, int64_t *next_seek)
{
    const double threshold = w->threshold, time_offset = (double)(w->seek * 160) / 16000.0;
    const double window_end = (double)((w->seek + 3000) * 160) / 16000.0;
    const double segment_duration = (double)(w->size * 160) / 16000.0;
    const double content_duration = (double)(w->content_frames * 160) / 16000.0;
    double end;
    if (!w->single && sotto__segments_end(segs, *n, &end) && end > time_offset)
        *next_seek = window_end - end > threshold ? (int64_t)llrint(end * 100) : w->seek + w->size;
    /* if first segment might be a hallucination, skip leading silence */
    const sotto__wseg *first = next_words_segment(segs, *n);
    if (first && is_segment_anomaly(first)) {
        double gap = first->start - time_offset;
        if (gap > threshold) {
            *next_seek = w->seek + (int64_t)llrint(gap * 100);
            return true;
        }
    }
    /* skip silence before any possible hallucination that is surrounded by silence or
     * more hallucinations */
    double hal_last_end = w->last_speech;
    for (int si = 0; si < *n; si++) {
        const sotto__wseg *s = &segs[si];
        if (s->n_words == 0) continue;
        if (is_segment_anomaly(s)) {
            const sotto__wseg *next = next_words_segment(segs + si + 1, *n - si - 1);
            double hal_next_start = next ? next->words[0].start : time_offset + segment_duration;
            bool before = s->start - hal_last_end > threshold || s->start < threshold || s->start - time_offset < 2.0;
            bool after = hal_next_start - s->end > threshold || is_segment_anomaly(next) || window_end - s->end < 2.0;
            if (before && after) {
                *next_seek = (int64_t)llrint(fmax(time_offset + 1, s->start) * 100);
                if (content_duration - s->end < threshold) *next_seek = w->content_frames;
                for (int k = si; k < *n; k++) sotto__wseg_free(&segs[k]);
                *n = si;
                break;
            }
        }
        hal_last_end = s->end;
    }
    return false;
}
