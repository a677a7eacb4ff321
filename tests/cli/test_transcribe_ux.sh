#!/bin/bash
# test_transcribe_ux.sh — what a new user meets in `sotto transcribe` (issue 23): the
# detected language shown before the first segment, --vad segments cut at the silences
# the VAD dropped and never overlapping, installed models found by name (-m tiny.en).
# usage: test_transcribe_ux.sh SOTTO TINY_EN.gguf MULTILINGUAL_MODEL VAD.gguf CLIPS_DIR TMP_DIR
set -u
SOTTO=$1 TINY=$2 BASE=$3 VAD=$4 CLIPS=$5 TMP=$6
rm -rf "$TMP"
mkdir -p "$TMP"
pass=0 fail=0

. "$(dirname "$0")/lib.sh"

T=(-t 2 --device cpu --vad-model "$VAD")

# the detected language comes before the first segment (openai prints it first), not after
"$SOTTO" transcribe -m "$BASE" "${T[@]}" --beam-size 1 "$CLIPS/librivox-0870.wav" >"$TMP/lang" 2>&1
first=$(grep -v -e '^sotto transcribe: device' -e '^sotto transcribe: note' "$TMP/lang" | head -1)
[[ $first == *"detected language en"* ]] && ok || bad "detected language first, got: $(head -c 400 "$TMP/lang")"

# --vad: five utterances 20 s apart; no segment spans a silence the VAD dropped, with and
# without word timestamps, and no srt cue either
sox -n -r 16000 -c 1 -b 16 "$TMP/sil.wav" trim 0 20
parts=() gaps=() t=0
for n in 01 02 03 04 05; do
    parts+=("$CLIPS/espeak-ng-$n.wav" "$TMP/sil.wav")
    t=$(python3 -c "print($t + $(soxi -D "$CLIPS/espeak-ng-$n.wav"))")
    gaps+=("$t")
    t=$(python3 -c "print($t + 20)")
done
unset 'parts[-1]' 'gaps[-1]'
sox "${parts[@]}" "$TMP/gappy.wav"
spans() { # JSON on stdin: the segments that run from before a gap (+1 s) to after it (-1 s)
    python3 -c "
import json, sys
gaps = [float(g) for g in sys.argv[1:]]
segs = json.load(sys.stdin)['segments']
print(len(segs), 'segments')
for s in segs:
    for g in gaps:
        if s['start'] < g + 1 and s['end'] > g + 19: print('SPANS', g, s['start'], s['end'], s['text'])" "${gaps[@]}"
}
for words in "" --word-timestamps; do
    "$SOTTO" transcribe -m "$TINY" "${T[@]}" --vad -f json $words "$TMP/gappy.wav" 2>"$TMP/err" | spans >"$TMP/spans"
    if grep -q SPANS "$TMP/spans" || ! grep -q "^[1-9][0-9]* segments" "$TMP/spans"; then
        bad "--vad $words: a segment spans a silence: $(cat "$TMP/spans" "$TMP/err")"
    else
        ok
    fi
done
# ... nor do two segments overlap: bench's window30 (the clips, 0.3 s apart, cut at 30 s),
# 10 minutes of silence, window30 again, where a segment decoded from the first chunk's end
# holds words of the second only (it had been timed by its words at both ends, and ran
# 2.7 s into the next segment, which keeps its decoded start)
sox -n -r 16000 -c 1 -b 16 "$TMP/gap03.wav" trim 0 0.3
sox -n -r 16000 -c 1 -b 16 "$TMP/sil600.wav" trim 0 600
clips=()
for f in "$CLIPS"/*.wav; do clips+=("$f" "$TMP/gap03.wav"); done
sox "${clips[@]}" "$TMP/w30.wav" trim 0 30
sox "$TMP/w30.wav" "$TMP/sil600.wav" "$TMP/w30.wav" "$TMP/gap10m.wav"
for f in gappy gap10m; do
    "$SOTTO" transcribe -m "$TINY" "${T[@]}" --vad -f json "$TMP/$f.wav" 2>"$TMP/err" | python3 -c "
import json, sys
segs = json.load(sys.stdin)['segments']
bad = [(a['start'], a['end'], b['start'], b['text']) for a, b in zip(segs, segs[1:]) if b['start'] < a['end'] - 1e-6]
print(len(segs), 'segments', bad)
sys.exit(1 if bad or len(segs) < 4 else 0)" >"$TMP/overlap" && ok || bad "--vad on $f: segments overlap: $(cat "$TMP/overlap" "$TMP/err")"
done
"$SOTTO" transcribe -m "$TINY" "${T[@]}" --vad --word-timestamps --max-line-len 42 -f srt "$TMP/gappy.wav" \
    2>/dev/null >"$TMP/srt"
python3 - "$TMP/srt" "${gaps[@]}" <<'EOF' && ok || bad "--vad srt cues span a silence: $(head -c 600 "$TMP/srt")"
import re, sys
sec = lambda h, m, s, ms: int(h) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000
cues = []
for m in re.finditer(r"(\d+):(\d+):(\d+),(\d+) --> (\d+):(\d+):(\d+),(\d+)", open(sys.argv[1]).read()):
    g = m.groups()
    cues.append((sec(*g[:4]), sec(*g[4:])))
gaps = [float(g) for g in sys.argv[2:]]
sys.exit(0 if cues and not [c for c in cues for g in gaps if c[0] < g + 1 and c[1] > g + 19] else 1)
EOF

# fallback: a sample whose text already fails the compression check is stopped there when
# a later temperature follows (4 times the same sentence: the windows fall back, and every
# sample at a temperature below the last compresses less than 3x); the last temperature's
# sample, which openai keeps whatever it gives, is never cut: with one temperature only the
# results equal those of samples always run to their end (SOTTO_FALLBACK_STOP=0)
c=$CLIPS/librivox-0870.wav
sox "$c" "$c" "$c" "$c" "$TMP/rep.wav"
"$SOTTO" transcribe -m "$TINY" "${T[@]}" --no-silence-check -f json "$TMP/rep.wav" 2>"$TMP/err" >"$TMP/rep.json"
python3 - "$TMP/rep.json" <<'EOF' && ok || bad "fallback samples run past the compression check: $(head -c 600 "$TMP/rep.json")"
import json, sys
segs = json.load(open(sys.argv[1]))["segments"]
hot = [(s["temperature"], s["compression_ratio"]) for s in segs if s["temperature"] > 0]
print(hot)
sys.exit(0 if hot and all(r < 3.0 for t, r in hot if t < 1.0) else 1)
EOF
one=(--temperature 1.0 --no-fallback)
"$SOTTO" transcribe -m "$TINY" "${T[@]}" "${one[@]}" --no-silence-check -f json "$TMP/rep.wav" 2>"$TMP/err" >"$TMP/one.json"
SOTTO_FALLBACK_STOP=0 "$SOTTO" transcribe -m "$TINY" "${T[@]}" "${one[@]}" --no-silence-check -f json "$TMP/rep.wav" \
    2>"$TMP/err" >"$TMP/one_full.json"
cmp -s "$TMP/one.json" "$TMP/one_full.json" && ok || bad "the last temperature's sample was cut: $(diff "$TMP/one.json" "$TMP/one_full.json" | head -c 600)"

# -m NAME: an installed model by name (openai's habit); an unknown name lists what is installed
mkdir -p "$TMP/xdg/sotto/models"
ln -s "$(realpath "$TINY")" "$TMP/xdg/sotto/models/tiny.en.gguf"
ln -s "$(realpath "$VAD")" "$TMP/xdg/sotto/models/silero-vad.gguf"
clip=$CLIPS/librivox-0880.wav
expect 0 "stdout:He was not" env XDG_DATA_HOME="$TMP/xdg" "$SOTTO" transcribe -m tiny.en -t 2 --beam-size 1 "$clip"
expect 0 "stdout:He was not" env XDG_DATA_HOME="$TMP/xdg" "$SOTTO" transcribe -m tiny.en.gguf -t 2 --beam-size 1 "$clip"
expect 1 "installed in $TMP/xdg/sotto/models: tiny.en" env XDG_DATA_HOME="$TMP/xdg" "$SOTTO" transcribe -m base "$clip"
grep -q "silero" "$TMP/err" && bad "the VAD listed as a model" || ok
expect 1 "no model 'base'" env XDG_DATA_HOME="$TMP/empty" "$SOTTO" transcribe -m base "$clip"

# a CTranslate2 folder without config.json (model.bin and the vocabulary alone): its suppress
# lists derived from the vocabulary as openai's tokenizer makes them (they were left empty:
# "$3.99, three apples" where the whole folder gives "$300.99 ... apples")
CT2=$(dirname "$TINY")/tiny.en-ct2 # (setup's, beside the GGUF made from it)
mkdir -p "$TMP/noconfig"
for f in "$CT2"/*; do [[ $(basename "$f") == config.json ]] || ln -sf "$(realpath "$f")" "$TMP/noconfig/"; done
clip03=$CLIPS/espeak-ng-03.wav
"$SOTTO" transcribe -m "$CT2" -t 2 "$clip03" >"$TMP/withcfg" 2>/dev/null
"$SOTTO" transcribe -m "$TMP/noconfig" -t 2 "$clip03" >"$TMP/nocfg" 2>/dev/null
[[ -s $TMP/withcfg ]] && cmp -s "$TMP/withcfg" "$TMP/nocfg" && ok ||
    bad "a CTranslate2 folder without config.json: $(cat "$TMP/nocfg") against $(cat "$TMP/withcfg")"

# openai's --suppress_tokens: "." (13) and "," (11) never sampled, -1 the model's list, ""
# none of it; malformed lists and ids past the vocabulary refused, named
clip=$CLIPS/librivox-0870.wav
"$SOTTO" transcribe -m "$TINY" -t 2 --beam-size 1 --suppress-tokens -1,13,11 "$clip" >"$TMP/sup" 2>/dev/null
[[ -s $TMP/sup ]] && ! grep -q '[.,]' "$TMP/sup" && ok || bad "--suppress-tokens -1,13,11: $(cat "$TMP/sup")"
expect 0 "stdout:And Mr. John" "$SOTTO" transcribe -m "$TINY" -t 2 --beam-size 1 --suppress-tokens "" "$clip"
for list in x 1,,2 -2 13,; do
    expect 1 "--suppress-tokens takes token ids separated by commas" "$SOTTO" transcribe -m "$TINY" --suppress-tokens "$list" "$clip"
done
expect 1 "suppress token 51864: not an id of the model's vocabulary (0..51863" \
    "$SOTTO" transcribe -m "$TINY" -t 2 --suppress-tokens 51864 "$clip"

# openai's spellings named; -o NAME.EXT writes the format EXT names; --output-dir made with
# its parents (os.makedirs)
expect 1 "unknown option '--word_timestamps': sotto spells it --word-timestamps" \
    "$SOTTO" transcribe -m "$TINY" --word_timestamps True "$clip"
expect 1 "--word-timestamps takes no value ('--word-timestamps True'" "$SOTTO" transcribe -m "$TINY" --word-timestamps True "$clip"
expect 1 "sotto spells it --prompt" "$SOTTO" transcribe -m "$TINY" --initial_prompt x "$clip"
# openai's options sotto has not: what to do instead
expect 1 "unknown option '--fp16': sotto has no half-precision switch" "$SOTTO" transcribe -m "$TINY" --fp16 False "$clip"
expect 1 "--quiet is openai's --verbose False" "$SOTTO" transcribe -m "$TINY" --verbose False "$clip"
expect 1 "-m takes a model's path" "$SOTTO" transcribe --model_dir "$TMP" "$clip"
expect 1 "not 'None' (openai's None: --no-fallback)" \
    "$SOTTO" transcribe -m "$TINY" --temperature-increment-on-fallback None "$clip"
expect 1 "unknown language 'None' (a code as de, or openai's name as German; auto detects it)" \
    "$SOTTO" transcribe -m "$TINY" -l None "$clip"
"$SOTTO" transcribe -m "$TINY" -t 2 --beam-size 1 -o "$TMP/o.SRT" "$clip" 2>/dev/null
grep -q -- "-->" "$TMP/o.SRT" && ok || bad "-o o.SRT wrote no srt: $(head -c 200 "$TMP/o.SRT")"
expect 0 "note: -o $TMP/o.srt gets txt, as -f says (not srt)" \
    "$SOTTO" transcribe -m "$TINY" -t 2 --beam-size 1 -f txt -o "$TMP/o.srt" "$clip"
grep -q -- "-->" "$TMP/o.srt" && bad "-f txt -o o.srt wrote srt" || ok
"$SOTTO" transcribe -m "$TINY" -t 2 --beam-size 1 -f vtt --output-dir "$TMP/deep/er/dir" "$clip" 2>/dev/null
[[ -s $TMP/deep/er/dir/librivox-0870.vtt ]] && ok || bad "--output-dir deep/er/dir not made"
expect 2 "(--output-dir DIR writes" "$SOTTO" transcribe -m "$TINY" -o "$TMP" "$clip"
echo "transcribe ux: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
