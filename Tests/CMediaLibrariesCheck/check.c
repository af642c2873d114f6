// Compile-time proof that what CMediaLibraries looks up with dlsym has the types the libraries
// declare: every function in its lists, the enumeration values it passes, and GError's layout.
#include "CMediaLibrariesCheck.h"
#include "CMediaLibraries.h"
#include <poppler.h>
#include <stddef.h>
#include <vips/vips.h>

#define GW_CHECK(name)                                                                                              \
    _Static_assert(__builtin_types_compatible_p(gw_##name##_fn, __typeof__(&name)),                               \
                   #name " is declared differently in CMediaLibraries.h");
GW_GLIB_FUNCTIONS(GW_CHECK)
GW_VIPS_FUNCTIONS(GW_CHECK)
GW_POPPLER_FUNCTIONS(GW_CHECK)

_Static_assert(GW_VIPS_ACCESS_SEQUENTIAL == VIPS_ACCESS_SEQUENTIAL, "VIPS_ACCESS_SEQUENTIAL");
_Static_assert(GW_VIPS_FAIL_ON_ERROR == VIPS_FAIL_ON_ERROR, "VIPS_FAIL_ON_ERROR");
_Static_assert(GW_VIPS_SIZE_DOWN == VIPS_SIZE_DOWN, "VIPS_SIZE_DOWN");
_Static_assert(GW_VIPS_FORMAT_UCHAR == VIPS_FORMAT_UCHAR, "VIPS_FORMAT_UCHAR");
_Static_assert(GW_VIPS_ANGLE_D0 == VIPS_ANGLE_D0 && VIPS_ANGLE_D90 == VIPS_ANGLE_D0 + 1 && VIPS_ANGLE_D180 == VIPS_ANGLE_D0 + 2 &&
                   VIPS_ANGLE_D270 == VIPS_ANGLE_D0 + 3,
               "VIPS_ANGLE_*");
_Static_assert(GW_G_LOG_LEVELS_DROPPED == (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG),
               "G_LOG_LEVEL_*");
_Static_assert(sizeof(gw_g_error) == sizeof(GError) && offsetof(gw_g_error, message) == offsetof(GError, message) &&
                   offsetof(gw_g_error, code) == offsetof(GError, code),
               "GError's layout");

#define GW_COUNT(name) +1
int gw_media_libraries_checked(void) {
    return 0 GW_GLIB_FUNCTIONS(GW_COUNT) GW_VIPS_FUNCTIONS(GW_COUNT) GW_POPPLER_FUNCTIONS(GW_COUNT);
}
