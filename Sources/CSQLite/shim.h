// SQLite's C API (Debian: libsqlite3-dev) for GatewayState's state store.
#include <sqlite3.h>

/// SQLITE_TRANSIENT, which Swift cannot import (a cast of -1 to a function pointer): SQLite copies
/// the bound text before the call returns.
static inline sqlite3_destructor_type gateway_sqlite_transient(void) {
    return (sqlite3_destructor_type)-1;
}
