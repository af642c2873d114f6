#!/usr/bin/env python3
"""The share page of `gateway serve links`, checked in a real browser.

Starts the built `gateway serve links` on a free port over a local remote of fixtures it makes
(a folder of JPEG photos made with libvips, a folder of 1,000 files, files with hostile and
right-to-left names, a folder to download as a ZIP with sparse files adding up to --zip-bytes),
makes links with `gateway link`, and drives headless Chromium through chromedriver (Selenium)
over the pages a visitor sees:

- the folder page: title and heading name the shared folder (never the token), rows with kind,
  size (bytes and human text) and date, folders first; breadcrumbs in a subfolder;
- sorting by name, size and date through plain links (no JavaScript), paging by 100 rows;
- thumbnails (lazy, `?thumbnail=256`) and the gallery view, every image loaded and <= 256 px;
- a file's own page: heading, preview, metadata, a download link serving the exact bytes;
- a video (MP4 made by ffmpeg): a poster thumbnail in its row, a poster preview and its duration
  on its page;
- clients that are not browsers still get the file's bytes;
- names with markup, quotes, `&`, `%`, `?`, `#`, Hebrew and Arabic: shown literally, links work;
- a phone-sized viewport (390x844): nothing wider than the screen; dark mode;
- expired (410), revoked (404) and tampered (403) links: plain-words HTML pages, no token;
- Content-Security-Policy `default-src 'none'` with no violation in the console, and no asset
  from another origin;
- "Download all" as a streamed ZIP (ZIP64 beyond 4 GiB): `unzip -t` passes, every member equals
  its source file, and the server's resident memory stays under 200 MiB.

Every check runs even when another fails; each prints one line, and the run exits 1 if any
failed (0 if all passed). Screenshots of every page checked go to --out (`folder.png`,
`gallery.png`, `phone-photos.png`, `expired.png`, ..., `failed-CHECK.png` at a failure), with
the server's log. The server and the browser are stopped and the temporary folder removed
whatever happens.

Needs Chromium and chromedriver (/usr/bin), Selenium, libvips-tools (vips), unzip, truncate:
scripts/setup-deps.sh installs them. Run:

    python3 Tests/Browser/share_page.py --gateway .build/debug/gateway --out /tmp/share-page
    python3 Tests/Browser/share_page.py --gateway .build/debug/gateway --out /tmp/share-page --zip-bytes 0

--zip-bytes N (default 5 GiB) is the size of the sparse files in the ZIP check; 0 leaves them out.
"""
import argparse
import base64
import collections
import datetime
import html.parser
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import zipfile

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    sys.exit("share_page.py: selenium is missing: run scripts/setup-deps.sh (python3 -m pip install 'selenium>=4.15')")

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
PAGE_LOAD_TIMEOUT, WAIT_TIMEOUT = 60, 30
PAGE_SIZE = 100
MIB, GIB = 1 << 20, 1 << 30
RSS_LIMIT = 200 * MIB

PHOTOS, DAY2, BIG, ODD, ZIP = "Holiday photos 2026", "Day 2", "Big folder", "Odd names", "Zip me"
CLIPS = "Clips"
# photo-01 is 1600x1200 (the file page's metadata is checked for it), photo-02 a portrait.
PHOTO_SIZES = [(1600, 1200), (900, 1600), (1200, 800), (800, 600), (1024, 768), (640, 480),
               (2000, 1000), (1000, 1000), (1280, 720), (720, 1280), (1500, 1100), (600, 900)]
TEXT_FILES = {"notes-1.txt": 120, "notes-2.txt": 5_000, "notes-3.txt": 300_000}
BIG_FILES, BIG_FOLDERS = 1000, ["Folder A", "Folder B", "Folder C"]
# A file name cannot hold "/": the closing tag of the first is written with U+2215 (division slash).
ODD_NAMES = ["<b>bold<\u2215b>.txt", "a & b.txt", "\"quoted\" 'single'.txt", "שלום עולם.txt", "مرحبا.txt",
             "<img src=x onerror=alert(1)>.txt", "100% #1?.txt"]
BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
CSP_MESSAGES = re.compile(r"Refused to|Content.Security.Policy|Blocked script execution", re.I)

ROWS_JS = """
return Array.from(document.querySelectorAll('table.listing tbody tr.item')).map(tr => {
  const name = tr.querySelector('td.name'), links = name ? Array.from(name.querySelectorAll('a')) : [];
  const a = links.find(l => l.innerText.trim()) || links[0];
  const size = tr.querySelector('td.size'), time = tr.querySelector('td.date time');
  const thumb = tr.querySelector('img.thumb');
  return {kind: tr.getAttribute('data-kind'), cell: name ? name.innerText.trim() : null,
          name: (a || name || tr).innerText.trim(), href: a ? a.href : null,
          bytes: size ? size.getAttribute('data-bytes') : null, size: size ? size.innerText.trim() : null,
          datetime: time ? time.getAttribute('datetime') : null,
          thumb: thumb ? thumb.getAttribute('src') : null, loading: thumb ? thumb.getAttribute('loading') : null};
});"""
LINK_NAMED_JS = """
return Array.from(document.querySelectorAll('table.listing tbody tr.item td.name a'))
  .find(a => a.innerText.trim().replace(/\\/$/, '') === arguments[0]) || null;"""
IMAGES_LOADED_JS = """
const images = Array.from(document.querySelectorAll(arguments[0]));
const waiting = images.filter(i => !(i.complete && i.naturalWidth > 0));
if (waiting.length) waiting[0].scrollIntoView({block: 'center'}); else window.scrollTo(0, document.body.scrollHeight);
return waiting.length === 0 && images.length > 0;"""
GALLERY_JS = """
return Array.from(document.querySelectorAll('ul.gallery li img'))
  .map(i => [i.getAttribute('src'), i.complete ? i.naturalWidth : 0, i.complete ? i.naturalHeight : 0]);"""
ASSETS_JS = """
const urls = Array.from(document.querySelectorAll(
  'img[src], script[src], link[href], source[src], iframe[src], video[src], audio[src], embed[src], object[data]'))
  .map(e => e.src || e.href || e.data);
for (const r of performance.getEntriesByType('resource')) urls.push(r.name);
const styles = Array.from(document.querySelectorAll('style')).map(s => s.textContent)
  .concat(Array.from(document.querySelectorAll('[style]')).map(e => e.getAttribute('style')));
return [urls, styles.join('\\n')];"""


class Failed(Exception):
    """A check's finding, in words."""


def expect(condition, message):
    if not condition:
        raise Failed(message)


class Findings:
    """Problems a check collects before failing with all of them (at most 12 shown)."""

    def __init__(self):
        self.items = []

    def check(self, condition, message):
        if not condition:
            self.items.append(message)
        return condition

    def done(self):
        if self.items:
            more = f" (and {len(self.items) - 12} more)" if len(self.items) > 12 else ""
            raise Failed("; ".join(self.items[:12]) + more)


# --- HTTP without the browser ------------------------------------------------------------------

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy


class Fetched:
    def __init__(self, status, headers, body, url):
        self.status, self.headers, self.body, self.url = status, headers, body, url


def fetch(url, accept=None, headers=None, timeout=60):
    """GET `url` (redirects followed); an HTTP error is an answer, not an exception."""
    request = urllib.request.Request(url, headers=dict(headers or {}, **({"Accept": accept} if accept else {})))
    try:
        with OPENER.open(request, timeout=timeout) as response:
            return Fetched(response.status, response.headers, response.read(), response.geturl())
    except urllib.error.HTTPError as error:
        return Fetched(error.code, error.headers, error.read(), url)


class _TextOf(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts, self.skipping = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skipping += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skipping:
            self.skipping -= 1

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def text_of(body):
    parser = _TextOf()
    parser.feed(body.decode("utf-8", "replace"))
    return " ".join(" ".join(parser.parts).split())


# --- what pages show ---------------------------------------------------------------------------

def size_text_matches(text, size):
    """Whether a human size ("1.2 MB", "812 B", "4 KiB") is `size` bytes, rounded or truncated
    to its shown digits, in decimal or binary units."""
    match = re.fullmatch(r"([\d,]+(?:\.(\d+))?)\s*([A-Za-z]*)", text.replace("\u00a0", " ").replace("\u202f", " "))
    if not match:
        return False
    value, decimals, unit = float(match.group(1).replace(",", "")), len(match.group(2) or ""), match.group(3).lower()
    steps = {"": 0, "b": 0, "byte": 0, "bytes": 0, "k": 1, "kb": 1, "kib": 1, "m": 2, "mb": 2, "mib": 2,
             "g": 3, "gb": 3, "gib": 3, "tb": 4, "tib": 4}
    if unit not in steps:
        return False
    return any(abs(value - size / base ** steps[unit]) < 10 ** -decimals + 1e-9 for base in (1000, 1024))


def parse_time(text):
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None


def epoch(when):
    """Seconds since 1970 of a parsed time; one without an offset is taken as UTC."""
    return (when if when.tzinfo else when.replace(tzinfo=datetime.timezone.utc)).timestamp()


def folders_first(rows):
    kinds = [row["kind"] for row in rows]
    return "file" not in kinds or "folder" not in kinds[kinds.index("file"):]


def row_name(row):
    return row["name"][:-1] if row["kind"] == "folder" and row["name"].endswith("/") else row["name"]


def sort_values(rows, key):
    """What the file rows are sorted by: sizes, case-folded names or times (seconds)."""
    files = [row for row in rows if row["kind"] == "file"]
    if key == "size":
        return [int(row["bytes"]) if re.fullmatch(r"\d+", row["bytes"] or "") else -1 for row in files]
    if key == "date":
        return [epoch(when) if (when := parse_time(row["datetime"])) else 0 for row in files]
    return [row_name(row).casefold() for row in files]


def last_segment(page, src):
    """The decoded last path segment of `src` (on `page`): the name of the file it shows."""
    return urllib.parse.unquote(urllib.parse.urlsplit(urllib.parse.urljoin(page, src)).path.rsplit("/", 1)[-1])


def same_url(a, b):
    return urllib.parse.unquote(a) == urllib.parse.unquote(b)


def token_of(url):
    return urllib.parse.urlsplit(url).path.split("/s/", 1)[1].split("/", 1)[0]


# --- the run: fixtures, server, browser ----------------------------------------------------------

class Run:
    def __init__(self, args):
        self.gateway, self.out, self.zip_bytes = os.path.abspath(args.gateway), os.path.abspath(args.out), args.zip_bytes
        os.makedirs(self.out, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix="share-page-")
        self.root, self.config = os.path.join(self.tmp, "root"), os.path.join(self.tmp, "config.json")
        self.server_log = os.path.join(self.tmp, "server.log")
        self.server = self.driver = None
        self.origin, self.links = None, {}
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
        self.env.update(GATEWAY_CONFIG=self.config, GATEWAY_LINK_SECRET=secrets.token_urlsafe(32),
                        XDG_STATE_HOME=os.path.join(self.tmp, "xdg"), XDG_CONFIG_HOME=os.path.join(self.tmp, "xdg-config"),
                        XDG_DATA_HOME=os.path.join(self.tmp, "xdg-data"))

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    # Fixtures.
    def make_fixtures(self):
        def write(relative, data, days_ago=None):
            full = self.path(relative)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)
            if days_ago is not None:
                stamp = time.time() - days_ago * 86400
                os.utime(full, (stamp, stamp))

        def photo(relative, width, height, mean, days_ago):
            full = self.path(relative)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            subprocess.run(["vips", "gaussnoise", full + "[Q=85]", str(width), str(height), "--mean", str(mean), "--sigma", "40"],
                           check=True, capture_output=True, timeout=60)
            stamp = time.time() - days_ago * 86400
            os.utime(full, (stamp, stamp))

        for index, (width, height) in enumerate(PHOTO_SIZES, 1):
            # Dates in another order than names, so that sorting by date is seen.
            photo(f"{PHOTOS}/photo-{index:02}.jpg", width, height, 60 + index * 10, (index * 5) % 13 + index / 100)
        for index, (name, size) in enumerate(TEXT_FILES.items()):
            write(f"{PHOTOS}/{name}", (f"{name} line\n" * (size // 10 + 1)).encode()[:size], days_ago=20 + index)
        photo(f"{PHOTOS}/{DAY2}/day2-a.jpg", 800, 600, 100, 1)
        photo(f"{PHOTOS}/{DAY2}/day2-b.jpg", 600, 800, 150, 2)
        for i in range(BIG_FILES):
            # 1 to 1,000 bytes, all different, in another order than the names.
            write(f"{BIG}/file-{i:04}.txt", bytes(48 + (i + j) % 10 for j in range((i * 7919) % BIG_FILES + 1)))
        for folder in BIG_FOLDERS:
            write(f"{BIG}/{folder}/inside.txt", b"inside\n")
        for name in ODD_NAMES:
            write(f"{ODD}/{name}", f"the file named {name}\n".encode())
        write("Withdrawn/gone.txt", b"revoked before the test looks\n")
        # A 7-second 320 x 240 H.264 clip, white on top and black below.
        os.makedirs(self.path(CLIPS), exist_ok=True)
        subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i",
                        "color=c=white:s=320x240:r=25:d=7,drawbox=x=0:y=120:w=320:h=120:color=black:t=fill",
                        "-c:v", "libx264", "-pix_fmt", "yuv420p", self.path(CLIPS, "beach.mp4")],
                       check=True, capture_output=True, timeout=120)
        # A photo with a camera and a time taken (EXIF, by exiftool), and a three-page PDF (cairo).
        photo(f"{CLIPS}/camera.jpg", 640, 480, 120, 3)
        subprocess.run(["exiftool", "-q", "-P", "-overwrite_original", "-Make=Gatewaytest", "-Model=Model 9",
                        "-DateTimeOriginal=2024:05:06 07:08:09", self.path(CLIPS, "camera.jpg")], check=True, capture_output=True, timeout=60)
        pages = []
        for number in range(1, 4):
            page = os.path.join(self.tmp, f"page{number}.svg")
            with open(page, "w") as f:
                f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="420" height="595"><rect width="420" height="595" fill="white"/>'
                        f'<text x="40" y="80" font-size="40">Page {number}</text></svg>')
            pages.append(page)
        subprocess.run(["rsvg-convert", "-f", "pdf", "-o", self.path(CLIPS, "report.pdf")] + pages, check=True, capture_output=True, timeout=60)
        for relative, size in [("readme.txt", 3 * 1024), ("a/one.bin", 5 * 1024 + 3), ("a/b/two.bin", 2 * MIB),
                               ("a/b/c/three.bin", 3 * MIB + 7), ("zero.bin", 0), ("é ü.bin", 4096)]:
            write(f"{ZIP}/{relative}", os.urandom(size))
        os.makedirs(self.path(ZIP, "empty folder"), exist_ok=True)
        if self.zip_bytes > 0:
            # Sparse (truncate -s), with random bytes at the start, around 4 GiB and at the end,
            # so that a misplaced or ZIP64-truncated offset shows as different bytes.
            huge = self.zip_bytes * 9 // 10
            for index, size in enumerate([huge, self.zip_bytes // 20, self.zip_bytes - huge - self.zip_bytes // 20]):
                full = self.path(ZIP, "sparse", f"sparse-{index}.bin")
                os.makedirs(os.path.dirname(full), exist_ok=True)
                subprocess.run(["truncate", "-s", str(size), full], check=True, timeout=60)
                with open(full, "r+b") as f:
                    for offset in {0, size // 2, 4 * GIB - 2048, size - 4096}:
                        if 0 <= offset and offset + 4096 <= size:
                            f.seek(offset)
                            f.write(os.urandom(4096))

    # The gateway.
    def gateway_run(self, arguments, timeout=60):
        result = subprocess.run([self.gateway] + arguments, env=self.env, cwd=self.tmp, capture_output=True, text=True,
                                timeout=timeout, stdin=subprocess.DEVNULL)
        expect(result.returncode == 0, f"`gateway {' '.join(arguments)}` exited {result.returncode}: {result.stderr.strip()}")
        return result.stdout

    def start_server(self):
        with open(self.config, "w") as f:
            json.dump({"remotes": {"share": {"type": "local", "root": self.root}},
                       "links": {"base_url": "http://127.0.0.1:9", "secret_env": "GATEWAY_LINK_SECRET"},
                       "state_dir": os.path.join(self.tmp, "state")}, f)
        with open(self.server_log, "wb") as log:
            self.server = subprocess.Popen([self.gateway, "serve", "links", "--config", self.config, "--addr", "127.0.0.1:0"],
                                           env=self.env, cwd=self.tmp, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                           start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            text = self.server_log_text()
            found = re.search(r"serving public links at http://127\.0\.0\.1:(\d+)/", text)
            if found:
                self.origin = f"http://127.0.0.1:{found.group(1)}"
                return
            expect(self.server.poll() is None, f"gateway serve links exited {self.server.returncode} before serving: {text.strip()}")
            time.sleep(0.1)
        raise Failed(f"gateway serve links printed no 'serving public links at' line in 30 s: {self.server_log_text().strip()}")

    def make_link(self, location, *options):
        """`gateway link --json`: the URL, on the running server's origin."""
        output = self.gateway_run(["link", "--config", self.config, "--json", *options, "share:" + location])
        url = json.loads(output.strip().splitlines()[-1])["url"]
        parts = urllib.parse.urlsplit(url)
        return self.origin + parts.path + (f"?{parts.query}" if parts.query else "")

    def make_links(self):
        for key, location in [("photos", PHOTOS), ("big", BIG), ("odd", ODD), ("zip", ZIP), ("clips", CLIPS)]:
            self.links[key] = self.make_link(location)
        self.links["expired"] = self.make_link(PHOTOS, "--expire", "1s")
        self.expired_made = time.monotonic()
        self.links["revoked"] = self.make_link("Withdrawn")
        self.revoked_status_before = fetch(self.links["revoked"], accept="text/html").status
        self.gateway_run(["link", "--config", self.config, "--revoke", "share:Withdrawn"])
        # One character in the middle of the token, its 6-bit value's top bit flipped (a low bit
        # of a segment's last character may be padding that decoding ignores).
        token = token_of(self.links["photos"])
        middle = len(token) // 2 + (token[len(token) // 2] not in BASE64URL)
        tampered = token[:middle] + BASE64URL[BASE64URL.index(token[middle]) ^ 32] + token[middle + 1:]
        self.links["tampered"] = self.links["photos"].replace(token, tampered)

    # The browser.
    def start_browser(self):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-proxy-server",
                         "--window-size=1280,900", "--lang=en-US", "--no-first-run", "--disable-extensions",
                         f"--user-data-dir={os.path.join(self.tmp, 'chromium-profile')}"]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(executable_path=CHROMEDRIVER, log_output=os.path.join(self.tmp, "chromedriver.log"))
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_page_load_timeout(PAGE_LOAD_TIMEOUT)
        self.driver.set_script_timeout(WAIT_TIMEOUT)

    def browser_alive(self):
        try:
            return self.driver is not None and self.driver.execute_script("return 1") == 1
        except WebDriverException:
            return False

    def js(self, script, *arguments):
        return self.driver.execute_script(script, *arguments)

    def wait(self, condition, what, timeout=WAIT_TIMEOUT):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.2).until(lambda _: condition())
        except TimeoutException:
            raise Failed(f"timed out after {timeout} s waiting for {what} (at {self.driver.current_url})") from None

    def open(self, url):
        self.driver.get(url)
        self.wait(lambda: self.js("return document.readyState") == "complete", f"{url} to load")

    def click_row(self, name):
        link = self.js(LINK_NAMED_JS, name)
        expect(link is not None, f"no row link named {name!r} on {self.driver.current_url}")
        before = self.driver.current_url
        link.click()
        self.wait(lambda: self.driver.current_url != before and self.js("return document.readyState") == "complete",
                  f"the page after clicking {name!r}")

    def rows(self):
        return self.js(ROWS_JS)

    def text(self, selector):
        return self.js("const e = document.querySelector(arguments[0]); return e ? e.innerText : null;", selector)

    def expect_no_token(self, findings, token, where):
        body, title = self.js("return [document.body ? document.body.innerText : '', document.title]")
        findings.check(token not in body and token not in title, f"{where}: the link's token is shown in the page")

    def shot(self, name, full_page=True):
        path = os.path.join(self.out, name)
        try:
            if full_page:
                data = self.driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
                with open(path, "wb") as f:
                    f.write(base64.b64decode(data["data"]))
            else:
                self.driver.save_screenshot(path)
        except Exception as error:  # a screenshot is evidence, not a check
            print(f"      (screenshot {name} not taken: {type(error).__name__}: {error})")

    def walk_pages(self, url, limit=30):
        """Rows of every page from `url` on, following a[rel=next]: [(url, rows)]."""
        pages = []
        while url and len(pages) < limit:
            self.open(url)
            pages.append((url, self.rows()))
            url = self.js("const a = document.querySelector('a[rel~=next]'); return a ? a.href : null;")
        expect(not url, f"more than {limit} pages from {pages[0][0]}: does a[rel=next] ever end?")
        return pages

    def server_rss(self):
        try:
            with open(f"/proc/{self.server.pid}/status") as f:
                return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1)) * 1024
        except (OSError, AttributeError):
            return 0

    def server_log_text(self):
        try:
            with open(self.server_log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def clean_up(self):
        """Quits the browser (and chromedriver), stops the server (its process group), keeps the
        logs in --out and removes the temporary folder; each step whatever the others did."""
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception as error:
                print(f"browser quit: {error}")
                process = getattr(self.driver.service, "process", None)
                if process and process.poll() is None:
                    process.kill()
        if self.server is not None and self.server.poll() is None:
            try:
                os.killpg(self.server.pid, signal.SIGTERM)
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.server.pid, signal.SIGKILL)
                self.server.wait(10)
            except ProcessLookupError:
                pass
        for name in ("server.log", "chromedriver.log"):
            try:
                shutil.copy(os.path.join(self.tmp, name), os.path.join(self.out, name))
            except OSError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)


# --- the checks ----------------------------------------------------------------------------------

def check_folder_page(run):
    url, findings = run.links["photos"], Findings()
    token = token_of(url)
    bare = fetch(f"{run.origin}/s/{token}", accept="text/html")
    findings.check(same_url(bare.url, url), f"/s/TOKEN should lead to {url}, ended at {bare.url} ({bare.status})")
    run.open(url)
    title, heading = run.js("return [document.title, (document.querySelector('h1') || {}).innerText || null]")
    findings.check(PHOTOS in title, f"<title> {title!r} does not contain {PHOTOS!r}")
    findings.check(heading is not None and PHOTOS in heading, f"<h1> {heading!r} does not contain {PHOTOS!r}")
    run.expect_no_token(findings, token, "folder page")
    rows = run.rows()
    expected = {name: os.path.getsize(run.path(PHOTOS, name)) for name in os.listdir(run.path(PHOTOS))}
    names = [row_name(row) for row in rows]
    findings.check(sorted(names) == sorted(expected), f"rows {sorted(names)} are not the folder's entries {sorted(expected)}")
    findings.check(folders_first(rows), f"folders are not first: {[row['kind'] for row in rows]}")
    for row, name in zip(rows, names):
        findings.check(row["href"] and row["href"].startswith(url), f"{name!r}: its link {row['href']!r} is not under {url}")
        if row["kind"] == "folder":
            findings.check(row["bytes"] == "" and row["size"] == "—",
                           f"folder {name!r}: data-bytes {row['bytes']!r}, size {row['size']!r} (want '' and '—')")
            continue
        findings.check(row["kind"] == "file", f"{name!r}: data-kind {row['kind']!r}")
        if not findings.check(re.fullmatch(r"\d+", row["bytes"] or ""), f"{name!r}: data-bytes {row['bytes']!r} is not an integer"):
            continue
        findings.check(int(row["bytes"]) == expected.get(name), f"{name!r}: data-bytes {row['bytes']} but the file has {expected.get(name)}")
        findings.check(row["size"] and size_text_matches(row["size"], int(row["bytes"])),
                       f"{name!r}: size text {row['size']!r} is not {row['bytes']} bytes")
        when, mtime = parse_time(row["datetime"]), os.path.getmtime(run.path(PHOTOS, name))
        if findings.check(when is not None, f"{name!r}: no <time datetime> in td.date, or not ISO 8601: {row['datetime']!r}"):
            slack = 2 if when.tzinfo else 14 * 3600 + 2  # without an offset: some time zone's local time
            shown = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc).isoformat()
            findings.check(abs(epoch(when) - mtime) <= slack, f"{name!r}: datetime {row['datetime']} is not the file's time {shown}")
    run.shot("folder.png")
    findings.done()
    return f"{len(rows)} rows"


def check_breadcrumbs(run):
    url, findings = run.links["photos"], Findings()
    run.open(url)
    run.click_row(DAY2)
    findings.check(urllib.parse.unquote(run.driver.current_url) == urllib.parse.unquote(url) + DAY2 + "/",
                   f"the {DAY2!r} link led to {run.driver.current_url}")
    crumbs = run.text("nav.breadcrumbs")
    findings.check(crumbs is not None and PHOTOS in crumbs and DAY2 in crumbs, f"nav.breadcrumbs text {crumbs!r} lacks {PHOTOS!r} or {DAY2!r}")
    names = sorted(row_name(row) for row in run.rows())
    findings.check(names == ["day2-a.jpg", "day2-b.jpg"], f"{DAY2} rows: {names}")
    run.expect_no_token(findings, token_of(url), "subfolder page")
    run.shot("subfolder.png")
    links = run.js("return Array.from(document.querySelectorAll('nav.breadcrumbs a')).map(a => [a, a.href])")
    home = next((element for element, href in links if same_url(href, url)), None)
    if findings.check(home is not None, f"no breadcrumb links to the share's root {url}: {[href for _, href in links]}"):
        home.click()
        run.wait(lambda: same_url(run.driver.current_url, url) and run.js("return document.readyState") == "complete", "the root crumb's page")
        findings.check(len(run.rows()) == len(os.listdir(run.path(PHOTOS))), "the root crumb's page does not list the shared folder")
    findings.done()


def check_sorting(run):
    findings, big = Findings(), run.links["big"]
    run.open(big)
    # The header links (a missing sort or order is the default: name, asc), each followed: its
    # page is sorted by its key, one way or the other.
    headers = run.js("return Array.from(document.querySelectorAll('a.sort')).map(a => a.href)")
    keys = {urllib.parse.parse_qs(urllib.parse.urlsplit(href).query).get("sort", ["name"])[0] for href in headers}
    findings.check({"name", "size", "date"} <= keys, f"the a.sort header links sort by {sorted(keys)}, not name, size and date")
    for href in headers:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(href).query)
        key, order = query.get("sort", ["name"])[0], query.get("order", ["asc"])[0]
        if not findings.check(key in ("name", "size", "date") and order in ("asc", "desc"), f"a.sort {href!r}: sort={key!r} order={order!r}"):
            continue
        run.open(href)
        values = sort_values(run.rows(), key)
        findings.check(values in (sorted(values), sorted(values, reverse=True)),
                       f"a.sort link {urllib.parse.urlsplit(href).query!r} gives a page not sorted by {key}")
    # Sizes over every page (the next links must keep the order); names on the first page.
    for key, order in [("size", "asc"), ("size", "desc"), ("name", "asc"), ("name", "desc")]:
        every_page, address = key == "size", big + f"?sort={key}&order={order}"
        if every_page:
            rows = [row for _, page in run.walk_pages(address) for row in page]
        else:
            run.open(address)
            rows = run.rows()
        run.shot(f"sort-{key}-{order}.png")
        findings.check(folders_first(rows), f"sort={key}&order={order}: folders are not first")
        values = sort_values(rows, key)
        inverted = [i for i in range(len(values) - 1) if (values[i] > values[i + 1]) == (order == "asc") and values[i] != values[i + 1]]
        if inverted:
            at = inverted[0]
            findings.check(False, f"sort={key}&order={order}: file {at + 1} of {len(values)} ({values[at]!r}) comes before {values[at + 1]!r}"
                                  + (" (does a[rel=next] keep sort and order?)" if at + 1 >= PAGE_SIZE - len(BIG_FOLDERS) else ""))
        if every_page:
            findings.check(len(values) == BIG_FILES, f"sort={key}&order={order}: {len(values)} files over all pages, not {BIG_FILES}")
    for order in ("asc", "desc"):
        run.open(run.links["photos"] + f"?sort=date&order={order}")
        run.shot(f"sort-date-{order}.png")
        rows = run.rows()
        dated = rows and all(parse_time(row["datetime"]) for row in rows if row["kind"] == "file")
        if findings.check(dated, f"sort=date&order={order}: a file row has no datetime"):
            stamps = sort_values(rows, "date")
            findings.check(stamps == sorted(stamps, reverse=order == "desc"), f"sort=date&order={order}: dates out of order")
    findings.done()


def check_paging(run):
    findings, big = Findings(), run.links["big"]
    total = BIG_FILES + len(BIG_FOLDERS)
    run.open(big)
    first = run.rows()
    findings.check(len(first) == PAGE_SIZE, f"the first page has {len(first)} rows, not {PAGE_SIZE}")
    count = run.text(".count")
    findings.check(count is not None and f"{total:,}" in count, f".count text {count!r} does not contain {total:,}")
    run.shot("page-1.png")
    following = run.js("return document.querySelector('a[rel~=next]')")
    expect(following is not None, "the first page has no a[rel=next]" + ("; " + "; ".join(findings.items) if findings.items else ""))
    following.click()
    run.wait(lambda: run.driver.current_url != big and run.js("return document.readyState") == "complete", "the second page")
    second = run.rows()
    run.shot("page-2.png")
    findings.check(len(second) == PAGE_SIZE, f"the second page has {len(second)} rows")
    overlap = {row_name(r) for r in first} & {row_name(r) for r in second}
    findings.check(not overlap, f"pages 1 and 2 share rows: {sorted(overlap)[:5]}")
    previous = run.js("return document.querySelector('a[rel~=prev]')")
    if findings.check(previous is not None, "the second page has no a[rel=prev]"):
        second_url = run.driver.current_url
        previous.click()
        run.wait(lambda: run.driver.current_url != second_url and run.js("return document.readyState") == "complete",
                 "the page a[rel=prev] leads to")
        back, wanted = [row_name(r) for r in run.rows()], [row_name(r) for r in first]
        findings.check(back == wanted, f"a[rel=prev] on page 2 leads to {len(back)} rows ({', '.join(back[:2])} … {', '.join(back[-2:])}),"
                                       f" not the first page's {len(wanted)} (missing {[n for n in wanted if n not in back][:5]};"
                                       f" .count {run.text('.count')!r})")
    pages = run.walk_pages(big)
    seen = collections.Counter(row_name(row) for _, rows in pages for row in rows)
    expected = {f"file-{i:04}.txt" for i in range(BIG_FILES)} | set(BIG_FOLDERS)
    findings.check(set(seen) == expected, f"missing {sorted(expected - set(seen))[:5]}, unexpected {sorted(set(seen) - expected)[:5]}")
    findings.check(all(n == 1 for n in seen.values()), f"shown more than once: {[name for name, n in seen.items() if n > 1][:5]}")
    findings.check(all(len(rows) == PAGE_SIZE for _, rows in pages[:-1]), f"page sizes {[len(rows) for _, rows in pages]}")
    # Back from the last page through a[rel=prev]: every entry once again, the folders first.
    backwards, url = [], pages[-1][0]
    while url and len(backwards) < 30:
        run.open(url)
        backwards.insert(0, run.rows())
        url = run.js("const a = document.querySelector('a[rel~=prev]'); return a ? a.href : null;")
    seen_back = collections.Counter(row_name(row) for rows in backwards for row in rows)
    findings.check(set(seen_back) == expected and all(n == 1 for n in seen_back.values()),
                   f"walking back with a[rel=prev]: {sum(seen_back.values())} rows over {len(backwards)} pages ({[len(r) for r in backwards]}),"
                   f" missing {sorted(expected - set(seen_back))[:5]}, twice {[n for n, c in seen_back.items() if c > 1][:5]}")
    findings.check(folders_first([row for rows in backwards for row in rows]), "walking back with a[rel=prev]: folders are not first")
    findings.done()
    return f"{len(pages)} pages, {sum(seen.values())} rows"


def check_previews(run):
    findings, url = Findings(), run.links["photos"]
    photos = {f"photo-{i:02}.jpg": size for i, size in enumerate(PHOTO_SIZES, 1)}
    run.open(url)
    rows = {row_name(row): row for row in run.rows()}
    for name in photos:
        row = rows.get(name) or {}
        findings.check(row.get("thumb") is not None, f"{name}: no img.thumb in its row")
        if row.get("thumb"):
            findings.check(row["loading"] == "lazy", f"{name}: img.thumb loading={row['loading']!r}, not lazy")
            findings.check(row["thumb"].endswith("?thumbnail=256"), f"{name}: img.thumb src {row['thumb']!r} does not end in ?thumbnail=256")
    thumb = (rows.get("photo-01.jpg") or {}).get("thumb")
    if thumb:
        got = fetch(urllib.parse.urljoin(url, thumb))
        kind = got.headers.get("Content-Type", "")
        findings.check(got.status == 200 and kind.split(";")[0] in ("image/png", "image/jpeg"),
                       f"thumbnail: status {got.status}, Content-Type {kind!r}")
        findings.check(got.body[:8] == b"\x89PNG\r\n\x1a\n" or got.body[:3] == b"\xff\xd8\xff", "the thumbnail is neither a PNG nor a JPEG")
    run.open(url + "?view=gallery")
    images = [src for src, _, _ in run.js(GALLERY_JS)]
    shown = collections.Counter(last_segment(url, src) for src in images)
    findings.check(all(shown[name] == 1 for name in photos), f"ul.gallery li img are of {sorted(shown)}, not one of each photo {sorted(photos)}")
    if images:
        try:
            run.wait(lambda: run.js(IMAGES_LOADED_JS, "ul.gallery li img"), "every gallery image to load")
        except Failed as failure:
            findings.check(False, f"{failure}; not loaded: {[src for src, width, _ in run.js(GALLERY_JS) if width == 0]}")
        for src, width, height in run.js(GALLERY_JS):
            name = last_segment(url, src)
            if width == 0:
                continue
            findings.check(width <= 256 and height <= 256, f"gallery {name}: {width}x{height}, larger than 256")
            if name in photos:
                w, h = photos[name]
                scale = 256 / max(w, h)
                findings.check(abs(width - w * scale) <= 2 and abs(height - h * scale) <= 2,
                               f"gallery {name}: {width}x{height} is not {w}x{h} scaled to 256 (aspect kept)")
    run.js("window.scrollTo(0, 0)")
    run.shot("gallery.png")
    findings.done()
    return f"{len(images)} gallery images"


def check_file_page(run):
    findings, url = Findings(), run.links["photos"]
    run.open(url)
    run.click_row("photo-01.jpg")
    run.wait(lambda: "photo-01.jpg" in (run.text("h1") or ""), "an <h1> containing 'photo-01.jpg'")
    run.wait(lambda: run.js("const i = document.querySelector('img.preview'); return !!i && i.complete && i.naturalWidth > 0"),
             "img.preview to load")
    run.expect_no_token(findings, token_of(url), "file page")
    metadata = re.sub(r"(?<=\d)[,\u00a0\u202f](?=\d{3})", "", run.text("dl.metadata") or "")
    findings.check("1600" in metadata and "1200" in metadata, f"dl.metadata {metadata!r} does not show 1600 x 1200")
    href = run.js("const a = document.querySelector('a.download'); return a ? a.href : null")
    run.shot("file.png")
    expect(href is not None, "no a.download on the file page" + ("; " + "; ".join(findings.items) if findings.items else ""))
    with open(run.path(PHOTOS, "photo-01.jpg"), "rb") as f:
        content = f.read()
    # As a program fetches it, and as the browser does when the link is clicked.
    for accept in (None, BROWSER_ACCEPT):
        got = fetch(href, accept=accept)
        findings.check(got.status == 200 and got.body == content,
                       f"a.download ({href}, Accept {accept!r}): status {got.status}, {len(got.body)} bytes, not the file's {len(content)}")
        disposition = got.headers.get("Content-Disposition", "")
        findings.check(disposition.lower().startswith("attachment"),
                       f"a.download (Accept {accept!r}): Content-Disposition {disposition!r}, not attachment")
    findings.done()


def check_video(run):
    findings, url = Findings(), run.links["clips"]
    run.open(url)
    row = {row_name(row): row for row in run.rows()}.get("beach.mp4") or {}
    findings.check(row.get("thumb") is not None, "beach.mp4: no img.thumb (a poster) in its row")
    if row.get("thumb"):
        findings.check(row["loading"] == "lazy", f"beach.mp4: img.thumb loading={row['loading']!r}, not lazy")
        try:
            run.wait(lambda: run.js(IMAGES_LOADED_JS, "img.thumb"), "the poster in the row to load")
        except Failed as failure:
            findings.check(False, str(failure))
        got = fetch(urllib.parse.urljoin(url, row["thumb"]))
        kind = got.headers.get("Content-Type", "").split(";")[0]
        findings.check(got.status == 200 and kind in ("image/png", "image/jpeg"), f"poster: status {got.status}, Content-Type {kind!r}")
        size = image_size(got.body)
        findings.check(size == (256, 192), f"poster: {size}, not 320 x 240 scaled to 256 x 192")
    run.click_row("beach.mp4")
    run.wait(lambda: "beach.mp4" in (run.text("h1") or ""), "an <h1> containing 'beach.mp4'")
    try:
        run.wait(lambda: run.js("const i = document.querySelector('img.preview'); return !!i && i.complete && i.naturalWidth > 0"),
                 "img.preview (the poster) to load")
    except Failed as failure:
        findings.check(False, str(failure))
    metadata = run.text("dl.metadata") or ""
    findings.check("0:07" in metadata, f"dl.metadata {metadata!r} does not show the duration 0:07")
    findings.check("320" in metadata and "240" in metadata, f"dl.metadata {metadata!r} does not show 320 x 240")
    run.shot("video.png")
    findings.done()


def check_document_facts(run):
    """A file page shows what the file says of itself: a photo's camera and time taken, a PDF's pages."""
    findings, url = Findings(), run.links["clips"]
    for name, wanted in [("camera.jpg", [("Camera", r"Gatewaytest Model 9"), ("Taken", r"^2024-05-06 07:08$")]),
                         ("report.pdf", [("Pages", r"^3$")])]:
        run.open(url)
        run.click_row(name)
        run.wait(lambda: name in (run.text("h1") or ""), f"an <h1> containing {name!r}")
        try:
            run.wait(lambda: run.js("const i = document.querySelector('img.preview'); return !!i && i.complete && i.naturalWidth > 0"),
                     f"{name}: img.preview to load")
        except Failed as failure:
            findings.check(False, str(failure))
        facts = run.js("return Array.from(document.querySelectorAll('dl.metadata dt')).map(dt => "
                       "[dt.textContent.trim(), dt.nextElementSibling ? dt.nextElementSibling.textContent.trim() : ''])") or []
        facts = dict(facts)
        for label, pattern in wanted:
            findings.check(re.search(pattern, facts.get(label, "")) is not None,
                           f"{name}: {label} is {facts.get(label)!r}, not /{pattern}/ (facts: {facts})")
        run.shot(f"facts-{name.split('.')[0]}.png")
    findings.done()


def image_size(data):
    """(width, height) of a PNG or baseline/progressive JPEG, or None."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    offset = 2
    while data[:2] == b"\xff\xd8" and offset + 9 < len(data):
        marker, length = data[offset + 1], int.from_bytes(data[offset + 2:offset + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2):
            return int.from_bytes(data[offset + 7:offset + 9], "big"), int.from_bytes(data[offset + 5:offset + 7], "big")
        offset += 2 + length
    return None


def check_other_clients(run):
    findings = Findings()
    url = run.links["photos"] + "notes-2.txt"
    with open(run.path(PHOTOS, "notes-2.txt"), "rb") as f:
        content = f.read()
    for accept in (None, "*/*"):
        got = fetch(url, accept=accept)
        findings.check(got.status == 200 and got.body == content, f"Accept {accept!r}: status {got.status}, {len(got.body)} bytes, not the file")
    ranged = fetch(url, headers={"Range": "bytes=10-19"})
    findings.check(ranged.status == 206 and ranged.body == content[10:20], f"Range: status {ranged.status}")
    findings.done()


def check_odd_names(run):
    findings, url = Findings(), run.links["odd"]
    run.open(url)
    run.shot("odd.png")
    cells = sorted(row["cell"] for row in run.rows())
    findings.check(cells == sorted(ODD_NAMES), f"td.name texts {cells} are not the file names {sorted(ODD_NAMES)}")
    findings.check(run.js("return document.querySelectorAll('td.name b').length") == 0, "a <b> element was made from a file name")
    findings.check(run.js("return document.querySelectorAll('img[src=\"x\"]').length") == 0, "an <img> element was made from a file name")
    findings.check(ODD in run.js("return document.title"), f"<title> lacks {ODD!r}")
    for index, name in enumerate(ODD_NAMES, 1):
        run.open(url)
        try:
            run.click_row(name)
            run.wait(lambda: name in (run.text("h1") or ""), f"the <h1> of {name!r}'s page to contain its name")
        except Failed as failure:
            findings.check(False, str(failure))
        run.shot(f"odd-file-{index}.png")
    findings.done()


def check_phone(run):
    findings = Findings()
    run.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})
    try:
        for label, key in [("photos", "photos"), ("big", "big"), ("odd", "odd")]:
            run.open(run.links[key])
            inner, body, document = run.js("return [window.innerWidth, document.body.scrollWidth, document.documentElement.scrollWidth]")
            # Content wider than the screen scrolls sideways, or (mobile) widens the layout
            # viewport and zooms out; without <meta name=viewport> the layout is 980 px wide.
            findings.check(inner <= 390 and max(body, document) <= inner,
                           f"{label}: {max(body, document)} px of content, window.innerWidth {inner}, on a 390 px wide phone"
                           " (content wider than the screen, or no <meta name=viewport content=\"width=device-width\">)")
            run.shot(f"phone-{label}.png", full_page=False)
    finally:
        run.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    findings.done()


def check_dark_mode(run):
    run.open(run.links["photos"])
    background = "return getComputedStyle(document.body).backgroundColor"
    light = run.js(background)
    run.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "", "features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    try:
        dark = run.js(background)
        run.shot("dark.png")
    finally:
        run.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "", "features": []})
    expect(light != dark, f"body background is {light} in both light and dark mode")
    return f"light {light}, dark {dark}"


def check_error_pages(run):
    findings, token = Findings(), token_of(run.links["photos"])
    findings.check(run.revoked_status_before == 200, f"the revoked link answered {run.revoked_status_before} before it was revoked")
    time.sleep(max(0.0, run.expired_made + 2 - time.monotonic()))
    deadline = time.monotonic() + 10
    while fetch(run.links["expired"], accept="text/html").status != 410 and time.monotonic() < deadline:
        time.sleep(0.5)
    for kind, status, phrases in [("expired", 410, ["expired"]), ("revoked", 404, ["no longer", "not found"]), ("tampered", 403, ["not valid"])]:
        url = run.links[kind]
        tokens = {token, token_of(run.links[kind]), token_of(run.links["revoked"])}
        got = fetch(url, accept="text/html")
        text = text_of(got.body)
        findings.check(got.status == status, f"{kind}: status {got.status}, not {status}")
        findings.check(got.headers.get("Content-Type", "").startswith("text/html") and re.search(rb"<html|<!doctype", got.body, re.I),
                       f"{kind}: not an HTML page (Content-Type {got.headers.get('Content-Type')!r}): {got.body[:120]!r}")
        findings.check(any(p in text.lower() for p in phrases),
                       f"{kind}: the page does not say {' or '.join(map(repr, phrases))}: {text[:200]!r}")
        findings.check(not any(t.encode() in got.body for t in tokens), f"{kind}: the page contains the token")
        run.open(url)
        shown = run.js("return document.body ? document.body.innerText : ''")
        findings.check(any(p in shown.lower() for p in phrases), f"{kind}: the browser shows {shown[:200]!r}")
        for t in tokens:
            run.expect_no_token(findings, t, f"{kind} page")
        run.shot(f"{kind}.png")
    findings.done()


def check_csp(run):
    findings, url = Findings(), run.links["photos"]
    got = fetch(url, accept="text/html")
    policy = got.headers.get("Content-Security-Policy", "")
    findings.check(got.status == 200 and "default-src 'none'" in policy, f"folder page: status {got.status}, Content-Security-Policy {policy!r}")
    findings.check(got.headers.get("Content-Type", "").startswith("text/html"), f"folder page: Content-Type {got.headers.get('Content-Type')!r}")
    run.driver.get_log("browser")  # what earlier pages logged
    others = []
    for label, address, images in [("folder", url, "img.thumb"), ("gallery", url + "?view=gallery", "ul.gallery li img"),
                                   ("file", url + "photo-01.jpg", "img.preview")]:
        run.open(address)
        try:
            run.wait(lambda: run.js(IMAGES_LOADED_JS, images), f"the {label} page's images")
        except Failed as failure:
            findings.check(False, str(failure))
        # The console reaches the driver in order: a marker logged now arrives after every
        # message the page logged before it (CSP reports among them).
        marker = f"gateway-console-marker-{label}"
        run.js("console.info(arguments[0])", marker)
        entries, deadline = [], time.monotonic() + WAIT_TIMEOUT
        while not any(marker in entry.get("message", "") for entry in entries):
            if time.monotonic() > deadline:
                findings.check(False, f"{label} page: the console marker never reached the driver")
                break
            time.sleep(0.05)
            entries += run.driver.get_log("browser")
        for entry in entries:
            if marker in entry.get("message", ""):
                continue
            # Without the page's URL and line in front, and the tokens shortened.
            message = re.sub(r"/s/([^/\s'\"]{8})[^/\s'\"]*", r"/s/\1…", re.sub(r"^\S+ (\d+(:\d+)? |- )?", "", entry.get("message", "")))
            if CSP_MESSAGES.search(message):
                findings.check(False, f"{label} page console: {message[:300]}")
            elif entry.get("level") == "SEVERE":
                others.append(f"{label}: {message[:200]}")
    for line in others:
        print(f"      (console, not a CSP violation) {line}")
    findings.done()


def check_no_external_assets(run):
    findings = Findings()
    url = run.links["photos"]
    for label, address in [("folder", url), ("gallery", url + "?view=gallery"), ("file", url + "photo-01.jpg"),
                           ("odd names", run.links["odd"]), ("expired", run.links["expired"])]:
        run.open(address)
        urls, styles = run.js(ASSETS_JS)
        for asset in sorted(set(urls + re.findall(r"https?://[^\s\"')]+", styles))):
            parts = urllib.parse.urlsplit(asset)
            if parts.scheme in ("http", "https"):
                findings.check(f"{parts.scheme}://{parts.netloc}" == run.origin, f"{label} page loads {asset} from another origin")
            else:
                findings.check(parts.scheme in ("data", "blob"), f"{label} page refers to {asset}")
    findings.done()


def check_download_all(run):
    findings, url = Findings(), run.links["zip"]
    run.open(url)
    run.shot("zip-folder.png")
    href = run.js("const a = document.querySelector('a.download-all'); return a ? [a.getAttribute('href'), a.href] : null")
    expect(href is not None, "no a.download-all on the folder page")
    parts = urllib.parse.urlsplit(href[1])
    expect(urllib.parse.parse_qs(parts.query).get("download") == ["zip"] and href[1].startswith(url),
           f"a.download-all href {href[0]!r} is not {url}?download=zip")
    # A click sends the browser's Accept: still the archive (its first bytes are enough here).
    request = urllib.request.Request(href[1], headers={"Accept": BROWSER_ACCEPT})
    try:
        with OPENER.open(request, timeout=300) as response:
            findings.check(response.read(4) == b"PK\x03\x04",
                           f"?download=zip with a browser's Accept: not a ZIP ({response.headers.get('Content-Type')})")
    except urllib.error.HTTPError as error:
        findings.check(False, f"?download=zip with a browser's Accept: status {error.code}")
    archive, peak, done = os.path.join(run.tmp, "all.zip"), [run.server_rss()], threading.Event()
    before = peak[0]

    def sample():
        while not done.wait(0.2):
            peak[0] = max(peak[0], run.server_rss())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    try:
        with OPENER.open(urllib.request.Request(href[1]), timeout=300) as response, open(archive, "wb") as f:
            status, kind = response.status, response.headers.get("Content-Type", "")
            while chunk := response.read(MIB):
                f.write(chunk)
    except urllib.error.HTTPError as error:
        raise Failed(f"?download=zip: status {error.code}: {error.read()[:200]!r}") from None
    finally:
        done.set()
        sampler.join()
    seconds, size = time.monotonic() - started, os.path.getsize(archive)
    findings.check(status == 200 and kind.split(";")[0].strip() == "application/zip", f"?download=zip: status {status}, Content-Type {kind!r}")
    findings.check(peak[0] < RSS_LIMIT, f"the server's resident memory reached {peak[0] / MIB:.0f} MiB (limit {RSS_LIMIT // MIB} MiB; "
                                         f"{before / MIB:.0f} MiB when the download began)")
    tested = subprocess.run(["unzip", "-tqq", archive], capture_output=True, text=True, timeout=1200)
    findings.check(tested.returncode == 0, f"unzip -t exited {tested.returncode}: {(tested.stdout + tested.stderr).strip()[-600:]}")
    sources = {}
    for folder, _, files in os.walk(run.path(ZIP)):
        for name in files:
            full = os.path.join(folder, name)
            sources[os.path.relpath(full, run.path(ZIP))] = full
    try:
        with zipfile.ZipFile(archive) as members:
            names = [info.filename for info in members.infolist() if not info.is_dir()]
            prefix = ZIP + "/" if names and all(n.startswith(ZIP + "/") for n in names) else ""
            counted = collections.Counter(n[len(prefix):] for n in names)
            findings.check(not any(n.startswith("/") or ".." in n.split("/") for n in names), f"unsafe member names: {names}")
            findings.check(set(counted) == set(sources), f"members {sorted(counted)} are not the files {sorted(sources)}"
                                                         " (a name not in UTF-8 flagged as such reads as cp437)")
            findings.check(all(n == 1 for n in counted.values()), f"members more than once: {[n for n, c in counted.items() if c > 1]}")
            for info in members.infolist():
                relative = info.filename[len(prefix):]
                if info.is_dir() or relative not in sources:
                    continue
                with members.open(info) as member, open(sources[relative], "rb") as source:
                    offset = 0
                    while True:
                        expected, got = source.read(MIB), member.read(MIB)
                        if expected != got:
                            findings.check(False, f"{relative}: differs from the source in the MiB at {offset}")
                            break
                        if not expected:
                            break
                        offset += len(expected)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError) as error:
        findings.check(False, f"Python's zipfile cannot read the archive: {error}")
    finally:
        os.remove(archive)
    findings.done()
    return f"{size / MIB:,.1f} MiB in {seconds:.1f} s ({size / MIB / max(seconds, 0.001):,.0f} MiB/s), peak server RSS {peak[0] / MIB:.1f} MiB ({before / MIB:.1f} MiB before)"


CHECKS = [check_folder_page, check_breadcrumbs, check_sorting, check_paging, check_previews, check_file_page, check_video, check_document_facts,
          check_other_clients,
          check_odd_names, check_phone, check_dark_mode, check_error_pages, check_csp, check_no_external_assets, check_download_all]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gateway", required=True, help="the built gateway binary")
    parser.add_argument("--out", required=True, help="folder for the screenshots and the server's log")
    parser.add_argument("--zip-bytes", type=int, default=5 * GIB, help="bytes of sparse files in the ZIP check (default 5 GiB; 0: none)")
    parser.add_argument("--only", help="run only the checks whose names contain one of these words (comma-separated: phone,zip)")
    args = parser.parse_args()
    checks = [c for c in CHECKS if not args.only or any(w.strip() and w.strip() in c.__name__ for w in args.only.split(","))]
    for tool in (args.gateway, CHROMIUM, CHROMEDRIVER, shutil.which("vips"), shutil.which("unzip"), shutil.which("truncate"), shutil.which("ffmpeg"),
                 shutil.which("exiftool"), shutil.which("rsvg-convert")):
        if not tool or not os.access(tool, os.X_OK):
            sys.exit(f"share_page.py: {tool or 'a tool (vips, unzip, truncate, ffmpeg, exiftool or rsvg-convert)'} is missing: "
                     "build gateway, run scripts/setup-deps.sh")
    # A SIGTERM (a test's time limit) ends the run through the clean-up below, as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(f"share_page.py: terminated"))
    run, failures, began = Run(args), [], time.monotonic()
    try:
        try:
            run.make_fixtures()
            run.start_server()
            run.make_links()
            run.start_browser()
        except Exception as error:
            detail = str(error) if isinstance(error, Failed) else traceback.format_exc()
            print(f"FAIL  setup: {detail}")
            return 1
        print(f"serving at {run.origin}; screenshots in {run.out}")
        for check in checks:
            name, started = check.__name__[len("check_"):].replace("_", " "), time.monotonic()
            try:
                detail = check(run)
                print(f"PASS  {name} ({time.monotonic() - started:.1f} s){': ' + detail if detail else ''}", flush=True)
            except Failed as failure:
                failures.append((name, str(failure)))
            except Exception as error:  # the browser or the server misbehaved: a failure too, with where
                failures.append((name, f"{type(error).__name__}: {str(error).strip()[:500]}\n{traceback.format_exc(limit=-3)}"))
            if failures and failures[-1][0] == name:
                print(f"FAIL  {name} ({time.monotonic() - started:.1f} s): {failures[-1][1]}", flush=True)
                if run.browser_alive():
                    run.shot(f"failed-{name.replace(' ', '-')}.png")
                else:
                    print("      (the browser is gone: starting another)")
                    try:
                        run.driver.quit()
                    except Exception:
                        pass
                    run.start_browser()
            if run.server.poll() is not None:
                failures.append(("server", f"gateway serve links exited {run.server.returncode}"))
                print(f"FAIL  server: exited {run.server.returncode}; the remaining checks are skipped")
                break
        print(f"\n{len(checks) - len(failures)} of {len(checks)} checks passed in {time.monotonic() - began:.0f} s")
        if failures:
            print("failed: " + ", ".join(name for name, _ in failures) + f" (screenshots and server.log in {run.out})")
            log = run.server_log_text().splitlines()
            print("server log, last lines:\n  " + "\n  ".join(log[-15:]))
        return 1 if failures else 0
    finally:
        run.clean_up()


if __name__ == "__main__":
    sys.exit(main())
