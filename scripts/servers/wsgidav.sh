#!/usr/bin/env bash
# Starts (or stops) WsgiDAV (PyPI, served by cheroot) on 127.0.0.1 for the tests: the Python WebDAV
# server, at its defaults (filesystem provider, in-memory locks, no property manager: PROPPATCH of
# dead properties is refused) except for authentication. Known quirks of 4.4: a MOVE/COPY
# Destination is cut at ';' or '?' (even percent-encoded: g%3Bh.txt becomes "g"), Depth infinity is
# answered in full, and GET of a folder without its slash redirects outside the mount (/fo/).
#   wsgidav.sh start STATE_DIR PORT   -> prints the WebDAV URL (/dav/)
#   wsgidav.sh stop STATE_DIR
# Basic auth (not WsgiDAV's default Digest): user "gateway", password "gateway-test" (test-only
# credentials). Files are in STATE_DIR/wsgidav/data; every request is logged to STATE_DIR/wsgidav/server.log.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
dir="$state/wsgidav"

case "$action" in
start)
    port=$3
    mkdir -p "$dir/data"
    dir=$(cd "$dir" && pwd)
    cat > "$dir/wsgidav.yaml" <<CONF
host: 127.0.0.1
port: $port
server: cheroot
provider_mapping:
    "/dav": "$dir/data"
http_authenticator:
    domain_controller: null  # simple_dc
    accept_basic: true
    accept_digest: false
    default_to_digest: false
simple_dc:
    user_mapping:
        "*":
            "gateway":
                password: "gateway-test"
verbose: 3
CONF
    nohup python3 -m wsgidav.server.server_cli --config "$dir/wsgidav.yaml" > "$dir/server.log" 2>&1 &
    echo $! > "$dir/pid"
    wait_for_webdav "http://127.0.0.1:$port/dav/" "http://127.0.0.1:$port/dav/" wsgidav "$dir/server.log" 150
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
