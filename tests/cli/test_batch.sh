#!/bin/bash
# test_batch.sh — `sotto transcribe` over many files: a directory (recursive, by extension,
# outputs in the same subdirectories) and an @list, -j 2 giving byte for byte the outputs
# of one file at a time, resuming (files whose outputs all exist are skipped; a missing
# format, a stale .tmp or --overwrite redoes them), an interrupted run going on where it
# stopped, failures counted and the rest done, the summary line, and the refusals.
# usage: test_batch.sh SOTTO MODEL CLIPS_DIR TMP_DIR [few]
# (few: 4 files instead of 8, for the sanitizer build)
set -u
SOTTO=$1 MODEL=$2 CLIPS=$3 TMP=$4 FEW=${5:-}
rm -rf "$TMP"
mkdir -p "$TMP/in/sub" "$TMP/ref"
pass=0 fail=0
. "$(dirname "$0")/lib.sh"
check() { # check WHAT CONDITION...
    local what=$1
    shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what"; fi
}
T=(transcribe -m "$MODEL" --beam-size 1 --no-fallback -t 1 --device cpu -f txt -f json)

if [ "$FEW" = few ]; then
    cp "$CLIPS"/librivox-08[78]0.wav "$CLIPS"/librivox-0930.wav "$TMP/in/"
    cp "$CLIPS"/espeak-ng-01.wav "$TMP/in/sub/"
else
    cp "$CLIPS"/librivox-08*.wav "$CLIPS"/librivox-09*.wav "$TMP/in/"
    cp "$CLIPS"/espeak-ng-0[1-3].wav "$TMP/in/sub/"
fi
N=$(find "$TMP/in" -name '*.wav' ! -name '.*' | wc -l)
echo "not audio" >"$TMP/in/notes.txt"
touch "$TMP/in/.hidden.wav"
# the reference: each file on its own, as the tool always did
"$SOTTO" "${T[@]}" --quiet --output-dir "$TMP/ref" "$TMP"/in/*.wav 2>/dev/null
"$SOTTO" "${T[@]}" --quiet --output-dir "$TMP/ref/sub" "$TMP"/in/sub/*.wav 2>/dev/null
n_ref=$(find "$TMP/ref" -type f | wc -l)
check "$N references in 2 formats" test "$n_ref" -eq $((2 * N))
# the hours of audio the summary must give: the references' durations added up
hours=$(python3 -c 'import json, sys; print("%.3f" % (sum(json.load(open(f))["duration"] for f in sys.argv[1:]) / 3600))' \
    $(find "$TMP/ref" -name '*.json'))

# a directory, two files at once: the same bytes, the same tree
expect 0 "$N files: $N transcribed, 0 skipped (outputs exist), 0 failed; $hours h of audio in" \
    "$SOTTO" "${T[@]}" -j 2 --output-dir "$TMP/res" "$TMP/in/"
check "-j 2 says so" grep -q "2 files at once" "$TMP/err"
check "a line per file" test "$(grep -c "^sotto transcribe: \[[0-9]/$N\] " "$TMP/err")" -eq "$N"
check "-j 2 writes the outputs of one file at a time" diff -r "$TMP/ref" "$TMP/res"
check "nothing left behind" test -z "$(find "$TMP/res" -name '*.tmp')"

# resume: all done; one format missing; a stale .tmp is not an output; --overwrite
touch -d '2001-01-01' "$TMP/res/librivox-0870.txt"
expect 0 "$N files: 0 transcribed, $N skipped (outputs exist), 0 failed" "$SOTTO" "${T[@]}" -j 2 --output-dir "$TMP/res" "$TMP/in"
check "a skipped file's outputs are left alone" test "$(date -r "$TMP/res/librivox-0870.txt" +%Y)" = 2001
rm "$TMP/res/sub/espeak-ng-01.json"
echo partial >"$TMP/res/librivox-0880.txt.tmp"
mv "$TMP/res/librivox-0880.txt" "$TMP/res/librivox-0880.txt.tmp"
expect 0 "$N files: 2 transcribed, $((N - 2)) skipped (outputs exist), 0 failed" "$SOTTO" "${T[@]}" -j 2 --output-dir "$TMP/res" "$TMP/in"
check "resumed files are complete again" diff -r "$TMP/ref" "$TMP/res" -x '*.tmp'

# @list: comments, blank lines, CRLF, blanks at a line's end; a missing file fails alone
printf '# clips\n%s \r\n\n%s\n%s\t \n' "$TMP/in/librivox-0870.wav" "$TMP/in/missing.wav" "$TMP/in/sub/espeak-ng-01.wav" \
    >"$TMP/list.txt"
expect 1 "3 files: 2 transcribed, 0 skipped (outputs exist), 1 failed" "$SOTTO" "${T[@]}" -j 2 \
    --output-dir "$TMP/listed" "@$TMP/list.txt"
check "the missing file is named, counted as the others are" grep -q "^sotto transcribe: \[[1-3]/3\] .*missing.wav" "$TMP/err"
check "@list outputs by base name" cmp -s "$TMP/ref/sub/espeak-ng-01.json" "$TMP/listed/espeak-ng-01.json"
check "@list outputs by base name" cmp -s "$TMP/ref/librivox-0870.txt" "$TMP/listed/librivox-0870.txt"
touch -d '2001-01-01' "$TMP/listed/librivox-0870.txt"
expect 1 "3 files: 2 transcribed, 0 skipped (outputs exist), 1 failed" "$SOTTO" "${T[@]}" --overwrite \
    --output-dir "$TMP/listed" "@$TMP/list.txt"
check "--overwrite rewrote them" test "$(date -r "$TMP/listed/librivox-0870.txt" +%Y)" != 2001

# interrupted: what was done is written; the next run goes on from there
rm -rf "$TMP/int"
"$SOTTO" "${T[@]}" -j 1 --output-dir "$TMP/int" "$TMP/in" >/dev/null 2>"$TMP/int.err" &
pid=$!
for _ in $(seq 3000); do [ -n "$(find "$TMP/int" -name '*.json' 2>/dev/null)" ] && break; sleep 0.01; done
kill -INT $pid
wait $pid
check "SIGINT: exit 130" test $? -eq 130
check "SIGINT: says how to go on" grep -q "run again to go on" "$TMP/int.err"
n_int=$(find "$TMP/int" -name '*.json' | wc -l)
check "SIGINT: some files done, not all" test "$n_int" -ge 1 -a "$n_int" -lt "$N"
check "SIGINT: no partial output" test -z "$(find "$TMP/int" -name '*.tmp')"
check "SIGINT: the summary counts the files not done" \
    grep -q "$N files: $n_int transcribed, 0 skipped (outputs exist), 0 failed, $((N - n_int)) not done" "$TMP/int.err"
expect 0 "$N files: $((N - n_int)) transcribed, $n_int skipped" "$SOTTO" "${T[@]}" -j 2 \
    --output-dir "$TMP/int" "$TMP/in"

# a link back to a directory above (a loop) is walked once: one file, a note, no nesting
mkdir -p "$TMP/loop/sub"
cp "$CLIPS/espeak-ng-01.wav" "$TMP/loop/sub/x.wav"
ln -s .. "$TMP/loop/sub/up"
expect 0 "1 file: 1 transcribed" "$SOTTO" "${T[@]}" --output-dir "$TMP/oloop" "$TMP/loop"
check "the loop named" grep -q "sub/up: a link to a directory above it" "$TMP/err"
check "one output a format" test "$(find "$TMP/oloop" -type f | wc -l)" -eq 2

# a broken link named as audio in a folder is an input that fails, named and counted (it
# had been left out without a word, exit 0); the same file given twice is transcribed once
mkdir -p "$TMP/links"
cp "$CLIPS/espeak-ng-01.wav" "$TMP/links/a.wav"
ln -s nowhere.wav "$TMP/links/b.wav"
expect 1 "links/b.wav" "$SOTTO" "${T[@]}" --output-dir "$TMP/olinks" "$TMP/links"
check "the broken link counted as failed" grep -q "2 files: 1 transcribed, 0 skipped (outputs exist), 1 failed" "$TMP/err"
check "the other file written" test -s "$TMP/olinks/a.txt"
rm "$TMP/links/b.wav"
expect 0 "is $TMP/links/a.wav again: transcribed once" "$SOTTO" "${T[@]}" --output-dir "$TMP/otwice" \
    "$TMP/links/a.wav" "$TMP/links"
check "once: 1 file" grep -q "1 file: 1 transcribed" "$TMP/err"
# -j N with -t T past the cores: said, as -t alone past them is (nproc: the cores here,
# unless a CPU quota makes them fewer, where -t alone is past them and said so)
cores=$(nproc)
cp "$CLIPS/espeak-ng-02.wav" "$TMP/links/c.wav"
expect 0 "threads on" "$SOTTO" transcribe -m "$MODEL" --beam-size 1 \
    --no-fallback -t "$cores" -j 2 -f txt --output-dir "$TMP/othreads" "$TMP/links"
# on a terminal, a status line of the files done and each file in progress (script(1) is one)
if command -v script >/dev/null; then
    SOTTO="$SOTTO" MODEL="$MODEL" OUT="$TMP/otty" IN="$TMP/in" script -qec \
        '"$SOTTO" transcribe -m "$MODEL" --beam-size 1 --no-fallback -t 1 -f txt --output-dir "$OUT" "$IN"' \
        /dev/null >"$TMP/tty.out" 2>&1
    check "a terminal sees the files in progress" grep -q "done; in progress: .*% of" "$TMP/tty.out"
fi

# refusals
mkdir -p "$TMP/clash" "$TMP/empty"
cp "$TMP/in/librivox-0870.wav" "$TMP/clash/a.wav"
cp "$TMP/in/librivox-0880.wav" "$TMP/clash/a.WAV"
expect 1 "would both write" "$SOTTO" "${T[@]}" --output-dir "$TMP/o2" "$TMP/clash"
expect 1 "no audio files" "$SOTTO" "${T[@]}" --output-dir "$TMP/o2" "$TMP/empty"
expect 1 "write to --output-dir" "$SOTTO" "${T[@]/json/txt}" "$TMP/in"
expect 1 "write to --output-dir" "$SOTTO" transcribe -m "$MODEL" -j 2 "$TMP/in/librivox-0870.wav"
expect 1 "standard input" "$SOTTO" "${T[@]}" -j 2 --output-dir "$TMP/o2" -
expect 1 "@$TMP/nolist.txt" "$SOTTO" "${T[@]}" --output-dir "$TMP/o2" "@$TMP/nolist.txt"
expect 1 "-j takes a file count" "$SOTTO" "${T[@]}" -j 0 --output-dir "$TMP/o2" "$TMP/in"
expect 1 "--overwrite takes no value" "$SOTTO" "${T[@]}" --overwrite=1 --output-dir "$TMP/o2" "$TMP/in"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
