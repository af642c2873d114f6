// The loader and the one reader behind CVideoFrames.h.
#include "CVideoFrames.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/macros.h>
#include <libswscale/swscale.h>

#define GW_SONAME(name, major) "lib" name ".so." AV_STRINGIFY(major)

// Every function used, resolved by name; each pointer has the type the header declares.
#define GW_AVUTIL_FUNCTIONS(X)                                                                                      \
    X(av_malloc) X(av_free) X(av_freep) X(av_log_set_level) X(av_dict_set) X(av_dict_free) X(av_frame_alloc)       \
    X(av_frame_free) X(av_display_rotation_get) X(av_rescale_q) X(av_strerror)
#define GW_AVCODEC_FUNCTIONS(X)                                                                                     \
    X(avcodec_alloc_context3) X(avcodec_free_context) X(avcodec_parameters_to_context) X(avcodec_open2)            \
    X(avcodec_send_packet) X(avcodec_receive_frame) X(avcodec_get_name) X(av_packet_alloc) X(av_packet_free)       \
    X(av_packet_unref)
#define GW_AVFORMAT_FUNCTIONS(X)                                                                                    \
    X(avformat_alloc_context) X(avformat_open_input) X(avformat_close_input) X(avformat_find_stream_info)          \
    X(av_find_best_stream) X(av_read_frame) X(av_seek_frame) X(avio_alloc_context) X(avio_context_free)           \
    X(av_stream_get_side_data)
#define GW_SWSCALE_FUNCTIONS(X) X(sws_getContext) X(sws_scale) X(sws_freeContext)

#define GW_FIELD(name) __typeof__(name) *name;
static struct {
    GW_AVUTIL_FUNCTIONS(GW_FIELD) GW_AVCODEC_FUNCTIONS(GW_FIELD) GW_AVFORMAT_FUNCTIONS(GW_FIELD) GW_SWSCALE_FUNCTIONS(GW_FIELD)
} av;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_message[512];
static int load_failed = 1;

static void *open_library(const char *soname) {
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL && load_message[0] == 0) {
        const char *reason = dlerror();
        snprintf(load_message, sizeof load_message, "%s could not be loaded (%s)", soname,
                 reason != NULL ? reason : "unknown reason");
    }
    return handle;
}

static void load(void) {
    const char *sonames[] = {GW_SONAME("avutil", LIBAVUTIL_VERSION_MAJOR), GW_SONAME("avcodec", LIBAVCODEC_VERSION_MAJOR),
                             GW_SONAME("avformat", LIBAVFORMAT_VERSION_MAJOR), GW_SONAME("swscale", LIBSWSCALE_VERSION_MAJOR)};
    void *handles[4];
    for (int index = 0; index < 4; index++) {
        if ((handles[index] = open_library(sonames[index])) == NULL) return;
    }
    int failed = 0;
#define GW_RESOLVE(handle, soname, name)                                                                            \
    if (failed == 0 && (av.name = (__typeof__(name) *)dlsym(handle, #name)) == NULL) {                             \
        snprintf(load_message, sizeof load_message, "%s has no function %s", soname, #name);                       \
        failed = 1;                                                                                                 \
    }
#define GW_RESOLVE_AVUTIL(name) GW_RESOLVE(handles[0], sonames[0], name)
#define GW_RESOLVE_AVCODEC(name) GW_RESOLVE(handles[1], sonames[1], name)
#define GW_RESOLVE_AVFORMAT(name) GW_RESOLVE(handles[2], sonames[2], name)
#define GW_RESOLVE_SWSCALE(name) GW_RESOLVE(handles[3], sonames[3], name)
    GW_AVUTIL_FUNCTIONS(GW_RESOLVE_AVUTIL)
    GW_AVCODEC_FUNCTIONS(GW_RESOLVE_AVCODEC)
    GW_AVFORMAT_FUNCTIONS(GW_RESOLVE_AVFORMAT)
    GW_SWSCALE_FUNCTIONS(GW_RESOLVE_SWSCALE)
    if (failed) return;
    // A library must not print: FFmpeg logs damaged input to stderr by default.
    av.av_log_set_level(AV_LOG_QUIET);
    load_failed = 0;
}

int gw_video_load(const char **message) {
    pthread_once(&load_once, load);
    if (load_failed && message != NULL) *message = load_message;
    return load_failed ? -1 : 0;
}

void gw_video_free(void *memory) { free(memory); }

// The containers and decoders allowed: the video formats people keep, nothing exotic (FFmpeg's
// many rarely used demuxers and decoders are where its bugs have been).
static const char *const allowed_formats = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,avi,mpegts,mpeg,flv,ogg,asf";
static const char *const allowed_codecs =
    "h264,hevc,vp8,vp9,libvpx,libvpx-vp9,av1,libdav1d,mpeg4,mpeg2video,mpeg1video,mjpeg,theora,wmv3,vc1,prores,dnxhd,"
    "msmpeg4,aac,aac_fixed,mp3,mp3float,opus,libopus,vorbis,libvorbis,flac,ac3,ac3_fixed,eac3,alac,pcm_s16le,"
    "pcm_s24le";

// The reader's state: the caller's callback, and the position FFmpeg's reads go on from.
typedef struct reader {
    void *context;
    gw_video_read_callback read;
    int64_t size;
    int64_t position;
    int input_failed;
} reader;

static int read_packet(void *opaque, uint8_t *buffer, int length) {
    reader *state = opaque;
    if (state->position >= state->size) return AVERROR_EOF;
    int64_t got = state->read(state->context, state->position, buffer, length);
    if (got < 0) {
        state->input_failed = 1;
        return AVERROR(EIO);
    }
    if (got == 0) return AVERROR_EOF;
    state->position += got;
    return (int)got;
}

static int64_t seek(void *opaque, int64_t offset, int whence) {
    reader *state = opaque;
    int64_t base;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return state->size;
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = state->position; break;
    case SEEK_END: base = state->size; break;
    default: return AVERROR(EINVAL);
    }
    if ((offset > 0 && base > INT64_MAX - offset) || base + offset < 0) return AVERROR(EINVAL);
    state->position = base + offset;
    return state->position;
}

static void describe(char *error, size_t size, const char *what, int code) {
    char reason[128] = "";
    if (code != 0 && av.av_strerror(code, reason, sizeof reason) != 0) snprintf(reason, sizeof reason, "error %d", code);
    snprintf(error, size, code != 0 ? "%s: %s" : "%s", what, reason);
}

static void copy_name(char *target, size_t size, const char *name) { snprintf(target, size, "%s", name != NULL ? name : ""); }

/// Clockwise degrees from a stream's display matrix, as the ffmpeg tool turns its frames.
static int rotation_of(AVStream *stream) {
    size_t length = 0;
    uint8_t *matrix = av.av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &length);
    if (matrix == NULL || length < 9 * sizeof(int32_t)) return 0;
    double degrees = -av.av_display_rotation_get((const int32_t *)matrix);
    if (degrees != degrees) return 0; // NaN: a degenerate matrix
    long turns = (long)(degrees / 90 + (degrees >= 0 ? 0.5 : -0.5)) % 4;
    return (int)((turns + 4) % 4) * 90;
}

/// Decodes the first frame after a seek into `frame`; AVERROR_EOF when none comes in `max_packets`.
static int decode_one(AVFormatContext *format, AVCodecContext *codec, int stream, AVPacket *packet, AVFrame *frame,
                      int max_packets, reader *state) {
    for (int count = 0; count < max_packets; count++) {
        int result = av.av_read_frame(format, packet);
        if (result == AVERROR_EOF && !state->input_failed) {
            av.avcodec_send_packet(codec, NULL); // drain what the decoder holds
            return av.avcodec_receive_frame(codec, frame);
        }
        if (result < 0) return result;
        if (packet->stream_index != stream) {
            av.av_packet_unref(packet);
            continue;
        }
        result = av.avcodec_send_packet(codec, packet);
        av.av_packet_unref(packet);
        if (result < 0 && result != AVERROR(EAGAIN) && result != AVERROR_INVALIDDATA) return result;
        result = av.avcodec_receive_frame(codec, frame);
        if (result == 0) return 0;
        if (result != AVERROR(EAGAIN)) return result;
    }
    return AVERROR_EOF;
}

int gw_video_read(void *context, gw_video_read_callback read, int64_t size, gw_video_info *info, int max_side,
                  int64_t max_pixels, int max_packets, uint8_t **rgb, int *width, int *height, char *error,
                  size_t error_size) {
    memset(info, 0, sizeof *info);
    info->duration_ms = -1;
    if (rgb != NULL) *rgb = NULL;
    error[0] = 0;
    reader state = {context, read, size, 0, 0};
    int status = GW_VIDEO_FAILED;
    AVFormatContext *format = NULL;
    AVIOContext *io = NULL;
    AVCodecContext *codec = NULL;
    AVPacket *packet = NULL;
    AVFrame *frame = NULL;
    struct SwsContext *scaler = NULL;
    AVDictionary *options = NULL;
    const int buffer_size = 64 << 10;
    uint8_t *buffer = av.av_malloc(buffer_size);
    if (buffer == NULL || (format = av.avformat_alloc_context()) == NULL) {
        snprintf(error, error_size, "out of memory");
        goto done;
    }
    io = av.avio_alloc_context(buffer, buffer_size, 0, &state, read_packet, NULL, seek);
    if (io == NULL) {
        snprintf(error, error_size, "out of memory");
        goto done;
    }
    buffer = NULL; // the context owns it now
    format->pb = io;
    format->flags |= AVFMT_FLAG_CUSTOM_IO;
    av.av_dict_set(&options, "format_whitelist", allowed_formats, 0);
    av.av_dict_set(&options, "codec_whitelist", allowed_codecs, 0);
    int result = av.avformat_open_input(&format, NULL, NULL, &options);
    av.av_dict_free(&options);
    if (result < 0) {
        // avformat_open_input frees the context on failure.
        format = NULL;
        status = state.input_failed ? GW_VIDEO_INPUT_FAILED : GW_VIDEO_NOT_VIDEO;
        goto done;
    }
    if ((result = av.avformat_find_stream_info(format, NULL)) < 0 && state.input_failed) {
        status = GW_VIDEO_INPUT_FAILED;
        goto done;
    }
    const AVCodec *decoder = NULL;
    int index = av.av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (index < 0) {
        status = GW_VIDEO_NOT_VIDEO;
        goto done;
    }
    AVStream *stream = format->streams[index];
    AVCodecParameters *parameters = stream->codecpar;
    // Cover art stored as a video stream (an MP3's or M4A's picture) is not a video.
    if (stream->disposition & AV_DISPOSITION_ATTACHED_PIC) {
        status = GW_VIDEO_NOT_VIDEO;
        goto done;
    }
    copy_name(info->video_codec, sizeof info->video_codec, av.avcodec_get_name(parameters->codec_id));
    int audio = av.av_find_best_stream(format, AVMEDIA_TYPE_AUDIO, -1, index, NULL, 0);
    if (audio >= 0) {
        AVCodecParameters *sound = format->streams[audio]->codecpar;
        copy_name(info->audio_codec, sizeof info->audio_codec, av.avcodec_get_name(sound->codec_id));
        info->sample_rate = sound->sample_rate > 0 ? sound->sample_rate : 0;
        info->channels = sound->ch_layout.nb_channels > 0 ? sound->ch_layout.nb_channels : 0;
    }
    if (format->duration > 0) {
        info->duration_ms = format->duration / (AV_TIME_BASE / 1000);
    } else if (stream->duration > 0 && stream->time_base.num > 0 && stream->time_base.den > 0) {
        info->duration_ms = av.av_rescale_q(stream->duration, stream->time_base, (AVRational){1, 1000});
    }
    info->bit_rate = format->bit_rate > 0 ? format->bit_rate : 0;
    if (stream->avg_frame_rate.num > 0 && stream->avg_frame_rate.den > 0) {
        info->frame_rate = (double)stream->avg_frame_rate.num / stream->avg_frame_rate.den;
    }
    info->rotation = rotation_of(stream);
    // The shown size: the sample aspect ratio widens (or narrows) the coded picture.
    int64_t coded_width = parameters->width, coded_height = parameters->height;
    int64_t shown_width = coded_width;
    AVRational aspect = parameters->sample_aspect_ratio;
    if (aspect.num > 0 && aspect.den > 0 && aspect.num <= 100 * aspect.den && aspect.den <= 100 * aspect.num) {
        shown_width = coded_width * aspect.num / aspect.den;
    }
    if (coded_width <= 0 || coded_height <= 0 || coded_width > 1 << 16 || coded_height > 1 << 16) {
        snprintf(error, error_size, "the video stream has no usable size (%lld x %lld)", (long long)coded_width,
                 (long long)coded_height);
        goto done;
    }
    info->width = (int)shown_width;
    info->height = (int)coded_height;
    if (rgb == NULL) {
        status = GW_VIDEO_OK;
        goto done;
    }
    if (coded_width * coded_height > max_pixels) {
        snprintf(error, error_size, "the video is %lld x %lld pixels, more than the %lld a poster may decode",
                 (long long)coded_width, (long long)coded_height, (long long)max_pixels);
        goto done;
    }
    if (decoder == NULL) {
        snprintf(error, error_size, "no decoder for %s", info->video_codec);
        goto done;
    }
    if ((codec = av.avcodec_alloc_context3(decoder)) == NULL || (packet = av.av_packet_alloc()) == NULL ||
        (frame = av.av_frame_alloc()) == NULL) {
        snprintf(error, error_size, "out of memory");
        goto done;
    }
    if ((result = av.avcodec_parameters_to_context(codec, parameters)) < 0) {
        describe(error, error_size, "could not read the video stream's parameters", result);
        goto done;
    }
    // One thread: a poster is one frame, and frame threads would hold several back.
    codec->thread_count = 1;
    codec->max_pixels = max_pixels;
    av.av_dict_set(&options, "codec_whitelist", allowed_codecs, 0);
    result = av.avcodec_open2(codec, decoder, &options);
    av.av_dict_free(&options);
    if (result < 0) {
        if (state.input_failed) status = GW_VIDEO_INPUT_FAILED;
        describe(error, error_size, "could not open the video decoder", result);
        goto done;
    }
    // A tenth of the way in (the opening frames are often black), at most ten seconds.
    int64_t target_ms = info->duration_ms > 0 ? info->duration_ms / 10 : 0;
    if (target_ms > 10000) target_ms = 10000;
    int sought = 0;
    if (target_ms > 0 && stream->time_base.num > 0 && stream->time_base.den > 0) {
        int64_t start = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
        int64_t target = start + av.av_rescale_q(target_ms, (AVRational){1, 1000}, stream->time_base);
        sought = av.av_seek_frame(format, index, target, AVSEEK_FLAG_BACKWARD) >= 0;
    }
    result = decode_one(format, codec, index, packet, frame, max_packets, &state);
    if (result < 0 && sought && !state.input_failed) {
        // A seek that landed badly: try once more from the start.
        if (av.av_seek_frame(format, index, 0, AVSEEK_FLAG_BACKWARD | AVSEEK_FLAG_BYTE) >= 0 ||
            av.av_seek_frame(format, -1, 0, AVSEEK_FLAG_BACKWARD) >= 0) {
            result = decode_one(format, codec, index, packet, frame, max_packets, &state);
        }
    }
    if (state.input_failed) {
        status = GW_VIDEO_INPUT_FAILED;
        goto done;
    }
    if (result < 0) {
        describe(error, error_size, "no frame could be decoded", result == AVERROR_EOF ? 0 : result);
        goto done;
    }
    if (frame->width <= 0 || frame->height <= 0 || (int64_t)frame->width * frame->height > max_pixels) {
        snprintf(error, error_size, "the decoded frame has an unusable size (%d x %d)", frame->width, frame->height);
        goto done;
    }
    // Fit the shown (aspect-corrected) size into max_side x max_side, never enlarging.
    int64_t frame_shown = (int64_t)frame->width * shown_width / coded_width;
    if (frame_shown <= 0) frame_shown = frame->width;
    int64_t longest = frame_shown > frame->height ? frame_shown : frame->height;
    int64_t side = max_side > 0 && max_side < longest ? max_side : longest;
    int out_width = (int)(frame_shown * side / longest), out_height = (int)((int64_t)frame->height * side / longest);
    if (out_width < 1) out_width = 1;
    if (out_height < 1) out_height = 1;
    scaler = av.sws_getContext(frame->width, frame->height, frame->format, out_width, out_height, AV_PIX_FMT_RGB24,
                               SWS_AREA, NULL, NULL, NULL);
    if (scaler == NULL) {
        snprintf(error, error_size, "could not convert the frame's pixel format");
        goto done;
    }
    uint8_t *pixels = malloc((size_t)out_width * out_height * 3);
    if (pixels == NULL) {
        snprintf(error, error_size, "out of memory");
        goto done;
    }
    uint8_t *planes[4] = {pixels, NULL, NULL, NULL};
    int strides[4] = {out_width * 3, 0, 0, 0};
    if (av.sws_scale(scaler, (const uint8_t *const *)frame->data, frame->linesize, 0, frame->height, planes, strides) !=
        out_height) {
        free(pixels);
        snprintf(error, error_size, "could not scale the frame");
        goto done;
    }
    *rgb = pixels;
    *width = out_width;
    *height = out_height;
    status = GW_VIDEO_OK;
done:
    if (scaler != NULL) av.sws_freeContext(scaler);
    if (frame != NULL) av.av_frame_free(&frame);
    if (packet != NULL) av.av_packet_free(&packet);
    if (codec != NULL) av.avcodec_free_context(&codec);
    if (format != NULL) av.avformat_close_input(&format);
    if (io != NULL) {
        av.av_freep(&io->buffer);
        av.avio_context_free(&io);
    }
    if (buffer != NULL) av.av_free(buffer);
    if (status == GW_VIDEO_FAILED && error[0] == 0) snprintf(error, error_size, "not a video FFmpeg can read");
    return status;
}
