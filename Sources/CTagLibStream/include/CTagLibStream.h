// TagLib (C++) reading through caller-supplied callbacks, for a C caller. TagLib's own C API
// (libtagc0) opens files by name only; this shim hands TagLib an IOStream that reads through
// `gw_taglib_io.read`, so a remote file is read only where TagLib looks (the tag at the head, the
// ID3v1 tag at the tail, the MP4 atoms it seeks to). Nothing else.
#ifndef GATEWAY_CTAGLIBSTREAM_H
#define GATEWAY_CTAGLIBSTREAM_H
#ifdef __cplusplus
extern "C" {
#endif

/// Reads up to `length` bytes at `offset` into `buffer`; returns the count (0 at the end), or -1.
typedef long long (*gw_taglib_read_callback)(void *context, long long offset, void *buffer, long long length);

/// Where TagLib reads from.
typedef struct gw_taglib_io {
    void *context;
    gw_taglib_read_callback read;
    /// The file's size in bytes.
    long long size;
    /// The file's name: TagLib picks the format by its extension first, then by content.
    const char *name;
} gw_taglib_io;

/// What TagLib found. Strings are UTF-8, allocated with malloc (NULL when absent); free with
/// gw_taglib_info_free. Numbers are 0 when absent.
typedef struct gw_taglib_info {
    char *format;
    char *title;
    char *artist;
    char *album;
    char *genre;
    unsigned int year;
    unsigned int track;
    int has_audio_properties;
    int length_ms;
    int bitrate_kbps;
    int sample_rate;
    int channels;
} gw_taglib_info;

/// Reads tags and audio properties. Returns 0 when TagLib recognised the file (info filled), 1 when
/// it did not (not a format TagLib reads, or too damaged to open).
int gw_taglib_read(const gw_taglib_io *io, gw_taglib_info *info);
void gw_taglib_info_free(gw_taglib_info *info);

#ifdef __cplusplus
}
#endif
#endif
