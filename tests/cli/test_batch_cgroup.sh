#!/bin/bash
# test_batch_cgroup.sh — batched contexts under a cgroup memory limit: a batch too large for
# the cgroup is refused, naming what fits; two files at once (-j 2), each with its own
# batched context, count each other's buffers not yet touched (the cgroup's usage counts
# pages as they are touched, so each context alone had passed and the two had been killed
# under load); a batch that fits runs. Needs a memory cgroup it can make (root, cgroup v1's
# memory hierarchy or v2's with the memory controller): else it says so and is skipped (77).
# usage: test_batch_cgroup.sh SOTTO MODEL FW_VAD CLIP.wav WORKDIR
set -u
sotto=$1 model=$2 vad=$3 clip=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
name="sotto-test-$$"
limit=$((700 * 1024 * 1024))
cg=""
if [ -w /sys/fs/cgroup/memory ] && mkdir "/sys/fs/cgroup/memory/$name" 2> /dev/null; then
    cg="/sys/fs/cgroup/memory/$name"
    echo $limit > "$cg/memory.limit_in_bytes" 2> /dev/null || cg=""
elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2> /dev/null && mkdir "/sys/fs/cgroup/$name" 2> /dev/null; then
    cg="/sys/fs/cgroup/$name"
    echo $limit > "$cg/memory.max" 2> /dev/null || cg=""
fi
if [ -z "$cg" ]; then
    echo "skipped: no memory cgroup can be made here (needs root and a writable cgroup hierarchy)"
    exit 77
fi
trap 'rmdir "$cg" 2> /dev/null' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }
# in the cgroup: the shell moves itself there, then runs sotto
incg() { sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$sotto" transcribe -m "$model" --vad-model "$vad" \
             --device cpu --quiet --beam-size 1 "$@"; }
cp "$clip" "$work/a.wav" && cp "$clip" "$work/b.wav"

incg -t 2 --batch-size 64 -f json "$work/a.wav" > "$work/b64.json" 2> "$work/b64.err"
rc=$?
cat "$work/b64.err"
check "a batch of 64 refused in a cgroup of 700 MB, exit 2: $rc" \
    '[ $rc -eq 2 ] && grep -q "a batch of 64 windows needs .* at most [0-9]* fit" "$work/b64.err"'
n=$(sed -n 's/.*at most \([0-9]*\) fit.*/\1/p' "$work/b64.err")
half=$(( ${n:-2} / 2 + 1 ))
incg -t 2 -j 2 --batch-size $half --output-dir "$work/j" "$work/a.wav" "$work/b.wav" > /dev/null 2> "$work/j.err"
rc=$?
cat "$work/j.err"
check "-j 2 with two batches of $half (more than the $n that fit, together) refused for the second: $rc" \
    '[ $rc -ne 0 ] && grep -q "other batches not yet in use" "$work/j.err"'
q=$(( ${n:-2} / 2 > 1 ? ${n:-2} / 2 - 1 : 1 ))
incg -t 2 -j 2 --batch-size $q --output-dir "$work/k" "$work/a.wav" "$work/b.wav" > /dev/null 2> "$work/k.err"
rc=$?
check "-j 2 with two batches of $q runs there: $rc" '[ $rc -eq 0 ] && [ -s "$work/k/a.txt" ] && cmp -s "$work/k/a.txt" "$work/k/b.txt"'
exit $fail
