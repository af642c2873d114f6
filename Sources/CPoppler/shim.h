// poppler-glib's own headers, for CMediaLibrariesCheck (which compares CMediaLibraries.h with
// them). The gateway itself loads poppler-glib on first use through CMediaLibraries. Nothing else.
#ifndef GATEWAY_CPOPPLER_SHIM_H
#define GATEWAY_CPOPPLER_SHIM_H
#include <poppler.h>
#endif
