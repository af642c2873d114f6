#define _GNU_SOURCE
#include "CLocalShims.h"
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#include <linux/openat2.h>

_Static_assert(CLOCAL_O_PATH == O_PATH, "O_PATH");
_Static_assert(CLOCAL_AT_EMPTY_PATH == AT_EMPTY_PATH, "AT_EMPTY_PATH");
_Static_assert(CLOCAL_RESOLVE_NO_MAGICLINKS == RESOLVE_NO_MAGICLINKS, "RESOLVE_NO_MAGICLINKS");
_Static_assert(CLOCAL_RESOLVE_NO_SYMLINKS == RESOLVE_NO_SYMLINKS, "RESOLVE_NO_SYMLINKS");
_Static_assert(CLOCAL_RESOLVE_BENEATH == RESOLVE_BENEATH, "RESOLVE_BENEATH");

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

int clocal_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve) {
    struct open_how how = {.flags = flags, .mode = mode, .resolve = resolve};
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}
int clocal_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, 1u /* RENAME_NOREPLACE */);
#else
    (void)olddirfd; (void)oldpath; (void)newdirfd; (void)newpath;
    errno = ENOSYS;
    return -1;
#endif
}
#else
int clocal_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    (void)olddirfd; (void)oldpath; (void)newdirfd; (void)newpath;
    errno = ENOSYS;
    return -1;
}

int clocal_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve) {
    (void)dirfd; (void)path; (void)flags; (void)mode; (void)resolve;
    errno = ENOSYS;
    return -1;
}
#endif
