// libexif, as the metadata reader uses it. Header-only; nothing else.
#ifndef GATEWAY_CEXIF_SHIM_H
#define GATEWAY_CEXIF_SHIM_H
#include <libexif/exif-data.h>
#include <libexif/exif-utils.h>
#include <libexif/exif-loader.h>
#endif
