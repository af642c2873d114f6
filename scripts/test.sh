#!/usr/bin/env bash
# Runs every test of the project: installs what the tests need, builds (failing on any warning in
# our own code), checks the example config through the SwiftPM plugin, then runs the Swift test
# suites. Idempotent; needs Debian with Swift 6 installed. `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says when it starts (seconds since this script did), so a slow CI run shows where
# its time went.
started=$(date +%s)
step_names=()
step_starts=()
step() {
    step_names+=("$*")
    step_starts+=("$(( $(date +%s) - started ))")
    printf '\n==> %s  [%ds]\n' "$*" "${step_starts[-1]}"
}
# At the end, each step's duration again (CI shows a log's tail only).
durations() {
    local index end
    echo "step durations:"
    for index in "${!step_names[@]}"; do
        end=$(( $(date +%s) - started ))
        [ $((index + 1)) -lt ${#step_starts[@]} ] && end=${step_starts[$((index + 1))]}
        printf '  %5ds  %s\n' "$(( end - step_starts[index] ))" "${step_names[$index]:0:70}"
    done
}

step "system packages"
bash scripts/setup-deps.sh

step "build (warnings in our sources are errors)"
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
set +e
swift build --build-tests >"$build_log" 2>&1
status=$?
set -e
if [ "$status" -ne 0 ]; then
    grep -E "error" "$build_log" | sort -u | head -50 >&2
    echo "build failed (exit $status)" >&2
    exit 1
fi
tail -n 1 "$build_log"
if grep -E "^$(pwd)/(Sources|Tests|Plugins|Snippets)/.*: warning:" "$build_log" | sort -u | grep .; then
    echo "the build has warnings in our code (listed above)" >&2
    exit 1
fi

step "tests start programs through ChildProcess, never Foundation's Process (CONTRIBUTING.md)"
if grep -rnE '(^|[^A-Za-z_.])Process\(\)' Tests --include='*.swift'; then
    echo "a test uses Foundation's Process (listed above): use Tests/Support/ChildProcess.swift" >&2
    exit 1
fi
echo "none"

step "the README's library snippet is the one the build compiled"
bash scripts/readme-snippet.sh --check

step "config validation plugin"
swift package validate-config config.example.json
bad=$(mktemp --suffix=.json)
printf '{"remotes": {"x": {"type": "local", "rot": "/tmp"}}}' > "$bad"
if swift package validate-config "$bad" >/dev/null 2>&1; then
    echo "the plugin accepted an invalid config" >&2
    rm -f "$bad"
    exit 1
fi
rm -f "$bad"
echo "plugin accepts config.example.json and rejects a broken config"

# The DocC catalog and the fuzz harnesses build apart from .build (their own scratch folders), so
# they run beside the demo and the tests, at the lowest priority: the tests mostly wait on servers
# and leave CPU time to spare. Their results come at the end, and fail the run like a test.
# The fuzz run is a regression run: each harness replays its corpus and mutates for 10 s; the long
# runs (10^6 executions each, `scripts/fuzz.sh --long`) are reported in docs/fuzzing.md. A debug
# build: 212 s instead of 319 s for release, at about two thirds of the executions (docs/fuzzing.md).
step "started beside the rest, at nice 19: the DocC catalog (Sources/GatewayCore/GatewayCore.docc, warnings are errors), then every parser's libFuzzer harness for ${GATEWAY_FUZZ_SECONDS:-10} s"
side=$(mktemp -d)
(
    set +e
    nice -n 19 swift package --scratch-path .build-docs --disable-sandbox generate-documentation --target GatewayCore \
        --warnings-as-errors --output-path "$side/docs" >"$side/docs.log" 2>&1
    docs=$?
    # (The root page is there when the archive is whole.)
    if [ "$docs" = 0 ] && [ -f "$side/docs/data/documentation/gatewaycore.json" ]; then echo 0; else echo 1; fi >"$side/docs.status"
    # At nice 19 beside busy tests an input can wait seconds for the CPU: the slow-input bound is
    # raised from 10 s to 60 s (libFuzzer takes the last -timeout given).
    GATEWAY_FUZZ_SECONDS=${GATEWAY_FUZZ_SECONDS:-10} GATEWAY_FUZZ_CONFIG=${GATEWAY_FUZZ_CONFIG:-debug} \
        GATEWAY_FUZZ_PARALLEL=${GATEWAY_FUZZ_PARALLEL:-2} GATEWAY_FUZZ_NICE=19 GATEWAY_FUZZ_ARGS="${GATEWAY_FUZZ_ARGS:--timeout=60}" \
        bash scripts/fuzz.sh >"$side/fuzz.log" 2>&1
    echo $? >"$side/fuzz.status"
) &
side_pid=$!
# A run that ends early takes the side jobs with it, their children (the builds, the harnesses) first.
kill_tree() {
    local child
    for child in $(pgrep -P "$1"); do kill_tree "$child"; done
    kill "$1" 2>/dev/null || true
}
# (The test shards too, when the run is stopped while they run.)
shard_pids=()
cleanup() {
    rm -f "$build_log"
    local pid
    for pid in "$side_pid" "${shard_pids[@]}"; do
        kill -0 "$pid" 2>/dev/null && kill_tree "$pid"
    done
    rm -rf "$side"
}
trap cleanup EXIT

step "the demo first (the README's first command), on this build"
# The two Quick start commands run in that order on a fresh machine: whatever the demo leaves behind
# (a system user, a folder it removed) must not break the tests' servers.
demo_log=$(mktemp)
if ! GATEWAY_DEMO_BIN="$(swift build --show-bin-path)/gateway" bash scripts/demo.sh >"$demo_log" 2>&1; then
    tail -n 40 "$demo_log" >&2
    echo "the demo failed (its log: $demo_log)" >&2
    exit 1
fi
tail -n 1 "$demo_log"
rm -f "$demo_log"

step "test servers (127.0.0.1)"
bash scripts/test-servers.sh start
export GATEWAY_TEST_STATE=${GATEWAY_TEST_STATE:-/tmp/gateway-test-servers}
trap 'cleanup; bash scripts/test-servers.sh stop >/dev/null 2>&1 || true' EXIT
# shellcheck disable=SC1091
source "$GATEWAY_TEST_STATE/env"

step "tests: two shards at once, each one test at a time"
# Swift Testing's per-test "started" lines are dropped; results, failures (with their ↳ details: an
# expectation's own message) and the summary stay, each line marked with its shard.
# Most tests wait on servers, browsers, mounts and Slurm rather than compute, so two shards run side
# by side, each one test at a time (serial: 1264 s here; two shards: 556 s and 679 s before the
# change-monitoring suite moved to A). Not all at once: some 60 FTP sessions against vsftpd and
# pyftpdlib at the same time occasionally lose a control connection mid-command (see the FTP notes
# in CONTRIBUTING.md). Shard A is a fixed list of long suites (the mount, the browser, Slurm, S3,
# media, change monitoring: about half the time); shard B is everything else, so a new suite always
# runs. The test bundle is started directly: two `swift test` at once would wait for each other's
# lock on .build.
# GATEWAY_TEST_PARALLEL=1 runs every test at once in one process instead.
shard_a='\.(Mount[A-Za-z]*Tests|ReadCacheTests|SharePage[A-Za-z]*Tests|SlurmCLITests|S3[A-Za-z]*Tests|MediaBehaviourTests|MonitorBehaviourTests)/'
tests_bundle="$(swift build --show-bin-path)/swift-storage-gatewayPackageTests.xctest"
run_shard() {
    local name=$1
    shift
    NO_COLOR=1 "$tests_bundle" --testing-library swift-testing "$@" 2>&1 | grep --line-buffered -vE '^◇' |
        sed -u "s/^/[$name] /" | tee "$side/shard-$name.log"
    return "${PIPESTATUS[0]}"
}
set +e
if [ "${GATEWAY_TEST_PARALLEL:-0}" = 1 ]; then
    run_shard all
    status=$?
else
    run_shard A --no-parallel --filter "$shard_a" &
    shard_a_pid=$!
    run_shard B --no-parallel --skip "$shard_a" &
    shard_b_pid=$!
    shard_pids=("$shard_a_pid" "$shard_b_pid")
    wait "$shard_a_pid"
    status_a=$?
    wait "$shard_b_pid"
    status_b=$?
    echo "shard A exit $status_a, shard B exit $status_b"
    status=$(( status_a != 0 || status_b != 0 ))
fi
set -e
step "the DocC catalog and the fuzz harnesses (run beside the tests)"
wait "$side_pid" || true
docs_status=$(cat "$side/docs.status" 2>/dev/null || echo 1)
fuzz_status=$(cat "$side/fuzz.status" 2>/dev/null || echo 1)
if [ "$docs_status" = 0 ]; then
    echo "DocC: the catalog builds without warnings"
else
    tail -n 30 "$side/docs.log" >&2
    echo "DocC: the catalog failed or warned (above)" >&2
    status=1
fi
cat "$side/fuzz.log"
if [ "$fuzz_status" != 0 ]; then
    echo "fuzz: a harness failed (above)" >&2
    status=1
fi

# Failures again, last: a log read from its tail (CI keeps only the tail) names what failed and why.
if [ "$status" != 0 ]; then
    recap=$(cat "$side"/shard-*.log 2>/dev/null | grep -E '^\[[A-Za-z]+\] (✘|↳)' |
        grep -vE '↳ (Testing Library Version|Target Platform)' || true)
    if [ -n "$recap" ]; then
        echo "failed tests and their issues (from above):"
        printf '%s\n' "$recap" | cut -c1-400 | tail -n 60
    fi
fi

step "done (exit $status)"
durations
exit "$status"
