#!/usr/bin/env bash
# Starts (or stops) ProFTPD's mod_sftp (Debian's proftpd-mod-crypto, unpacked beside proftpd-core
# by setup-deps.sh) on 127.0.0.1 for the tests: an SFTP server that is not OpenSSH, with the
# extensions OpenSSH lacks: `check-file` (hashes computed by the server) and `copy-file`.
#   proftpd-sftp.sh start STATE_DIR PORT   -> prints the SFTP URL
#   proftpd-sftp.sh stop STATE_DIR
# One virtual user, "gateway" (password "gateway-test", test-only), mapped to the system user
# "gatewayftp" and jailed in STATE_DIR/proftpd-sftp/data; an ECDSA host key of its own, written
# to STATE_DIR/proftpd-sftp/known_hosts. Everything else is mod_sftp's default.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
dir="$state/proftpd-sftp"

case "$action" in
start)
    port=$3
    mkdir -p "$dir"
    [ -f "$(proftpd_root)/usr/lib/proftpd/mod_sftp.so" ] || { echo "mod_sftp.so is missing under $(proftpd_root): run scripts/setup-deps.sh" >&2; exit 1; }
    # mod_sftp refuses a host key that others can read.
    rm -f "$dir/host_ecdsa" "$dir/host_ecdsa.pub"
    ssh-keygen -q -t ecdsa -b 256 -m PEM -N "" -f "$dir/host_ecdsa"
    chmod 600 "$dir/host_ecdsa"
    printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$dir/host_ecdsa.pub")" > "$dir/known_hosts"
    { proftpd_prepare "$dir" "$port" "gateway test proftpd sftp"; cat <<CONF
LoadModule mod_sftp.c
SFTPEngine on
SFTPLog $dir/sftp.log
SFTPHostKey $dir/host_ecdsa
SFTPAuthMethods password
CONF
    } > "$dir/proftpd.conf"
    proftpd_start "$dir"
    wait_for_ssh "$port" "sftp://127.0.0.1:$port/" proftpd-sftp "$dir/server.out" "$dir/system.log" "$dir/sftp.log"
    ;;
stop)
    stop_pid_file "$dir/pid"
    ;;
*)
    echo "usage: $0 start STATE_DIR PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
