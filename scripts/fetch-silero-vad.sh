#!/bin/sh
# Fetches the Silero VAD model (16 kHz) into models/silero-vad/silero_vad.onnx.
# Source: the PyPI wheel silero-vad 6.2.3 (MIT licence), file silero_vad/data/silero_vad.onnx:
# the model its load_silero_vad(onnx=True) and get_speech_timestamps run. The wheel is
# checked against a pinned sha256. scripts/silero_vad_to_gguf.py converts it to GGUF
# (scripts/setup.sh does both). Idempotent.
# Usage: sh scripts/fetch-silero-vad.sh
set -eu

cd "$(dirname "$0")/.."
DEST=models/silero-vad
WHL=.whl/silero_vad-6.2.3-py3-none-any.whl
SHA=7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8

if [ -f "$DEST/silero_vad.onnx" ]; then
    echo "$DEST already present"
    exit 0
fi
mkdir -p .whl
if [ ! -f "$WHL" ]; then
    if python3 -m pip --version >/dev/null 2>&1; then PIP="python3 -m pip"; else PIP="/usr/bin/python3 -m pip"; fi
    $PIP download --no-deps --quiet silero-vad==6.2.3 -d .whl
fi
echo "$SHA  $WHL" | sha256sum -c -
mkdir -p "$DEST"
python3 - "$WHL" "$DEST" <<'PY'
import os, sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    for name in ("silero_vad/data/silero_vad.onnx", "silero_vad-6.2.3.dist-info/licenses/LICENSE"):
        out = os.path.join(dest, os.path.basename(name))
        with z.open(name) as src, open(out + ".tmp", "wb") as dst:
            dst.write(src.read())
        os.replace(out + ".tmp", out)
        print(out, os.path.getsize(out))
PY
