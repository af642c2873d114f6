#!/usr/bin/env bash
# Starts (or stops) ProFTPD (Debian's proftpd-core, unpacked by setup-deps.sh) on 127.0.0.1 for the tests: the third FTP test
# server, and the one with the extensions the others lack: server-side copy (mod_copy's
# `SITE CPFR`/`SITE CPTO`, announced as `SITE COPY` in FEAT) and hashes (mod_digest's `HASH`,
# `XSHA1`, `XMD5`, ...), besides MLSD/MLST and MFMT.
#   proftpd.sh start STATE_DIR PORT   -> prints the FTP URL
#   proftpd.sh stop STATE_DIR
# One virtual user, "gateway" (password "gateway-test", test-only), from an AuthUserFile of our own,
# mapped to the system user "gatewayftp" that scripts/servers/vsftpd.sh creates; jailed in its folder.
# GATEWAY_PROFTPD_LOG=1 logs every command and reply to STATE_DIR/proftpd/protocol.log.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
dir="$state/proftpd"
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
    root=${GATEWAY_PROFTPD_ROOT:-/opt/gateway-test/proftpd}  # unpacked by scripts/setup-deps.sh
    modules=$root/usr/lib/proftpd
    load=""
    for module in mod_copy mod_digest mod_site_misc; do
        [ -f "$modules/$module.so" ] && load+="LoadModule $module.c"$'\n'
    done
    protocol_log=""
    if [ "${GATEWAY_PROFTPD_LOG:-0}" = 1 ]; then
        protocol_log="LogFormat protocol \"%{%H:%M:%S}t %a:%{remote-port} %m %J -> %s %S\"
ExtendedLog $dir/protocol.log ALL protocol"
    fi
    cat > "$dir/proftpd.conf" <<CONF
ModulePath $modules
ModuleControlsACLs insmod,rmmod allow user root
$load
ServerName "gateway test proftpd"
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
AllowStoreRestart on
AllowRetrieveRestart on
TimesGMT on
MaxLoginAttempts 3
TimeoutIdle 600
<IfModule mod_digest.c>
  # mod_digest caches digests by path, size and modification time (to the second): a file replaced
  # by one of the same size within the same second (or given the old time by MFMT) keeps its old
  # digest, which is exactly the case --checksum exists for. See docs/backends/ftp.md.
  DigestCache off
</IfModule>
$protocol_log
CONF
    nohup "$root/usr/sbin/proftpd" --nodaemon --config "$dir/proftpd.conf" > "$dir/server.out" 2>&1 &
    echo $! > "$dir/pid"
    wait_for_ftp "$port" proftpd "$dir/server.out" "$dir/system.log"
    ;;
stop)
    stop_pid_file "$dir/pid"
    ;;
*)
    echo "usage: $0 start STATE_DIR PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
