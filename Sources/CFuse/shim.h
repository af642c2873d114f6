// libfuse3's low-level API (Debian: libfuse3-dev), the only place the kernel talks to the mount.
// Nothing but the version this code is written against: 3.4's API (readdirplus, notify_inval_*,
// notify_delete, async replies), available from libfuse 3.4 on.
#ifndef GATEWAY_CFUSE_SHIM_H
#define GATEWAY_CFUSE_SHIM_H
#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/mount.h>
#include <sys/xattr.h>
#endif
