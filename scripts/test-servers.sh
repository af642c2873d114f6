#!/usr/bin/env bash
# Starts or stops every server the tests, the demo and the benchmark use, all on 127.0.0.1:
#   test-servers.sh start   -> writes $GATEWAY_TEST_STATE/env (source it) and prints it
#   test-servers.sh stop
# Servers: Apache httpd + mod_dav (Basic auth at /dav/, Digest at /dav-digest/, Bearer at
# /dav-bearer/, HTTPS + HTTP/2), `rclone serve webdav`, vsftpd (plain FTP and explicit FTPS with
# require_ssl_reuse), pyftpdlib (MLSD; and a "legacy" one without MLSD that refuses LIST -a), ProFTPD (MLSD, SITE CPFR/CPTO copies, HASH),
# Xandikos (WebDAV with RFC 6578 sync-collection), and three more stock WebDAV servers at /dav/ with
# Basic auth: nginx (dav + dav-ext modules), lighttpd (mod_webdav, SQLite properties and locks) and
# WsgiDAV (cheroot, no property manager); and four SFTP servers: OpenSSH's sshd + sftp-server (a
# system user, password and client keys, OpenSSH's extensions), `rclone serve sftp` (pkg/sftp) and
# AsyncSSH's SFTP server (chrooted, password only, no extensions), and ProFTPD's mod_sftp
# (check-file hashes, copy-file); and a one-node Slurm cluster (munged, slurmctld, slurmd: the
# scale-out tests submit job arrays to it; GATEWAY_TEST_SLURM_CONF is its slurm.conf); and two S3
# servers (scripts/servers/s3.sh): moto's server mode and `rclone serve s3`.
set -euo pipefail
cd "$(dirname "$0")/.."
state=${GATEWAY_TEST_STATE:-/tmp/gateway-test-servers}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

case "${1:-}" in
start)
    bash scripts/test-servers.sh stop >/dev/null 2>&1 || true
    rm -rf "$state"
    mkdir -p "$state"
    # Slurm's daemons (about a second until the node is idle) start while the others do.
    bash scripts/servers/slurm.sh start "$state" "$(free_port)" "$(free_port)" > "$state/slurm.start" &
    slurm_start=$!
    tls_port=$(free_port)
    apache_base=$(bash scripts/servers/apache-webdav.sh start "$state" "$(free_port)" "$tls_port")
    rclone_url=$(bash scripts/servers/rclone-webdav.sh start "$state" "$(free_port)")
    read -r vsftpd_url vsftpd_tls_url vsftpd_implicit_url < <(bash scripts/servers/vsftpd.sh start "$state" "$(free_port)" "$(free_port)" "$(free_port)")
    pyftpdlib_url=$(bash scripts/servers/pyftpdlib.sh start "$state" "$(free_port)")
    pyftpdlib_legacy_url=$(bash scripts/servers/pyftpdlib.sh start "$state" "$(free_port)" legacy)
    proftpd_url=$(bash scripts/servers/proftpd.sh start "$state" "$(free_port)")
    xandikos_url=$(bash scripts/servers/xandikos.sh start "$state" "$(free_port)")
    nginx_url=$(bash scripts/servers/nginx-webdav.sh start "$state" "$(free_port)")
    lighttpd_url=$(bash scripts/servers/lighttpd-webdav.sh start "$state" "$(free_port)")
    wsgidav_url=$(bash scripts/servers/wsgidav.sh start "$state" "$(free_port)")
    # AsyncSSH's Python start-up (half a second) runs while sshd's keys are made.
    sftp_asyncssh_port=$(free_port)
    bash scripts/servers/asyncssh-sftp.sh start "$state" "$sftp_asyncssh_port" >/dev/null &
    sftp_asyncssh_start=$!
    sftp_openssh_port=$(free_port)
    sftp_openssh_url=$(bash scripts/servers/openssh-sftp.sh start "$state" "$sftp_openssh_port")
    sftp_openssh_root=${sftp_openssh_url#"sftp://127.0.0.1:$sftp_openssh_port"}
    sftp_openssh_dir=$(dirname "$sftp_openssh_root")
    # rclone also accepts the OpenSSH fixture's ed25519 client key (GATEWAY_TEST_SFTP_OPENSSH_KEY).
    sftp_rclone_port=$(free_port)
    bash scripts/servers/rclone-sftp.sh start "$state" "$sftp_rclone_port" "$sftp_openssh_dir/client/id_ed25519.pub" >/dev/null
    sftp_proftpd_port=$(free_port)
    bash scripts/servers/proftpd-sftp.sh start "$state" "$sftp_proftpd_port" >/dev/null
    read -r s3_moto_url s3_rclone_url < <(bash scripts/servers/s3.sh start "$state" "$(free_port)" "$(free_port)")
    wait "$sftp_asyncssh_start"
    wait "$slurm_start"
    slurm_conf=$(cat "$state/slurm.start")
    cat > "$state/env" <<ENV
export GATEWAY_TEST_WEBDAV_APACHE_URL=${apache_base}dav/
export GATEWAY_TEST_WEBDAV_DIGEST_URL=${apache_base}dav-digest/
export GATEWAY_TEST_WEBDAV_BEARER_URL=${apache_base}dav-bearer/
export GATEWAY_TEST_WEBDAV_BEARER_TOKEN=gateway-test-token
export GATEWAY_TEST_APACHE_ACCESS_LOG=$state/apache/logs/access.log
export GATEWAY_TEST_WEBDAV_TLS_URL=https://127.0.0.1:$tls_port/dav/
export GATEWAY_TEST_WEBDAV_TLS_CA=$state/apache/tls/cert.pem
export GATEWAY_TEST_WEBDAV_RCLONE_URL=$rclone_url
export GATEWAY_TEST_WEBDAV_XANDIKOS_URL=$xandikos_url
export GATEWAY_TEST_XANDIKOS_LOG=$state/xandikos/server.log
export GATEWAY_TEST_WEBDAV_NGINX_URL=$nginx_url
export GATEWAY_TEST_NGINX_ACCESS_LOG=$state/nginx/access.log
export GATEWAY_TEST_WEBDAV_LIGHTTPD_URL=$lighttpd_url
export GATEWAY_TEST_LIGHTTPD_ACCESS_LOG=$state/lighttpd/access.log
export GATEWAY_TEST_WEBDAV_WSGIDAV_URL=$wsgidav_url
export GATEWAY_TEST_WSGIDAV_LOG=$state/wsgidav/server.log
export GATEWAY_TEST_WEBDAV_USER=gateway
export GATEWAY_TEST_WEBDAV_PASSWORD=gateway-test
export GATEWAY_TEST_FTP_VSFTPD_URL=$vsftpd_url
export GATEWAY_TEST_FTP_VSFTPD_USER=gatewayftp
export GATEWAY_TEST_FTP_VSFTPD_TLS_URL=$vsftpd_tls_url
export GATEWAY_TEST_FTP_VSFTPD_IMPLICIT_URL=$vsftpd_implicit_url
export GATEWAY_TEST_FTP_VSFTPD_TLS_CA=$state/vsftpd/tls/cert.pem
export GATEWAY_TEST_FTP_PYFTPDLIB_URL=$pyftpdlib_url
export GATEWAY_TEST_FTP_PYFTPDLIB_USER=gateway
export GATEWAY_TEST_FTP_LEGACY_URL=$pyftpdlib_legacy_url
export GATEWAY_TEST_FTP_PROFTPD_URL=$proftpd_url
export GATEWAY_TEST_FTP_PROFTPD_USER=gateway
export GATEWAY_TEST_FTP_PASSWORD=gateway-test
export GATEWAY_TEST_SFTP_OPENSSH_HOST=127.0.0.1
export GATEWAY_TEST_SFTP_OPENSSH_PORT=$sftp_openssh_port
export GATEWAY_TEST_SFTP_OPENSSH_ROOT=$sftp_openssh_root
export GATEWAY_TEST_SFTP_OPENSSH_USER=gatewaysftp
export GATEWAY_TEST_SFTP_OPENSSH_KEY=$sftp_openssh_dir/client/id_ed25519
export GATEWAY_TEST_SFTP_OPENSSH_KEY_PASS=$sftp_openssh_dir/client/id_ed25519_pass
export GATEWAY_TEST_SFTP_OPENSSH_KEY_ECDSA=$sftp_openssh_dir/client/id_ecdsa
export GATEWAY_TEST_SFTP_OPENSSH_KEY_RSA=$sftp_openssh_dir/client/id_rsa
export GATEWAY_TEST_SFTP_OPENSSH_KNOWN_HOSTS=$sftp_openssh_dir/known_hosts
export GATEWAY_TEST_SFTP_OPENSSH_KNOWN_HOSTS_HASHED=$sftp_openssh_dir/known_hosts_hashed
export GATEWAY_TEST_SFTP_OPENSSH_FINGERPRINT=$(cat "$sftp_openssh_dir/host_ed25519.fingerprint")
export GATEWAY_TEST_SFTP_RCLONE_PORT=$sftp_rclone_port
export GATEWAY_TEST_SFTP_RCLONE_KNOWN_HOSTS=$state/rclone-sftp/known_hosts
export GATEWAY_TEST_SFTP_ASYNCSSH_PORT=$sftp_asyncssh_port
export GATEWAY_TEST_SFTP_ASYNCSSH_KNOWN_HOSTS=$state/asyncssh-sftp/known_hosts
export GATEWAY_TEST_SFTP_PROFTPD_PORT=$sftp_proftpd_port
export GATEWAY_TEST_SFTP_PROFTPD_KNOWN_HOSTS=$state/proftpd-sftp/known_hosts
export GATEWAY_TEST_SFTP_PASSWORD=gateway-test
export GATEWAY_TEST_SLURM_CONF=$slurm_conf
export GATEWAY_TEST_S3_MOTO_URL=$s3_moto_url
export GATEWAY_TEST_S3_RCLONE_URL=$s3_rclone_url
export GATEWAY_TEST_S3_ACCESS_KEY=gateway-test-key
export GATEWAY_TEST_S3_SECRET_KEY=gateway-test-secret
ENV
    cat "$state/env"
    ;;
stop)
    bash scripts/servers/apache-webdav.sh stop "$state" || true
    bash scripts/servers/rclone-webdav.sh stop "$state" || true
    bash scripts/servers/vsftpd.sh stop "$state" || true
    bash scripts/servers/pyftpdlib.sh stop "$state" || true
    bash scripts/servers/pyftpdlib.sh stop "$state" legacy || true
    bash scripts/servers/proftpd.sh stop "$state" || true
    bash scripts/servers/xandikos.sh stop "$state" || true
    bash scripts/servers/nginx-webdav.sh stop "$state" || true
    bash scripts/servers/lighttpd-webdav.sh stop "$state" || true
    bash scripts/servers/wsgidav.sh stop "$state" || true
    bash scripts/servers/openssh-sftp.sh stop "$state" || true
    bash scripts/servers/rclone-sftp.sh stop "$state" || true
    bash scripts/servers/proftpd-sftp.sh stop "$state" || true
    bash scripts/servers/asyncssh-sftp.sh stop "$state" || true
    bash scripts/servers/slurm.sh stop "$state" || true
    bash scripts/servers/s3.sh stop "$state" || true
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
