#!/usr/bin/env bash
# Starts (or stops) vsftpd (Debian) on 127.0.0.1 for the tests, the demo and the benchmark: two
# instances sharing one folder,
#   plain FTP                      (no chroot: the login folder is an absolute path on the server)
#   explicit FTPS (AUTH TLS)       (TLS required for login and data, require_ssl_reuse=YES,
#                                   self-signed certificate for 127.0.0.1 in STATE_DIR/vsftpd/tls/cert.pem)
#   implicit FTPS                  (TLS from the first byte, same certificate and rules)
#   vsftpd.sh start STATE_DIR PLAIN_PORT TLS_PORT IMPLICIT_PORT
#       -> prints "ftp://127.0.0.1:PLAIN_PORT/ ftp://127.0.0.1:TLS_PORT/ ftps://127.0.0.1:IMPLICIT_PORT/"
#   vsftpd.sh stop STATE_DIR
# Logs in as the system user "gatewayftp" (password "gateway-test", created here, no shell) through
# a PAM service of our own that checks only the password.
set -euo pipefail
action=$1
state=$2
dir="$state/vsftpd"
user=gatewayftp

case "$action" in
start)
    plain_port=$3
    tls_port=$4
    implicit_port=$5
    mkdir -p "$dir/data" "$dir/tls" "$dir/empty"
    chmod 755 "$state" "$dir"
    # The user's home is "/", which always exists: vsftpd changes to the home at login, then to
    # local_root (this instance's folder). So several instances (the tests' and the benchmark's)
    # can run at once, and one whose folder is gone cannot break another's logins ("cannot change
    # directory").
    if id "$user" >/dev/null 2>&1; then
        [ "$(getent passwd "$user" | cut -d: -f6)" = / ] || usermod --home / "$user" >/dev/null 2>&1
    else
        useradd --system --no-create-home --home-dir / --shell /usr/sbin/nologin "$user"
    fi
    echo "$user:gateway-test" | chpasswd
    chown "$user" "$dir/data"
    printf 'auth required pam_unix.so\naccount required pam_unix.so\n' > /etc/pam.d/gateway-vsftpd
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
        -keyout "$dir/tls/key.pem" -out "$dir/tls/cert.pem" >/dev/null 2>&1
    common="listen=YES
listen_address=127.0.0.1
background=NO
anonymous_enable=NO
local_enable=YES
write_enable=YES
local_umask=022
local_root=$dir/data
pam_service_name=gateway-vsftpd
secure_chroot_dir=$dir/empty
seccomp_sandbox=NO
utf8_filesystem=YES
use_localtime=NO
max_clients=200
max_per_ip=100
idle_session_timeout=600
data_connection_timeout=120
pasv_enable=YES
pasv_address=127.0.0.1
xferlog_enable=NO

dual_log_enable=NO"
    # GATEWAY_VSFTPD_LOG=1 logs every command and reply to STATE/vsftpd/INSTANCE.log (for chasing a failure).
    if [ "${GATEWAY_VSFTPD_LOG:-0}" = 1 ]; then
        common="${common/xferlog_enable=NO/xferlog_enable=YES}
log_ftp_protocol=YES
xferlog_std_format=NO"
    fi
    printf '%s\nlisten_port=%s\nvsftpd_log_file=%s\n' "$common" "$plain_port" "$dir/plain.log" > "$dir/plain.conf"
    printf '%s\nlisten_port=%s\nvsftpd_log_file=%s\nssl_enable=YES\nrsa_cert_file=%s\nrsa_private_key_file=%s
force_local_logins_ssl=YES\nforce_local_data_ssl=YES\nrequire_ssl_reuse=YES\nssl_tlsv1=NO\nssl_sslv2=NO\nssl_sslv3=NO\n' \
        "$common" "$tls_port" "$dir/tls.log" "$dir/tls/cert.pem" "$dir/tls/key.pem" > "$dir/tls.conf"
    sed -e "s/^listen_port=.*/listen_port=$implicit_port/" -e "s#^vsftpd_log_file=.*#vsftpd_log_file=$dir/implicit.log#" \
        "$dir/tls.conf" > "$dir/implicit.conf"
    echo "implicit_ssl=YES" >> "$dir/implicit.conf"
    for instance in plain tls implicit; do
        nohup /usr/sbin/vsftpd "$dir/$instance.conf" > "$dir/$instance.out" 2>&1 &
        echo $! > "$dir/$instance.pid"
    done
    for port in "$plain_port" "$tls_port"; do  # (the implicit instance greets only after TLS)
        for attempt in $(seq 1 50); do
            if python3 -c "import socket,sys; s=socket.create_connection(('127.0.0.1',$port),1); sys.exit(0 if s.recv(100).startswith(b'220') else 1)" 2>/dev/null; then
                break
            fi
            if [ "$attempt" -eq 50 ]; then
                echo "vsftpd did not start on port $port; see $dir/*.out" >&2
                cat "$dir"/*.out >&2 || true
                exit 1
            fi
            sleep 0.1
        done
    done
    for _ in $(seq 1 50); do
        python3 -c "import socket; socket.create_connection(('127.0.0.1',$implicit_port),1)" 2>/dev/null && break
        sleep 0.1
    done
    echo "ftp://127.0.0.1:$plain_port/ ftp://127.0.0.1:$tls_port/ ftps://127.0.0.1:$implicit_port/"
    ;;
stop)
    for instance in plain tls implicit; do
        if [ -f "$dir/$instance.pid" ]; then kill "$(cat "$dir/$instance.pid")" 2>/dev/null || true; rm -f "$dir/$instance.pid"; fi
    done
    ;;
*)
    echo "usage: $0 start STATE_DIR PLAIN_PORT TLS_PORT IMPLICIT_PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
