#!/usr/bin/env python3
"""An AsyncSSH SFTP server for the tests (started by asyncssh-sftp.sh): plain SFTP version 3
without OpenSSH's extensions, on 127.0.0.1.

    asyncssh-sftp-server.py PORT ROOT HOST_KEY LOG_FILE

Password authentication only: user "gateway", password "gateway-test" (test-only credentials).
SFTP is served by asyncssh's own SFTPServer, chrooted to ROOT: the client sees ROOT as "/", and
symlinks are kept inside it (READLINK fixed, see ChrootSFTPServer). Its VERSION reply names only
the "newline" and "vendor-id" extensions: the OpenSSH ones asyncssh would offer (posix-rename@,
statvfs@, fstatvfs@, hardlink@, fsync@, lsetstat@, limits@openssh.com), copy-data and
ranges@asyncssh.com are neither offered nor served (SSH_FX_OP_UNSUPPORTED), so a client must get
by with the requests of the draft alone; a RENAME onto an existing name fails (SSH_FX_FAILURE), as
that draft says. SYMLINK takes its two paths in the draft's order (link path, then target) unless
the client's SSH version string names OpenSSH or paramiko, whose reversed order asyncssh then
follows. Every READ is answered with at most SHORT_READ bytes (the draft lets a server send fewer
than asked, and some do near their packet limits), so a client's handling of short reads runs in
every test on this server. No shell, exec or SCP. GATEWAY_ASYNCSSH_LOG=1 logs every SFTP request to LOG_FILE
(asyncssh's debug level 2).
"""
import asyncio
import logging
import os
import sys

import asyncssh
import asyncssh.sftp

USER = "gateway"
PASSWORD = "gateway-test"
# The extensions of the VERSION reply that are kept: neither is a request a client can send.
KEPT_EXTENSIONS = {b"newline", b"vendor-id"}
# The most a READ answers: odd, so that short reads land at offsets of no particular alignment.
SHORT_READ = 12345


def drop_extensions():
    """Removes every extension but KEPT_EXTENSIONS from asyncssh's SFTP server: from its VERSION
    reply and from the requests it serves (an extended request it does not know is answered
    SSH_FX_OP_UNSUPPORTED). These are class attributes of asyncssh's (internal) server handler:
    if a release renames them, this fails here, at start-up, rather than serve extensions."""
    handler = asyncssh.sftp.SFTPServerHandler
    extensions = handler._extensions
    handlers = handler._packet_handlers
    if not isinstance(extensions, list) or not isinstance(handlers, dict):
        sys.exit("asyncssh changed its SFTP server: cannot drop its extensions")
    handler._extensions = [(name, data) for name, data in extensions if name in KEPT_EXTENSIONS]
    handler._packet_handlers = {kind: fn for kind, fn in handlers.items() if not isinstance(kind, bytes)}


class ChrootSFTPServer(asyncssh.SFTPServer):
    """asyncssh's SFTPServer, chrooted, with short reads (SHORT_READ) and one fix: its READLINK resolves the link with
    os.path.realpath, which reads a relative target against the server process's working folder
    (so "b.txt" comes back as "No such file" or as another file) and follows every further link.
    This one answers the link's own target, as OpenSSH does: a relative one as it is, an absolute
    one (stored as a path of the server) with ROOT taken off ("No such file" if it points outside)."""

    def readlink(self, path):
        target = os.readlink(self.map_path(path))
        return self.reverse_map_path(target) if target.startswith(b"/") else target

    def read(self, file_obj, offset, size):
        return super().read(file_obj, offset, min(size, SHORT_READ))


class Server(asyncssh.SSHServer):
    def begin_auth(self, username):
        return True  # authentication is required

    def password_auth_supported(self):
        return True

    def validate_password(self, username, password):
        return username == USER and password == PASSWORD


async def serve(port, root, host_key):
    await asyncssh.listen(
        "127.0.0.1", port,
        server_host_keys=[host_key],
        server_factory=Server,
        sftp_factory=lambda chan: ChrootSFTPServer(chan, chroot=root),
        allow_scp=False,
        reuse_address=True,
    )
    await asyncio.Event().wait()


def main():
    port, root, host_key, log_file = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    verbose = os.environ.get("GATEWAY_ASYNCSSH_LOG") == "1"
    logging.basicConfig(filename=log_file, level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if verbose:
        asyncssh.set_debug_level(2)
    drop_extensions()
    asyncio.run(serve(port, os.path.realpath(root), host_key))


if __name__ == "__main__":
    main()
