#!/usr/bin/env bash
# Starts (or stops) nginx (Debian) on 127.0.0.1 for the tests: a stock WebDAV setup as the nginx
# documentation has it, ngx_http_dav_module (`dav_methods PUT DELETE MKCOL COPY MOVE`) plus the
# dav-ext module (libnginx-mod-http-dav-ext: `dav_ext_methods PROPFIND OPTIONS`), with no
# `create_full_put_path` (PUT into a missing folder fails), no autoindex, no LOCK, no PROPPATCH
# (405), no partial PUT (501). dav-ext leaves dot files out of Depth 1 listings and has no getetag;
# folders need their trailing slash for MKCOL, DELETE, MOVE and COPY (409 or 400 without).
#   nginx-webdav.sh start STATE_DIR PORT   -> prints the WebDAV URL (/dav/)
#   nginx-webdav.sh stop STATE_DIR
# Basic auth: user "gateway", password "gateway-test" (test-only credentials). Files are in
# STATE_DIR/nginx/data; the access log (STATE_DIR/nginx/access.log) has Apache's "brief" format.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
dir="$state/nginx"

case "$action" in
start)
    port=$3
    mkdir -p "$dir/data" "$dir/tmp"
    dir=$(cd "$dir" && pwd)
    printf 'gateway:%s\n' "$(openssl passwd -apr1 gateway-test)" > "$dir/users"
    module=/usr/lib/nginx/modules/ngx_http_dav_ext_module.so
    [ -f "$module" ] || { echo "nginx-webdav: $module is missing (apt-get install libnginx-mod-http-dav-ext)" >&2; exit 1; }
    cat > "$dir/nginx.conf" <<CONF
load_module $module;
# The workers run as root, as the script does: the data folder needs no chown.
user root;
worker_processes 2;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events {
    worker_connections 1024;
}
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    sendfile on;
    keepalive_timeout 30;
    keepalive_requests 100000;
    client_body_temp_path $dir/tmp/client_body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    log_format brief '\$request_method \$uri \$status \$http_content_range \$http_x_oc_mtime \$http_oc_checksum \$body_bytes_sent';
    access_log $dir/access.log brief;
    server {
        listen 127.0.0.1:$port;
        server_name 127.0.0.1;
        location /dav/ {
            alias $dir/data/;
            dav_methods PUT DELETE MKCOL COPY MOVE;
            dav_ext_methods PROPFIND OPTIONS;
            dav_access user:rw group:rw all:r;
            # Without it nginx refuses any body over 1 MiB (413).
            client_max_body_size 0;
            auth_basic "gateway tests";
            auth_basic_user_file $dir/users;
        }
    }
}
CONF
    nohup /usr/sbin/nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" > "$dir/server.out" 2>&1 &
    echo $! > "$dir/pid"
    wait_for_webdav "http://127.0.0.1:$port/dav/" "http://127.0.0.1:$port/dav/" nginx "$dir/error.log" 50
    exit $?
    ;;
stop)
    # (nginx removes its own nginx.pid on exit; TERM to the master stops the workers too.)
    stop_pid_file "$dir/pid"
    ;;
*)
    echo "usage: $0 start STATE_DIR PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
