/* decode.c — audio through FFmpeg's libraries: libavformat demuxes the byte source
 * (any container it probes, the best audio stream of a video file), libavcodec decodes,
 * libswresample down-mixes to mono and resamples to 16 kHz, a frame at a time.
 *
 * Settings, chosen to give exactly what openai-whisper's load_audio reads, i.e. what
 * `ffmpeg -nostdin -threads 0 -i FILE -f s16le -ac 1 -acodec pcm_s16le -ar 16000 -`
 * writes (FFmpeg 5.1's CLI: decoder -> aresample filter with default swr options ->
 * s16 mono 16 kHz), divided by 32768:
 *   - swr with every option at its default (swr_alloc_set_opts2, nothing else set): the
 *     built-in polyphase resampler (filter_size 32, Kaiser beta 9, cutoff 0.97,
 *     exact_rational 1: the ratio's own phases when it needs at most 1024, else
 *     phase_shift 10 with linear_interp 1), the default down-mix matrix (centre and
 *     surround -3 dB, LFE 0, normalised to a sum of at most 1 for 16-bit output:
 *     stereo is 0.5 L + 0.5 R), no dither;
 *   - output sample format s16, as the CLI asks of swr: it picks swr's internal format
 *     (int16 for 16-bit input, float otherwise) and rounds (lrintf, clipped), so the
 *     16-bit values match the CLI's; then / 32768, as load_audio does;
 *   - a frame without a channel layout gets the default layout for its channel count,
 *     as the CLI guesses one; a frame whose format, rate or layout changes starts a new
 *     resampler, as the CLI rebuilds its filter graph (without flushing the old one);
 *   - at the end the resampler's delay is flushed, as aresample does at EOF;
 *   - streams other than the chosen one are discarded (the CLI does so for unmapped
 *     streams). The stream is av_find_best_stream's; the CLI picks the audio stream with
 *     the most channels, so files with several audio tracks may differ (documented).
 * tests/audio/ffmpeg_equal.sh compares our samples with that command bit for bit.
 *
 * Damage is decoded around as the ffmpeg command decodes it (so openai-whisper and
 * faster-whisper read such a file, and so does sotto), and said: a packet that does not
 * decode is skipped (the warning counts them and names the first's position and
 * av_strerror's text), unless more than 2/3 of the stream's packets fail, where ffmpeg
 * exits 69 and openai-whisper fails too ("cannot decode the audio at 0.68 s ...: the file is
 * damaged"), or FFmpeg only guessed the format (a probe score under its extension's 50:
 * raw floats taken for AMR, which the command would decode into minutes of noise, fail
 * at their first undecodable packet); a stream that decodes to more than 0.25 s and 1 %
 * less than the length its container states (the stream's, or the file's when the audio
 * is its only stream; never one estimated from the bitrate) gives what it decodes, with a
 * warning ("damaged or truncated"). A WAV file whose data chunk the built-in walk found cut short
 * (sotto__ff_cut_short) is read as far as it goes, its last, partial packet dropped
 * without counting, as ffmpeg does. A read error of the bytes fails. What FFmpeg passes
 * over without a word (an Ogg file cut at a page: a shorter valid stream; a page dropped
 * for its checksum, when the length still adds up) is not seen.
 * The demuxer opens no other file or URL (io_open refuses): a playlist or a reference to
 * external media cannot make sotto read anything but the input it was given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "libav.h"

/* FFmpeg's functions, from its libraries opened by sotto__ff_open (libav.h) */
static const sotto__av *const av = &sotto__libav;

#define IO_BUFFER_BYTES 65536
#define TRUNC_MIN_S 0.25
#define TRUNC_FRACTION 0.01
#define MAX_RATE_HZ 768000
#define MIN_RATE_HZ 1000 /* below it no real audio: a header's 1 Hz makes 320 kB 44 hours (issue 23) */

struct sotto__ff {
    sotto__src *src;
    sotto__err io_err;            /* what the byte source said when a read failed */
    AVIOContext *io;
    AVFormatContext *fmt;
    AVCodecContext *dec;
    SwrContext *swr;
    AVPacket *pkt;
    AVFrame *frame;
    int stream;
    AVChannelLayout in_layout;    /* of the resampler's input */
    int in_rate, in_format;
    int16_t *out;                 /* [out_cap] resampled samples, out_pos..out_len pending */
    int out_cap, out_len, out_pos;
    bool demux_done, dec_done, swr_done, failed;
    int64_t n_out;                /* samples returned so far */
    double exact_s;               /* the stream's length as its container states it, or -1 */
    double packet_s;              /* time of the last packet read, for messages */
    char cut[SOTTO__ERR_LEN];     /* "" or the note of sotto__ff_cut_short */
    int64_t n_good, n_bad;        /* packets (and frames) decoded, and those that failed */
    int n_bad_row;                /* frames failed since the last frame or packet */
    double bad_s;                 /* where the first failure was */
    char bad_what[64];            /* and av_strerror's words for it */
    bool short_stream;            /* decoded well short of its container's length */
    bool stopped;                 /* the demuxer failed at packet_s: the input ended there */
    char stop_what[64];
    char warning[2 * SOTTO__ERR_LEN]; /* what was read around: the notes above, joined */
};

static int io_read(void *opaque, uint8_t *buf, int size)
{
    sotto__ff *f = opaque;
    size_t got;
    /* what a pipe has now: FFmpeg reads on as it needs, and a live stream's packets are not
     * held until IO_BUFFER_BYTES arrive (20 s of a 24 kbit/s MP3) */
    if (sotto__src_read_some(f->src, buf, (size_t)size, &got, &f->io_err)) return AVERROR(EIO);
    return got ? (int)got : AVERROR_EOF;
}

static int64_t io_seek(void *opaque, int64_t offset, int whence)
{
    sotto__ff *f = opaque;
    if (whence & AVSEEK_SIZE) return f->src->size >= 0 ? f->src->size : AVERROR(ENOSYS);
    whence &= ~AVSEEK_FORCE;
    int64_t to = whence == SEEK_SET ? offset : whence == SEEK_CUR ? f->src->pos + offset
               : whence == SEEK_END && f->src->size >= 0 ? f->src->size + offset : -1;
    int64_t r = to >= 0 ? sotto__src_seek(f->src, to) : -1;
    return r >= 0 ? r : AVERROR(EINVAL);
}

/* Secondary inputs (playlists, external references) are refused: see the header. */
static int io_open_refused(struct AVFormatContext *s, AVIOContext **pb, const char *url, int flags,
                           AVDictionary **options)
{
    return AVERROR(EPERM);
}

static const char *av_err(int code, char *buf, size_t n)
{
    if (av->av_strerror(code, buf, n) < 0) snprintf(buf, n, "error %d", code);
    return buf;
}

/* The failure of an FFmpeg call CODE, while doing WHAT ("PATH: WHAT (FFmpeg: its
 * words)TAIL"): an I/O error of the byte source keeps the source's own message. */
static sotto_status ff_fail_tail(sotto__ff *f, sotto__err *err, sotto_status st, int code, const char *what,
                                 const char *tail)
{
    char e[AV_ERROR_MAX_STRING_SIZE];
    if (f->io_err.status) {
        *err = f->io_err;
        return err->status;
    }
    return sotto__fail(err, st, "%s: %s (FFmpeg: %s)%s", f->src->name, what, av_err(code, e, sizeof e), tail);
}

static sotto_status ff_fail(sotto__ff *f, sotto__err *err, sotto_status st, int code, const char *what)
{
    return ff_fail_tail(f, err, st, code, what, "");
}

/* "1 video stream (h264), 1 subtitle stream (subrip)" for a file without audio. */
static void describe_streams(const AVFormatContext *fmt, char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    for (unsigned i = 0; i < fmt->nb_streams && k + 1 < n; i++) {
        const AVCodecParameters *p = fmt->streams[i]->codecpar;
        const char *type = av->av_get_media_type_string(p->codec_type);
        int w = snprintf(out + k, n - k, "%s%s (%s)", i ? ", " : "", type ? type : "unknown",
                         av->avcodec_get_name(p->codec_id));
        if (w < 0) break;
        k += (size_t)w;
    }
    if (!fmt->nb_streams) snprintf(out, n, "no streams at all");
}

/* A sample rate no real audio has (below MIN_RATE_HZ: a damaged or hostile header whose
 * few bytes would decode to hours), or one whose resampler would be too large. */
static sotto_status check_rate(const sotto__ff *f, int rate, sotto__err *err)
{
    if (rate >= 1 && rate < MIN_RATE_HZ)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: a sample rate of %d Hz: no real audio has one below %d Hz "
                           "(a damaged header)", f->src->name, rate, MIN_RATE_HZ);
    /* swr's filter bank grows with the down-sampling factor: at 768 kHz it is a few MB,
     * at a crafted header's 2 GHz it would be tens of GB (found by fuzz_audio) */
    if (rate < 1 || rate > MAX_RATE_HZ)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: a sample rate of %d Hz (sotto resamples %d Hz to %d Hz)",
                           f->src->name, rate, MIN_RATE_HZ, MAX_RATE_HZ);
    return SOTTO_OK;
}

static sotto_status open_decoder(sotto__ff *f, sotto__err *err)
{
    const AVCodec *codec = NULL;
    int r = av->av_find_best_stream(f->fmt, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0);
    if (r == AVERROR_STREAM_NOT_FOUND) {
        for (unsigned i = 0; i < f->fmt->nb_streams; i++) { /* skipped for its parameters */
            const AVCodecParameters *p = f->fmt->streams[i]->codecpar;
            if (p->codec_type == AVMEDIA_TYPE_AUDIO)
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: its %s audio stream is unusable: %d channels, %d Hz",
                                   f->src->name, av->avcodec_get_name(p->codec_id), p->ch_layout.nb_channels,
                                   p->sample_rate);
        }
        char what[256];
        describe_streams(f->fmt, what, sizeof what);
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no audio stream (the %s file holds: %s)", f->src->name,
                           f->fmt->iformat->name, what);
    }
    if (r == AVERROR_DECODER_NOT_FOUND || (r >= 0 && !codec)) {
        int i = av->av_find_best_stream(f->fmt, AVMEDIA_TYPE_AUDIO, -1, -1, NULL, 0);
        const AVCodecParameters *par = i >= 0 ? f->fmt->streams[i]->codecpar : NULL;
        if (par && par->codec_id == AV_CODEC_ID_NONE) /* a WAV format tag FFmpeg knows no codec for */
            return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: its audio is in a coding FFmpeg does not know (%s "
                               "format tag 0x%04x)", f->src->name, f->fmt->iformat->name, (unsigned)par->codec_tag);
        const char *name = par ? av->avcodec_get_name(par->codec_id) : "?";
        return sotto__fail(err, SOTTO_ERR_UNSUPPORTED, "%s: this FFmpeg has no decoder for its %s audio",
                           f->src->name, name);
    }
    if (r < 0) return ff_fail(f, err, SOTTO_ERR_FORMAT, r, "cannot choose an audio stream");
    f->stream = r;
    for (unsigned i = 0; i < f->fmt->nb_streams; i++)
        if ((int)i != r) f->fmt->streams[i]->discard = AVDISCARD_ALL;
    AVStream *st = f->fmt->streams[r];
    sotto_status rate_st; /* refused before a sample is decoded; 0 (not stated) waits for the frames */
    if (st->codecpar->sample_rate > 0 && (rate_st = check_rate(f, st->codecpar->sample_rate, err))) return rate_st;
    f->dec = av->avcodec_alloc_context3(codec);
    if (!f->dec) return sotto__fail(err, SOTTO_ERR_NOMEM, "%s: out of memory for the decoder", f->src->name);
    if ((r = av->avcodec_parameters_to_context(f->dec, st->codecpar)) < 0)
        return ff_fail(f, err, SOTTO_ERR_FORMAT, r, "cannot set up the decoder");
    f->dec->pkt_timebase = st->time_base;
    f->dec->thread_count = 1; /* audio decoders do not thread; the output is the same */
    if ((r = av->avcodec_open2(f->dec, codec, NULL)) < 0) {
        char what[96];
        snprintf(what, sizeof what, "cannot open the %s decoder", codec->name);
        return ff_fail(f, err, SOTTO_ERR_FORMAT, r, what);
    }
    /* the length to hold the decoded stream to: the stream's own, or the container's
     * when the audio is its only stream (Matroska states only that one); never one
     * estimated from the bitrate */
    if (f->fmt->duration_estimation_method != AVFMT_DURATION_FROM_BITRATE) {
        if (st->duration != AV_NOPTS_VALUE && st->duration > 0)
            f->exact_s = (double)st->duration * av_q2d(st->time_base);
        else if (f->fmt->nb_streams == 1 && f->fmt->duration != AV_NOPTS_VALUE && f->fmt->duration > 0)
            f->exact_s = (double)f->fmt->duration / AV_TIME_BASE;
    }
    return SOTTO_OK;
}

sotto_status sotto__ff_open(sotto__src *s, sotto__ff **out, double *duration, sotto__err *err)
{
    *out = NULL;
    *duration = -1;
    sotto__err why;
    if (sotto__av_load(&why))
        return sotto__fail(err, why.status, "%s: not 16 kHz mono WAV, so FFmpeg reads it, but %s", s->name, why.msg);
    sotto__ff *f = calloc(1, sizeof *f);
    uint8_t *buf = av->av_malloc(IO_BUFFER_BYTES);
    if (!f || !buf) {
        free(f);
        av->av_free(buf);
        return sotto__fail(err, SOTTO_ERR_NOMEM, "%s: out of memory", s->name);
    }
    f->src = s;
    f->stream = -1;
    f->exact_s = -1;
    f->io = av->avio_alloc_context(buf, IO_BUFFER_BYTES, 0, f, io_read, NULL, s->seekable ? io_seek : NULL);
    f->fmt = av->avformat_alloc_context();
    f->pkt = av->av_packet_alloc();
    f->frame = av->av_frame_alloc();
    if (!f->io || !f->fmt || !f->pkt || !f->frame) {
        if (!f->io) av->av_free(buf);
        sotto__ff_close(f);
        return sotto__fail(err, SOTTO_ERR_NOMEM, "%s: out of memory", s->name);
    }
    f->fmt->pb = f->io;
    f->fmt->io_open = io_open_refused;
    /* the path names the input for probing by extension, as the CLI's -i does; it is
     * never opened (the AVIOContext above is the input) */
    int r = av->avformat_open_input(&f->fmt, s->url, NULL, NULL);
    sotto_status st = SOTTO_OK;
    if (r < 0) {
        f->fmt = NULL; /* freed by avformat_open_input */
        st = ff_fail(f, err, SOTTO_ERR_FORMAT, r,
                     r == AVERROR_EOF ? "truncated file: it ends inside its headers"
                                      : "not an audio or video file FFmpeg can read");
    } else if ((r = av->avformat_find_stream_info(f->fmt, NULL)) < 0) {
        st = ff_fail(f, err, SOTTO_ERR_FORMAT, r, "cannot read the stream parameters");
    } else {
        st = open_decoder(f, err);
    }
    if (st) {
        sotto__ff_close(f);
        return st;
    }
    AVStream *as = f->fmt->streams[f->stream];
    if (as->duration != AV_NOPTS_VALUE && as->duration > 0) *duration = (double)as->duration * av_q2d(as->time_base);
    else if (f->fmt->duration != AV_NOPTS_VALUE && f->fmt->duration > 0) *duration = (double)f->fmt->duration / AV_TIME_BASE;
    *out = f;
    return SOTTO_OK;
}

void sotto__ff_close(sotto__ff *f)
{
    if (!f) return;
    av->swr_free(&f->swr);
    av->av_channel_layout_uninit(&f->in_layout);
    av->avcodec_free_context(&f->dec);
    if (f->fmt) av->avformat_close_input(&f->fmt);
    if (f->io) {
        av->av_freep(&f->io->buffer);
        av->avio_context_free(&f->io);
    }
    av->av_packet_free(&f->pkt);
    av->av_frame_free(&f->frame);
    free(f->out);
    free(f);
}

static bool grow_out(sotto__ff *f, int need)
{
    if (need <= f->out_cap) return true;
    int cap = f->out_cap ? f->out_cap : 4096;
    while (cap < need) {
        if (cap > INT32_MAX / 2) return false;
        cap *= 2;
    }
    int16_t *p = realloc(f->out, (size_t)cap * sizeof *p);
    if (!p) return false;
    f->out = p;
    f->out_cap = cap;
    return true;
}

/* The resampler's matrix set to channel f->src->channel alone (weight 1, the others 0):
 * 0, an FFmpeg error, or -1 with ERR set when the stream has fewer channels. */
static int pick_channel(sotto__ff *f, sotto__err *err)
{
    int n = f->in_layout.nb_channels, c = f->src->channel;
    if (c > n) {
        sotto__fail(err, SOTTO_ERR_FORMAT, "%s: channel %d of a %d-channel stream", f->src->name, c, n);
        return -1;
    }
    double *m = calloc((size_t)n, sizeof *m);
    if (!m) return AVERROR(ENOMEM);
    m[c - 1] = 1.0;
    int r = av->swr_set_matrix(f->swr, m, n);
    free(m);
    return r;
}

int sotto__ff_channels(const sotto__ff *f)
{
    return f && f->dec ? f->dec->ch_layout.nb_channels : 0;
}

/* (Re)creates the resampler when FRAME's format, rate or layout differ from the last. */
static sotto_status setup_swr(sotto__ff *f, const AVFrame *frame, sotto__err *err)
{
    AVChannelLayout in = {0};
    int r;
    if (frame->ch_layout.nb_channels <= 0)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: a decoded frame at %.2f s has no channels", f->src->name,
                           f->packet_s);
    sotto_status st = check_rate(f, frame->sample_rate, err);
    if (st) return st;
    if (frame->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC)
        av->av_channel_layout_default(&in, frame->ch_layout.nb_channels);
    else if ((r = av->av_channel_layout_copy(&in, &frame->ch_layout)) < 0)
        return ff_fail(f, err, SOTTO_ERR_NOMEM, r, "cannot copy a channel layout");
    if (f->swr && f->in_rate == frame->sample_rate && f->in_format == frame->format &&
        !av->av_channel_layout_compare(&in, &f->in_layout)) {
        av->av_channel_layout_uninit(&in);
        return SOTTO_OK;
    }
    av->swr_free(&f->swr);
    av->av_channel_layout_uninit(&f->in_layout);
    f->in_layout = in;
    f->in_rate = frame->sample_rate;
    f->in_format = frame->format;
    AVChannelLayout mono = AV_CHANNEL_LAYOUT_MONO;
    r = av->swr_alloc_set_opts2(&f->swr, &mono, AV_SAMPLE_FMT_S16, SOTTO_SAMPLE_RATE, &f->in_layout,
                                (enum AVSampleFormat)frame->format, frame->sample_rate, 0, NULL);
    if (r >= 0 && f->src->channel > 0) r = pick_channel(f, err);
    if (r == -1 && err->status) return err->status;
    if (r >= 0) r = av->swr_init(f->swr);
    if (r < 0) {
        char what[160];
        const char *fmt_name = av->av_get_sample_fmt_name((enum AVSampleFormat)frame->format);
        snprintf(what, sizeof what, "cannot resample %d Hz %d-channel %s audio to 16 kHz mono", frame->sample_rate,
                 frame->ch_layout.nb_channels, fmt_name ? fmt_name : "?");
        return ff_fail(f, err, SOTTO_ERR_UNSUPPORTED, r, what);
    }
    return SOTTO_OK;
}

/* Resamples FRAME (or, when NULL, flushes the resampler) into the pending buffer. */
static sotto_status resample(sotto__ff *f, const AVFrame *frame, sotto__err *err)
{
    int n_in = frame ? frame->nb_samples : 0;
    int cap = av->swr_get_out_samples(f->swr, n_in);
    if (cap < 0) return ff_fail(f, err, SOTTO_ERR_FORMAT, cap, "resampling failed");
    if (cap < 256) cap = 256;
    if (!grow_out(f, cap)) return sotto__fail(err, SOTTO_ERR_NOMEM, "%s: out of memory", f->src->name);
    uint8_t *o = (uint8_t *)f->out;
    int got = av->swr_convert(f->swr, &o, f->out_cap, frame ? (const uint8_t **)frame->extended_data : NULL, n_in);
    if (got < 0) return ff_fail(f, err, SOTTO_ERR_FORMAT, got, "resampling failed");
    f->out_pos = 0;
    f->out_len = got;
    if (!frame && got == 0) f->swr_done = true;
    return SOTTO_OK;
}

/* The warning: the notes of what was read around, joined. */
static void compose_warning(sotto__ff *f)
{
    size_t k = 0, n = sizeof f->warning;
    f->warning[0] = 0;
    if (f->cut[0]) k += (size_t)snprintf(f->warning, n, "%s", f->cut);
    if (f->n_bad && k < n)
        k += (size_t)snprintf(f->warning + k, n - k, "%s%s: %lld packet%s of its %s stream did not decode (the first "
                              "at %.2f s: %s) and %s skipped, as ffmpeg skips them: the transcript may miss words there, and "
                              "its times after that come early by the audio lost",
                              k ? "; " : "", f->src->name, (long long)f->n_bad, f->n_bad == 1 ? "" : "s",
                              av->avcodec_get_name(f->dec->codec_id), f->bad_s, f->bad_what,
                              f->n_bad == 1 ? "was" : "were");
    if (f->stopped && k < n)
        k += (size_t)snprintf(f->warning + k, n - k, "%s%s: cannot read past %.2f s (FFmpeg: %s): read what came "
                              "before, as ffmpeg does", k ? "; " : "", f->src->name, f->packet_s, f->stop_what);
    if (f->short_stream && k < n)
        snprintf(f->warning + k, n - k, "%s%s: damaged or truncated file: its %s stream decodes to %.2f s but the "
                 "container says %.2f s: read what decodes", k ? "; " : "", f->src->name,
                 av->avcodec_get_name(f->dec->codec_id), (double)f->n_out / SOTTO_SAMPLE_RATE, f->exact_s);
}

/* A packet or frame that did not decode (CODE): skipped, as the ffmpeg command skips it;
 * out of memory fails. */
static sotto_status decode_error(sotto__ff *f, sotto__err *err, int code)
{
    if (code == AVERROR(ENOMEM)) return sotto__fail(err, SOTTO_ERR_NOMEM, "%s: out of memory", f->src->name);
    if (f->fmt->probe_score < AVPROBE_SCORE_EXTENSION) { /* a guess that does not decode: not audio */
        char e[AV_ERROR_MAX_STRING_SIZE];
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: cannot decode the audio at %.2f s (FFmpeg: %s): FFmpeg "
                           "took it for %s by a guess (probe score %d of 100), and it does not decode: not audio, "
                           "or damaged", f->src->name, f->packet_s > 0 ? f->packet_s : 0.0, av_err(code, e, sizeof e),
                           f->fmt->iformat->name, f->fmt->probe_score);
    }
    if (!f->n_bad++) {
        f->bad_s = f->packet_s > 0 ? f->packet_s : 0.0;
        av_err(code, f->bad_what, sizeof f->bad_what);
    }
    compose_warning(f);
    return SOTTO_OK;
}

/* Feeds the decoder one packet of our stream, or the end of input. */
static sotto_status feed(sotto__ff *f, sotto__err *err)
{
    for (;;) {
        int r = av->av_read_frame(f->fmt, f->pkt);
        if (r == AVERROR_EOF) {
            f->demux_done = true;
            r = av->avcodec_send_packet(f->dec, NULL);
            return r < 0 && r != AVERROR_EOF ? decode_error(f, err, r) : SOTTO_OK;
        }
        if (r < 0 && (f->io_err.status || r == AVERROR(ENOMEM))) {
            char what[64];
            snprintf(what, sizeof what, "cannot read past %.2f s", f->packet_s);
            return ff_fail(f, err, SOTTO_ERR_FORMAT, r, what);
        }
        if (r < 0) { /* the demuxer's error ends the input, as the ffmpeg command ends it */
            f->stopped = true;
            av_err(r, f->stop_what, sizeof f->stop_what);
            compose_warning(f);
            r = av->avcodec_send_packet(f->dec, NULL);
            f->demux_done = true;
            return r < 0 && r != AVERROR_EOF ? decode_error(f, err, r) : SOTTO_OK;
        }
        if (f->pkt->stream_index != f->stream) {
            av->av_packet_unref(f->pkt);
            continue;
        }
        AVStream *stream = f->fmt->streams[f->stream];
        if (f->pkt->pts != AV_NOPTS_VALUE) f->packet_s = (double)f->pkt->pts * av_q2d(stream->time_base);
        r = av->avcodec_send_packet(f->dec, f->pkt);
        av->av_packet_unref(f->pkt);
        if (r == AVERROR_INVALIDDATA && f->cut[0]) continue; /* a cut WAV's partial last block */
        if (r >= 0) return SOTTO_OK;
        sotto_status st = decode_error(f, err, r);
        if (st) return st; /* else the next packet */
    }
}

/* Fills the pending buffer with at least one sample, or finds the end. */
static sotto_status refill(sotto__ff *f, sotto__err *err)
{
    while (f->out_pos == f->out_len && !f->swr_done) {
        if (f->dec_done) {
            sotto_status st = f->swr ? resample(f, NULL, err) : SOTTO_OK;
            if (!f->swr) f->swr_done = true;
            if (st) return st;
            continue;
        }
        int r = av->avcodec_receive_frame(f->dec, f->frame);
        if (r == AVERROR(EAGAIN)) {
            f->n_bad_row = 0;
            sotto_status st = feed(f, err);
            if (st) return st;
        } else if (r == AVERROR_EOF) {
            f->dec_done = true;
        } else if (r == AVERROR_INVALIDDATA && f->cut[0]) {
            continue; /* a cut WAV's partial last block: the decoder goes on to the end */
        } else if (r < 0) {
            /* a decoder that failed this often without a frame or a packet between will not recover */
            if (++f->n_bad_row > 64)
                return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: cannot decode the audio at %.2f s: the %s decoder "
                                   "fails again and again", f->src->name, f->packet_s,
                                   av->avcodec_get_name(f->dec->codec_id));
            sotto_status st = decode_error(f, err, r);
            if (st) return st;
        } else {
            f->n_good++, f->n_bad_row = 0;
            sotto_status st = setup_swr(f, f->frame, err);
            if (!st) st = resample(f, f->frame, err);
            av->av_frame_unref(f->frame);
            if (st) return st;
        }
    }
    return SOTTO_OK;
}

sotto_status sotto__ff_read(sotto__ff *f, float *buf, int64_t cap, int64_t *n, sotto__err *err)
{
    int64_t k = 0;
    *n = 0;
    while (k < cap) {
        sotto_status st = refill(f, err);
        if (st) return st;
        if (f->out_pos == f->out_len) break; /* the end */
        int64_t m = f->out_len - f->out_pos;
        if (m > cap - k) m = cap - k;
        for (int64_t j = 0; j < m; j++) buf[k + j] = (float)f->out[f->out_pos + j] / 32768.0f;
        f->out_pos += (int)m;
        k += m;
    }
    f->n_out += k;
    /* ffmpeg exits 69 (and openai-whisper fails) past 2/3 of its decodes failed */
    if (k == 0 && f->n_bad && (f->n_out == 0 || 3 * f->n_bad > 2 * (f->n_bad + f->n_good)))
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: cannot decode the audio at %.2f s (FFmpeg: %s): the file is "
                           "damaged: %lld of its %lld %s packets do not decode", f->src->name, f->bad_s, f->bad_what,
                           (long long)f->n_bad, (long long)(f->n_bad + f->n_good),
                           av->avcodec_get_name(f->dec->codec_id));
    if (k == 0 && f->n_out == 0)
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: no audio samples (its %s stream decodes to nothing)",
                           f->src->name, av->avcodec_get_name(f->dec->codec_id));
    double got_s = (double)f->n_out / SOTTO_SAMPLE_RATE;
    if (k == 0 && !f->cut[0] && !f->short_stream && f->exact_s > 0 && f->exact_s - got_s > TRUNC_MIN_S &&
        f->exact_s - got_s > TRUNC_FRACTION * f->exact_s) {
        f->short_stream = true;
        compose_warning(f);
    }
    *n = k;
    return SOTTO_OK;
}

void sotto__ff_cut_short(sotto__ff *f, const char *note)
{
    snprintf(f->cut, sizeof f->cut, "%s", note);
    compose_warning(f);
}

const char *sotto__ff_warning(const sotto__ff *f)
{
    return f->warning;
}

const char *sotto__ff_versions(void)
{
    return "any audio or video file FFmpeg reads (libavformat " AV_STRINGIFY(LIBAVFORMAT_VERSION)
           ", libavcodec " AV_STRINGIFY(LIBAVCODEC_VERSION) ", libswresample " AV_STRINGIFY(LIBSWRESAMPLE_VERSION) ")";
}

void sotto__ff_log(int verbosity)
{
    static const int level[] = {AV_LOG_QUIET, AV_LOG_ERROR, AV_LOG_WARNING, AV_LOG_INFO};
    sotto__av_log_level(level[verbosity < 0 ? 0 : verbosity > 3 ? 3 : verbosity]);
}
