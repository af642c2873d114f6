#!/usr/bin/env bash
# The README's demo: builds the `gateway` CLI in release mode and shows what it does, first on the
# built-in default configuration (no config file: bare paths are the local file system), then a
# copy local -> FTP (vsftpd) -> WebDAV (Apache httpd + mod_dav) -> local on servers on 127.0.0.1
# started by scripts/test-servers.sh like the tests' servers, in a fresh temporary folder that is
# removed afterwards, servers stopped.
# Idempotent; needs Debian with Swift 6 installed.
#
# Set GATEWAY_DEMO_SKIP_BUILD=1 to skip the build and use the existing .build/release/gateway, or
# GATEWAY_DEMO_BIN=PATH to run a gateway binary built elsewhere (scripts/test.sh runs the demo
# first with its debug build, so that what the demo leaves behind is tested too).
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }

step "system packages and toolchain"
bash scripts/setup-deps.sh

if [ -n "${GATEWAY_DEMO_BIN:-}" ]; then
    step "build skipped (GATEWAY_DEMO_BIN=$GATEWAY_DEMO_BIN)"
    gateway_bin="$GATEWAY_DEMO_BIN"
elif [ "${GATEWAY_DEMO_SKIP_BUILD:-0}" = "1" ]; then
    step "build skipped (GATEWAY_DEMO_SKIP_BUILD=1)"
    gateway_bin="$(pwd)/.build/release/gateway"
else
    # The Swift runtime and Foundation linked in: the binary starts in ~20 ms instead of ~30 ms.
    step "build: swift build -c release --product gateway --static-swift-stdlib"
    swift build -c release --product gateway --static-swift-stdlib
    gateway_bin="$(swift build -c release --show-bin-path)/gateway"
fi
[ -x "$gateway_bin" ] || { echo "gateway binary not found at $gateway_bin" >&2; exit 1; }

# A fresh work area, removed on exit. Its config-home stays empty, so no user config is picked up.
# The demo's WebDAV servers keep their state in $work/servers and are stopped on exit too.
work=$(mktemp -d "${TMPDIR:-/tmp}/gateway-demo.XXXXXX")
server_state="$work/servers"
servers_started=0
cleanup() {
    if [ "$servers_started" = "1" ]; then
        GATEWAY_TEST_STATE="$server_state" bash scripts/test-servers.sh stop >/dev/null 2>&1 || true
        # Apache exits shortly after `-k stop`: wait for this demo's servers to be gone.
        for _ in $(seq 1 50); do
            pgrep -f -- "$server_state/" >/dev/null || break
            sleep 0.1
        done
    fi
    rm -rf -- "$work"
}
trap cleanup EXIT
config_home="$work/config-home"
demo="$work/demo"
mkdir -p "$config_home" "$demo"

# No environment-defined remotes either: the demo runs on the built-in default configuration.
while IFS= read -r variable; do
    case "$variable" in GATEWAY_REMOTE_*) unset "$variable" ;; esac
done < <(compgen -e)

gateway() { env -u GATEWAY_CONFIG XDG_CONFIG_HOME="$config_home" "$gateway_bin" "$@"; }

step "gateway --version; gateway config validate (no file: built-in default)"
gateway --version
gateway config validate

step "a source tree with awkward names in $demo/source"
src="$demo/source"
mkdir -p "$src/empty folder" "$src/sub dir/deeper"
printf 'Naïve café: crème brûlée for everyone.\n' > "$src/naïve café.txt"
printf 'hash\n' > "$src/tag #1.txt"
printf 'percent\n' > "$src/100% done.txt"
printf 'question\n' > "$src/why?.txt"
printf 'hidden\n' > "$src/.hidden"
: > "$src/zero-length.bin"
head -c $((5 * 1024 * 1024)) /dev/urandom > "$src/sub dir/deeper/random 5MiB.bin"
echo "created $(find "$src" | wc -l) items"

step "gateway ls -lR SOURCE"
gateway ls -lR "$src"

step "gateway copy SOURCE COPY (a whole folder)"
gateway copy "$src" "$demo/copy"

step "gateway ls --json COPY"
gateway ls --json "$demo/copy"

step "gateway stat --json COPY/naïve café.txt"
gateway stat --json "$demo/copy/naïve café.txt"

step "gateway cat --offset 0 --count 20 COPY/naïve café.txt (first 20 bytes)"
gateway cat --offset 0 --count 20 "$demo/copy/naïve café.txt"
echo

step "rcat: printf ... | gateway rcat piped.txt, then gateway cat piped.txt"
printf 'written from a pipe at %s\n' "$(date -u +%FT%TZ)" | gateway rcat "$demo/piped.txt"
gateway cat "$demo/piped.txt"

step "gateway mkdir (nested, parents created)"
gateway mkdir "$demo/made/a/b c/d"
gateway ls -R "$demo/made"

step "gateway move piped.txt into the nested folder"
gateway move "$demo/piped.txt" "$demo/made/a/b c/d/"
gateway ls -R "$demo/made"

step "gateway rm -r the nested folders"
gateway rm -r "$demo/made"
gateway ls "$demo"

step "gateway about DEMO / gateway about --json DEMO"
gateway about "$demo"
gateway about --json "$demo"

step "an error: gateway stat of a missing path (one line on stderr, exit code 1)"
status=0
gateway stat "$demo/does-not-exist.txt" 2>&1 || status=$?
echo "exit code: $status"
if [ "$status" -ne 1 ]; then
    echo "expected exit code 1, got $status" >&2
    exit 1
fi

step "byte-equality check: diff -r SOURCE COPY"
diff -r "$src" "$demo/copy"
echo "source and copy are identical"

# --- FTP and WebDAV: the same tree through vsftpd and Apache httpd + mod_dav on 127.0.0.1 ----
step "FTP and WebDAV test servers on 127.0.0.1 (scripts/test-servers.sh start)"
# Apache's workers run as www-data and keep their files below $work: let them through (not read).
chmod 711 "$work"
servers_started=1
GATEWAY_TEST_STATE="$server_state" bash scripts/test-servers.sh start >/dev/null
# shellcheck disable=SC1091
source "$server_state/env"
echo "vsftpd (FTP):   $GATEWAY_TEST_FTP_VSFTPD_URL"
echo "Apache mod_dav: $GATEWAY_TEST_WEBDAV_APACHE_URL"

# Passwords stay out of the config file: the file names environment variables holding them.
export GATEWAY_DEMO_DAV_PASSWORD="$GATEWAY_TEST_WEBDAV_PASSWORD"
export GATEWAY_DEMO_FTP_PASSWORD="$GATEWAY_TEST_FTP_PASSWORD"
dav_config="$work/config.json"
cat > "$dav_config" <<JSON
{
  "remotes": {
    "ftp": {
      "type": "ftp",
      "url": "$GATEWAY_TEST_FTP_VSFTPD_URL",
      "user": "$GATEWAY_TEST_FTP_VSFTPD_USER",
      "password_env": "GATEWAY_DEMO_FTP_PASSWORD"
    },
    "dav": {
      "type": "webdav",
      "url": "$GATEWAY_TEST_WEBDAV_APACHE_URL",
      "user": "$GATEWAY_TEST_WEBDAV_USER",
      "password_env": "GATEWAY_DEMO_DAV_PASSWORD"
    }
  }
}
JSON

step "the config file (no password in it), gateway --config CFG config validate"
cat "$dav_config"
gateway --config "$dav_config" config validate

step "gateway --config CFG copy SOURCE ftp:demo (upload: STOR to a temporary name, then RNFR/RNTO)"
gateway --config "$dav_config" copy "$src" ftp:demo

step "gateway --config CFG ls -lR ftp:demo"
gateway --config "$dav_config" ls -lR ftp:demo

step "gateway --config CFG copy ftp:demo dav:demo (FTP download streamed into a WebDAV upload)"
gateway --config "$dav_config" copy ftp:demo dav:demo

step "gateway --config CFG ls -lR dav:demo"
gateway --config "$dav_config" ls -lR dav:demo

for remote in ftp dav; do
    step "gateway --config CFG about $remote: (no quota reported: one line on stderr, exit code 1)"
    status=0
    gateway --config "$dav_config" about "$remote:" 2>&1 || status=$?
    echo "exit code: $status"
    if [ "$status" -ne 1 ]; then
        echo "expected exit code 1, got $status" >&2
        exit 1
    fi
done

step "gateway --config CFG copy dav:demo BACK (download)"
gateway --config "$dav_config" copy dav:demo "$demo/back"

step "byte-equality check: diff -r SOURCE BACK"
diff -r "$src" "$demo/back"
echo "source and the copy back (local -> FTP -> WebDAV -> local) are identical"

step "gateway --config CFG check SOURCE ftp:demo (exit 0: nothing differs)"
gateway --config "$dav_config" check "$src" ftp:demo


printf '\ndemo finished OK\n'
