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
system_user=gatewayftp

case "$action" in
start)
    port=$3
    mkdir -p "$dir/data"
    chmod 755 "$state" "$dir"
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
    # mod_sftp refuses a host key that others can read.
    rm -f "$dir/host_ecdsa" "$dir/host_ecdsa.pub"
    ssh-keygen -q -t ecdsa -b 256 -m PEM -N "" -f "$dir/host_ecdsa"
    chmod 600 "$dir/host_ecdsa"
    printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$dir/host_ecdsa.pub")" > "$dir/known_hosts"
    root=${GATEWAY_PROFTPD_ROOT:-/opt/gateway-test/proftpd}  # unpacked by scripts/setup-deps.sh
    modules=$root/usr/lib/proftpd
    [ -f "$modules/mod_sftp.so" ] || { echo "mod_sftp.so is missing under $modules: run scripts/setup-deps.sh" >&2; exit 1; }
    cat > "$dir/proftpd.conf" <<CONF
ModulePath $modules
ModuleControlsACLs insmod,rmmod allow user root
LoadModule mod_sftp.c
ServerName "gateway test proftpd sftp"
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
SFTPEngine on
SFTPLog $dir/sftp.log
SFTPHostKey $dir/host_ecdsa
SFTPAuthMethods password
CONF
    nohup "$root/usr/sbin/proftpd" --nodaemon --config "$dir/proftpd.conf" > "$dir/server.out" 2>&1 &
    echo $! > "$dir/pid"
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
