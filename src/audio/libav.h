/* libav.h — the FFmpeg functions decode.c calls, resolved from FFmpeg's shared libraries
 * the first time a file needs them (sotto__av_load). A process that reads only WAV files
 * (the built-in reader), or no audio at all, never maps FFmpeg and the hundred-odd
 * libraries its codecs pull in: about 25 MB resident and 20 ms of start-up
 * (docs/BENCHMARKS.md). The libraries opened are those the build compiled against, by
 * their major version (the soname), so their structures are the headers' structures.
 * Only in a build with SOTTO_HAVE_FFMPEG. */
#ifndef SOTTO_AUDIO_LIBAV_H
#define SOTTO_AUDIO_LIBAV_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libswresample/swresample.h>

#include "common.h"

/* X(LIBRARY, FUNCTION) for every function used; LIBRARY indexes the library table of
 * libav.c (AVUTIL first: the others need it). */
#define SOTTO__AV_FUNCS(X)                                                                               \
    X(AVUTIL, av_malloc) X(AVUTIL, av_free) X(AVUTIL, av_freep) X(AVUTIL, av_strerror)                 \
    X(AVUTIL, av_log_set_level) X(AVUTIL, av_get_media_type_string) X(AVUTIL, av_get_sample_fmt_name)  \
    X(AVUTIL, av_channel_layout_default) X(AVUTIL, av_channel_layout_copy)                             \
    X(AVUTIL, av_channel_layout_compare) X(AVUTIL, av_channel_layout_uninit)                           \
    X(AVUTIL, av_frame_alloc) X(AVUTIL, av_frame_free) X(AVUTIL, av_frame_unref)                       \
    X(AVCODEC, avcodec_get_name) X(AVCODEC, avcodec_alloc_context3) X(AVCODEC, avcodec_free_context)   \
    X(AVCODEC, avcodec_parameters_to_context) X(AVCODEC, avcodec_open2) X(AVCODEC, avcodec_send_packet) \
    X(AVCODEC, avcodec_receive_frame) X(AVCODEC, av_packet_alloc) X(AVCODEC, av_packet_free)          \
    X(AVCODEC, av_packet_unref)                                                                         \
    X(AVFORMAT, avio_alloc_context) X(AVFORMAT, avio_context_free) X(AVFORMAT, avformat_alloc_context) \
    X(AVFORMAT, avformat_open_input) X(AVFORMAT, avformat_find_stream_info)                            \
    X(AVFORMAT, avformat_close_input) X(AVFORMAT, av_find_best_stream) X(AVFORMAT, av_read_frame)      \
    X(SWRESAMPLE, swr_alloc_set_opts2) X(SWRESAMPLE, swr_set_matrix) X(SWRESAMPLE, swr_init)           \
    X(SWRESAMPLE, swr_free) X(SWRESAMPLE, swr_get_out_samples) X(SWRESAMPLE, swr_convert)

typedef struct sotto__av {
#define SOTTO__AV_FIELD(lib, name) __typeof__(name) *name;
    SOTTO__AV_FUNCS(SOTTO__AV_FIELD)
#undef SOTTO__AV_FIELD
} sotto__av;

/* Opens the libraries on the first call (thread-safe; later calls return its result):
 * SOTTO_OK, or SOTTO_ERR_UNSUPPORTED with ERR naming the library that could not be opened
 * or the function it lacks. */
sotto_status sotto__av_load(sotto__err *err);

/* The functions: valid in a thread once sotto__av_load returned SOTTO_OK in it. */
extern sotto__av sotto__libav;

/* FFmpeg's log level: set now when the libraries are open, else when they are opened. */
void sotto__av_log_level(int level);

#endif
