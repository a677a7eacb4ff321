#!/bin/sh
# Fetches faster-whisper's Silero VAD into models/silero-vad-fw/silero_vad_v6.onnx: the model
# faster-whisper 1.2.1's vad.py runs (its VadOptions, vad_filter and BatchedInferencePipeline),
# another export with other weights than silero-vad 6.2.3's (probabilities apart by up to 0.7).
# Source: the PyPI wheel faster-whisper 1.2.1 (MIT licence), file
# faster_whisper/assets/silero_vad_v6.onnx, the wheel checked against a pinned sha256.
# scripts/silero_vad_to_gguf.py converts it to models/silero-vad-fw.gguf (scripts/setup.sh does
# both); sotto's batched transcription cuts with it, as faster-whisper does. Idempotent.
# Usage: sh scripts/fetch-fw-vad.sh
set -eu

cd "$(dirname "$0")/.."
DEST=models/silero-vad-fw
WHL=.whl/faster_whisper-1.2.1-py3-none-any.whl
SHA=79a66ad50688c0b794dd501dc340a736992a6342f7f95e5811be60b5224a26a7

if [ -f "$DEST/silero_vad_v6.onnx" ]; then
    echo "$DEST already present"
    exit 0
fi
mkdir -p .whl
if [ ! -f "$WHL" ]; then
    if python3 -m pip --version >/dev/null 2>&1; then PIP="python3 -m pip"; else PIP="/usr/bin/python3 -m pip"; fi
    $PIP download --no-deps --quiet faster-whisper==1.2.1 -d .whl
fi
echo "$SHA  $WHL" | sha256sum -c -
mkdir -p "$DEST"
python3 - "$WHL" "$DEST" <<'PY'
import os, sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    for name in ("faster_whisper/assets/silero_vad_v6.onnx", "faster_whisper-1.2.1.dist-info/LICENSE"):
        out = os.path.join(dest, os.path.basename(name))
        with z.open(name) as src, open(out + ".tmp", "wb") as f:
            f.write(src.read())
        os.replace(out + ".tmp", out)
PY
echo "fetched $DEST/silero_vad_v6.onnx"
