#!/usr/bin/env bash
# Starts (or stops) pyftpdlib (PyPI) on 127.0.0.1: the second, different FTP server of the tests,
# the one with MLSD, MLST, MFMT and UTF8.
#   pyftpdlib.sh start STATE_DIR PORT   -> prints the FTP URL
#   pyftpdlib.sh stop STATE_DIR
set -euo pipefail
action=$1
state=$2
dir="$state/pyftpdlib"

case "$action" in
start)
    port=$3
    mkdir -p "$dir/data"
    nohup python3 "$(dirname "$0")/pyftpdlib-server.py" "$port" "$dir/data" "$dir/server.log" > "$dir/server.out" 2>&1 &
    echo $! > "$dir/pid"
    for _ in $(seq 1 100); do
        if python3 -c "import socket,sys; s=socket.create_connection(('127.0.0.1',$port),1); sys.exit(0 if s.recv(100).startswith(b'220') else 1)" 2>/dev/null; then
            echo "ftp://127.0.0.1:$port/"
            exit 0
        fi
        sleep 0.1
    done
    echo "pyftpdlib did not start; see $dir/server.out" >&2
    cat "$dir/server.out" >&2 || true
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
