#!/bin/bash
# test_cli.sh — what every subcommand shares, as a new user meets it: `--opt=value` as
# well as `--opt value`, value-less flags refusing a value, warnings for a SOTTO_KERNELS
# set the CPU does not run and for more threads than cores, `sotto bench` reporting the
# thread count it ran, `sotto convert` saying what it wrote and leaving no OUT.tmp behind
# when interrupted.
# usage: test_cli.sh SOTTO TINY_EN.gguf BIG_MODEL CLIP.wav TMP_DIR
set -u
SOTTO=$1 TINY=$2 BIG=$3 CLIP=$4 TMP=$5
mkdir -p "$TMP"
pass=0 fail=0

. "$(dirname "$0")/lib.sh"

MEL=$TMP/clip.mel
"$SOTTO" mel "$CLIP" "$MEL" || { echo "FAIL: sotto mel"; exit 1; }
"$SOTTO" run -m "$TINY" --mel "$MEL" --max-new-tokens 4 -t 1 >"$TMP/spaced" 2>/dev/null
expect 0 "stdout:$(cat "$TMP/spaced")" "$SOTTO" run --model="$TINY" --mel="$MEL" --max-new-tokens=4 --threads=1
expect 1 "--suppress takes no value" "$SOTTO" run -m "$TINY" --mel "$MEL" --suppress=yes
expect 1 "--help takes no value" "$SOTTO" transcribe --help=1
expect 1 "needs a value" "$SOTTO" run -m "$TINY" --mel
# the word-timestamp options say what they need
expect 1 "--max-line-len needs --word-timestamps" "$SOTTO" transcribe -m "$TINY" --max-line-len 20 "$CLIP"
expect 1 "--split-on-word needs --max-line-len" "$SOTTO" transcribe -m "$TINY" --word-timestamps --split-on-word "$CLIP"
expect 1 "--hallucination-silence-threshold needs --word-timestamps" "$SOTTO" transcribe -m "$TINY" \
    --hallucination-silence-threshold 2 "$CLIP"
expect 1 "--max-line-len takes a number of characters" "$SOTTO" transcribe -m "$TINY" --word-timestamps \
    --max-line-len 0 "$CLIP"
# the punctuation merged into words (librivox-0880 ends "young man.")
expect 0 'stdout:{"word": " man.", "start"' "$SOTTO" transcribe -m "$TINY" -f json --beam-size 1 --word-timestamps "$CLIP"
expect 0 'stdout:{"word": ".", "start"' "$SOTTO" transcribe -m "$TINY" -f json --beam-size 1 --word-timestamps \
    --append-punctuations "" "$CLIP"
expect 1 "--hallucination-silence-threshold takes seconds >= 0" "$SOTTO" transcribe -m "$TINY" --word-timestamps \
    --hallucination-silence-threshold -1 "$CLIP"
expect 0 "SOTTO_KERNELS=bogus is not a kernel set" env SOTTO_KERNELS=bogus "$SOTTO" run -m "$TINY" --mel "$MEL" \
    --max-new-tokens 2 -t 1
cores=$(nproc)
expect 0 "$((cores + 1)) threads on $cores cores" "$SOTTO" run -m "$TINY" --mel "$MEL" --max-new-tokens 2 \
    -t $((cores + 1))
"$SOTTO" run -m "$TINY" --mel "$MEL" --max-new-tokens 2 -t "$cores" 2>"$TMP/err" >/dev/null
if grep -q "threads on" "$TMP/err"; then fail=$((fail + 1)); echo "FAIL: warned at -t $cores"; else pass=$((pass + 1)); fi
expect 0 "stdout:\"threads\": $cores," "$SOTTO" bench -m "$TINY" --runs 1 --tokens 2
expect 0 "stdout:\"threads\": 1," "$SOTTO" bench -m "$TINY" --runs 1 --tokens 2 -t 1

# convert: a summary on success; no OUT.tmp after SIGTERM/SIGINT in the middle of writing
OUT=$TMP/out.gguf
expect 0 "stdout:sotto convert: wrote $OUT (" "$SOTTO" convert "$TINY" "$OUT" --type=q8_0
expect 0 "stdout:encoder q8_0, decoder q8_0" "$SOTTO" convert "$TINY" "$OUT" --type q8_0
for sig in TERM INT; do
    rm -f "$OUT" "$OUT.tmp"
    "$SOTTO" convert "$BIG" "$OUT" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 500); do [ -s "$OUT.tmp" ] && break; sleep 0.01; done
    seen=$([ -s "$OUT.tmp" ] && echo yes || echo no)
    kill -$sig $pid 2>/dev/null
    wait $pid
    rc=$?
    if [ "$seen" = yes ] && [ $rc -ne 0 ] && [ ! -e "$OUT.tmp" ] && [ ! -e "$OUT" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: SIG$sig during convert: tmp seen $seen, exit $rc, left: $(ls "$OUT"* 2>/dev/null)"
    fi
done

echo "test_cli: $pass passed, $fail failed"
[ $fail -eq 0 ]
