#!/bin/sh
# Builds the test clips in tests/data/clips/: five LibriVox sentences from Debian's
# pocketsphinx-testdata (16 kHz mono PCM16, copied as they are) and English sentences
# synthesised with espeak-ng, resampled by sox to 16 kHz mono PCM16 without dither.
# Writes tests/data/clips/transcripts.tsv (name<TAB>reference text).
# espeak-ng output depends on its version (this was made with eSpeak NG 1.51, SoX 14.4.2),
# so the committed WAVs are the source of truth; rerunning may change espeak clips slightly.
# Needs: apt-get install pocketsphinx-testdata espeak-ng sox
# Usage: sh scripts/make-clips.sh
set -eu

cd "$(dirname "$0")/.."
SRC=/usr/share/pocketsphinx/test/data/librivox
OUT=tests/data/clips
mkdir -p "$OUT"
TSV="$OUT/transcripts.tsv"
: > "$TSV"

for id in 0870 0880 0890 0920 0930; do
    base=sense_and_sensibility_01_austen_64kb-$id
    cp "$SRC/$base.wav" "$OUT/librivox-$id.wav"
    # transcription lines: "<s> text </s> (name)"
    text=$(grep "($base)" "$SRC/transcription" | sed -e 's/^<s> *//' -e 's/ *<\/s> *(.*)$//')
    printf 'librivox-%s\t%s\n' "$id" "$text" >> "$TSV"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
while IFS= read -r sentence; do
    [ -z "$sentence" ] && continue
    n=$((n + 1))
    name=$(printf 'espeak-ng-%02d' "$n")
    espeak-ng -v en-us -s 150 -w "$tmp/$name.wav" "$sentence"
    # -D: no dither, -R: repeatable, so the same espeak output gives the same bytes.
    sox -D -R "$tmp/$name.wav" -r 16000 -c 1 -b 16 -e signed-integer "$OUT/$name.wav"
    printf '%s\t%s\n' "$name" "$sentence" >> "$TSV"
done <<'EOF'
The quick brown fox jumps over the lazy dog.
Where did you put the keys to the car yesterday?
In 1999 we bought 3 apples and 12 oranges for 20 dollars.
Although the weather was cold and wet, the children played happily in the garden until their mother called them inside for dinner.
Alice and Robert flew from London to Paris with Doctor Martin last Tuesday.
Please call Stella and ask her to bring these things with her from the store.
The meeting starts at nine o'clock and it should end before noon.
EOF

echo "wrote $(wc -l < "$TSV") clips to $OUT"
