// libxcrypt (Debian: libcrypt-dev) for `gateway serve --htpasswd`: bcrypt password hashes.
#include <crypt.h>
