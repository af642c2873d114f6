#!/usr/bin/env bash
# Starts (or stops) an AsyncSSH (PyPI) SFTP server on 127.0.0.1 for the tests: the third, different
# SFTP server, plain SFTP version 3 without OpenSSH's extensions (see asyncssh-sftp-server.py),
# chrooted to STATE_DIR/asyncssh-sftp/data, which the client sees as "/".
#   asyncssh-sftp.sh start STATE_DIR PORT   -> prints "sftp://127.0.0.1:PORT/"
#   asyncssh-sftp.sh stop STATE_DIR
# Password only: user "gateway", password "gateway-test" (test-only credentials). Host key:
# STATE_DIR/asyncssh-sftp/ssh_host_ed25519_key, in STATE_DIR/asyncssh-sftp/known_hosts as
# "[127.0.0.1]:PORT ssh-ed25519 ...". Errors go to STATE_DIR/asyncssh-sftp/server.log
# (GATEWAY_ASYNCSSH_LOG=1: every SFTP request too).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
dir="$state/asyncssh-sftp"

case "$action" in
start)
    port=$3
    stop_pid_tree "$dir/pid" 'python3*'
    mkdir -p "$dir/data"
    dir=$(cd "$dir" && pwd)
    key="$dir/ssh_host_ed25519_key"
    [ -f "$key" ] && [ -f "$key.pub" ] || { rm -f "$key" "$key.pub"; ssh-keygen -q -t ed25519 -N '' -C '' -f "$key" >/dev/null; }
    read -r key_type key_data _ < "$key.pub"
    echo "[127.0.0.1]:$port $key_type $key_data" > "$dir/known_hosts"
    : > "$dir/server.log"
    nohup python3 "$(dirname "$0")/asyncssh-sftp-server.py" "$port" "$dir/data" "$key" "$dir/server.log" > "$dir/server.out" 2>&1 &
    echo $! > "$dir/pid"
    wait_for_ssh "$port" "sftp://127.0.0.1:$port/" "asyncssh SFTP server" "$dir/server.out" "$dir/server.log"
    ;;
stop)
    stop_pid_tree "$dir/pid" 'python3*'
    ;;
*)
    echo "usage: $0 start STATE_DIR PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
