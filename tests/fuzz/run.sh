#!/bin/sh
# run.sh — builds the libFuzzer targets (clang, ASan + UBSan) and runs them; used by
# `make fuzz` and `make fuzz-ci` (docs/ROBUSTNESS.md).
#   sh tests/fuzz/run.sh SECONDS [--ci] [TARGET...]
# Each target first replays the committed seeds (tests/fuzz/corpus/<target>) and the
# saved reproducers (tests/fuzz/crashes/<target>-*), then fuzzes for SECONDS. New corpus
# entries go to build-fuzz/corpus/<target> (kept between runs, never committed);
# crashes, leaks and timeouts to build-fuzz/crashes/. Exit status 1 if any target failed.
# Environment: FUZZ_BUILD (default build-fuzz), FUZZ_JOBS (build parallelism, 2),
# FUZZ_PARALLEL (targets fuzzed at once, 2).
set -u
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:?usage: run.sh SECONDS [--ci] [TARGET...]}
shift
CI_MODE=0
if [ "${1:-}" = "--ci" ]; then CI_MODE=1; shift; fi
TARGETS=${*:-fuzz_gguf fuzz_ggml fuzz_ct2 fuzz_safetensors fuzz_wav fuzz_audio fuzz_idlist fuzz_json fuzz_tokenizer fuzz_vad}
BUILD=${FUZZ_BUILD:-build-fuzz}

sh scripts/setup-fuzz.sh || exit 1
CC=clang cmake -S . -B "$BUILD" -DSOTTO_FUZZ=ON >/dev/null || exit 1
cmake --build "$BUILD" --target fuzz_all -j "${FUZZ_JOBS:-2}" >/dev/null || exit 1

mkdir -p "$BUILD/crashes"
# one target: its lines on stdout, exit 1 when it failed
run_one() {
    t=$1
    bin="$BUILD/tests/fuzz/$t"
    seeds="tests/fuzz/corpus/$t"
    work="$BUILD/corpus/$t"
    log="$BUILD/$t.log"
    mkdir -p "$work"
    opts="-timeout=30 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$BUILD/crashes/$t-"
    echo "== $t"
    # regression: the saved reproducers must no longer crash
    repro=$(ls tests/fuzz/crashes/"$t"-* 2>/dev/null | grep -v '\.txt$')
    if [ -n "$repro" ]; then
        # shellcheck disable=SC2086
        if ! "$bin" $opts $repro >"$log.repro" 2>&1; then
            echo "   FAIL: a reproducer in tests/fuzz/crashes still fails (see $log.repro)"
            return 1
        fi
    fi
    if [ "$CI_MODE" = 1 ]; then
        # the committed seeds alone, so CI does not depend on what earlier runs found
        rm -rf "$work" && mkdir -p "$work"
    fi
    # shellcheck disable=SC2086
    "$bin" $opts -max_total_time="$SECONDS_EACH" "$work" "$seeds" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    corpus=$(ls "$work" | wc -l)
    echo "   rc $rc, ${execs:-?} executions, $corpus new corpus entries (log: $log)"
    if [ $rc -ne 0 ]; then
        grep -E '^(==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)' "$log" | head -5 | sed 's/^/   /'
        return 1
    fi
}

# FUZZ_PARALLEL targets at a time (default 2, the cores CI has), each on one core
failed=""
set -- $TARGETS
while [ $# -gt 0 ]; do
    group=""
    i=0
    while [ $# -gt 0 ] && [ $i -lt "${FUZZ_PARALLEL:-2}" ]; do
        group="$group $1"
        (run_one "$1" >"$BUILD/$1.out" 2>&1; echo $? >"$BUILD/$1.rc") &
        shift
        i=$((i + 1))
    done
    wait
    for t in $group; do
        cat "$BUILD/$t.out"
        [ "$(cat "$BUILD/$t.rc")" = 0 ] || failed="$failed $t"
    done
done
if [ -n "$failed" ]; then
    echo "fuzz: FAILED:$failed"
    exit 1
fi
echo "fuzz: all targets clean"
