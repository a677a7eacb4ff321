#!/bin/bash
# bad_inputs.sh — damaged audio made at test time from the valid inputs of make_inputs.sh
# (the first clip of each format), judged as the ffmpeg command openai-whisper runs judges
# it (`ffmpeg -nostdin -threads 0 -i FILE -f s16le -ac 1 -acodec pcm_s16le -ar 16000 -`):
# where it exits 0, `sotto mel` exits 0 too (with a warning naming the file where it read
# around damage) and sotto_audio_read's samples (audio_dump) equal the command's bit for
# bit; where it fails (exit 1, or 69 past 2/3 of the packets undecodable), sotto exits 1
# with a message naming the file. Never a crash (exit >= 124, a sanitizer report).
# tests/data/malformed/media/ holds small committed cases of the same kinds.
#   cut5, cut50   the first 5 % / 50 % of the file
#   smear         10 % of the bytes from the middle overwritten (compressed formats; in
#                 PCM WAV any bytes are valid samples)
# One difference, documented (README, Audio input): a FLAC frame whose damaged header
# gives it a timestamp that runs back is dropped by the command's muxer (s16le: "non
# monotonically increasing dts"); sotto keeps its samples (flac44s and surround, smear).
# plus: video without an audio stream (MP4, Matroska), text files named .mp3/.m4a/.flac/.ogg,
# an empty file, empty and text standard input, /dev/null, a directory, a missing file;
# damaged files through `sotto transcribe` and on standard input.
# plus: WAV files declaring 8 Hz and 1 Hz (a few bytes that would be hours of audio) are
# refused at once, as is a Matroska file of 8 Hz PCM (FFmpeg's path).
# usage: bad_inputs.sh SOTTO TINY_EN.gguf INPUTS_DIR TMP_DIR AUDIO_DUMP
set -u
SOTTO=$1 TINY=$2 IN=$3 TMP=$4 DUMP=$5
rm -rf "$TMP" && mkdir -p "$TMP"
pass=0 fail=0
TO=()
command -v timeout >/dev/null && TO=(timeout 300)
CRASH='AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|runtime error:|Segmentation fault|core dumped|Aborted'

# expect CODE NEEDLE NAME CMD...: CMD's exit code is CODE and its stderr holds NEEDLE
expect() {
    local code=$1 needle=$2 name=$3
    shift 3
    "${TO[@]}" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    local rc=$? why=
    if [[ $rc -ge 124 ]]; then why="crashed or timed out (exit $rc)"
    elif grep -qE "$CRASH" "$TMP/err"; then why="sanitizer or crash report"
    elif [[ $rc != "$code" ]]; then why="exit $rc, expected $code"
    elif [[ -n $needle ]] && ! grep -qF -- "$needle" "$TMP/err"; then why="stderr lacks '$needle'"
    fi
    if [[ -z $why ]]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL $name: $why; stderr: $(head -c 300 "$TMP/err")"; fi
}
# expect_stdin CODE NEEDLE NAME FILE CMD...: the same with FILE on standard input
expect_stdin() {
    local code=$1 needle=$2 name=$3 file=$4
    shift 4
    "${TO[@]}" "$@" >"$TMP/out" 2>"$TMP/err" <"$file"
    local rc=$? why=
    if [[ $rc -ge 124 ]] || grep -qE "$CRASH" "$TMP/err"; then why="crashed (exit $rc)"
    elif [[ $rc != "$code" ]]; then why="exit $rc, expected $code"
    elif [[ -n $needle ]] && ! grep -qF -- "$needle" "$TMP/err"; then why="stderr lacks '$needle'"
    fi
    if [[ -z $why ]]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL $name: $why; stderr: $(head -c 300 "$TMP/err")"; fi
}

damage() { # damage SRC DST MODE
    python3 - "$@" <<'PY'
import sys
src, dst, mode = sys.argv[1:4]
b = bytearray(open(src, "rb").read())
n = len(b)
if mode == "cut5":
    b = b[:max(n // 20, 1)]
elif mode == "cut50":
    b = b[:n // 2]
else:
    for i in range(n // 2, n // 2 + n // 10):
        b[i] = (i * 131 + 7) & 255
open(dst, "wb").write(b)
PY
}

for dir in "$IN"/*/; do
    fmt=$(basename "$dir")
    src=$(ls "$dir"* | head -1)
    ext=${src##*.}
    for mode in cut5 cut50 smear; do
        case $fmt/$mode in
            pcm16/smear|wav*/smear|u8_22k/smear) continue ;;  # PCM: any bytes are samples
        esac
        bad=$TMP/$fmt-$mode.$ext
        damage "$src" "$bad" "$mode"
        ffmpeg -nostdin -threads 0 -i "$bad" -f s16le -ac 1 -acodec pcm_s16le -ar 16000 - 2>/dev/null >"$TMP/ref.s16"
        if [[ $? -ne 0 ]]; then
            expect 1 "$bad: " "$fmt $mode (the ffmpeg command fails too)" "$SOTTO" mel "$bad" "$TMP/o.mel"
            continue
        fi
        expect 0 "" "$fmt $mode (read as the ffmpeg command reads it)" "$SOTTO" mel "$bad" "$TMP/o.mel"
        case $fmt/$mode in flac44s/smear|surround/smear) continue ;; esac  # the muxer's drop (above)
        rm -f "$TMP/got.s16"
        "$DUMP" "$bad" "$TMP/got.s16" --s16 --chunk 1237 >/dev/null 2>&1
        if cmp -s "$TMP/ref.s16" "$TMP/got.s16"; then pass=$((pass + 1)); else
            fail=$((fail + 1)); echo "FAIL $fmt $mode: samples differ from the ffmpeg command's"; fi
    done
done

FF="ffmpeg -nostdin -v error -y"
$FF -f lavfi -i "color=c=red:s=32x32:r=5:d=1" -c:v mpeg4 -an "$TMP/video-only.mp4"
$FF -f lavfi -i "color=c=red:s=32x32:r=5:d=1" -c:v mpeg4 -an "$TMP/video-only.mkv"
expect 1 "no audio stream (the mov,mp4,m4a,3gp,3g2,mj2 file holds: video (mpeg4))" "video-only mp4" \
    "$SOTTO" mel "$TMP/video-only.mp4" "$TMP/o.mel"
expect 1 "no audio stream (the matroska,webm file holds: video (mpeg4))" "video-only mkv" \
    "$SOTTO" mel "$TMP/video-only.mkv" "$TMP/o.mel"
expect 1 "no audio stream" "transcribe video-only" "$SOTTO" transcribe -m "$TINY" "$TMP/video-only.mp4"
for ext in mp3 m4a flac ogg; do
    printf 'Call me Ishmael. Some years ago, never mind how long precisely.\n' >"$TMP/text.$ext"
    expect 1 "text.$ext: " "text file .$ext" "$SOTTO" mel "$TMP/text.$ext" "$TMP/o.mel"
done
expect 1 "text.mp3: not an audio or video file FFmpeg can read" "transcribe text .mp3" \
    "$SOTTO" transcribe -m "$TINY" "$TMP/text.mp3"
: >"$TMP/empty.flac"
expect 1 "empty.flac: empty file (0 bytes)" "empty file" "$SOTTO" mel "$TMP/empty.flac" "$TMP/o.mel"
expect 1 "standard input: empty file (0 bytes)" "empty stdin" "$SOTTO" mel - "$TMP/o.mel"
expect 1 "/dev/null: empty file (0 bytes)" "/dev/null" "$SOTTO" mel /dev/null "$TMP/o.mel"
expect_stdin 1 "standard input: not an audio or video file FFmpeg can read" "text on stdin" "$TMP/text.mp3" \
    "$SOTTO" mel - "$TMP/o.mel"
expect_stdin 0 "warning: standard input: 1 packet of its flac stream did not decode" "damaged FLAC on stdin" \
    "$TMP/flac44s-cut50.flac" "$SOTTO" transcribe -m "$TINY" -
expect 1 "is a directory" "a directory" "$SOTTO" mel "$TMP" "$TMP/o.mel"
expect 1 "cannot open: No such file or directory" "missing file" "$SOTTO" mel "$TMP/nothing.mp3" "$TMP/o.mel"
expect 0 "flac44s-cut50.flac: 1 packet of its flac stream did not decode" "transcribe a cut FLAC" \
    "$SOTTO" transcribe -m "$TINY" "$TMP/flac44s-cut50.flac"
grep -q "Dashwood" "$TMP/out" || { fail=$((fail + 1)); echo "FAIL transcribe a cut FLAC: no text: $(cat "$TMP/out")"; }
expect 1 "flac44s-cut5.flac: cannot decode the audio at" "transcribe a FLAC cut to 5 % (the command exits 69)" \
    "$SOTTO" transcribe -m "$TINY" "$TMP/flac44s-cut5.flac"
# a WAV whose format tag FFmpeg knows no codec for: said so, with the tag (it had said "no
# decoder for its none audio")
python3 -c "
import struct, sys
d = b'\x00\x01' * 8000
sys.stdout.buffer.write(b'RIFF' + struct.pack('<I', 36 + len(d)) + b'WAVEfmt ' +
                        struct.pack('<IHHIIHH', 16, 99, 1, 16000, 32000, 2, 16) + b'data' + struct.pack('<I', len(d)) + d)
" >"$TMP/tag99.wav"
expect 1 "tag99.wav: its audio is in a coding FFmpeg does not know (wav format tag 0x0063)" \
    "a WAV of an unknown format tag" "$SOTTO" transcribe -m "$TINY" "$TMP/tag99.wav"
# a whole file followed by junk (a download with bytes after the end): every word of it
head -c 500 /dev/zero | cat "$(ls "$IN"/mp3_48k/* | head -1)" - >"$TMP/junk-tail.mp3"
expect 0 "junk-tail.mp3: 1 packet of its mp3 stream did not decode" "an MP3 with 500 zero bytes after it" \
    "$SOTTO" transcribe -m "$TINY" -f txt "$TMP/junk-tail.mp3"
"$SOTTO" transcribe -m "$TINY" -f txt "$(ls "$IN"/mp3_48k/* | head -1)" >"$TMP/whole.txt" 2>/dev/null
cmp -s "$TMP/out" "$TMP/whole.txt" && pass=$((pass + 1)) ||
    { fail=$((fail + 1)); echo "FAIL junk after an MP3: text differs from the file's own: $(cat "$TMP/out")"; }

# a truncated WAV is transcribed as far as it goes, with a warning (issue 23, defect 4): the
# built-in reader (16 kHz PCM16, from the file and from a pipe) and FFmpeg's (24-bit, f32)
cut_warn="data chunk claims 227200 bytes but only 113578 follow (truncated file): read the 3.55 s there are"
expect 0 "warning: $TMP/pcm16-cut50.wav: $cut_warn" "transcribe a cut WAV" \
    "$SOTTO" transcribe -m "$TINY" "$TMP/pcm16-cut50.wav"
grep -q "Dashwood" "$TMP/out" || { fail=$((fail + 1)); echo "FAIL transcribe a cut WAV: no text: $(cat "$TMP/out")"; }
expect_stdin 0 "warning: standard input: $cut_warn" "a cut WAV on stdin" "$TMP/pcm16-cut50.wav" \
    "$SOTTO" transcribe -m "$TINY" -
grep -q "Dashwood" "$TMP/out" || { fail=$((fail + 1)); echo "FAIL a cut WAV on stdin: no text: $(cat "$TMP/out")"; }
expect 0 "(truncated file): read what there is" "transcribe a cut 24-bit WAV (FFmpeg)" \
    "$SOTTO" transcribe -m "$TINY" "$TMP/wav24-cut50.wav"
# sample rates no real audio has (issue 23, defect 14): refused at once, not decoded to hours
python3 - "$TMP" <<'PY'
import struct, sys
def wav(path, rate, n):
    data = bytes(2 * n)
    fmt = struct.pack("<HHIIHH", 1, 1, rate, 2 * rate, 2, 16)
    open(path, "wb").write(b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack("<I", 16) + fmt
                           + b"data" + struct.pack("<I", len(data)) + data)
wav(sys.argv[1] + "/rate8.wav", 8, 16000)      # 32 kB: 2000 s
wav(sys.argv[1] + "/rate1.wav", 1, 160000)     # 320 kB: 44 hours
wav(sys.argv[1] + "/rate1000.wav", 1000, 2000) # the lowest rate taken: 2 s
PY
TO_RATE=()
command -v timeout >/dev/null && TO_RATE=(timeout 20)
for r in 8 1; do
    expect 1 "rate$r.wav: a sample rate of $r Hz: no real audio has one below 1000 Hz" "a $r Hz WAV" \
        "${TO_RATE[@]}" "$SOTTO" transcribe -m "$TINY" "$TMP/rate$r.wav"
    expect_stdin 1 "standard input: a sample rate of $r Hz" "a $r Hz WAV on stdin" "$TMP/rate$r.wav" \
        "${TO_RATE[@]}" "$SOTTO" transcribe -m "$TINY" -
done
expect 0 "" "a 1000 Hz WAV" "$SOTTO" mel "$TMP/rate1000.wav" "$TMP/o.mel"
$FF -i "$TMP/rate8.wav" -c:a pcm_s16le "$TMP/rate8.mka"
expect 1 "rate8.mka: a sample rate of 8 Hz: no real audio has one below 1000 Hz" "8 Hz in Matroska (FFmpeg)" \
    "${TO_RATE[@]}" "$SOTTO" transcribe -m "$TINY" "$TMP/rate8.mka"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
