// FFmpeg (libavformat, libavcodec, libswscale), loaded on first use (dlopen) like libvips: with
// their codecs they are about 100 libraries that commands other than thumbnail, meta and the share
// page never need. One call reads a video's header through a caller's pread-like callback and,
// when asked, decodes one poster frame scaled down to RGB. Compiled against FFmpeg's own headers
// (Debian: libavformat-dev, libavcodec-dev, libavutil-dev, libswscale-dev), so every call and field
// has the library's own type; the sonames come from the same headers' major versions.
#ifndef GATEWAY_CVIDEOFRAMES_H
#define GATEWAY_CVIDEOFRAMES_H
#include <stddef.h>
#include <stdint.h>

/// Reads up to `length` bytes at `offset` into `buffer`: the count read, 0 at the end, -1 when the
/// caller's input failed (the caller keeps its own error).
typedef int64_t (*gw_video_read_callback)(void *context, int64_t offset, uint8_t *buffer, int64_t length);

/// What the header says about a file's first video stream (and its first audio stream).
typedef struct gw_video_info {
    /// The picture's size: the coded size, its width times the sample aspect ratio (not yet turned by
    /// `rotation`, as an image's size is given before its EXIF orientation).
    int width;
    int height;
    /// Clockwise degrees the picture is turned when shown (0, 90, 180 or 270: a phone's display matrix).
    int rotation;
    /// Milliseconds, or -1 when neither the container nor the stream says.
    int64_t duration_ms;
    /// The container's bit rate in bits per second, 0 when unknown.
    int64_t bit_rate;
    /// Frames per second (the stream's average), 0 when unknown.
    double frame_rate;
    /// Short codec names ("h264", "vp9", "aac"); empty when there is no such stream.
    char video_codec[32];
    char audio_codec[32];
    /// The audio stream's sample rate and channels, 0 when there is none.
    int sample_rate;
    int channels;
} gw_video_info;

enum {
    /// Read (and decoded) as asked.
    GW_VIDEO_OK = 0,
    /// Not a container of the allowed formats, or one without a video stream.
    GW_VIDEO_NOT_VIDEO = 1,
    /// Damaged, refused (too many pixels, a codec not allowed) or undecodable: `error` says why.
    GW_VIDEO_FAILED = 2,
    /// The caller's read callback failed (its own error explains).
    GW_VIDEO_INPUT_FAILED = 3,
};

/// Loads the libraries once per process, their logging silenced. Returns 0, or -1 with `*message`
/// (static text) naming what is missing.
int gw_video_load(const char **message);

/// Reads the header of a file of `size` bytes through `read`, and fills `info`. When `rgb` is not
/// NULL, also decodes one frame (the first at or after a tenth of the duration, capped at ten
/// seconds in; the first frame when seeking fails) and returns it as coded (not yet turned by
/// `info->rotation`) with the sample aspect applied, scaled to fit `max_side` x `max_side` (never
/// enlarged), as packed RGB24 in `*rgb` (free with gw_video_free), `*width` x `*height` pixels. A stream whose
/// coded size is above `max_pixels` is refused before decoding. At most `max_packets` packets are
/// read looking for the frame. Returns a GW_VIDEO_ value; `error` gets a message for
/// GW_VIDEO_FAILED. Callable after a successful gw_video_load, from any thread (one call at a time
/// per context).
int gw_video_read(void *context, gw_video_read_callback read, int64_t size, gw_video_info *info, int max_side,
                  int64_t max_pixels, int max_packets, uint8_t **rgb, int *width, int *height, char *error,
                  size_t error_size);

/// Frees what gw_video_read returned in `*rgb`.
void gw_video_free(void *memory);

#endif
