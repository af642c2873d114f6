#ifndef CLOCALSHIMS_H
#define CLOCALSHIMS_H

#include <stdint.h>

/* Linux constants Swift's Glibc module leaves out (they sit behind _GNU_SOURCE). */
#define CLOCAL_O_PATH 010000000
#define CLOCAL_AT_EMPTY_PATH 0x1000
/* openat2(2) resolve flags, from <linux/openat2.h>. */
#define CLOCAL_RESOLVE_NO_MAGICLINKS 0x02
#define CLOCAL_RESOLVE_NO_SYMLINKS 0x04
#define CLOCAL_RESOLVE_BENEATH 0x08

/* openat2(2) through syscall(2) (glibc has no wrapper): a descriptor, or -1 with errno set
   (ENOSYS where the kernel, or the platform, lacks it). */
int clocal_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);

/* renameat2(2) with RENAME_NOREPLACE: fails with EEXIST instead of replacing the target; -1 with
   errno EINVAL or ENOSYS where the file system or kernel cannot (the caller then checks and renames). */
int clocal_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

#endif
