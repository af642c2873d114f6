"""The second FTP test server: pyftpdlib (PyPI), which speaks MLSD/MLST, MFMT and UTF8 (vsftpd does
not). Run by pyftpdlib.sh; user "gateway", password "gateway-test" (test-only credentials).

With a fourth argument "legacy", it plays an old server instead: no MLSD/MLST, and LIST refuses
options ("LIST -a" answers 501), as some embedded and older servers do."""
import logging
import os
import sys

from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers.ftp.dispatchers import ActiveDTP
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer

port, root, log_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
legacy = len(sys.argv) > 4 and sys.argv[4] == "legacy"
# GATEWAY_PYFTPDLIB_LOG=DEBUG logs every command and reply (for chasing a failure).
level = os.environ.get("GATEWAY_PYFTPDLIB_LOG", "WARNING").upper()
logging.basicConfig(filename=log_file, level=getattr(logging, level, logging.WARNING),
                    format="%(asctime)s.%(msecs)03d %(message)s", datefmt="%H:%M:%S")
authorizer = DummyAuthorizer()
authorizer.add_user("gateway", "gateway-test", root, perm="elradfmwMT")


class HandedOffActiveDTP(ActiveDTP):
    """pyftpdlib 2.2's ActiveDTP (PORT/EPRT) hands its socket to the DTPHandler but stays open
    itself; when it is closed later, after the data connection ended and the kernel gave the same
    fd number to another connection, its del_channel() unregisters that other connection from
    epoll. That connection then never hears the client again (its commands wait unread in the
    socket until the client times out). Once the socket is handed over, this one forgets it."""

    def handle_connect(self):
        super().handle_connect()
        handler = self.cmd_channel.data_channel
        if handler is not None and handler.socket is self.socket:
            self.socket, self._fileno, self._closed = None, None, True


class Handler(FTPHandler):
    authorizer = authorizer
    masquerade_address = "127.0.0.1"
    use_gmt_times = True
    permit_foreign_addresses = False
    banner = "pyftpdlib test server ready"
    active_dtp = HandedOffActiveDTP

    def ftp_RNTO(self, path):
        """Refuses to rename onto an existing file whose name contains "refuses-replace", as FTP
        servers on Windows (IIS) do for every file: the gateway then removes the old file first."""
        if self._rnfr and "refuses-replace" in os.path.basename(path) and os.path.isfile(path):
            self._rnfr = None
            self.respond("550 Cannot create a file when that file already exists.")
            return None
        return super().ftp_RNTO(path)

    def pre_process_command(self, line, cmd, arg):
        """Legacy mode: LIST with an option is refused, as by servers that know none."""
        if legacy and cmd == "LIST" and arg and arg.lstrip().startswith("-"):
            self.respond("501 Invalid LIST option.")
            return None
        return super().pre_process_command(line, cmd, arg)


if legacy:
    Handler.proto_cmds = {name: value for name, value in FTPHandler.proto_cmds.items() if name not in ("MLSD", "MLST")}


# One thread: pyftpdlib's threaded server changes the process-wide working folder in CWD,
# which breaks when another thread removes that folder.
server = FTPServer(("127.0.0.1", port), Handler)
server.max_cons = 256
server.max_cons_per_ip = 0
server.serve_forever()
