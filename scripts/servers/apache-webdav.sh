#!/usr/bin/env bash
# Starts (or stops) Apache httpd with mod_dav on 127.0.0.1 for the tests, the demo and the benchmark.
#   apache-webdav.sh start STATE_DIR PORT [TLS_PORT]
#       -> prints the base URL; WebDAV is at /dav/ with Basic auth and at /dav-digest/ with Digest
#          auth and at /dav-bearer/ with the Bearer token "gateway-test-token" (same files),
#          served over HTTP/1.1, and HTTP/2 over TLS. With TLS_PORT, the same is served over https with a self-signed
#          certificate for 127.0.0.1, written to STATE_DIR/apache/tls/cert.pem.
#   apache-webdav.sh stop STATE_DIR
# User "gateway", password "gateway-test" (test-only credentials).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
conf="$state/apache/httpd.conf"

case "$action" in
start)
    port=$3
    tls_port=${4:-}
    mkdir -p "$state"
    chmod 755 "$state"
    # Apache's workers run as www-data: every folder above the state must let them through.
    dir=$(cd "$state" && pwd)
    while [ "$dir" != "/" ]; do
        if [ "$(( $(stat -c '%a' "$dir") % 2 ))" -eq 0 ]; then
            echo "apache-webdav: $dir is not searchable by www-data; put GATEWAY_TEST_STATE elsewhere" >&2
            exit 1
        fi
        dir=$(dirname "$dir")
    done
    mkdir -p "$state/apache/logs" "$state/apache/run" "$state/apache/lock" "$state/webdav-apache"
    chown -R www-data:www-data "$state/webdav-apache" "$state/apache/lock"
    htpasswd -cb "$state/apache/users" gateway gateway-test >/dev/null 2>&1
    realm="gateway-digest"
    printf 'gateway:%s:%s\n' "$realm" "$(printf 'gateway:%s:gateway-test' "$realm" | md5sum | cut -d' ' -f1)" \
        > "$state/apache/digest-users"
    modules=/usr/lib/apache2/modules
    tls_conf=""
    if [ -n "$tls_port" ]; then
        mkdir -p "$state/apache/tls"
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
            -addext "subjectAltName=IP:127.0.0.1" \
            -keyout "$state/apache/tls/key.pem" -out "$state/apache/tls/cert.pem" >/dev/null 2>&1
        tls_conf="LoadModule socache_shmcb_module $modules/mod_socache_shmcb.so
LoadModule ssl_module $modules/mod_ssl.so
LoadModule http2_module $modules/mod_http2.so
Protocols h2 http/1.1
H2MinWorkers 8
H2MaxWorkers 64
SSLSessionCache shmcb:$state/apache/run/ssl_scache(512000)
Listen 127.0.0.1:$tls_port
<VirtualHost 127.0.0.1:$tls_port>
    SSLEngine on
    SSLCertificateFile $state/apache/tls/cert.pem
    SSLCertificateKeyFile $state/apache/tls/key.pem
</VirtualHost>"
    fi
    cat > "$conf" <<CONF
ServerRoot "$state/apache"
ServerName 127.0.0.1
Listen 127.0.0.1:$port
PidFile "$state/apache/run/httpd.pid"
ErrorLog "$state/apache/logs/error.log"
LogLevel warn
User www-data
Group www-data
LoadModule mpm_event_module $modules/mod_mpm_event.so
LoadModule authz_core_module $modules/mod_authz_core.so
LoadModule authn_core_module $modules/mod_authn_core.so
LoadModule authn_file_module $modules/mod_authn_file.so
LoadModule authz_user_module $modules/mod_authz_user.so
LoadModule auth_basic_module $modules/mod_auth_basic.so
LoadModule auth_digest_module $modules/mod_auth_digest.so
LoadModule alias_module $modules/mod_alias.so
LoadModule headers_module $modules/mod_headers.so
LogFormat "%m %U %>s %{Content-Range}i %{X-OC-Mtime}i %{OC-Checksum}i %B" brief
CustomLog "$state/apache/logs/access.log" brief
LoadModule dav_module $modules/mod_dav.so
LoadModule dav_fs_module $modules/mod_dav_fs.so
LoadModule mime_module $modules/mod_mime.so
TypesConfig /etc/mime.types
$tls_conf
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 30
StartServers 2
ServerLimit 8
ThreadsPerChild 64
MaxRequestWorkers 512
DavLockDB "$state/apache/lock/DavLock"
Alias /dav-digest "$state/webdav-apache"
Alias /dav-bearer "$state/webdav-apache"
Alias /dav "$state/webdav-apache"
<Directory "$state/webdav-apache">
    Options None
    AllowOverride None
</Directory>
<Location /dav>
    Dav On
    AuthType Basic
    AuthName "gateway tests"
    AuthUserFile "$state/apache/users"
    Require valid-user
</Location>
# Always busy: 503 with Retry-After 1, for the retry tests.
Redirect 503 /busy
<Location /busy>
    Header always set Retry-After "1"
</Location>
<Location /dav-bearer>
    Dav On
    Require expr "%{HTTP:Authorization} == 'Bearer gateway-test-token'"
</Location>
<Location /dav-digest>
    Dav On
    AuthType Digest
    AuthName "$realm"
    AuthDigestProvider file
    AuthUserFile "$state/apache/digest-users"
    Require valid-user
</Location>
CONF
    /usr/sbin/apache2 -f "$conf" -k start
    wait_for_webdav "http://127.0.0.1:$port/dav/" "http://127.0.0.1:$port/" "apache" "$state/apache/logs/error.log" 50
    exit $?
    ;;
stop)
    if [ -f "$conf" ]; then /usr/sbin/apache2 -f "$conf" -k stop 2>/dev/null || true; fi
    ;;
*)
    echo "usage: $0 start STATE_DIR PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
