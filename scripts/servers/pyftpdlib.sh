#!/usr/bin/env bash
# Starts (or stops) pyftpdlib (PyPI) on 127.0.0.1: the second, different FTP server of the tests,
# the one with MLSD, MLST, MFMT and UTF8.
#   pyftpdlib.sh start STATE_DIR PORT [legacy]   -> prints the FTP URL
#   pyftpdlib.sh stop STATE_DIR [legacy]
# "legacy" runs a second instance (STATE_DIR/pyftpdlib-legacy) without MLSD/MLST that refuses LIST
# options, as old servers do.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
mode=""
case "$action:${3:-}:${4:-}" in start:*:legacy | stop:legacy:*) mode=legacy ;; esac
dir="$state/pyftpdlib${mode:+-$mode}"

case "$action" in
start)
    port=$3
    mkdir -p "$dir/data"
    nohup python3 "$(dirname "$0")/pyftpdlib-server.py" "$port" "$dir/data" "$dir/server.log" $mode > "$dir/server.out" 2>&1 &
    echo $! > "$dir/pid"
    wait_for_ftp "$port" pyftpdlib "$dir/server.out"
    ;;
stop)
    stop_pid_file "$dir/pid"
    ;;
*)
    echo "usage: $0 start STATE_DIR PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
