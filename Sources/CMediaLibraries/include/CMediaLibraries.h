// libvips and poppler-glib, loaded on first use (dlopen) rather than at start. With what they pull
// in they are about 80 libraries and 15 MB of resident code that `gateway ls` or `gateway serve`
// never touches. Each gw_ function below is the library's own call (or libvips's variadic call with
// fixed arguments), reached through a table that gw_media_load_vips / gw_media_load_poppler fill
// once. The declarations are checked against the libraries' own headers at build time by
// CMediaLibrariesCheck (every entry of the lists below). Nothing else.
#ifndef GATEWAY_CMEDIALIBRARIES_H
#define GATEWAY_CMEDIALIBRARIES_H
#include <stddef.h>
#include <stdint.h>

typedef struct _VipsImage VipsImage;
typedef struct _VipsSource VipsSource;
typedef struct _VipsSourceCustom VipsSourceCustom;
typedef struct _VipsArea VipsArea;
typedef struct _VipsArrayDouble VipsArrayDouble;
typedef struct _PopplerDocument PopplerDocument;
typedef struct _PopplerPage PopplerPage;
typedef struct _GClosure GClosure;
typedef struct _GError GError;
/// GLib's GError, field for field (checked): `message` is what callers read.
typedef struct gw_g_error {
    uint32_t domain;
    int code;
    char *message;
} gw_g_error;

typedef int64_t (*gw_vips_read_callback)(VipsSourceCustom *source, void *buffer, int64_t length, void *context);
typedef int64_t (*gw_vips_seek_callback)(VipsSourceCustom *source, int64_t offset, int whence, void *context);
typedef void (*gw_release_callback)(void *context, GClosure *closure);

/// Loads libvips and starts it once per process: its operation cache off, its "untrusted" loaders
/// blocked but for SVG and PDF, its warnings (which a library must not print) dropped. Returns 0,
/// or -1 with `*message` (static text) naming what is missing.
int gw_media_load_vips(const char **message);
/// Loads poppler-glib once per process. Returns 0, or -1 with `*message` (static text).
int gw_media_load_poppler(const char **message);

// Callable after a successful gw_media_load_vips or gw_media_load_poppler.
void gw_g_free(void *memory);
void gw_g_object_unref(void *object);
void gw_g_error_free(gw_g_error *error);

// Callable after a successful gw_media_load_vips.
/// A source whose reads and seeks call back into the caller (`context` is passed back unchanged).
/// The source owns `context`: `release(context, closure)` runs once, when the source is finalized
/// (its handlers are destroyed then), so no callback can outlive what it points at.
VipsSource *gw_vips_source_new_custom(void *context, gw_vips_read_callback read, gw_vips_seek_callback seek,
                                      gw_release_callback release);
VipsSource *gw_vips_source_new_from_descriptor(int descriptor);
/// g_object_unref, but NULL is allowed.
void gw_vips_unref(void *object);
/// Reads the header only (sequential access, nothing decoded), failing on the loader's errors.
VipsImage *gw_vips_header_from_source(VipsSource *source);
/// A thumbnail no larger than `width` x `height`, shrink-on-load, EXIF orientation applied, never upsized.
int gw_vips_thumbnail_source(VipsSource *source, VipsImage **out, int width, int height, const char *loader_options);
int gw_vips_pngsave_buffer(VipsImage *image, void **buffer, size_t *length);
int gw_vips_jpegsave_buffer(VipsImage *image, void **buffer, size_t *length, int quality);
/// JPEG cannot carry alpha: flatten onto white first when the thumbnail has an alpha band.
int gw_vips_flatten_white(VipsImage *image, VipsImage **out);
/// An image holding a copy of `width` x `height` packed 8-bit RGB pixels (a decoded video frame).
VipsImage *gw_vips_image_from_rgb(const void *pixels, size_t length, int width, int height);
/// `image` turned clockwise by `quarter_turns` x 90 degrees (0 to 3).
int gw_vips_rotate(VipsImage *image, VipsImage **out, int quarter_turns);
/// libvips's error text since the last call, copied and cleared under libvips's own lock (the
/// buffer is shared by every thread); free with gw_g_free.
char *gw_vips_take_error(void);
const char *gw_vips_foreign_find_load_source(VipsSource *source);
int gw_vips_image_get_width(const VipsImage *image);
int gw_vips_image_get_height(const VipsImage *image);
int gw_vips_image_get_bands(const VipsImage *image);
int gw_vips_image_hasalpha(VipsImage *image);
/// Whether the image has the field (its GType is not 0).
int gw_vips_image_has_field(const VipsImage *image, const char *name);
int gw_vips_image_get_int(const VipsImage *image, const char *name, int *out);
int gw_vips_image_get_blob(const VipsImage *image, const char *name, const void **data, size_t *length);
int gw_vips_image_get_string(const VipsImage *image, const char *name, const char **out);

// Callable after a successful gw_media_load_poppler.
/// poppler owns (and closes) the descriptor.
PopplerDocument *gw_poppler_document_new_from_fd(int descriptor, gw_g_error **error);
char *gw_poppler_document_get_title(PopplerDocument *document);
char *gw_poppler_document_get_author(PopplerDocument *document);
char *gw_poppler_document_get_subject(PopplerDocument *document);
char *gw_poppler_document_get_creator(PopplerDocument *document);
char *gw_poppler_document_get_producer(PopplerDocument *document);
int gw_poppler_document_get_n_pages(PopplerDocument *document);
PopplerPage *gw_poppler_document_get_page(PopplerDocument *document, int index);
void gw_poppler_page_get_size(PopplerPage *page, double *width, double *height);

// What the loader looks up, with the types it assumes (GLib's gboolean, gint and GLogLevelFlags
// are int, GConnectFlags unsigned int; gsize, GType and gulong are unsigned long; gpointer is void *).
typedef void (*gw_g_free_fn)(void *memory);
typedef void (*gw_g_object_unref_fn)(void *object);
typedef void (*gw_g_error_free_fn)(GError *error);
typedef void (*gw_g_log_func)(const char *domain, int level, const char *message, void *context);
typedef unsigned int (*gw_g_log_set_handler_fn)(const char *domain, int levels, gw_g_log_func handler, void *context);
typedef unsigned long (*gw_g_signal_connect_data_fn)(void *instance, const char *signal, void (*handler)(void),
                                                     void *context, gw_release_callback release, unsigned int flags);
typedef int (*gw_vips_init_fn)(const char *argv0);
typedef int (*gw_vips_version_fn)(int flag);
typedef void (*gw_vips_cache_set_max_fn)(int max);
typedef void (*gw_vips_cache_set_max_mem_fn)(size_t max);
typedef void (*gw_vips_cache_set_max_files_fn)(int max);
typedef void (*gw_vips_block_untrusted_set_fn)(int state);
typedef void (*gw_vips_operation_block_set_fn)(const char *name, int state);
typedef VipsSourceCustom *(*gw_vips_source_custom_new_fn)(void);
typedef VipsSource *(*gw_vips_source_new_from_descriptor_fn)(int descriptor);
typedef VipsImage *(*gw_vips_image_new_from_source_fn)(VipsSource *source, const char *options, ...);
typedef int (*gw_vips_thumbnail_source_fn)(VipsSource *source, VipsImage **out, int width, ...);
typedef int (*gw_vips_pngsave_buffer_fn)(VipsImage *image, void **buffer, size_t *length, ...);
typedef int (*gw_vips_jpegsave_buffer_fn)(VipsImage *image, void **buffer, size_t *length, ...);
typedef int (*gw_vips_flatten_fn)(VipsImage *image, VipsImage **out, ...);
typedef VipsImage *(*gw_vips_image_new_from_memory_copy_fn)(const void *data, size_t size, int width, int height, int bands,
                                                             int format);
typedef int (*gw_vips_rot_fn)(VipsImage *image, VipsImage **out, unsigned int angle, ...);
typedef VipsArrayDouble *(*gw_vips_array_double_new_fn)(const double *values, int count);
typedef void (*gw_vips_area_unref_fn)(VipsArea *area);
typedef char *(*gw_vips_error_buffer_copy_fn)(void);
typedef const char *(*gw_vips_foreign_find_load_source_fn)(VipsSource *source);
typedef int (*gw_vips_image_get_width_fn)(const VipsImage *image);
typedef int (*gw_vips_image_get_height_fn)(const VipsImage *image);
typedef int (*gw_vips_image_get_bands_fn)(const VipsImage *image);
typedef int (*gw_vips_image_hasalpha_fn)(VipsImage *image);
typedef unsigned long (*gw_vips_image_get_typeof_fn)(const VipsImage *image, const char *name);
typedef int (*gw_vips_image_get_int_fn)(const VipsImage *image, const char *name, int *out);
typedef int (*gw_vips_image_get_blob_fn)(const VipsImage *image, const char *name, const void **data, size_t *length);
typedef int (*gw_vips_image_get_string_fn)(const VipsImage *image, const char *name, const char **out);
typedef PopplerDocument *(*gw_poppler_document_new_from_fd_fn)(int descriptor, const char *password, GError **error);
typedef char *(*gw_poppler_document_get_title_fn)(PopplerDocument *document);
typedef char *(*gw_poppler_document_get_author_fn)(PopplerDocument *document);
typedef char *(*gw_poppler_document_get_subject_fn)(PopplerDocument *document);
typedef char *(*gw_poppler_document_get_creator_fn)(PopplerDocument *document);
typedef char *(*gw_poppler_document_get_producer_fn)(PopplerDocument *document);
typedef int (*gw_poppler_document_get_n_pages_fn)(PopplerDocument *document);
typedef PopplerPage *(*gw_poppler_document_get_page_fn)(PopplerDocument *document, int index);
typedef void (*gw_poppler_page_get_size_fn)(PopplerPage *page, double *width, double *height);

// libvips's enumeration values the fixed arguments use (checked).
enum {
    GW_VIPS_ACCESS_SEQUENTIAL = 1,
    GW_VIPS_FAIL_ON_ERROR = 2,
    GW_VIPS_SIZE_DOWN = 2,
    GW_VIPS_FORMAT_UCHAR = 0,
    GW_VIPS_ANGLE_D0 = 0,
    GW_G_LOG_LEVELS_DROPPED = (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7), // WARNING | MESSAGE | INFO | DEBUG
};

// The lists the loader resolves and the check compares, one X(name) per function.
#define GW_GLIB_FUNCTIONS(X) X(g_free) X(g_object_unref) X(g_error_free) X(g_log_set_handler) X(g_signal_connect_data)
#define GW_VIPS_FUNCTIONS(X)                                                                                        \
    X(vips_init) X(vips_version) X(vips_cache_set_max) X(vips_cache_set_max_mem) X(vips_cache_set_max_files)                      \
    X(vips_block_untrusted_set) X(vips_operation_block_set) X(vips_source_custom_new)                             \
    X(vips_source_new_from_descriptor) X(vips_image_new_from_source) X(vips_thumbnail_source)                     \
    X(vips_pngsave_buffer) X(vips_jpegsave_buffer) X(vips_flatten) X(vips_array_double_new) X(vips_area_unref)    \
    X(vips_error_buffer_copy) X(vips_foreign_find_load_source) X(vips_image_get_width) X(vips_image_get_height)   \
    X(vips_image_get_bands) X(vips_image_hasalpha) X(vips_image_get_typeof) X(vips_image_get_int)                 \
    X(vips_image_get_blob) X(vips_image_get_string) X(vips_image_new_from_memory_copy) X(vips_rot)
#define GW_POPPLER_FUNCTIONS(X)                                                                                     \
    X(poppler_document_new_from_fd) X(poppler_document_get_title) X(poppler_document_get_author)                  \
    X(poppler_document_get_subject) X(poppler_document_get_creator) X(poppler_document_get_producer)              \
    X(poppler_document_get_n_pages) X(poppler_document_get_page) X(poppler_page_get_size)

#endif
