# Shared by the server scripts: wait until a WebDAV server answers PROPFIND, then print its URL.
#   wait_for_webdav PROBE_URL PRINT_URL NAME LOG_FILE ATTEMPTS (tenths of a second)
wait_for_webdav() {
    local probe=$1 url=$2 name=$3 log=$4 attempts=$5
    for _ in $(seq 1 "$attempts"); do
        if curl -s -o /dev/null -u gateway:gateway-test -X PROPFIND -H "Depth: 0" "$probe"; then
            echo "$url"
            return 0
        fi
        sleep 0.1
    done
    echo "$name did not start; see $log" >&2
    cat "$log" >&2 || true
    return 1
}

# Shared by the FTP server scripts: wait until an FTP server greets (220), then print its URL.
#   wait_for_ftp PORT NAME LOG_FILE...
wait_for_ftp() {
    local port=$1 name=$2
    shift 2
    for _ in $(seq 1 100); do
        if python3 -c "import socket,sys; s=socket.create_connection(('127.0.0.1',$port),1); sys.exit(0 if s.recv(100).startswith(b'220') else 1)" 2>/dev/null; then
            echo "ftp://127.0.0.1:$port/"
            return 0
        fi
        sleep 0.1
    done
    echo "$name did not start; see $*" >&2
    cat "$@" >&2 2>/dev/null || true
    return 1
}

# Stops the server whose pid is in PID_FILE, if it runs.
stop_pid_file() {
    if [ -f "$1" ]; then kill "$(cat "$1")" 2>/dev/null || true; rm -f "$1"; fi
}
