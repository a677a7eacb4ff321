#!/bin/bash
# test_batched.sh — `sotto transcribe --batch-size N` (faster-whisper's BatchedInferencePipeline):
# a batch of 3 chunks writes what batches of 1 write (greedy; the library test holds beam 5 and
# timestamps), one segment a chunk without --timestamps, cut at the timestamps with it, -j with
# --batch-size, and the refusals (--timestamps alone, --vad or --prompt with batching, a batch
# over the decoder's rows, --batch-continue without --timestamps).
# usage: test_batched.sh SOTTO MODEL FW_VAD LONG2.wav CLIP.wav WORKDIR
set -u
sotto=$1 model=$2 vad=$3 long=$4 clip=$5 work=$6
rm -rf "$work" && mkdir -p "$work"
fail=0
run() { "$sotto" transcribe -m "$model" --vad-model "$vad" --device cpu -t 2 --quiet "$@"; }
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

run --batch-size 3 --beam-size 1 -f json "$long" > "$work/b3.json" 2> "$work/b3.err"
run --batch-size 1 --beam-size 1 -f json "$long" > "$work/b1.json" 2> "$work/b1.err"
check "batch 3 = batches of 1" 'cmp -s "$work/b3.json" "$work/b1.json"'
n=$(grep -o '"seek":' "$work/b3.json" | wc -l)
check "one segment a chunk (5 chunks): $n" '[ "$n" -eq 5 ]'
run --batch-size 3 --beam-size 1 --timestamps -f json "$long" > "$work/ts.json" 2> "$work/ts.err"
m=$(grep -o '"seek":' "$work/ts.json" | wc -l)
check "--timestamps cuts more segments: $m" '[ "$m" -gt "$n" ]'
cp "$clip" "$work/a.wav" && cp "$clip" "$work/b.wav"
run --batch-size 2 --beam-size 1 -j 2 --output-dir "$work/out" "$work/a.wav" "$work/b.wav" 2> "$work/j.err"
check "-j 2 with --batch-size: two equal outputs" 'cmp -s "$work/out/a.txt" "$work/out/b.txt" && [ -s "$work/out/a.txt" ]'
"$sotto" transcribe -m "$model" --timestamps "$clip" > /dev/null 2> "$work/e1"
check "--timestamps alone refused" '[ $? -ne 0 ] && grep -q "goes with --batch-size" "$work/e1"'
run --batch-size 2 --vad "$clip" > /dev/null 2> "$work/e2"
check "--vad with --batch-size refused" 'grep -q "no --vad" "$work/e2"'
run --batch-size 64 --beam-size 16 "$clip" > /dev/null 2> "$work/e3"
check "64 x 16 rows refused, naming what fits" 'grep -q "at most 28 windows" "$work/e3"'
run --batch-size 2 --batch-continue "$clip" > /dev/null 2> "$work/e4"
check "--batch-continue without --timestamps refused" 'grep -q "batch-continue goes with" "$work/e4"'
run --batch-size 2 --timestamps --batch-continue -f json "$clip" > "$work/c.json" 2> "$work/c.err"
check "--batch-size --timestamps --batch-continue runs" '[ -s "$work/c.json" ]'
exit $fail
