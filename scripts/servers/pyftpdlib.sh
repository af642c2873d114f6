#!/usr/bin/env bash
# Starts (or stops) pyftpdlib (PyPI) on 127.0.0.1: the second, different FTP server of the tests,
# the one with MLSD, MLST, MFMT and UTF8.
#   pyftpdlib.sh start STATE_DIR PORT   -> prints the FTP URL
#   pyftpdlib.sh stop STATE_DIR
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
dir="$state/pyftpdlib"

case "$action" in
start)
    port=$3
    mkdir -p "$dir/data"
    nohup python3 "$(dirname "$0")/pyftpdlib-server.py" "$port" "$dir/data" "$dir/server.log" > "$dir/server.out" 2>&1 &
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
