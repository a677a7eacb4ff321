#!/bin/sh
# make_media.sh — writes the damaged audio/video inputs of tests/cli/malformed.sh under
# media/ (committed; run by hand when one is added: the bytes depend on the FFmpeg
# version, the expectations in MANIFEST.tsv do not). Valid 1-2 s sines made by ffmpeg,
# then truncated, overwritten or emptied by python3. Needs ffmpeg with libmp3lame and
# libopus (Debian's).
# usage: sh tests/data/malformed/make_media.sh
set -eu
cd "$(dirname "$0")"
rm -rf media && mkdir media && cd media
F="ffmpeg -nostdin -v error -y -fflags +bitexact"
A="-flags:a +bitexact"
$F -f lavfi -i "sine=f=440:d=1:r=8000" -c:a flac $A ok.flac
$F -f lavfi -i "sine=f=440:d=2:r=16000" -c:a libmp3lame -b:a 32k $A ok.mp3
$F -f lavfi -i "sine=f=440:d=1:r=16000" -c:a aac -b:a 24k $A ok.m4a
$F -f lavfi -i "sine=f=440:d=1:r=48000" -c:a libopus -b:a 16k $A ok.opus
$F -f lavfi -i "color=c=blue:s=16x16:r=5:d=0.4" -c:v mpeg4 -flags:v +bitexact -an video-only.mp4
python3 - <<'PY'
def cut(src, dst, frac):
    b = open(src, "rb").read()
    open(dst, "wb").write(b[:int(len(b) * frac)])

def smear(src, dst, at, n, mul):
    b = bytearray(open(src, "rb").read())
    start = int(len(b) * at) if isinstance(at, float) else at
    for i in range(start, start + n):
        b[i] = (i * mul) & 255
    open(dst, "wb").write(b)

cut("ok.flac", "trunc.flac", 0.85)       # inside the last frames (the first 8 KiB are padding)
cut("ok.mp3", "trunc.mp3", 0.5)          # its Xing header still counts every frame
cut("ok.m4a", "no-moov.m4a", 0.5)        # the index (moov) comes last: gone
cut("ok.opus", "trunc.opus", 0.5)
smear("ok.flac", "corrupt.flac", 0.85, 200, 91)
smear("ok.mp3", "corrupt.mp3", 1 / 3, 600, 73)
# every FLAC frame but the first spoilt past its header: 13 of 14 do not decode, past the
# 2/3 at which the ffmpeg command exits 69 (and openai-whisper fails)
b = bytearray(open("ok.flac", "rb").read())
syncs = [i for i in range(len(b) - 1) if b[i] == 0xFF and b[i + 1] == 0xF8]
for s in syncs[1:]:
    for i in range(s + 20, min(s + 60, len(b))):
        b[i] ^= 0x5A
open("mostly-bad.flac", "wb").write(b)
m4a = open("ok.m4a", "rb").read()
smear("ok.m4a", "corrupt.m4a", m4a.find(b"mdat") + 200, 400, 37)
open("text.mp3", "w").write("This is a text file, not audio.\n")
open("empty.mp3", "w").write("")
PY
rm ok.m4a ok.opus
ls -l
