#!/bin/sh
# make_inputs.sh — the audio test inputs, made at test time with ffmpeg and sox from the
# committed LibriVox clips (16 kHz mono PCM16): OUT/<format>/<clip>.<ext> for
#   flac44s   FLAC, 44.1 kHz stereo          wav8k    WAV, 8 kHz (sox)
#   mp3_48k   MP3, 48 kHz (libmp3lame)      opus     Ogg/Opus (libopus, 48 kHz)
#   m4a       M4A/AAC (FFmpeg's aac)         mp4video MP4 video (mpeg4) with an AAC track
#   wav24     WAV, 24-bit PCM (sox)         wavf32   WAV, 32-bit float (sox)
# and, for the comparison with the ffmpeg command only (ffmpeg_equal.sh):
#   pcm16     the clip itself (16 kHz mono PCM16: sotto's built-in reader)
#   vorbis    Ogg/Vorbis, 44.1 kHz stereo    webm     WebM (Matroska) with Opus
#   surround  FLAC 5.1, 48 kHz (down-mixed by swr's default matrix)
#   u8_22k    WAV, 8-bit unsigned, 22.05 kHz wavf32s  WAV, 32-bit float, 44.1 kHz stereo
# usage: make_inputs.sh CLIPS_DIR OUT_DIR
set -eu
CLIPS=$1 OUT=$2
rm -rf "$OUT"
FF="ffmpeg -nostdin -v error -y"
for c in "$CLIPS"/librivox-*.wav; do
    n=$(basename "$c" .wav)
    mk() { mkdir -p "$OUT/$1"; echo "$OUT/$1/$n.$2"; }
    $FF -i "$c" -ar 44100 -ac 2 -c:a flac "$(mk flac44s flac)"
    sox "$c" -r 8000 "$(mk wav8k wav)"
    $FF -i "$c" -ar 48000 -c:a libmp3lame -b:a 64k "$(mk mp3_48k mp3)"
    $FF -i "$c" -c:a libopus -b:a 32k "$(mk opus opus)"
    $FF -i "$c" -c:a aac -b:a 64k "$(mk m4a m4a)"
    $FF -f lavfi -i "color=c=gray:s=64x48:r=5" -i "$c" -shortest -map 0:v -map 1:a -c:v mpeg4 -c:a aac -b:a 64k \
        "$(mk mp4video mp4)"
    sox "$c" -b 24 "$(mk wav24 wav)"
    sox "$c" -e floating-point -b 32 "$(mk wavf32 wav)"
    cp "$c" "$(mk pcm16 wav)"
    $FF -i "$c" -ar 44100 -ac 2 -c:a libvorbis "$(mk vorbis ogg)"
    $FF -i "$c" -c:a libopus -b:a 32k "$(mk webm webm)"
    $FF -i "$c" -af "pan=5.1|FL=c0|FR=0.6*c0|FC=0.8*c0|LFE=0.3*c0|BL=0.4*c0|BR=-0.2*c0" -ar 48000 -c:a flac \
        "$(mk surround flac)"
    $FF -i "$c" -ar 22050 -c:a pcm_u8 "$(mk u8_22k wav)"
    $FF -i "$c" -ar 44100 -ac 2 -c:a pcm_f32le "$(mk wavf32s wav)"
done
echo "made $(find "$OUT" -type f | wc -l) files in $(ls "$OUT" | wc -l) formats"
