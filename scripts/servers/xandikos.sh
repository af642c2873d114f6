#!/usr/bin/env bash
# Starts (or stops) Xandikos (PyPI) on 127.0.0.1: a WebDAV server with RFC 6578 sync-collection
# reports, at its defaults (no authentication on loopback; sync level 1 only).
#   xandikos.sh start STATE_DIR PORT   -> prints the URL of an empty collection
#   xandikos.sh stop STATE_DIR
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
dir="$state/xandikos"

case "$action" in
start)
    port=$3
    mkdir -p "$dir/data" "$dir/state"
    nohup xandikos serve -d "$dir/data" --state-dir "$dir/state" --autocreate -l 127.0.0.1 -p "$port" > "$dir/server.log" 2>&1 &
    echo $! > "$dir/pid"
    base="http://127.0.0.1:$port/user/"
    wait_for_webdav "$base" "$base" xandikos "$dir/server.log" 150 >/dev/null
    # A plain collection for the tests (the principal's home holds calendars and contacts).
    curl -sf -o /dev/null -X MKCOL "${base}files/" || { echo "xandikos: MKCOL files/ failed" >&2; exit 1; }
    echo "${base}files/"
    ;;
stop)
    stop_pid_file "$dir/pid"
    ;;
*)
    echo "usage: $0 start STATE_DIR PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
