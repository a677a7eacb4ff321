#!/bin/sh
# Peak memory of a 60-minute transcription against a 30-second one (issue "Inputs"):
# sotto on WAV and MP3, whisper.cpp on the same WAV, each engine's default options
# (beam 5, best of 5, temperature fallback), 2 threads; peak RSS from /usr/bin/time -v.
# Run after bench/run.sh has built whisper.cpp and the model files (build-bench/).
#   sh bench/rss_long.sh [MODEL_TYPES]     (default: "f32 f16"; sotto's default model is f32)
# Prints one line per run: engine, weights, file, seconds of audio, wall s, peak RSS MB.
set -eu
cd "$(dirname "$0")/.."
BB=build-bench
M=$BB/models
WCPP=$BB/whisper.cpp/bin/whisper-cli
types=${1:-f32 f16}
[ -x ./build/sotto ] || { echo "rss_long: build sotto first (make build)" >&2; exit 1; }
[ -x $WCPP ] || { echo "rss_long: run bench/run.sh first (whisper.cpp)" >&2; exit 1; }
[ -s $BB/hour.wav ] || python3 tests/data/make_long.py $BB hour >/dev/null
[ -s $BB/h30.wav ] || sox $BB/hour.wav $BB/h30.wav trim 0 30
[ -s $BB/hour.mp3 ] || ffmpeg -v error -y -i $BB/hour.wav -b:a 64k $BB/hour.mp3
for t in $types; do
    [ -s $M/tiny.en-$t.gguf ] || ./build/sotto convert models/tiny.en-ct2 $M/tiny.en-$t.gguf --type $t >/dev/null
done

# measure NAME WEIGHTS FILE CMD...: run CMD, print wall seconds and peak RSS
measure() {
    name=$1 w=$2 f=$3
    shift 3
    log=$BB/rss_long.time
    /usr/bin/time -v -o $log "$@" >/dev/null 2>$BB/rss_long.err || {
        echo "rss_long: $name failed:" >&2; tail -5 $BB/rss_long.err >&2; exit 1; }
    kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' $log)
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' $log |
           awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
    dur=$(soxi -D $f 2>/dev/null || ffprobe -v error -show_entries format=duration -of csv=p=0 $f)
    printf '%-10s %-5s %-10s %7.1f s audio %8.1f s wall %8.1f MB\n' \
        "$name" "$w" "$(basename $f)" "$dur" "$wall" "$(echo "$kb" | awk '{ print $1 / 1024 }')"
}

for t in $types; do
    for f in $BB/h30.wav $BB/hour.wav $BB/hour.mp3; do
        measure sotto $t $f ./build/sotto transcribe -m $M/tiny.en-$t.gguf -t 2 --quiet $f
    done
done
# whisper.cpp has no f32 tiny.en file of ours; f16 is its usual type
for f in $BB/h30.wav $BB/hour.wav; do
    measure whisper.cpp f16 $f $WCPP -m $M/ggml-tiny.en-f16.bin -t 2 -f $f
done
