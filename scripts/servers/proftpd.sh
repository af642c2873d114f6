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

case "$action" in
start)
    port=$3
    mkdir -p "$dir"
    modules=$(proftpd_root)/usr/lib/proftpd
    load=""
    for module in mod_copy mod_digest mod_site_misc; do
        [ -f "$modules/$module.so" ] && load+="LoadModule $module.c"$'\n'
    done
    protocol_log=""
    if [ "${GATEWAY_PROFTPD_LOG:-0}" = 1 ]; then
        protocol_log="LogFormat protocol \"%{%H:%M:%S}t %a:%{remote-port} %m %J -> %s %S\"
ExtendedLog $dir/protocol.log ALL protocol"
    fi
    { proftpd_prepare "$dir" "$port" "gateway test proftpd"; cat <<CONF
$load
AllowStoreRestart on
AllowRetrieveRestart on
TimesGMT on
<IfModule mod_digest.c>
  # mod_digest caches digests by path, size and modification time (to the second): a file replaced
  # by one of the same size within the same second (or given the old time by MFMT) keeps its old
  # digest, which is exactly the case --checksum exists for. See docs/backends/ftp.md.
  DigestCache off
</IfModule>
$protocol_log
CONF
    } > "$dir/proftpd.conf"
    proftpd_start "$dir"
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
