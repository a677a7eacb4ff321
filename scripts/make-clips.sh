#!/bin/sh
# Builds the test clips in tests/data/clips/: five LibriVox sentences from Debian's
# pocketsphinx-testdata (16 kHz mono PCM16, copied as they are) and English sentences
# synthesised with espeak-ng, resampled by sox to 16 kHz mono PCM16 without dither.
# Writes tests/data/clips/transcripts.tsv (name<TAB>reference text).
# Language-detection clips: a sentence or two in other languages, made the same way with
# espeak-ng's voices for them, into tests/data/clips/lang/ (a subdirectory, so the English
# tests' clips/*.wav globs do not see them); texts in tests/data/clips/lang/transcripts.tsv
# (name<TAB>openai-whisper language code<TAB>text).
# espeak-ng output depends on its version (this was made with eSpeak NG 1.51, SoX 14.4.2),
# so the committed WAVs are the source of truth; rerunning may change espeak clips slightly.
# Needs: apt-get install pocketsphinx-testdata espeak-ng sox (the lang clips: espeak-ng, sox)
# Usage: sh scripts/make-clips.sh [lang]     (lang: only the language-detection clips)
set -eu

cd "$(dirname "$0")/.."
SRC=/usr/share/pocketsphinx/test/data/librivox
OUT=tests/data/clips
WHAT=${1:-all}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$WHAT" != lang ]; then
[ -d "$SRC" ] || { echo "make-clips.sh: $SRC missing (apt-get install pocketsphinx-testdata)" >&2; exit 1; }
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
fi

LANG_OUT="$OUT/lang"
LANG_TSV="$LANG_OUT/transcripts.tsv"
mkdir -p "$LANG_OUT"
: > "$LANG_TSV"
tab=$(printf '\t')
# espeak-ng voice<TAB>openai-whisper language code<TAB>text
while IFS="$tab" read -r voice code sentence; do
    [ -z "$voice" ] && continue
    name="espeak-ng-$code"
    espeak-ng -v "$voice" -s 150 -w "$tmp/$name.wav" "$sentence"
    sox -D -R "$tmp/$name.wav" -r 16000 -c 1 -b 16 -e signed-integer "$LANG_OUT/$name.wav"
    printf '%s\t%s\t%s\n' "$name" "$code" "$sentence" >> "$LANG_TSV"
done <<'EOF'
de	de	Der Zug nach Berlin fährt heute um acht Uhr ab. Bitte vergessen Sie Ihre Fahrkarte nicht.
fr-fr	fr	Le petit garçon a mangé une pomme rouge dans le jardin. Demain, nous irons au marché avec sa grand-mère.
es	es	Mañana por la mañana vamos a visitar a mis abuelos en Madrid. Ellos viven cerca del parque.
it	it	La cena è pronta e tutti sono seduti intorno al tavolo. Dopo mangeremo il gelato al cioccolato.
ru	ru	Сегодня хорошая погода, и мы пойдём гулять в парк. Вечером мы будем читать книги.
EOF

echo "wrote $(wc -l < "$LANG_TSV") language-detection clips to $LANG_OUT"

# faster-whisper's prefix in a script without spaces (a new user's probe: CTranslate2's
# rules after a prefix, scripts/golden_faster_whisper_more.py prefix-base), not a
# language-detection clip
PREFIX_OUT="$OUT/prefix"
mkdir -p "$PREFIX_OUT"
espeak-ng -v ja -s 150 -w "$tmp/ja.wav" \
    "こんにちは。きょうは とても いい てんき です。わたしは とうきょうの だいがくで にほんごを べんきょう しています。あしたは ともだちと いっしょに えいがを みに いきます。"
sox -D -R "$tmp/ja.wav" -r 16000 -c 1 -b 16 -e signed-integer "$PREFIX_OUT/espeak-ng-ja.wav"
echo "wrote $PREFIX_OUT/espeak-ng-ja.wav"
