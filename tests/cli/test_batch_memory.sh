#!/bin/bash
# test_batch_memory.sh — a --batch-size too large for the memory this process may use is
# refused before its buffers are allocated, naming the largest batch that fits, and that
# batch then runs under the same limit and writes what a batch of 1 writes. The limit is
# an address-space one (ulimit -v), which sotto__mem_room counts as it counts a cgroup's
# memory limit or the machine's available memory (the old check read only the machine's
# free pages: in a cgroup of 800 MB a batch of 64 went on and was killed).
# usage: test_batch_memory.sh SOTTO MODEL FW_VAD CLIP.wav WORKDIR
set -u
sotto=$1 model=$2 vad=$3 clip=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }
run() { "$sotto" transcribe -m "$model" --vad-model "$vad" --device cpu -t 2 --quiet --beam-size 1 -f json "$@"; }
# KiB of address space: the model, the threads and a few windows' buffers (a machine whose
# process maps more before the context, more threads' stacks and heaps, takes the next)
for limit in 800000 1200000 1600000; do
    (ulimit -v $limit && run --batch-size 64 "$clip") > "$work/b64.json" 2> "$work/b64.err"
    rc=$?
    grep -q "at most [0-9]* fit" "$work/b64.err" && break
done
echo "ulimit -v $limit:"
cat "$work/b64.err"
check "a batch of 64 refused with exit 2: $rc" '[ $rc -eq 2 ] && [ ! -s "$work/b64.json" ]'
check "the message names the bytes and what fits" \
    'grep -q "a batch of 64 windows needs [0-9]* MiB of buffers, but this process may allocate [0-9]* MiB more" "$work/b64.err"'
n=$(sed -n 's/.*at most \([0-9]*\) fit.*/\1/p' "$work/b64.err")
check "a batch that fits is named: ${n:-none}" '[ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -lt 64 ]'
if [ -n "$n" ]; then
    (ulimit -v $limit && run --batch-size "$n" "$clip") > "$work/bn.json" 2> "$work/bn.err"
    rc=$?
    cat "$work/bn.err"
    run --batch-size 1 "$clip" > "$work/b1.json" 2> "$work/b1.err"
    check "the named batch of $n runs under the same limit: $rc" '[ $rc -eq 0 ]'
    check "and writes what a batch of 1 writes" 'cmp -s "$work/bn.json" "$work/b1.json" && [ -s "$work/b1.json" ]'
fi
exit $fail
