#!/usr/bin/env bash
# test_stream.sh — `sotto stream` on tiny.en: the --jsonl events' shape and order, every
# committed word in the final transcript (-f json) in order, the tail flushed at the end,
# raw s16le on stdin (16 kHz, and f32le at 8 kHz through the resampler) near the file's
# text, Ogg/Opus on a pipe held open decoded as it comes, Ctrl-C -> exit 130 with the
# committed text printed and written, and bad options,
# URLs and devices refused with a message.
# With a multilingual model (BASE, when it is there): the language detected once a step has
# heard --hold seconds, said on stderr, in every event and in the JSON transcript; --task
# translate gives English.
# usage: test_stream.sh SOTTO MODEL VAD_MODEL CLIPS_DIR WORK_DIR [BASE]
set -u
SOTTO=$1 TINY=$2 VAD=$3 CLIPS=$4 WORK=$5 BASE=${6:-}
PY=${PYTHON:-python3}
rm -rf "$WORK" && mkdir -p "$WORK"
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
S=("$SOTTO" stream -m "$TINY" --vad-model "$VAD" -t 2 --min-step 1)
clip=$CLIPS/librivox-0870.wav

# --jsonl: the events' shape, and the committed words are the transcript's, in order
"${S[@]}" --jsonl -f json -o "$WORK/t.json" "$clip" >"$WORK/ev.jsonl" 2>"$WORK/err" || bad "jsonl: $(cat "$WORK/err")"
"$PY" - "$WORK/ev.jsonl" "$WORK/t.json" <<'EOF' && ok || bad "jsonl events (above)"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
t = json.load(open(sys.argv[2]))
assert ev, "no events"
last = -1.0
for e in ev:
    assert set(e) == {"type", "start", "end", "text", "words", "emission_time", "audio_time", "language"}, e
    assert e["language"] == "en", e
    assert e["end"] <= e["audio_time"] + 0.05, e
    assert e["type"] in ("tentative", "final"), e
    assert e["emission_time"] >= last, (e, last)
    last = e["emission_time"]
    assert e["text"] == "".join(w["word"] for w in e["words"]), e
    for w in e["words"]:
        assert set(w) == {"word", "start", "end", "probability"} and w["start"] <= w["end"], w
assert ev[-1]["type"] == "tentative" and ev[-1]["text"] == "", "the end flushes the tail: " + str(ev[-1])
final = [w["word"] for e in ev if e["type"] == "final" for w in e["words"]]
written = [w["word"] for s in t["segments"] for w in s["words"]]
assert final == written, (final, written)
assert t["text"] == "".join(e["text"] for e in ev if e["type"] == "final")
text = t["text"].lower()
for word in ("dashwood", "leisure", "prudently", "power"):
    assert word in text, (word, text)
EOF

# real time held: the audio that came during a step goes in at the next one, so each
# step's audio reaches (up to the file's end) the time the step before ended, however
# slow the steps are (--min-step 0.05 is faster than any step: 0.1 s per step piled up a
# backlog of 37 s on this 3 s clip)
"${S[@]}" --realtime --jsonl --min-step 0.05 "$CLIPS/librivox-0880.wav" >"$WORK/rt.jsonl" 2>"$WORK/err" ||
    bad "realtime: $(cat "$WORK/err")"
"$PY" - "$WORK/rt.jsonl" <<'EOF' && ok || bad "realtime lag (above)"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
end = ev[-1]["audio_time"]
assert end > 2.9, ev[-1]
for prev, e in zip(ev, ev[1:]):
    if e["emission_time"] > prev["emission_time"] + 0.01:  # the next step's events
        want = min(end, prev["emission_time"]) - 0.3
        assert e["audio_time"] >= want, f"a step at {e['emission_time']:.2f} s took audio to " \
            f"{e['audio_time']:.2f} s only, not to {want + 0.3:.2f} s"
EOF

# raw PCM on stdin: s16le at 16 kHz, f32le at 8 kHz (resampled), against the file's words
ffmpeg -nostdin -v error -i "$clip" -f s16le -ac 1 -ar 16000 - | "${S[@]}" --format s16le - >"$WORK/s16.txt" 2>"$WORK/err"
[[ $? -eq 0 ]] && grep -qi "dashwood" "$WORK/s16.txt" && ok || bad "s16le stdin: $(cat "$WORK/s16.txt" "$WORK/err")"
ffmpeg -nostdin -v error -i "$clip" -f f32le -ac 1 -ar 8000 - | "${S[@]}" --format f32le --rate 8000 - \
    >"$WORK/f32.txt" 2>"$WORK/err"
[[ $? -eq 0 ]] && grep -qi "leisure" "$WORK/f32.txt" && ok || bad "f32le 8 kHz stdin: $(cat "$WORK/f32.txt" "$WORK/err")"
"${S[@]}" - <"$clip" >"$WORK/wav.txt" 2>"$WORK/err" && grep -qi "dashwood" "$WORK/wav.txt" && ok ||
    bad "a WAV on stdin: $(cat "$WORK/wav.txt" "$WORK/err")"

# a compressed stream on a pipe is decoded as it comes: 14 s of 16 kbit/s Ogg/Opus (30 KB)
# and the pipe held open; its first words come before the writer closes (FFmpeg's reads
# were held until 64 KB arrived: 35 s of such a stream, and none of this one before its end)
ffmpeg -nostdin -v error -i "$CLIPS/librivox-0880.wav" -i "$CLIPS/librivox-0890.wav" -i "$CLIPS/librivox-0920.wav" \
    -filter_complex concat=n=3:v=0:a=1 -ac 1 -ar 16000 -c:a libopus -b:a 16k -f ogg "$WORK/c3.ogg"
mkfifo "$WORK/ogg.fifo"
"${S[@]}" - <"$WORK/ogg.fifo" >"$WORK/ogg.txt" 2>"$WORK/ogg.err" &
pid=$!
exec 3>"$WORK/ogg.fifo"
cat "$WORK/c3.ogg" >&3
for _ in $(seq 250); do grep -q -- '-->' "$WORK/ogg.txt" && break; sleep 0.2; done
grep -qi -- 'he was not' "$WORK/ogg.txt" && ok || bad "Ogg/Opus on an open pipe: no text before its end ($(cat "$WORK/ogg.err"))"
exec 3>&-
wait $pid || bad "the Ogg stream: exit $? at the pipe's end"

# Ctrl-C: exit 130, what was committed printed (stdout, stderr) and written (-o)
# (the speech, then 120 s of silence: a slow build, ASan on a loaded machine, commits late,
# and the stream must still be running when the interrupt comes)
sox -n -r 16000 -c 1 -b 16 "$WORK/sil.wav" trim 0 120
ffmpeg -nostdin -v error -y -i "$clip" -i "$CLIPS/librivox-0890.wav" -i "$CLIPS/librivox-0920.wav" -i "$WORK/sil.wav" \
    -filter_complex concat=n=4:v=0:a=1 "$WORK/long.wav"
"${S[@]}" --realtime -o "$WORK/int.txt" "$WORK/long.wav" >"$WORK/int.out" 2>"$WORK/int.err" &
pid=$!
for _ in $(seq 500); do grep -q -- '-->' "$WORK/int.out" 2>/dev/null && break; sleep 0.2; done
sleep 1
kill -INT $pid
wait $pid
rc=$?
[[ $rc -eq 130 ]] && ok || bad "Ctrl-C: exit $rc, not 130 ($(cat "$WORK/int.err"))"
grep -q -- '-->' "$WORK/int.out" && grep -q "interrupted after .* s: committed:" "$WORK/int.err" && ok ||
    bad "Ctrl-C: the committed text is not printed: $(cat "$WORK/int.out" "$WORK/int.err")"
first=$(sed -n '1s/^\[[^]]*\]//p' "$WORK/int.out")
[[ -s $WORK/int.txt ]] && grep -qF -- "${first# }" "$WORK/int.txt" && ok ||
    bad "Ctrl-C: -o lacks the committed '$first': $(cat "$WORK/int.txt" 2>&1)"
at=$(sed -n 's/.*interrupted after \([0-9.]*\) s.*/\1/p' "$WORK/int.err")
[[ -n $at ]] && awk -v t="$at" 'BEGIN { exit !(t < 138) }' && ok || bad "Ctrl-C came after the end: at '$at' s"
# SIGTERM (systemd, docker stop, timeout) as Ctrl-C: exit 143, the committed text written;
# with --jsonl the last event is an empty tentative, as at the end of every stream
"${S[@]}" --realtime --jsonl -o "$WORK/term.txt" "$WORK/long.wav" >"$WORK/term.out" 2>"$WORK/term.err" &
pid=$!
for _ in $(seq 500); do grep -q '"type": "final"' "$WORK/term.out" 2>/dev/null && break; sleep 0.2; done
kill -TERM $pid
wait $pid
rc=$?
[[ $rc -eq 143 ]] && grep -q "terminated (SIGTERM) after .* s: committed:" "$WORK/term.err" && [[ -s $WORK/term.txt ]] &&
    ok || bad "SIGTERM: exit $rc, $(cat "$WORK/term.err"), -o: $(cat "$WORK/term.txt" 2>&1)"
tail -1 "$WORK/term.out" | grep -q '"type": "tentative".*"text": "", "words": \[\]' && ok ||
    bad "SIGTERM --jsonl: the last event is not an empty tentative: $(tail -1 "$WORK/term.out")"
# committed times never run back: each final starts where the one before ended or later
python3 - "$WORK/term.out" <<'EOF' && ok || bad "finals' times run back: $(head -c 600 "$WORK/term.out")"
import json, sys
finals = [e for e in map(json.loads, open(sys.argv[1])) if e["type"] == "final"]
words = [w for e in finals for w in e["words"]]
sys.exit(not finals or any(b["start"] < a["end"] or b["end"] < b["start"] for a, b in zip(words, words[1:])))
EOF

# refused, with a message, before any decoding
expect() { # CODE NEEDLE CMD...
    local code=$1 needle=$2
    shift 2
    "$@" >"$WORK/out" 2>"$WORK/err" </dev/null
    local rc=$?
    [[ $rc -eq $code ]] && grep -qF -- "$needle" "$WORK/err" && ok ||
        bad "want exit $code and '$needle' from $*: got $rc, $(head -c 300 "$WORK/err")"
}
expect 1 "--format takes s16le or f32le" "${S[@]}" --format mp3 -
expect 1 "--format takes s16le or f32le" "${S[@]}" --format srt -
expect 1 "--rate takes a sample rate in 8000..192000, not '100'" "${S[@]}" --format s16le --rate 100 -
expect 1 "--rate takes a sample rate in 8000..192000, not '16k'" "${S[@]}" --format s16le --rate 16k -
expect 1 "--rate is the raw PCM's" "${S[@]}" --rate 22050 "$clip"
expect 1 "INPUT is a URL" "${S[@]}" http://example.com/a.mp3
expect 1 "capture devices need libavdevice" "${S[@]}" alsa:default
expect 1 "-o FILE takes one format" "${S[@]}" -f srt -f vtt -o "$WORK/x" "$clip"
expect 1 "-f needs -o FILE or --output-dir DIR" "${S[@]}" -f srt "$clip"
expect 2 "cannot write $WORK/nodir/x.txt: No such file or directory" "${S[@]}" -o "$WORK/nodir/x.txt" "$clip"
expect 1 "--trim must be below --max-buffer" "${S[@]}" --trim 20 --max-buffer 10 "$clip"
expect 1 "--hold must be below --max-buffer" "${S[@]}" --hold 25 "$clip"
expect 1 "--push paces a file read as fast as it decodes" "${S[@]}" --realtime --push 5 "$clip"
expect 1 "--quiet leaves nothing on stdout: it needs -o FILE" "${S[@]}" --quiet "$clip"
expect 0 "warning: this model is English-only: it transcribes in English, not de" "${S[@]}" -l de "$clip"
expect 1 "this model is English-only: it cannot translate" "${S[@]}" --task translate "$clip"
expect 1 "--task takes transcribe or translate, not 'english'" "${S[@]}" --task english "$clip"
"${S[@]}" --max-buffer 12 "$clip" >"$WORK/mb.txt" 2>"$WORK/err" && grep -qi "dashwood" "$WORK/mb.txt" && ok ||
    bad "--max-buffer 12 alone (its --trim follows it): $(cat "$WORK/err")"
expect 1 "--min-step takes seconds in 0.05..10" "${S[@]}" --min-step 0 "$clip"
expect 1 "unexpected argument" "${S[@]}" "$clip" "$clip"
expect 1 "cannot open" "${S[@]}" --format s16le "$WORK/missing.raw"
expect 1 "$WORK/missing.wav" "${S[@]}" "$WORK/missing.wav"
printf 'not audio at all, just text\n' >"$WORK/text.wav"
expect 1 "text.wav" "${S[@]}" "$WORK/text.wav"
"$SOTTO" stream --help >"$WORK/help" && grep -q "LocalAgreement-2" "$WORK/help" && grep -q -- "--jsonl" "$WORK/help" &&
    grep -q "130 interrupted" "$WORK/help" && ok || bad "stream --help"

# a multilingual model: Italian detected once --hold seconds are heard (from half a second a
# probe's German had been English, kept for the whole session, and French Chinese), said,
# in every final event and written as its code (base detects espeak's Italian clip as it at
# 2 s, 3 s and whole; its German as he, de, yi)
if [[ -n $BASE && -d $BASE ]]; then
    it=$CLIPS/lang/espeak-ng-it.wav
    "$SOTTO" stream -m "$BASE" --vad-model "$VAD" -t 2 --jsonl -f json -o "$WORK/it.json" "$it" >"$WORK/it.jsonl" \
        2>"$WORK/err" || bad "base, Italian: $(cat "$WORK/err")"
    grep -q "detected language it" "$WORK/err" && ok || bad "the detected language said: $(cat "$WORK/err")"
    "$PY" - "$WORK/it.jsonl" "$WORK/it.json" <<'EOF' && ok || bad "Italian's events and transcript (above)"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
finals = [e for e in ev if e["type"] == "final"]
assert finals and all(e["language"] == "it" for e in finals), [(e["language"], e["text"]) for e in finals]
t = json.load(open(sys.argv[2]))
assert t["language"] == "it" and "gelato" in t["text"], t
EOF
    "$SOTTO" stream -m "$BASE" --vad-model "$VAD" -t 2 -l Italian --quiet -f json -o "$WORK/it2.json" "$it" \
        2>"$WORK/err" && "$PY" -c 'import json, sys; assert json.load(open(sys.argv[1]))["language"] == "it"' \
        "$WORK/it2.json" && ! grep -q "detected language" "$WORK/err" && ok || bad "-l Italian: the code, nothing detected"
    # --task translate: the session decodes with <|translate|>: English words, none of the
    # Italian ones the transcription has, and the language still the one spoken
    "$SOTTO" stream -m "$BASE" --vad-model "$VAD" -t 2 --min-step 1 --task translate --quiet -f json \
        -o "$WORK/tr.json" "$it" 2>"$WORK/err" && "$PY" - "$WORK/tr.json" <<'EOF' && ok || bad "--task translate (above)"
import json, re, sys
t = json.load(open(sys.argv[1]))
words = set(re.findall(r"[a-zà-ù']+", t["text"].lower()))
assert t["language"] == "it" and words & {"the", "you", "we", "is", "are", "and"}, t
assert not words & {"pronta", "tutti", "seduti", "intorno", "tavolo", "mangeremo", "gelato", "cioccolato"}, t
EOF
fi

echo "stream: $passes passed, $fails failed"
[[ $fails -eq 0 ]]
