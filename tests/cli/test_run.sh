#!/bin/bash
# test_run.sh — drives `sotto run` (and `sotto mel`) through every rule of its contract
# (shared/DESIGN.md §4): exit codes, messages, the token budget and the number of
# decoder forward passes, on the real tiny.en model and a small random model.
# usage: test_run.sh SOTTO TINY_EN.gguf SMALL_RANDOM.gguf GOLDEN_DIR CLIPS_DIR TMP_DIR
# Every command runs on $SOTTO_DEVICE (the CLI's default device: auto when unset);
# TEST_RUN_CLIPS (names, space-separated) limits the golden clips checked one by one.
# TEST_RUN_SCOPE=device keeps, of the checks that run tiny.en's encoder, those whose result
# comes from the device (ids, forward passes, the budget, EOS), for runs where each decode
# is slow (~10 s on a software Vulkan device; sanitized in make test-asan-ci); the others
# (CRLF files, prefix spellings, model resolution, resampled input) are the CLI's own and
# run in the plain build's cli_run. The strict parsing runs either way. Unset: everything.
set -u
SOTTO=$1 TINY=$2 SMALL=$3 GOLDEN=$4 CLIPS=$5 TMP=$6
mkdir -p "$TMP"
pass=0 fail=0

. "$(dirname "$0")/lib.sh"
# full CMD...: runs `expect CMD...` unless TEST_RUN_SCOPE=device
full() { [[ ${TEST_RUN_SCOPE:-} == device ]] || expect "$@"; }

MEL=$TMP/clip.mel
# a 44.1 kHz copy of a clip: header edit (sample rate at byte 24, byte rate at 28)
python3 - "$CLIPS/librivox-0880.wav" "$TMP/44k.wav" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<II", b, 24, 44100, 88200)
open(sys.argv[2], "wb").write(b)
PY
"$SOTTO" mel "$CLIPS/librivox-0870.wav" "$MEL" || { echo "FAIL: sotto mel"; exit 1; }
cmp -s "$MEL" /dev/null && { echo "FAIL: empty mel"; exit 1; }
REF=$GOLDEN/librivox-0870.run32.ids
RUN=("$SOTTO" run -m "$TINY" --mel "$MEL" -t 2)

# --- the golden clips: sotto mel + sotto run --expected the eager ids ----------------
for ids in "$GOLDEN"/*.run32.ids; do
    name=$(basename "$ids" .run32.ids)
    [[ -n ${TEST_RUN_CLIPS:-} && " $TEST_RUN_CLIPS " != *" $name "* ]] && continue
    "$SOTTO" mel "$CLIPS/$name.wav" "$TMP/$name.mel"
    expect 0 "generated" "$SOTTO" run -m "$TINY" --mel "$TMP/$name.mel" --expected "$ids"
done
# a one-id edit of the reference exits 3 and names the position and both ids
awk '{ $5 = $5 + 1; print }' "$REF" >"$TMP/edited.ids"
want=$(awk '{ print $5 }' "$REF")
expect 3 "mismatch at position 4: expected $((want + 1)), got $want" "${RUN[@]}" --expected "$TMP/edited.ids"
awk '{ NF = NF - 1; print }' "$REF" >"$TMP/short.ids"
full 3 "expected the end of the sequence" "${RUN[@]}" --expected "$TMP/short.ids"
# CRLF line ends and surrounding blanks in files are fine
sed 's/$/\r/; s/ /\t /g' "$REF" >"$TMP/crlf.ids"
full 0 "generated" "${RUN[@]}" --expected "$TMP/crlf.ids"

# --- output: complete sequence on stdout, EOS included ------------------------------
expect 0 "stdout:$(cat "$REF")" "${RUN[@]}"
n_ref=$(wc -w <"$REF")
expect 0 "prefix 2, generated $((n_ref - 2)), forward passes: prefill 1, steps $((n_ref - 3))" "${RUN[@]}"

# --- the token budget ----------------------------------------------------------------
expect 0 "stdout:50257 50362" "${RUN[@]}" --max-new-tokens 0
expect 0 "generated 0, forward passes: prefill 0, steps 0" "${RUN[@]}" --max-new-tokens 0
expect 0 "generated 1, forward passes: prefill 1, steps 0" "${RUN[@]}" --max-new-tokens 1
full 0 "stdout:$(cut -d' ' -f1-3 "$REF")" "${RUN[@]}" --max-new-tokens 1
full 0 "generated 5, forward passes: prefill 1, steps 4" "${RUN[@]}" --max-new-tokens 5
# a budget beyond the context is capped at n_text_ctx - prefix: 446 + 2 = 448 ids
"$SOTTO" run -m "$SMALL" --mel "$MEL" --max-new-tokens 100000 --eos 0 >"$TMP/cap.out" 2>"$TMP/cap.err"
n=$(wc -w <"$TMP/cap.out")
if [[ $n -eq 448 ]] && grep -qF "generated 446, forward passes: prefill 1, steps 445" "$TMP/cap.err"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL: budget cap: $n ids; $(cat "$TMP/cap.err")"
fi
# the greedy argmax through the vocabulary proxy picks the ids every logit picks: 446
# steps of a random model (flat logits, close margins), proxy on and off
SOTTO_VOCAB_PROXY=0 "$SOTTO" run -m "$SMALL" --mel "$MEL" --max-new-tokens 100000 --eos 0 >"$TMP/cap0.out" 2>/dev/null
if cmp -s "$TMP/cap.out" "$TMP/cap0.out"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL: ids differ with SOTTO_VOCAB_PROXY=0"
fi
# the default budget is 32
expect 0 "generated 32, forward passes: prefill 1, steps 31" "$SOTTO" run -m "$SMALL" --mel "$MEL" --eos 0
# a prefix that fills the context comes back unchanged, exit 0, no forward pass
seq -s' ' 1 448 >"$TMP/full.ids"
expect 0 "stdout:$(cat "$TMP/full.ids")" "$SOTTO" run -m "$SMALL" --mel "$MEL" --prefix-file "$TMP/full.ids"
expect 0 "prefill 0, steps 0" "$SOTTO" run -m "$SMALL" --mel "$MEL" --prefix-file "$TMP/full.ids"
seq -s' ' 1 447 >"$TMP/almost.ids"
expect 0 "generated 1, forward passes: prefill 1, steps 0" "$SOTTO" run -m "$SMALL" --mel "$MEL" --prefix-file "$TMP/almost.ids"
seq -s' ' 1 449 >"$TMP/over.ids"
expect 1 "more than the decoder context of 448" "$SOTTO" run -m "$SMALL" --mel "$MEL" --prefix-file "$TMP/over.ids"

# --- EOS handling --------------------------------------------------------------------
third=$(awk '{ print $4 }' "$REF")
expect 0 "stdout:$(cut -d' ' -f1-4 "$REF")" "${RUN[@]}" --eos "99,$third"
full 0 "generated 2, forward passes: prefill 1, steps 1" "${RUN[@]}" --eos " $third "
# explicit prefix equals the default
full 0 "stdout:$(cat "$REF")" "${RUN[@]}" --prefix 50257,50362
printf '50257\r\n50362\r\n' >"$TMP/prefix.txt"
full 0 "stdout:$(cat "$REF")" "${RUN[@]}" --prefix-file "$TMP/prefix.txt"

# --- strict parsing: every flag, every malformed form, exit 1 -------------------------
for flag in --prefix --eos; do
    expect 1 "$flag: item 2 '12abc' is not a decimal token id" "${RUN[@]}" $flag "50257,12abc"
    expect 1 "$flag: item 1 '1.5'" "${RUN[@]}" $flag 1.5
    expect 1 "$flag: item 1 '0x10'" "${RUN[@]}" $flag 0x10
    expect 1 "$flag: item 1 '+-3'" "${RUN[@]}" $flag +-3
    expect 1 "$flag: item 1 '-3' is negative" "${RUN[@]}" $flag -3
    expect 1 "$flag: item 1 '51864' is outside the vocabulary" "${RUN[@]}" $flag 51864
    expect 1 "$flag: item 1 '99999999999' overflows" "${RUN[@]}" $flag 99999999999
    expect 1 "$flag: item 2 is empty" "${RUN[@]}" $flag 1,,2
    expect 1 "$flag: item 1 is empty" "${RUN[@]}" $flag ,
    expect 1 "$flag: item 1 is empty" "${RUN[@]}" $flag ,,
    expect 1 "$flag: item 3 is empty (trailing comma)" "${RUN[@]}" $flag 1,2,
    expect 1 "$flag: the list is empty" "${RUN[@]}" $flag ""
done
printf '50257 abc\n' >"$TMP/bad1.ids"
expect 1 "--prefix-file $TMP/bad1.ids: item 2 'abc'" "${RUN[@]}" --prefix-file "$TMP/bad1.ids"
printf '1,,2\n' >"$TMP/bad2.ids"
expect 1 "--expected $TMP/bad2.ids: item 2 is empty" "${RUN[@]}" --expected "$TMP/bad2.ids"
printf '\n\n' >"$TMP/empty.ids"
expect 1 "--expected $TMP/empty.ids: the list is empty" "${RUN[@]}" --expected "$TMP/empty.ids"
printf '50257 50362 51864\n' >"$TMP/oov.ids"
expect 1 "--expected $TMP/oov.ids: item 3 '51864' is outside the vocabulary" "${RUN[@]}" --expected "$TMP/oov.ids"
expect 1 "cannot open" "${RUN[@]}" --expected "$TMP/missing.ids"
# validation happens before the model runs: no forward-pass report on stderr
expect 1 "'x'" "${RUN[@]}" --eos x
if grep -q "forward passes" "$TMP/err"; then fail=$((fail + 1)); echo "FAIL: ran before validating"; else pass=$((pass + 1)); fi

# --- arguments and inputs ------------------------------------------------------------
expect 1 "unknown option '--bogus'" "${RUN[@]}" --bogus
expect 1 "--mel needs a value" "$SOTTO" run -m "$TINY" --mel
expect 1 "--mel FILE is required" "$SOTTO" run -m "$TINY"
expect 1 "--max-new-tokens takes a decimal integer" "${RUN[@]}" --max-new-tokens -1
expect 1 "--max-new-tokens takes a decimal integer" "${RUN[@]}" --max-new-tokens 3x
expect 1 "not both" "${RUN[@]}" --prefix 1 --prefix-file "$TMP/prefix.txt"
head -c 959996 "$MEL" >"$TMP/short.mel"
expect 1 "must be exactly 80 x 3000 float32 values" "$SOTTO" run -m "$TINY" --mel "$TMP/short.mel"
cat "$MEL" "$MEL" >"$TMP/long.mel"
expect 1 "must be exactly 80 x 3000 float32 values" "$SOTTO" run -m "$TINY" --mel "$TMP/long.mel"
# a NaN (bytes 00 00 c0 7f) at value 15007 (bin 5, frame 7), then +inf (00 00 80 7f) at 0
{ head -c 60028 "$MEL"; printf '\000\000\300\177'; tail -c +60033 "$MEL"; } >"$TMP/nan.mel"
expect 1 "value 15007 (bin 5, frame 7) is nan: the mel input must be finite" "$SOTTO" run -m "$TINY" --mel "$TMP/nan.mel"
{ printf '\000\000\200\177'; tail -c +5 "$MEL"; } >"$TMP/inf.mel"
expect 1 "value 0 (bin 0, frame 0) is inf" "$SOTTO" run -m "$TINY" --mel "$TMP/inf.mel"
expect 1 "cannot open" "$SOTTO" run -m "$TINY" --mel "$TMP/nothing.mel"
expect 2 "cannot load model" "$SOTTO" run -m "$TMP/nothing.gguf" --mel "$MEL"
printf 'GGUF garbage' >"$TMP/garbage.gguf"
expect 2 "cannot load model" "$SOTTO" run -m "$TMP/garbage.gguf" --mel "$MEL"
expect 0 "stdout:usage: sotto run" "$SOTTO" run --help
expect 0 "stdout:(kernels: scalar)" env SOTTO_KERNELS=scalar "$SOTTO" --version
# the AVX-VNNI set where the CPU has it (Linux flags), and its name in sotto bench's device
if grep -qw avx_vnni /proc/cpuinfo 2>/dev/null && grep -qw avx2 /proc/cpuinfo; then
    expect 0 "stdout:(kernels: avx_vnni)" env SOTTO_KERNELS=avx_vnni "$SOTTO" --version
fi

# --- model resolution: -m, then $SOTTO_MODEL, then the installed default -----------
full 0 "stdout:And Mr. John Dashwood" env SOTTO_MODEL="$TINY" "$SOTTO" transcribe "$CLIPS/librivox-0870.wav"
mkdir -p "$TMP/xdg/sotto/models"
ln -sf "$(cd "$(dirname "$TINY")" && pwd)/$(basename "$TINY")" "$TMP/xdg/sotto/models/tiny.en.gguf"
full 0 "stdout:And Mr. John Dashwood" env -u SOTTO_MODEL XDG_DATA_HOME="$TMP/xdg" "$SOTTO" transcribe "$CLIPS/librivox-0870.wav"
expect 1 "no model given and none installed" env -u SOTTO_MODEL XDG_DATA_HOME="$TMP/none" "$SOTTO" transcribe "$CLIPS/librivox-0870.wav"
expect 2 "cannot load model" env SOTTO_MODEL="$TMP/garbage.gguf" "$SOTTO" transcribe -m "$TMP/nothing.gguf" "$CLIPS/librivox-0870.wav"
# a 44.1 kHz WAV: FFmpeg resamples it; a build without FFmpeg refuses it, naming the packages
if "$SOTTO" --version | grep -q "FFmpeg reads"; then
    expect 0 "stdout:" "$SOTTO" transcribe -m "$SMALL" "$TMP/44k.wav"
    NOT_AUDIO="clip.mel: " # raw floats: FFmpeg's probe takes them for some format, its decoder refuses them
else
    expect 1 "44100 Hz; sotto needs 16000 Hz for now" "$SOTTO" transcribe -m "$SMALL" "$TMP/44k.wav"
    expect 1 "libavformat-dev libavcodec-dev libswresample-dev" "$SOTTO" transcribe -m "$SMALL" "$TMP/44k.wav"
    NOT_AUDIO="not a RIFF/WAVE file"
fi

# --- sotto mel -----------------------------------------------------------------------
expect 1 "expected AUDIO and OUT" "$SOTTO" mel "$CLIPS/librivox-0870.wav"
expect 1 "$NOT_AUDIO" "$SOTTO" mel "$MEL" "$TMP/x.mel"
"$SOTTO" mel --n-mels 128 "$CLIPS/librivox-0870.wav" "$TMP/128.mel"
size=$(stat -c %s "$TMP/128.mel")
if [[ $size -eq 1536000 ]]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: 128-bin mel is $size bytes"; fi

# --- the device: stderr names the one the commands ran on ------------------------------
want_dev=${SOTTO_DEVICE:-auto}
[[ $want_dev == auto ]] && want_dev=""
expect 0 "device ${want_dev%%:*}" "${RUN[@]}" --max-new-tokens 1

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
