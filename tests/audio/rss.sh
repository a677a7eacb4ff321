#!/bin/bash
# rss.sh — decoding is streaming: the peak resident set of audio_dump reading a
# 60-minute file through sotto_audio_read (16000 samples a call, thrown away) must not
# exceed that of a 1-minute file by more than MAX_GROWTH_KB (default 2048; holding 60 min
# of 16 kHz floats would take 230 MB). Two paths: an MP3 (22.05 kHz mono, FFmpeg + swr)
# and a 16 kHz PCM16 WAV (the built-in reader). The 60-minute files are a 1-minute piece
# repeated (bare MP3 frames concatenate; the WAV is written piece by piece) and are
# deleted at the end. Prints the figures docs/BENCHMARKS.md records.
# usage: rss.sh AUDIO_DUMP CLIPS_DIR TMP_DIR [MAX_GROWTH_KB]
set -u
DUMP=$1 CLIPS=$2 TMP=$3 MAX=${4:-2048}
rm -rf "$TMP" && mkdir -p "$TMP"
FF="ffmpeg -nostdin -v error -y"
# one minute of speech: the LibriVox clips over and over
for c in "$CLIPS"/librivox-*.wav; do echo "file '$(cd "$(dirname "$c")" && pwd)/$(basename "$c")'"; done >"$TMP/list.txt"
for i in 1 2 3; do cat "$TMP/list.txt"; done >"$TMP/list3.txt"
$FF -f concat -safe 0 -i "$TMP/list3.txt" -t 60 -c:a pcm_s16le "$TMP/min.wav" || exit 1
$FF -i "$TMP/min.wav" -ar 22050 -c:a libmp3lame -b:a 32k -write_xing 0 -id3v2_version 0 "$TMP/1min.mp3" || exit 1
for i in $(seq 60); do cat "$TMP/1min.mp3"; done >"$TMP/60min.mp3"
python3 - "$TMP/min.wav" "$TMP/1min.wav" "$TMP/60min.wav" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
i = b.find(b"data")
pcm = b[i + 8:i + 8 + struct.unpack("<I", b[i + 4:i + 8])[0]]
for path, reps in ((sys.argv[2], 1), (sys.argv[3], 60)):
    with open(path, "wb") as f:
        n = len(pcm) * reps
        f.write(b"RIFF" + struct.pack("<I", 36 + n) + b"WAVEfmt " +
                struct.pack("<IHHIIHH", 16, 1, 1, 16000, 32000, 2, 16) + b"data" + struct.pack("<I", n))
        for _ in range(reps):
            f.write(pcm)
PY
fail=0
for kind in mp3 wav; do
    line1=$("$DUMP" "$TMP/1min.$kind" none --chunk 16000) || { echo "FAIL: 1min.$kind"; exit 1; }
    t0=$(date +%s.%N)
    line60=$("$DUMP" "$TMP/60min.$kind" none --chunk 16000) || { echo "FAIL: 60min.$kind"; exit 1; }
    t1=$(date +%s.%N)
    s1=$(echo "$line1" | awk '{print $2}') s60=$(echo "$line60" | awk '{print $2}')
    r1=$(echo "$line1" | awk '{print $6}') r60=$(echo "$line60" | awk '{print $6}')
    secs=$(echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}')
    echo "$kind: 1 min: $s1 samples, peak RSS $r1 kB; 60 min: $s60 samples, peak RSS $r60 kB (+$((r60 - r1)) kB), decoded in $secs s"
    if [[ $s60 -lt $((s1 * 59)) ]]; then echo "FAIL $kind: the 60-minute file gave $s60 samples"; fail=1; fi
    if [[ $((r60 - r1)) -gt $MAX ]]; then echo "FAIL $kind: peak RSS grew by more than $MAX kB"; fail=1; fi
done
rm -f "$TMP/60min.mp3" "$TMP/60min.wav"
[[ $fail -eq 0 ]] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
