// libxml2's SAX2 push parser, used to parse WebDAV multistatus bodies as they stream in.
#ifndef GATEWAY_CLIBXML2_SHIM_H
#define GATEWAY_CLIBXML2_SHIM_H
// Debian's libxml2 is built with ICU, whose headers clash with the ICU copy inside Foundation.
// Nothing here uses libxml2's ICU-specific declarations (only pointers to encoding handlers), so
// they are left out.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
#endif
