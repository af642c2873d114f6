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

# Shared by the SFTP server scripts: wait until an SSH server sends its identification string
# ("SSH-2.0-..."), then print PRINT (the URL).
#   wait_for_ssh PORT PRINT NAME LOG_FILE...
wait_for_ssh() {
    local port=$1 print=$2 name=$3 banner
    shift 3
    for _ in $(seq 1 200); do
        if { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
            banner=""
            IFS= read -r -t 2 banner <&3 || true
            exec 3<&- 3>&-
            if [[ $banner == SSH-2.0-* ]]; then
                echo "$print"
                return 0
            fi
        fi
        sleep 0.05
    done
    echo "$name did not start on port $port; see $*" >&2
    cat "$@" >&2 2>/dev/null || true
    return 1
}

# Prints the pids of every descendant of PID (children first-level first, then theirs).
descendant_pids() {
    local child
    for child in $(pgrep -P "$1" 2>/dev/null); do
        echo "$child"
        descendant_pids "$child"
    done
}

# True if one of PIDS still runs (a zombie, dead but not yet reaped, does not count).
any_alive() {
    local pid state
    for pid in "$@"; do
        state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null) || continue
        [ -n "$state" ] && [ "$state" != Z ] && return 0
    done
    return 1
}

# Stops the server whose pid is in PID_FILE, if it runs and its command name is COMM, together with
# every process it started (sshd's per-connection processes and their sftp-server outlive the
# listener otherwise), and waits until they are gone (SIGKILL after 3 seconds). COMM may be a glob.
#   stop_pid_tree PID_FILE COMM
stop_pid_tree() {
    local file=$1 comm=$2 pid pids
    [ -f "$file" ] || return 0
    pid=$(cat "$file")
    rm -f "$file"
    # A stale pid file whose pid now belongs to another program is left alone.
    # shellcheck disable=SC2053
    [ -n "$pid" ] && [[ $(cat "/proc/$pid/comm" 2>/dev/null) == $comm ]] || return 0
    kill -STOP "$pid" 2>/dev/null || true  # no new connections while the tree is collected
    pids="$pid $(descendant_pids "$pid" | tr '\n' ' ')"
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    kill -CONT "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do
        # shellcheck disable=SC2086
        any_alive $pids || return 0
        sleep 0.05
    done
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
}
