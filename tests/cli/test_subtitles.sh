#!/bin/bash
# test_subtitles.sh — openai-whisper's subtitle layout options of `sotto transcribe`
# (--max-line-width, --max-line-count, --max-words-per-line, --highlight-words) against
# openai's own srt and vtt writers on the same words (tests/golden/subtitles, made by
# scripts/golden_subtitles.py): the words first (sotto's -f json on the same signal equal
# to the golden's), then every option set's files byte for byte, written to stdout and by
# --output-dir; then what is refused and warned as openai's command line does.
# usage: test_subtitles.sh SOTTO TINY_EN.gguf CLIPS_DIR GOLDEN_DIR TMP_DIR
set -u
SOTTO=$1 TINY=$2 CLIPS=$3 GOLDEN=$4 TMP=$5
rm -rf "$TMP"
mkdir -p "$TMP"
pass=0 fail=0

. "$(dirname "$0")/lib.sh"


# the signal of scripts/golden_subtitles.py: two clips, 5 s of silence, a third
sox "$CLIPS/librivox-0870.wav" "$CLIPS/librivox-0880.wav" "$TMP/part.wav" pad 0 5 &&
    sox "$TMP/part.wav" "$CLIPS/espeak-ng-01.wav" "$TMP/pause.wav" || { echo "FAIL: sox"; exit 1; }
S=("$SOTTO" transcribe -m "$TINY" -t 2 --quiet --word-timestamps --beam-size 1 --no-fallback)

"${S[@]}" -f json -o "$TMP/pause.json" "$TMP/pause.wav" 2>"$TMP/err" || bad "json: $(cat "$TMP/err")"
words() { python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
for s in r["segments"]:
    for w in s["words"]: print(repr(w["word"]), w["start"], w["end"])' "$1"; }
if diff <(words "$GOLDEN/pause.json") <(words "$TMP/pause.json") >"$TMP/wdiff"; then ok; else
    bad "the words differ from the golden's (the layout below is then not comparable): $(head -5 "$TMP/wdiff")"
fi

while IFS=$'\t' read -r name opts; do
    # shellcheck disable=SC2086  # the options split at spaces
    for fmt in srt vtt; do
        "${S[@]}" $opts -f "$fmt" "$TMP/pause.wav" >"$TMP/$name.$fmt" 2>"$TMP/err"
        cmp -s "$GOLDEN/pause.$name.$fmt" "$TMP/$name.$fmt" && ok ||
            bad "$opts -f $fmt: not openai's file: $(diff "$GOLDEN/pause.$name.$fmt" "$TMP/$name.$fmt" | head -6)"
    done
    "${S[@]}" $opts -f srt -f vtt --output-dir "$TMP/dir_$name" "$TMP/pause.wav" 2>"$TMP/err"
    cmp -s "$GOLDEN/pause.$name.srt" "$TMP/dir_$name/pause.srt" && cmp -s "$GOLDEN/pause.$name.vtt" "$TMP/dir_$name/pause.vtt" &&
        ok || bad "$opts --output-dir: not openai's files"
done <"$GOLDEN/option_sets.tsv"

# openai's rules: the options need word timestamps; its two warnings; and one way to cut cues
P=("$SOTTO" transcribe -m "$TINY" -t 2 --quiet)
expect 1 "--max-line-width needs --word-timestamps" "${P[@]}" --max-line-width 42 -f srt "$TMP/pause.wav"
expect 1 "--highlight-words needs --word-timestamps" "${P[@]}" --highlight-words -f srt "$TMP/pause.wav"
expect 1 "one way to cut cues" "${P[@]}" --word-timestamps --max-line-len 30 --max-line-width 42 -f srt "$TMP/pause.wav"
expect 0 "warning: --max-line-count has no effect without --max-line-width" \
    "${S[@]}" --max-line-count 2 -f srt "$TMP/pause.wav"
expect 0 "warning: --max-words-per-line has no effect with --max-line-width" \
    "${S[@]}" --max-words-per-line 2 --max-line-width 30 -f srt "$TMP/pause.wav"
expect 1 "a number of characters in 1..100000" "${S[@]}" --max-line-width 0 -f srt "$TMP/pause.wav"
# txt, tsv and json do not change
"${S[@]}" -f tsv "$TMP/pause.wav" >"$TMP/plain.tsv" 2>/dev/null
"${S[@]}" --max-line-width 8 --highlight-words -f tsv "$TMP/pause.wav" >"$TMP/laid.tsv" 2>/dev/null
cmp -s "$TMP/plain.tsv" "$TMP/laid.tsv" && ok || bad "tsv changed with the subtitle options"

echo "subtitles: $pass passed, $fail failed"
[[ $fail == 0 ]]
