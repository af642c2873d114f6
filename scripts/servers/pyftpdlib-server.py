"""The second FTP test server: pyftpdlib (PyPI), which speaks MLSD/MLST, MFMT and UTF8 (vsftpd does
not). Run by pyftpdlib.sh; user "gateway", password "gateway-test" (test-only credentials)."""
import logging
import sys

from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer

port, root, log_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
logging.basicConfig(filename=log_file, level=logging.WARNING)
authorizer = DummyAuthorizer()
authorizer.add_user("gateway", "gateway-test", root, perm="elradfmwMT")


class Handler(FTPHandler):
    authorizer = authorizer
    masquerade_address = "127.0.0.1"
    use_gmt_times = True
    permit_foreign_addresses = False
    banner = "pyftpdlib test server ready"


# One thread: pyftpdlib's threaded server changes the process-wide working folder in CWD,
# which breaks when another thread removes that folder.
server = FTPServer(("127.0.0.1", port), Handler)
server.max_cons = 256
server.max_cons_per_ip = 0
server.serve_forever()
