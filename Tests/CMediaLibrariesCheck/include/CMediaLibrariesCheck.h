// Checks CMediaLibraries.h against libvips's, poppler-glib's and GLib's own headers.
#ifndef GATEWAY_CMEDIALIBRARIESCHECK_H
#define GATEWAY_CMEDIALIBRARIESCHECK_H
/// How many of the loader's functions were compared with the libraries' declarations (the
/// comparison itself happens when this target compiles: a mismatch fails the build).
int gw_media_libraries_checked(void);
#endif
