// poppler-glib, as the PDF metadata reader uses it. Header-only; nothing else.
#ifndef GATEWAY_CPOPPLER_SHIM_H
#define GATEWAY_CPOPPLER_SHIM_H
#include <poppler.h>
#endif
