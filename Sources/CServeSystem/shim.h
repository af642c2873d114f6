// libxcrypt (Debian: libcrypt-dev) for `gateway serve --htpasswd`: bcrypt password hashes.
#include <crypt.h>
// zlib (Debian: zlib1g-dev) for the share page's ZIP downloads: CRC-32 only.
#include <zlib.h>
