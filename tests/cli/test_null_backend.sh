#!/bin/bash
# test_null_backend.sh — a backend is a folder, one registry line and a CMake option: the
# null test backend (tests/backend_null/) registered in sotto-null alone is listed, named
# by --device null, never taken by auto, and transcribes byte for byte as the CPU does
# (every format, word timestamps too) with the engine reading its results back; the
# product tool does not know it.
# usage: test_null_backend.sh SOTTO SOTTO_NULL TINY_EN.gguf CLIP.wav TMP_DIR
set -u
SOTTO=$1 NULL=$2 TINY=$3 CLIP=$4 TMP=$5
mkdir -p "$TMP"
pass=0 fail=0
unset SOTTO_DEVICE
. "$(dirname "$0")/lib.sh"

expect 0 "stdout:null         test backend" "$NULL" info --devices
expect 0 "stdout:cpu " "$NULL" info --devices
if "$SOTTO" info --devices | grep -q "^null"; then
    fail=$((fail + 1)); echo "FAIL: sotto (the product) lists the null backend"
else
    pass=$((pass + 1))
fi
# the help lists the registry's backends, the null one only in sotto-null
expect 0 "stdout:this build's backends: cpu vulkan null." "$NULL" --help
expect 0 "stdout:this build's backends: cpu vulkan." "$SOTTO" --help
expect 1 "--device 'null' is not a device: use cpu, vulkan, vulkan:N or auto" \
    "$SOTTO" transcribe -m "$TINY" --device null "$CLIP"
expect 1 "'null:0' is not a device: use cpu, vulkan, vulkan:N, null or auto" \
    "$NULL" transcribe -m "$TINY" --device null:0 "$CLIP"
expect 0 "device cpu (" "$NULL" transcribe -m "$TINY" -t 2 --device cpu "$CLIP"
if "$NULL" transcribe -m "$TINY" -t 2 --device auto "$CLIP" 2>&1 >/dev/null | grep -q "device null"; then
    fail=$((fail + 1)); echo "FAIL: auto took the null backend"
else
    pass=$((pass + 1))
fi

# the same files from the null backend as from the CPU
for opts in "" "--word-timestamps --beam-size 1"; do
    rm -rf "$TMP/cpu" "$TMP/null"
    # shellcheck disable=SC2086
    expect 0 "device cpu (" "$SOTTO" transcribe -m "$TINY" -t 2 --device cpu $opts -f all --output-dir "$TMP/cpu" "$CLIP"
    # shellcheck disable=SC2086
    expect 0 "device null (the cpu backend" "$NULL" transcribe -m "$TINY" -t 2 --device null $opts -f all \
        --output-dir "$TMP/null" "$CLIP"
    n=0
    for f in "$TMP"/cpu/*; do
        n=$((n + 1))
        if cmp -s "$f" "$TMP/null/$(basename "$f")"; then pass=$((pass + 1)); else
            fail=$((fail + 1)); echo "FAIL: $(basename "$f") differs on the null backend (options: $opts)"
        fi
    done
    [[ $n -ge 5 ]] || { fail=$((fail + 1)); echo "FAIL: only $n output files (options: $opts)"; }
done

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
