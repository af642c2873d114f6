#!/usr/bin/env bash
# Starts (or stops) lighttpd (Debian) with mod_webdav (lighttpd-mod-webdav) on 127.0.0.1 for the
# tests: properties and locks in an SQLite database (webdav.sqlite-db-name), so PROPPATCH and LOCK
# work.
#   lighttpd-webdav.sh start STATE_DIR PORT   -> prints the WebDAV URL (/dav/)
#   lighttpd-webdav.sh stop STATE_DIR
# Basic auth: user "gateway", password "gateway-test" (test-only credentials). Files are in
# STATE_DIR/lighttpd/data; the access log (STATE_DIR/lighttpd/access.log) has Apache's "brief" format.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
dir="$state/lighttpd"

case "$action" in
start)
    port=$3
    mkdir -p "$dir/data" "$dir/www" "$dir/tmp"
    dir=$(cd "$dir" && pwd)
    [ -f /usr/lib/lighttpd/mod_webdav.so ] || { echo "lighttpd-webdav: mod_webdav is missing (apt-get install lighttpd-mod-webdav)" >&2; exit 1; }
    printf 'gateway:%s\n' "$(openssl passwd -apr1 gateway-test)" > "$dir/users"
    cat > "$dir/lighttpd.conf" <<CONF
server.modules = ("mod_access", "mod_alias", "mod_auth", "mod_authn_file", "mod_webdav", "mod_accesslog")
server.bind = "127.0.0.1"
server.port = $port
server.document-root = "$dir/www"
server.errorlog = "$dir/error.log"
server.upload-dirs = ("$dir/tmp")
server.max-keep-alive-requests = 10000
server.max-keep-alive-idle = 30
# (No server.username: run as the script's user, root, so the data folder needs no chown.)
include_shell "/usr/share/lighttpd/create-mime.conf.pl"
accesslog.filename = "$dir/access.log"
accesslog.format = "%m %U %>s %{Content-Range}i %{X-OC-Mtime}i %{OC-Checksum}i %B"
alias.url = ("/dav/" => "$dir/data/")
\$HTTP["url"] =~ "^/dav(/|\$)" {
    webdav.activate = "enable"
    webdav.is-readonly = "disable"
    webdav.sqlite-db-name = "$dir/webdav.db"
    auth.backend = "htpasswd"
    auth.backend.htpasswd.userfile = "$dir/users"
    auth.require = ("" => ("method" => "basic", "realm" => "gateway tests", "require" => "valid-user"))
}
CONF
    lighttpd -tt -f "$dir/lighttpd.conf" > "$dir/server.out" 2>&1 || { cat "$dir/server.out" >&2; exit 1; }
    nohup lighttpd -D -f "$dir/lighttpd.conf" > "$dir/server.out" 2>&1 &
    echo $! > "$dir/pid"
    wait_for_webdav "http://127.0.0.1:$port/dav/" "http://127.0.0.1:$port/dav/" lighttpd "$dir/error.log" 50
    exit $?
    ;;
stop)
    stop_pid_file "$dir/pid"
    ;;
*)
    echo "usage: $0 start STATE_DIR PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
