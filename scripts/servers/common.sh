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

# Shared by proftpd.sh and proftpd-sftp.sh (Debian's ProFTPD, unpacked under
# GATEWAY_PROFTPD_ROOT by setup-deps.sh): the virtual user "gateway" (password "gateway-test",
# test-only) from an AuthUserFile of DIR, mapped to the system user "gatewayftp" and jailed in
# DIR/data; prints the server-wide part of DIR/proftpd.conf (one standalone server on
# 127.0.0.1:PORT named NAME, logs in DIR) for the caller to complete.
#   proftpd_prepare DIR PORT NAME
proftpd_prepare() {
    local dir=$1 port=$2 name=$3 system_user=gatewayftp uid gid hash
    mkdir -p "$dir/data"
    chmod 755 "$(dirname "$dir")" "$dir"
    if ! id "$system_user" >/dev/null 2>&1; then
        useradd --system --no-create-home --home-dir / --shell /usr/sbin/nologin "$system_user"
    fi
    uid=$(id -u "$system_user")
    gid=$(id -g "$system_user")
    chown "$system_user" "$dir/data"
    hash=$(openssl passwd -5 gateway-test)
    printf 'gateway:%s:%s:%s::%s:/bin/false\n' "$hash" "$uid" "$gid" "$dir/data" > "$dir/passwd"
    printf 'gateway:x:%s:\n' "$gid" > "$dir/group"
    chmod 600 "$dir/passwd" "$dir/group"
    cat <<CONF
ModulePath $(proftpd_root)/usr/lib/proftpd
ModuleControlsACLs insmod,rmmod allow user root
ServerName "$name"
ServerType standalone
DefaultServer on
Port $port
DefaultAddress 127.0.0.1
SocketBindTight on
UseIPv6 off
User nobody
Group nogroup
MaxInstances 300
PidFile $dir/proftpd.pid
ScoreboardFile $dir/scoreboard
DelayTable none
WtmpLog off
SystemLog $dir/system.log
TransferLog none
UseReverseDNS off
AuthOrder mod_auth_file.c
AuthUserFile $dir/passwd
AuthGroupFile $dir/group
RequireValidShell off
DefaultRoot ~
AllowOverwrite on
MaxLoginAttempts 3
TimeoutIdle 600
CONF
}

# Where setup-deps.sh unpacked ProFTPD.
proftpd_root() { echo "${GATEWAY_PROFTPD_ROOT:-/opt/gateway-test/proftpd}"; }

# Runs ProFTPD in the foreground with DIR/proftpd.conf, in the background of this script, its pid in DIR/pid.
proftpd_start() {
    local dir=$1
    nohup "$(proftpd_root)/usr/sbin/proftpd" --nodaemon --config "$dir/proftpd.conf" > "$dir/server.out" 2>&1 &
    echo $! > "$dir/pid"
}
