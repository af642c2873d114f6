# Shared by the server scripts: wait until a WebDAV server answers PROPFIND, then print its URL.
#   wait_for_webdav PROBE_URL PRINT_URL NAME LOG_FILE ATTEMPTS (tenths of a second)
wait_for_webdav() {
    local probe=$1 url=$2 name=$3 log=$4 attempts=$5
    for _ in $(seq 1 "$attempts"); do
        if curl -s -o /dev/null -u gateway:gateway-test -X PROPFIND -H "Depth: 0" "$probe"; then
            echo "$url"
            return 0
        fi
        sleep 0.1
    done
    echo "$name did not start; see $log" >&2
    cat "$log" >&2 || true
    return 1
}
