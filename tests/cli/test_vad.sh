#!/usr/bin/env bash
# test_vad.sh — `sotto vad`: the speech intervals of every clip equal the silero-vad
# package's get_speech_timestamps (tests/golden/vad, in seconds with 3 decimals) with its
# defaults and with the flags of four other parameter sets; --probs within 1e-4 of its
# onnxruntime probabilities; the model found through --vad-model, $SOTTO_VAD_MODEL and the
# installed default; exit codes and messages for bad flags, audio and models.
# usage: test_vad.sh SOTTO VAD_MODEL GOLDEN_VAD_DIR CLIPS_DIR WORK_DIR
set -u
SOTTO=$1 MODEL=$2 GOLDEN=$3 CLIPS=$4 WORK=$5
case $MODEL in /*) ;; *) MODEL=$PWD/$MODEL ;; esac
mkdir -p "$WORK"
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# the golden intervals of NAME for VARIANT as `sotto vad` prints them
expected() {
    awk -v v="$2" '$1 == v { for (i = 3; i < NF; i += 2) printf "%.3f %.3f\n", $i / 16000, $(i + 1) / 16000 }' \
        "$GOLDEN/$1.speech"
}

# run NAME: expected exit code, then the command; keeps stdout in $WORK/out, stderr in $WORK/err
run() {
    local want=$1
    shift
    "$@" >"$WORK/out" 2>"$WORK/err"
    local rc=$?
    if [ "$rc" -eq "$want" ]; then ok; else bad "exit $rc (want $want): $* ($(head -c 300 "$WORK/err"))"; fi
}

# 1. every clip, the package's defaults
n=0
for wav in "$CLIPS"/*.wav "$CLIPS"/lang/*.wav; do
    name=$(basename "$wav" .wav)
    run 0 "$SOTTO" vad --vad-model "$MODEL" -t 1 "$wav"
    if cmp -s "$WORK/out" <(expected "$name" default); then ok; else
        bad "$name: intervals differ"; diff "$WORK/out" <(expected "$name" default) | head -5
    fi
    n=$((n + 1))
done
[ "$n" -ge 17 ] && ok || bad "only $n clips"

# 2. the other parameter sets through the flags (scripts/golden_vad.py VARIANTS)
clip=$CLIPS/lang/espeak-ng-fr.wav
while read -r variant flags; do
    # shellcheck disable=SC2086
    run 0 "$SOTTO" vad --vad-model "$MODEL" -t 1 $flags "$clip"
    if cmp -s "$WORK/out" <(expected espeak-ng-fr "$variant"); then ok; else bad "$variant ($flags): intervals differ"; fi
done <<'EOF'
low --threshold 0.3 --min-silence-ms 50 --speech-pad-ms 10
high --threshold=0.7 --neg-threshold 0.6 --min-speech-ms 100 --speech-pad-ms=100
split --max-speech-s 1
merge --min-silence-ms 500 --speech-pad-ms 200 --min-speech-ms 0
wide --min-silence-ms 2000 --speech-pad-ms 400 --min-speech-ms 0 --max-speech-s 5
EOF
# a variant must change the output, or the comparison above proves nothing
cmp -s <(expected espeak-ng-fr low) <(expected espeak-ng-fr default) && bad "variant low equals the defaults" || ok

# 3. --probs: one line per 512 samples, "start probability", within 1e-4 of onnxruntime
run 0 "$SOTTO" vad --vad-model "$MODEL" --probs "$CLIPS/librivox-0880.wav"
if paste -d ' ' "$WORK/out" "$GOLDEN/librivox-0880.probs" | awk '
    { d = $2 - $3; if (d < 0) d = -d; if (d > m) m = d; if ($1 != sprintf("%.3f", (NR - 1) * 512 / 16000)) t = 1 }
    END { exit !(NR == 94 && m <= 1e-4 && !t) }'; then ok; else bad "--probs: lines, times or values differ"; fi
[ "$(wc -l <"$WORK/out")" -eq "$(wc -l <"$GOLDEN/librivox-0880.probs")" ] && ok || bad "--probs: line count"

# 4. where the model comes from
run 0 env SOTTO_VAD_MODEL="$MODEL" "$SOTTO" vad "$CLIPS/librivox-0880.wav"
cmp -s "$WORK/out" <(expected librivox-0880 default) && ok || bad "SOTTO_VAD_MODEL"
mkdir -p "$WORK/xdg/sotto/models"
ln -sf "$MODEL" "$WORK/xdg/sotto/models/silero-vad.gguf"
run 0 env -u SOTTO_VAD_MODEL XDG_DATA_HOME="$WORK/xdg" "$SOTTO" vad "$CLIPS/librivox-0880.wav"
cmp -s "$WORK/out" <(expected librivox-0880 default) && ok || bad "the default model under XDG_DATA_HOME"
run 1 env -u SOTTO_VAD_MODEL XDG_DATA_HOME="$WORK/none" "$SOTTO" vad "$CLIPS/librivox-0880.wav"
grep -q "no VAD model given and none installed at $WORK/none/sotto/models/silero-vad.gguf" "$WORK/err" && ok ||
    bad "missing default model: $(cat "$WORK/err")"
run 2 env SOTTO_VAD_MODEL="$WORK/none.gguf" "$SOTTO" vad "$CLIPS/librivox-0880.wav"
grep -q "cannot load VAD model: .*none.gguf: cannot open" "$WORK/err" && ok || bad "bad SOTTO_VAD_MODEL: $(cat "$WORK/err")"
run 2 "$SOTTO" vad --vad-model "$CLIPS/librivox-0880.wav" "$CLIPS/librivox-0880.wav"
grep -q "not a GGUF file" "$WORK/err" && ok || bad "a WAV as the model: $(cat "$WORK/err")"

# 5. bad arguments and audio: exit 1 with a message
while read -r want args; do
    # shellcheck disable=SC2086
    run 1 "$SOTTO" vad --vad-model "$MODEL" $args
    want=${want//_/ }
    grep -q -- "$want" "$WORK/err" && ok || bad "'$args': message lacks '$want': $(head -c 200 "$WORK/err")"
done <<EOF
number_in_0..1 --threshold 2 $clip
number_in_0..1 --threshold abc $clip
number_in_0..1 --neg-threshold -0.1 $clip
milliseconds --min-speech-ms -5 $clip
milliseconds --speech-pad-ms 1.5 $clip
milliseconds --min-silence-ms $clip
seconds --max-speech-s 0 $clip
thread --threads 257 $clip
takes_no_value --probs=1 $clip
unknown_option --frobnicate $clip
expected_AUDIO --probs
one_AUDIO $clip $clip
cannot_open $WORK/missing.wav
EOF
run 0 "$SOTTO" vad --help
grep -q -- "--speech-pad-ms" "$WORK/out" && ok || bad "--help"
run 0 "$SOTTO" --help
grep -q "vad \[--vad-model PATH\] AUDIO" "$WORK/out" && ok || bad "sotto --help lists vad"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
