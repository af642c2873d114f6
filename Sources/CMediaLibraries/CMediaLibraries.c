// The loader behind CMediaLibraries.h: dlopen by soname, dlsym for each listed function, once.
#include "CMediaLibraries.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// The libraries' names: their sonames on Linux, their install names on Apple's systems.
#if defined(__APPLE__)
#define GW_GOBJECT_LIBRARY "libgobject-2.0.0.dylib"
#define GW_VIPS_LIBRARY "libvips.42.dylib"
#define GW_POPPLER_LIBRARY "libpoppler-glib.8.dylib"
#else
#define GW_GOBJECT_LIBRARY "libgobject-2.0.so.0"
#define GW_VIPS_LIBRARY "libvips.so.42"
#define GW_POPPLER_LIBRARY "libpoppler-glib.so.8"
#endif

#define GW_FIELD(name) gw_##name##_fn name;
static struct { GW_GLIB_FUNCTIONS(GW_FIELD) } glib;
static struct { GW_VIPS_FUNCTIONS(GW_FIELD) } vips;
static struct { GW_POPPLER_FUNCTIONS(GW_FIELD) } poppler;

/// Opens `soname` and fills `table` from its `list`; on failure `message` says what is missing.
#define GW_RESOLVE(handle, table, name)                                                                             \
    if (failed == 0 && (table.name = (gw_##name##_fn)dlsym(handle, #name)) == NULL) {                              \
        snprintf(message, sizeof message, "%s has no function %s", soname, #name);                                 \
        failed = 1;                                                                                                 \
    }

static void *open_library(const char *soname, char *message, size_t size) {
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(message, size, "%s could not be loaded (%s)", soname, reason != NULL ? reason : "unknown reason");
    }
    return handle;
}

static pthread_once_t glib_once = PTHREAD_ONCE_INIT;
static char glib_message[512];
static int glib_failed = 1;

static void load_glib(void) {
    static const char *soname = GW_GOBJECT_LIBRARY;
    char message[512] = "";
    int failed = 0;
    void *handle = open_library(soname, message, sizeof message);
    if (handle == NULL) failed = 1;
#define GW_RESOLVE_GLIB(name) GW_RESOLVE(handle, glib, name)
    GW_GLIB_FUNCTIONS(GW_RESOLVE_GLIB)
    snprintf(glib_message, sizeof glib_message, "%s", message);
    glib_failed = failed;
}

static pthread_once_t vips_once = PTHREAD_ONCE_INIT;
static char vips_message[512];
static int vips_failed = 1;

static void drop_log(const char *domain, int level, const char *text, void *context) {
    (void)domain; (void)level; (void)text; (void)context;
}

static void load_vips(void) {
    static const char *soname = GW_VIPS_LIBRARY;
    char message[512] = "";
    int failed = 0;
    pthread_once(&glib_once, load_glib);
    if (glib_failed) {
        snprintf(vips_message, sizeof vips_message, "%s", glib_message);
        return;
    }
    void *handle = open_library(soname, message, sizeof message);
    if (handle == NULL) failed = 1;
#define GW_RESOLVE_VIPS(name) GW_RESOLVE(handle, vips, name)
    GW_VIPS_FUNCTIONS(GW_RESOLVE_VIPS)
    // The readers need libvips 8.13 or later (custom sources, fail_on, vips_block_untrusted_set);
    // VIPS_INIT's own check compares with headers this loader does not use.
    if (failed == 0 && (vips.vips_version(0) != 8 || vips.vips_version(1) < 13)) {
        snprintf(message, sizeof message, "libvips %d.%d is older than the 8.13 the gateway needs", vips.vips_version(0), vips.vips_version(1));
        failed = 1;
    }
    if (failed == 0 && vips.vips_init("gateway") != 0) {
        snprintf(message, sizeof message, "libvips could not start");
        failed = 1;
    }
    if (failed == 0) {
        glib.g_log_set_handler("VIPS", GW_G_LOG_LEVELS_DROPPED, drop_log, NULL);
        vips.vips_cache_set_max(0);
        vips.vips_cache_set_max_mem(0);
        vips.vips_cache_set_max_files(0);
        // libvips's "untrusted" loaders (not fuzzed upstream) stay blocked, but for the two the
        // gateway reads (librsvg, poppler); the reader's own allowlist refuses the rest anyway.
        vips.vips_block_untrusted_set(1);
        vips.vips_operation_block_set("VipsForeignLoadSvg", 0);
        vips.vips_operation_block_set("VipsForeignLoadPdf", 0);
    }
    snprintf(vips_message, sizeof vips_message, "%s", message);
    vips_failed = failed;
}

int gw_media_load_vips(const char **message) {
    pthread_once(&vips_once, load_vips);
    if (vips_failed && message != NULL) *message = vips_message;
    return vips_failed ? -1 : 0;
}

static pthread_once_t poppler_once = PTHREAD_ONCE_INIT;
static char poppler_message[512];
static int poppler_failed = 1;

static void load_poppler(void) {
    static const char *soname = GW_POPPLER_LIBRARY;
    char message[512] = "";
    int failed = 0;
    pthread_once(&glib_once, load_glib);
    if (glib_failed) {
        snprintf(poppler_message, sizeof poppler_message, "%s", glib_message);
        return;
    }
    void *handle = open_library(soname, message, sizeof message);
    if (handle == NULL) failed = 1;
#define GW_RESOLVE_POPPLER(name) GW_RESOLVE(handle, poppler, name)
    GW_POPPLER_FUNCTIONS(GW_RESOLVE_POPPLER)
    snprintf(poppler_message, sizeof poppler_message, "%s", message);
    poppler_failed = failed;
}

int gw_media_load_poppler(const char **message) {
    pthread_once(&poppler_once, load_poppler);
    if (poppler_failed && message != NULL) *message = poppler_message;
    return poppler_failed ? -1 : 0;
}

void gw_g_free(void *memory) { glib.g_free(memory); }
void gw_g_object_unref(void *object) { glib.g_object_unref(object); }
void gw_g_error_free(gw_g_error *error) { glib.g_error_free((GError *)error); }

VipsSource *gw_vips_source_new_custom(void *context, gw_vips_read_callback read, gw_vips_seek_callback seek,
                                      gw_release_callback release) {
    VipsSourceCustom *source = vips.vips_source_custom_new();
    if (source == NULL) return NULL;
    // g_signal_connect(source, "seek", ...), and the read handler owning `context`.
    glib.g_signal_connect_data(source, "seek", (void (*)(void))seek, context, NULL, 0);
    glib.g_signal_connect_data(source, "read", (void (*)(void))read, context, release, 0);
    return (VipsSource *)source;
}
VipsSource *gw_vips_source_new_from_descriptor(int descriptor) { return vips.vips_source_new_from_descriptor(descriptor); }
void gw_vips_unref(void *object) {
    if (object != NULL) glib.g_object_unref(object);
}
VipsImage *gw_vips_header_from_source(VipsSource *source) {
    return vips.vips_image_new_from_source(source, "", "access", GW_VIPS_ACCESS_SEQUENTIAL, "fail_on", GW_VIPS_FAIL_ON_ERROR, NULL);
}
int gw_vips_thumbnail_source(VipsSource *source, VipsImage **out, int width, int height, const char *loader_options) {
    return vips.vips_thumbnail_source(source, out, width, "height", height, "size", GW_VIPS_SIZE_DOWN, "option_string",
                                      loader_options, NULL);
}
int gw_vips_pngsave_buffer(VipsImage *image, void **buffer, size_t *length) {
    return vips.vips_pngsave_buffer(image, buffer, length, "strip", 1, NULL);
}
int gw_vips_jpegsave_buffer(VipsImage *image, void **buffer, size_t *length, int quality) {
    return vips.vips_jpegsave_buffer(image, buffer, length, "Q", quality, "strip", 1, NULL);
}
int gw_vips_flatten_white(VipsImage *image, VipsImage **out) {
    double white[3] = {255, 255, 255};
    VipsArrayDouble *background = vips.vips_array_double_new(white, 3);
    int result = vips.vips_flatten(image, out, "background", background, NULL);
    vips.vips_area_unref((VipsArea *)background);
    return result;
}
VipsImage *gw_vips_image_from_rgb(const void *pixels, size_t length, int width, int height) {
    return vips.vips_image_new_from_memory_copy(pixels, length, width, height, 3, GW_VIPS_FORMAT_UCHAR);
}
int gw_vips_rotate(VipsImage *image, VipsImage **out, int quarter_turns) {
    return vips.vips_rot(image, out, (unsigned int)(GW_VIPS_ANGLE_D0 + quarter_turns), NULL);
}
char *gw_vips_take_error(void) { return vips.vips_error_buffer_copy(); }
const char *gw_vips_foreign_find_load_source(VipsSource *source) { return vips.vips_foreign_find_load_source(source); }
int gw_vips_image_get_width(const VipsImage *image) { return vips.vips_image_get_width(image); }
int gw_vips_image_get_height(const VipsImage *image) { return vips.vips_image_get_height(image); }
int gw_vips_image_get_bands(const VipsImage *image) { return vips.vips_image_get_bands(image); }
int gw_vips_image_hasalpha(VipsImage *image) { return vips.vips_image_hasalpha(image); }
int gw_vips_image_has_field(const VipsImage *image, const char *name) { return vips.vips_image_get_typeof(image, name) != 0; }
int gw_vips_image_get_int(const VipsImage *image, const char *name, int *out) { return vips.vips_image_get_int(image, name, out); }
int gw_vips_image_get_blob(const VipsImage *image, const char *name, const void **data, size_t *length) {
    return vips.vips_image_get_blob(image, name, data, length);
}
int gw_vips_image_get_string(const VipsImage *image, const char *name, const char **out) {
    return vips.vips_image_get_string(image, name, out);
}

PopplerDocument *gw_poppler_document_new_from_fd(int descriptor, gw_g_error **error) {
    return poppler.poppler_document_new_from_fd(descriptor, NULL, (GError **)error);
}
char *gw_poppler_document_get_title(PopplerDocument *document) { return poppler.poppler_document_get_title(document); }
char *gw_poppler_document_get_author(PopplerDocument *document) { return poppler.poppler_document_get_author(document); }
char *gw_poppler_document_get_subject(PopplerDocument *document) { return poppler.poppler_document_get_subject(document); }
char *gw_poppler_document_get_creator(PopplerDocument *document) { return poppler.poppler_document_get_creator(document); }
char *gw_poppler_document_get_producer(PopplerDocument *document) { return poppler.poppler_document_get_producer(document); }
int gw_poppler_document_get_n_pages(PopplerDocument *document) { return poppler.poppler_document_get_n_pages(document); }
PopplerPage *gw_poppler_document_get_page(PopplerDocument *document, int index) {
    return poppler.poppler_document_get_page(document, index);
}
void gw_poppler_page_get_size(PopplerPage *page, double *width, double *height) {
    poppler.poppler_page_get_size(page, width, height);
}
