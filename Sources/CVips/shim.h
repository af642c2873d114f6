// Typed wrappers around libvips's variadic calls and GObject signal macros, which Swift cannot
// call directly. Nothing else.
#ifndef GATEWAY_CVIPS_SHIM_H
#define GATEWAY_CVIPS_SHIM_H
#include <vips/vips.h>

typedef gint64 (*gw_vips_read_callback)(VipsSourceCustom *source, void *buffer, gint64 length, void *context);
typedef gint64 (*gw_vips_seek_callback)(VipsSourceCustom *source, gint64 offset, int whence, void *context);

/// A source whose reads and seeks call back into the caller (`context` is passed back unchanged).
/// The source owns `context`: `release(context, closure)` runs once, when the source is finalized
/// (its handlers are destroyed then), so no callback can outlive what it points at.
static inline VipsSource *gw_vips_source_new_custom(void *context, gw_vips_read_callback read, gw_vips_seek_callback seek,
                                                    GClosureNotify release) {
    VipsSourceCustom *source = vips_source_custom_new();
    if (source == NULL) return NULL;
    g_signal_connect(source, "seek", G_CALLBACK(seek), context);
    g_signal_connect_data(source, "read", G_CALLBACK(read), context, release, (GConnectFlags)0);
    return VIPS_SOURCE(source);
}
static inline void gw_vips_unref(void *object) {
    if (object != NULL) g_object_unref(object);
}
/// Reads the header only (sequential access, nothing decoded), with the loader's failure level.
static inline VipsImage *gw_vips_header_from_source(VipsSource *source) {
    return vips_image_new_from_source(source, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
}
/// A thumbnail no larger than `width` x `height`, shrink-on-load, EXIF orientation applied, never upsized.
static inline int gw_vips_thumbnail_source(VipsSource *source, VipsImage **out, int width, int height, const char *loader_options) {
    return vips_thumbnail_source(source, out, width, "height", height, "size", VIPS_SIZE_DOWN,
                                 "option_string", loader_options, NULL);
}
static inline int gw_vips_pngsave_buffer(VipsImage *image, void **buffer, size_t *length) {
    return vips_pngsave_buffer(image, buffer, length, "strip", TRUE, NULL);
}
static inline int gw_vips_jpegsave_buffer(VipsImage *image, void **buffer, size_t *length, int quality) {
    return vips_jpegsave_buffer(image, buffer, length, "Q", quality, "strip", TRUE, NULL);
}
/// JPEG cannot carry alpha: flatten onto white first when the thumbnail has an alpha band.
static inline int gw_vips_flatten_white(VipsImage *image, VipsImage **out) {
    double white[3] = {255, 255, 255};
    VipsArrayDouble *background = vips_array_double_new(white, 3);
    int result = vips_flatten(image, out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return result;
}
static inline void gw_vips_drop_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer context) {
    (void)domain; (void)level; (void)message; (void)context;
}
/// Starts libvips; its warnings (which a library must not print) are dropped: a damaged file is
/// reported through the failing call instead (`fail_on`).
/// libvips's error text since the last call, copied and cleared under libvips's own lock (the
/// buffer is shared by every thread); free with g_free.
static inline char *gw_vips_take_error(void) {
    return vips_error_buffer_copy();
}
static inline int gw_vips_init(const char *name) {
    int result = VIPS_INIT(name);
    g_log_set_handler("VIPS", (GLogLevelFlags)(G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG),
                      gw_vips_drop_log, NULL);
    return result;
}
#endif
