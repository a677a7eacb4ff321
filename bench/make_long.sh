#!/bin/sh
# Builds the benchmark audio from the committed clips (tests/data/clips/*.wav, 16 kHz mono):
#   build-bench/long.wav      all clips, 0.3 s of silence after each, repeated until >= 5 min
#   build-bench/window30.wav  its first 30 s (one encoder window)
# usage: sh bench/make_long.sh [OUT_DIR]
set -eu
cd "$(dirname "$0")/.."
out=${1:-build-bench}
mkdir -p "$out"
command -v sox >/dev/null || { echo "make_long.sh: sox is needed (apt-get install sox)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sox -n -r 16000 -c 1 -b 16 "$tmp/gap.wav" trim 0 0.3
set --
for f in tests/data/clips/*.wav; do set -- "$@" "$f" "$tmp/gap.wav"; done
sox "$@" "$tmp/once.wav"
once=$(soxi -D "$tmp/once.wav")
reps=$(awk -v d="$once" 'BEGIN { n = int(300 / d); if (n * d < 300) n++; print n }')
set --
i=0
while [ "$i" -lt "$reps" ]; do set -- "$@" "$tmp/once.wav"; i=$((i + 1)); done
sox "$@" -r 16000 -c 1 -b 16 "$out/long.wav"
sox "$out/long.wav" "$out/window30.wav" trim 0 30
echo "make_long.sh: $out/long.wav $(soxi -D "$out/long.wav") s ($reps x $once s), $out/window30.wav 30 s"
