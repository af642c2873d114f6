// libvips's own headers, for CMediaLibrariesCheck (which compares CMediaLibraries.h with them).
// The gateway itself loads libvips on first use through CMediaLibraries. Nothing else.
#ifndef GATEWAY_CVIPS_SHIM_H
#define GATEWAY_CVIPS_SHIM_H
#include <vips/vips.h>
#endif
