#!/usr/bin/env python3
"""A read-only WebDAV server for a tree that exists only as a formula: FOLDERS folders d0 ... of
FILES files f0 ... each (/dI/fJ), with deterministic sizes, dates and ETags, for planning and
listing a million entries without making them on a disk. Standard library only.

    generated-webdav.py PORT FOLDERS FILES [--infinity]     (on 127.0.0.1; runs until killed)

Answers OPTIONS, PROPFIND with Depth 0 and 1 (the 207 body streamed with chunked encoding, a batch
of entries at a time, so a folder of a million files costs no memory), HEAD and GET (a file's bytes
are its size's worth of a repeated pattern). Depth infinity is refused with 403, as Apache does by
default (clients walk folder by folder); with --infinity it is answered with the whole tree, in one
streamed body. No authentication; any other method is 405.

File J of folder I is (I * 7919 + J * 104729) % 65536 bytes, modified at 2026-01-01 00:00:00 UTC
plus I hours plus J seconds; folder I has file 0's time. A folder asked for without its trailing
slash is redirected (301) to it, as Apache does.
"""
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

BASE_TIME = 1767225600  # 2026-01-01T00:00:00Z
BATCH = 500  # entries per chunk of a streamed body
PROPSTAT_END = "</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>\n"
_days = {}


def http_date(seconds):
    """RFC 1123, as getlastmodified has it; the day's part made once per day (strftime for each of
    a million entries was half the time of a listing)."""
    day, second = divmod(seconds, 86400)
    prefix = _days.get(day)
    if prefix is None:
        prefix = _days[day] = time.strftime("%a, %d %b %Y ", time.gmtime(day * 86400))
    return f"{prefix}{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d} GMT"


def iso_date(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


class Tree:
    def __init__(self, folders, files):
        self.folders = folders
        self.files = files

    def size(self, folder, file):
        return (folder * 7919 + file * 104729) % 65536

    def mtime(self, folder, file):
        return BASE_TIME + folder * 3600 + file

    def resolve(self, path):
        """("root",), ("folder", I) or ("file", I, J) for a decoded path, or None."""
        parts = [p for p in path.split("/") if p]
        if not parts:
            return ("root",)
        if parts[0][:1] != "d" or not parts[0][1:].isdigit() or len(parts) > 2:
            return None
        folder = int(parts[0][1:])
        if folder >= self.folders or parts[0] != f"d{folder}":
            return None
        if len(parts) == 1:
            return ("folder", folder)
        if parts[1][:1] != "f" or not parts[1][1:].isdigit():
            return None
        file = int(parts[1][1:])
        if file >= self.files or parts[1] != f"f{file}":
            return None
        return ("file", folder, file)


def folder_response(href, seconds, full):
    extra = f"<D:creationdate>{iso_date(seconds)}</D:creationdate>" if full else ""
    return (f"<D:response><D:href>{href}</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype>"
            f"<D:getlastmodified>{http_date(seconds)}</D:getlastmodified><D:getetag>\"{href}\"</D:getetag>{extra}" + PROPSTAT_END)


def file_response(tree, folder, file, full):
    size = tree.size(folder, file)
    seconds = tree.mtime(folder, file)
    extra = (f"<D:getcontenttype>application/octet-stream</D:getcontenttype><D:creationdate>{iso_date(seconds)}</D:creationdate>"
             if full else "")
    return (f"<D:response><D:href>/d{folder}/f{file}</D:href><D:propstat><D:prop><D:resourcetype/>"
            f"<D:getcontentlength>{size}</D:getcontentlength><D:getlastmodified>{http_date(seconds)}</D:getlastmodified>"
            f"<D:getetag>\"{folder}-{file}-{size}\"</D:getetag>{extra}" + PROPSTAT_END)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "generated-webdav"
    # Answers go out in 64 KiB writes (flushed after each request), with Nagle off: unbuffered, the
    # head and the first small chunk went out as two segments, and the second waited for the
    # client's delayed ACK (40 ms per folder listed).
    wbufsize = 1 << 16
    disable_nagle_algorithm = True
    tree = None
    infinity = False

    def log_message(self, format, *args):
        pass

    def read_body(self):
        """Reads (and drops) the request body, so the connection can carry the next request."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return
                self.rfile.read(size + 2)
        length = int(self.headers.get("Content-Length") or 0)
        while length > 0:
            data = self.rfile.read(min(length, 1 << 16))
            if not data:
                return
            length -= len(data)

    def target(self):
        return self.tree.resolve(unquote(urlsplit(self.path).path))

    def plain(self, status, text=""):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_OPTIONS(self):
        self.read_body()
        self.send_response(200)
        self.send_header("DAV", "1")
        self.send_header("Allow", "OPTIONS, PROPFIND, HEAD, GET")
        self.send_header("MS-Author-Via", "DAV")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_PROPFIND(self):
        self.read_body()
        depth = self.headers.get("Depth", "infinity").strip().lower()
        found = self.target()
        if found is None:
            return self.plain(404, "not found\n")
        if depth not in ("0", "1"):
            if not self.infinity:
                return self.plain(403, "Depth: infinity is not allowed here\n")
            depth = "infinity"
        if found[0] != "file" and not urlsplit(self.path).path.endswith("/"):
            # As Apache: a folder asked for without its slash is moved there.
            self.send_response(301)
            self.send_header("Location", urlsplit(self.path).path + "/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(207)
        self.send_header("Content-Type", 'application/xml; charset="utf-8"')
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.send_chunk('<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">\n')
        tree = self.tree
        full = depth == "0"  # a stat asks for more properties than a listing
        if found[0] == "file":
            self.send_chunk(file_response(tree, found[1], found[2], full))
        elif found[0] == "folder":
            self.send_chunk(folder_response(f"/d{found[1]}/", tree.mtime(found[1], 0), full))
            if depth != "0":
                self.send_files(found[1])
        else:
            self.send_chunk(folder_response("/", BASE_TIME, full))
            if depth != "0":
                batch = []
                for folder in range(tree.folders):
                    batch.append(folder_response(f"/d{folder}/", tree.mtime(folder, 0), False))
                    if len(batch) >= BATCH:
                        self.send_chunk("".join(batch))
                        batch = []
                    if depth == "infinity":
                        self.send_chunk("".join(batch))
                        batch = []
                        self.send_files(folder)
                self.send_chunk("".join(batch))
        self.send_chunk("</D:multistatus>\n")
        self.wfile.write(b"0\r\n\r\n")

    def send_files(self, folder):
        tree = self.tree
        for start in range(0, tree.files, BATCH):
            self.send_chunk("".join(file_response(tree, folder, file, False) for file in range(start, min(start + BATCH, tree.files))))

    def send_chunk(self, text):
        if text:
            data = text.encode()
            self.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))

    def do_GET(self):
        self.read_body()
        found = self.target()
        if found is None:
            return self.plain(404, "not found\n")
        if found[0] != "file":
            return self.plain(200, "a generated folder\n")
        size = self.tree.size(found[1], found[2])
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.send_header("Last-Modified", http_date(self.tree.mtime(found[1], found[2])))
        self.send_header("ETag", f'"{found[1]}-{found[2]}-{size}"')
        self.end_headers()
        if self.command != "HEAD":
            pattern = (f"d{found[1]}/f{found[2]}\n" * 64).encode()
            while size > 0:
                piece = pattern[:size]
                self.wfile.write(piece)
                size -= len(piece)

    do_HEAD = do_GET

    def refuse(self):
        self.read_body()
        self.plain(405, "this generated tree is read-only\n")

    do_PUT = do_DELETE = do_MKCOL = do_MOVE = do_COPY = do_PROPPATCH = do_LOCK = do_UNLOCK = do_POST = refuse


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 3:
        sys.exit(__doc__)
    Handler.tree = Tree(int(args[1]), int(args[2]))
    Handler.infinity = "--infinity" in sys.argv[1:]
    server = ThreadingHTTPServer(("127.0.0.1", int(args[0])), Handler)
    server.daemon_threads = True
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
