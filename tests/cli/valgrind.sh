#!/bin/bash
# valgrind.sh — the CLI end to end under valgrind memcheck: zero errors, zero definite or
# indirect leaks. Uses the small random model so the encoder stays affordable under
# valgrind; the paths (WAV, FFmpeg decoding, mel, encoder, cross K/V, cache, greedy, detokenize, output,
# model loading from GGUF and CTranslate2, bad input) are the same as for real models.
# usage: valgrind.sh SOTTO SMALL.gguf CT2_DIR CLIP.wav TMP_DIR
set -u
SOTTO=$1 SMALL=$2 CT2=$3 CLIP=$4 TMP=$5
mkdir -p "$TMP"
VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect --suppressions="$(dirname "$0")/valgrind.supp")
# the CPU device: auto would open the Vulkan loader and whatever drivers are installed, whose
# own allocations and dlopen paths are not this program's (and run ~50x slower here)
export SOTTO_DEVICE=cpu
pass=0 fail=0
check() { # check WANT_RC CMD...
    local want=$1
    shift
    "${VG[@]}" "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [[ $rc -eq $want ]]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL (exit $rc, want $want): $*"; tail -20 "$TMP/err"; fi
}
"$SOTTO" mel "$CLIP" "$TMP/clip.mel"
# the random model never ends a window: a few tokens each way (greedy; beams and sampling
# with the fallback) cover the paths at a bearable valgrind cost
check 0 "$SOTTO" transcribe -m "$SMALL" -t 2 --beam-size 1 --no-fallback --sample-len 8 "$CLIP"
check 0 "$SOTTO" transcribe -m "$SMALL" -t 2 --beam-size 2 --best-of 2 --temperature-increment-on-fallback 1 \
    --sample-len 6 -f json "$CLIP"
check 0 "$SOTTO" run -m "$SMALL" --mel "$TMP/clip.mel" --max-new-tokens 3 -t 2
check 0 "$SOTTO" mel "$CLIP" "$TMP/again.mel"
check 0 "$SOTTO" info "$CT2"
check 0 "$SOTTO" convert "$SMALL" "$TMP/small-q8.gguf" --type q8_0
check 0 "$SOTTO" info "$TMP/small-q8.gguf"
check 1 "$SOTTO" run -m "$SMALL" --mel "$TMP/clip.mel" --prefix 1,,2
check 2 "$SOTTO" info "$TMP/clip.mel"
# a log-mel file is not audio: refused (2000 bytes of it: FFmpeg takes the whole 960 kB file
# for 600 s of some raw codec and decodes it all before it fails, minutes under valgrind)
head -c 2000 "$TMP/clip.mel" >"$TMP/short.mel"
check 1 "$SOTTO" transcribe -m "$SMALL" "$TMP/short.mel"
# the FFmpeg path (a build with it): a stereo 44.1 kHz FLAC from a file and from a pipe,
# and a damaged one refused
if "$SOTTO" --version | grep -q "FFmpeg reads" && command -v ffmpeg >/dev/null; then
    ffmpeg -nostdin -v error -y -i "$CLIP" -ar 44100 -ac 2 "$TMP/clip.flac"
    check 0 "$SOTTO" mel "$TMP/clip.flac" "$TMP/flac.mel"
    "${VG[@]}" "$SOTTO" mel - "$TMP/pipe.mel" <"$TMP/clip.flac" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [[ $rc -eq 0 ]]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL (exit $rc): mel - < clip.flac"; tail -20 "$TMP/err"; fi
    head -c 30000 "$TMP/clip.flac" >"$TMP/cut.flac"  # read around, as ffmpeg reads it (a warning)
    check 0 "$SOTTO" mel "$TMP/cut.flac" "$TMP/cut.mel"
    head -c 30000 /dev/urandom >"$TMP/noise.flac"    # not audio at all
    check 1 "$SOTTO" mel "$TMP/noise.flac" "$TMP/noise.mel"
fi
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
