#!/usr/bin/env bash
# Builds the libFuzzer harnesses in Fuzz/ (Swift's -sanitize=fuzzer,address) and runs each for a
# while, starting from the seed corpora in Fuzz/Corpus/<harness>/. Fails (non-zero) on any crash,
# trap, leak, out-of-memory (-rss_limit_mb) or slow input (-timeout); the reproducer lands in
# Fuzz/Artifacts/<harness>/ (git-ignored). Prints one summary line per harness.
#
#   scripts/fuzz.sh [SECONDS] [HARNESS...]     e.g. scripts/fuzz.sh 60, scripts/fuzz.sh 30 FuzzLIST
#   scripts/fuzz.sh --long [HARNESS...]        10^6 executions per harness (capped at an hour each):
#                                              the long runs docs/fuzzing.md reports; CI runs 10 s
#
# Environment:
#   GATEWAY_FUZZ_SECONDS   seconds per harness when SECONDS is not given (default 60)
#   GATEWAY_FUZZ_RUNS      stop each harness after this many executions instead (-runs); time still caps it
#   GATEWAY_FUZZ_CONFIG    release (default: fastest executions) or debug (faster build, assertions in -Onone)
#   GATEWAY_FUZZ_JOBS      build jobs (default: SwiftPM's, the CPU count)
#   GATEWAY_FUZZ_NICE      niceness of the build and the runs (default 10, so other builds keep priority)
#   GATEWAY_FUZZ_PARALLEL  harnesses run at a time (default 1)
#   GATEWAY_FUZZ_BUILD=0   skip the build (binaries already in .build-fuzz)
#   GATEWAY_FUZZ_ARGS      extra libFuzzer flags, e.g. "-detect_leaks=0" or "-only_ascii=1" (not -jobs: the summary reads one log)
#
# The build goes to .build-fuzz (git-ignored; never the default .build). The corpus a run grows is
# kept in .build-fuzz/corpus/<harness>/ so the next run starts from it; the seeds in Fuzz/Corpus are
# only read. Needs the Swift toolchain from swift.org (Xcode's has no libFuzzer) and the C libraries
# from scripts/setup-deps.sh (libcurl4-openssl-dev, libxml2-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

all=(FuzzMultistatus FuzzLIST FuzzMLSD FuzzFTPReply FuzzHTTPHeaders FuzzConfig FuzzTrashInfo FuzzMediaMetadata FuzzServeRequests FuzzSFTPPacket FuzzPlan FuzzS3XML)
seconds=${GATEWAY_FUZZ_SECONDS:-60}
if [ $# -gt 0 ] && [ "$1" = --long ]; then
    seconds=${GATEWAY_FUZZ_SECONDS:-3600}
    export GATEWAY_FUZZ_RUNS=${GATEWAY_FUZZ_RUNS:-1000000}
    shift
elif [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
    seconds=$1
    shift
fi
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${all[@]}")
for harness in "${harnesses[@]}"; do
    [[ " ${all[*]} " == *" $harness "* ]] || { echo "unknown harness '$harness' (have: ${all[*]})" >&2; exit 2; }
done

if ! pkg-config --exists libcurl libxml-2.0 2>/dev/null; then
    echo "libcurl or libxml2 development files are missing: run scripts/setup-deps.sh (or apt-get install pkg-config libcurl4-openssl-dev libxml2-dev)" >&2
    exit 2
fi
[ "$seconds" -gt 0 ] || { echo "SECONDS must be at least 1 (libFuzzer takes 0 as no limit)" >&2; exit 2; }

config=${GATEWAY_FUZZ_CONFIG:-release}
niceness=${GATEWAY_FUZZ_NICE:-10}
scratch="$root/.build-fuzz"
run_nice=(nice -n "$niceness")

# Largest input libFuzzer generates, per harness: a few listing lines, a small 207 body, a config.
max_len() {
    case "$1" in
        FuzzMultistatus|FuzzS3XML) echo 16384 ;;
        FuzzConfig|FuzzPlan) echo 8192 ;;
        FuzzMediaMetadata) echo 65536 ;;
        *) echo 4096 ;;
    esac
}

build=(swift build --package-path Fuzz --scratch-path "$scratch" -c "$config"
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing)
[ -n "${GATEWAY_FUZZ_JOBS:-}" ] && build+=(-j "$GATEWAY_FUZZ_JOBS")
if [ "${GATEWAY_FUZZ_BUILD:-1}" != 0 ]; then
    started=$(date +%s)
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    # All harnesses: one build of the Fuzz package. A subset: one --product at a time (SwiftPM
    # takes one); the shared modules compile once, then each harness is one file and a link.
    products=("")
    [ ${#harnesses[@]} -lt ${#all[@]} ] && products=("${harnesses[@]}")
    for product in "${products[@]}"; do
        selection=()
        [ -n "$product" ] && selection=(--product "$product")
        if ! "${run_nice[@]}" "${build[@]}" "${selection[@]}" >"$log" 2>&1; then
            grep -E "error" "$log" | sort -u | head -40 >&2
            echo "fuzz build failed (errors above)" >&2
            exit 1
        fi
    done
    echo "built ${harnesses[*]} ($config) in $(( $(date +%s) - started )) s"
fi
bin="$scratch/$config"  # SwiftPM's link to <triple>/<config>

# Memory: ASan's quarantine of freed blocks counts toward RSS; 64 MB of it (default 256) keeps the
# peak RSS figure closer to what the parsers and libFuzzer's corpus use.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=64:symbolize=1}
# One harness: runs it, writes its summary line to $scratch/logs/<harness>.summary; exit 1 when it
# found something.
run_one() {
    local harness=$1 corpus artifacts log args began status elapsed runs speed rss units verdict
    corpus="$scratch/corpus/$harness"
    artifacts="$root/Fuzz/Artifacts/$harness"
    mkdir -p "$corpus" "$artifacts"
    log="$scratch/logs/$harness.log"
    args=(-max_total_time="$seconds" -rss_limit_mb=512 -malloc_limit_mb=512 -timeout=10 -max_len="$(max_len "$harness")"
        -print_final_stats=1 -artifact_prefix="$artifacts/" -close_fd_mask=1)
    [ -f "Fuzz/Dictionaries/$harness.dict" ] && args+=(-dict="Fuzz/Dictionaries/$harness.dict")
    [ -n "${GATEWAY_FUZZ_RUNS:-}" ] && args+=(-runs="$GATEWAY_FUZZ_RUNS")
    # shellcheck disable=SC2206
    [ -n "${GATEWAY_FUZZ_ARGS:-}" ] && args+=(${GATEWAY_FUZZ_ARGS})
    began=$(date +%s)
    set +e
    "${run_nice[@]}" "$bin/$harness" "${args[@]}" "$corpus" "Fuzz/Corpus/$harness" >"$log" 2>&1
    status=$?
    set -e
    elapsed=$(( $(date +%s) - began ))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    units=$(find "$corpus" -type f | wc -l)
    verdict=ok
    if [ "$status" -ne 0 ]; then
        verdict="FAILED (exit $status): $(grep -m1 -oE 'ERROR: libFuzzer: [a-z-]+|ERROR: AddressSanitizer: [a-z-]+|Fatal error: .*|Precondition failed.*|ERROR: LeakSanitizer: [a-z ]+' "$log" || echo "see $log")"
        verdict+="; reproducer: $(grep -oE "Test unit written to [^ ]+" "$log" | tail -1 | cut -d' ' -f5)"
    fi
    printf '%-16s %8s execs in %4s s  %6s exec/s  peak RSS %4s MB  corpus files %5s  %s\n' \
        "$harness" "${runs:-?}" "$elapsed" "${speed:-?}" "${rss:-?}" "$units" "$verdict" >"$scratch/logs/$harness.summary"
    [ "$status" -eq 0 ]
}

# GATEWAY_FUZZ_PARALLEL harnesses at a time (default 1; CI runs 2 on its two cores).
mkdir -p "$scratch/logs"
parallel=${GATEWAY_FUZZ_PARALLEL:-1}
failed=()
declare -A job=()
for harness in "${harnesses[@]}"; do
    rm -f "$scratch/logs/$harness.summary"
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
    run_one "$harness" &
    job[$harness]=$!
done
for harness in "${harnesses[@]}"; do
    status=0
    wait "${job[$harness]}" || status=$?
    summary="$scratch/logs/$harness.summary"
    # Failed when it said so, or when it left no summary ending in "ok" (a status reaped early by
    # `wait -n` is read from the summary as well).
    if [ "$status" -ne 0 ] || ! grep -q ' ok$' "$summary" 2>/dev/null; then failed+=("$harness"); fi
    cat "$summary" 2>/dev/null || echo "$harness: no summary (see $scratch/logs/$harness.log)"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzzing found problems in: ${failed[*]} (logs in $scratch/logs/)" >&2
    exit 1
fi
