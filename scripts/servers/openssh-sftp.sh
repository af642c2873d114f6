#!/usr/bin/env bash
# Starts (or stops) Debian's OpenSSH server (package openssh-server) on 127.0.0.1 for the SFTP
# tests: its own sshd with its own config, host keys and pid file in STATE_DIR/openssh (the
# system's sshd, its port 22, /etc/ssh/sshd_config and /etc/ssh host keys are never used or
# touched), at its defaults otherwise: Debian's `Subsystem sftp /usr/lib/openssh/sftp-server`
# (posix-rename@openssh.com, statvfs@openssh.com, limits@openssh.com, copy-data, ...), default
# ciphers, key exchanges and host key algorithms.
#   openssh-sftp.sh start STATE_DIR PORT   -> prints "sftp://127.0.0.1:PORT/ABSOLUTE/DATA/FOLDER"
#   openssh-sftp.sh stop STATE_DIR
# Logs in as the system user "gatewaysftp" (password "gateway-test", created here, shell /bin/sh so
# an exec channel can run `sha256sum`, home "/" so instances never depend on each other's folders),
# by password or by one of the client keys in STATE_DIR/openssh/client:
#   id_ed25519, id_ecdsa (P-256), id_rsa (2048 bits): no passphrase; id_ed25519_pass: passphrase
#   "gateway-pass" (all in OpenSSH's own private key format, as ssh-keygen writes them).
# The remote root of the tests is STATE_DIR/openssh/data (an absolute path; owned by gatewaysftp).
# Also written: known_hosts ("[127.0.0.1]:PORT type key", one line per host key), known_hosts_hashed
# (the same, hashed by ssh-keygen -H), host_ed25519.fingerprint (SHA256:... of the ed25519 host key),
# sshd.log (sshd's log; GATEWAY_SSHD_LOG=1 makes it DEBUG1). The system ssh client works with
#   ssh -o UserKnownHostsFile=STATE_DIR/openssh/known_hosts -i STATE_DIR/openssh/client/id_rsa \
#       -p PORT gatewaysftp@127.0.0.1
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
dir="$state/openssh"
user=gatewaysftp

# Makes KEY_FILE (and KEY_FILE.pub) with ssh-keygen unless both are there: ssh-keygen ARGS...
make_key() {
    local file=$1
    shift
    [ -f "$file" ] && [ -f "$file.pub" ] && return 0
    rm -f "$file" "$file.pub"
    ssh-keygen -q "$@" -f "$file" >/dev/null
}

case "$action" in
start)
    port=$3
    [ -x /usr/sbin/sshd ] || { echo "/usr/sbin/sshd is missing: run scripts/setup-deps.sh (openssh-server)" >&2; exit 1; }
    stop_pid_tree "$dir/sshd.pid" sshd
    mkdir -p "$dir/data" "$dir/client" "$dir/authorized_keys"
    dir=$(cd "$dir" && pwd)
    chmod 755 "$state" "$dir" "$dir/authorized_keys"
    # sshd's privilege separation directory (Debian's systemd unit and init script make it; nothing
    # does here). It must belong to root and be writable by root only.
    mkdir -p /run/sshd
    chmod 755 /run/sshd
    if id "$user" >/dev/null 2>&1; then
        entry=$(getent passwd "$user")
        [ "$(echo "$entry" | cut -d: -f6)" = / ] || usermod --home / "$user" >/dev/null
        [ "$(echo "$entry" | cut -d: -f7)" = /bin/sh ] || usermod --shell /bin/sh "$user" >/dev/null
    else
        useradd --system --no-create-home --home-dir / --shell /bin/sh "$user"
    fi
    echo "$user:gateway-test" | chpasswd
    chown "$user:" "$dir/data"
    # Host keys, and the client keys. The RSA ones are 2048 bits, made side by side: ssh-keygen's
    # default, 3072, takes 0.5 to 2 seconds a key here (2048: 0.1 to 0.6), on every start.
    make_key "$dir/ssh_host_rsa_key" -t rsa -b 2048 -N '' -C '' &
    host_rsa=$!
    make_key "$dir/client/id_rsa" -t rsa -b 2048 -N '' -C "$user rsa" &
    client_rsa=$!
    make_key "$dir/ssh_host_ed25519_key" -t ed25519 -N '' -C ''
    make_key "$dir/ssh_host_ecdsa_key" -t ecdsa -b 256 -N '' -C ''
    make_key "$dir/client/id_ed25519" -t ed25519 -N '' -C "$user ed25519"
    make_key "$dir/client/id_ed25519_pass" -t ed25519 -N gateway-pass -C "$user ed25519 with passphrase"
    make_key "$dir/client/id_ecdsa" -t ecdsa -b 256 -N '' -C "$user ecdsa"
    wait "$host_rsa" "$client_rsa"
    cat "$dir"/client/id_ed25519.pub "$dir"/client/id_ed25519_pass.pub "$dir"/client/id_ecdsa.pub \
        "$dir"/client/id_rsa.pub > "$dir/authorized_keys/$user"
    chmod 644 "$dir/authorized_keys/$user"
    : > "$dir/known_hosts"
    for type in ed25519 ecdsa rsa; do
        read -r key_type key_data _ < "$dir/ssh_host_${type}_key.pub"
        echo "[127.0.0.1]:$port $key_type $key_data" >> "$dir/known_hosts"
    done
    cp "$dir/known_hosts" "$dir/known_hosts_hashed"
    ssh-keygen -q -H -f "$dir/known_hosts_hashed" >/dev/null 2>&1
    rm -f "$dir/known_hosts_hashed.old"
    ssh-keygen -l -E sha256 -f "$dir/ssh_host_ed25519_key.pub" | cut -d' ' -f2 > "$dir/host_ed25519.fingerprint"
    log_level=INFO
    [ "${GATEWAY_SSHD_LOG:-0}" = 1 ] && log_level=DEBUG1
    # StrictModes no: with it, sshd refuses an AuthorizedKeysFile below a group- or world-writable
    # folder ("bad ownership or modes for directory /tmp"), and the state is in /tmp.
    # UsePAM no: sshd checks the password against /etc/shadow itself (Debian's default, UsePAM yes,
    # would run the machine's /etc/pam.d/sshd stack: loginuid, limits, motd, ... for every login,
    # key logins included); the methods offered are the same: publickey and password.
    # MaxStartups: the tests open many connections at once; the default (10:30:100) starts dropping
    # unauthenticated ones at random past 10.
    cat > "$dir/sshd_config" <<CONF
# Test sshd of the gateway (scripts/servers/openssh-sftp.sh); not the system's.
Port $port
ListenAddress 127.0.0.1
HostKey $dir/ssh_host_ed25519_key
HostKey $dir/ssh_host_ecdsa_key
HostKey $dir/ssh_host_rsa_key
PidFile $dir/sshd.pid
LogLevel $log_level
AllowUsers $user
AuthorizedKeysFile $dir/authorized_keys/%u
StrictModes no
PasswordAuthentication yes
KbdInteractiveAuthentication no
UsePAM no
MaxStartups 100:30:200
X11Forwarding no
PrintMotd no
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
CONF
    /usr/sbin/sshd -t -f "$dir/sshd_config" 2> "$dir/sshd.log" || { cat "$dir/sshd.log" >&2; exit 1; }
    nohup /usr/sbin/sshd -D -E "$dir/sshd.log" -f "$dir/sshd_config" > /dev/null 2>&1 &
    echo $! > "$dir/sshd.pid"  # sshd writes the same pid there itself once it listens
    wait_for_ssh "$port" "sftp://127.0.0.1:$port$dir/data" sshd "$dir/sshd.log"
    ;;
stop)
    stop_pid_tree "$dir/sshd.pid" sshd
    ;;
*)
    echo "usage: $0 start STATE_DIR PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
