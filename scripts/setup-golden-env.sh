#!/bin/sh
# Sets up .venv-golden, the eager PyTorch reference environment used by scripts/golden.py.
# Debian's PyTorch (python3-torch, 1.13, CPU only) comes from apt for the system interpreter;
# the venv sees it through --system-site-packages, and pip adds openai-whisper and its light
# dependencies without ever pulling PyPI's torch (or triton). Idempotent: rerun at will.
# Usage (from anywhere): sh scripts/setup-golden-env.sh
set -eu

cd "$(dirname "$0")/.."
VENV=.venv-golden
PY=/usr/bin/python3

# libopenblas0-pthread: Debian's torch links the generic libblas.so.3; with only the netlib
# reference BLAS installed the tiny.en encoder takes ~12 s, with OpenBLAS ~0.6 s (2 threads).
need=""
for pkg in python3-torch python3-numpy python3-venv python3-requests libopenblas0-pthread; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
        need="$need $pkg"
    fi
done
if [ -n "$need" ]; then
    echo "installing:$need"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get install -y $need
fi

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv --system-site-packages "$VENV"
fi

# --no-deps everywhere: openai-whisper lists torch and triton, which we must not take from
# PyPI. These are exactly the modules `import whisper` needs besides torch and numpy
# (tiktoken also needs requests, which python3-requests provides).
"$VENV/bin/python" -m pip install --quiet --no-deps \
    openai-whisper==20250625 \
    tiktoken==0.9.0 \
    regex==2024.11.6 \
    more-itertools==10.7.0 \
    tqdm==4.67.1 \
    numba==0.60.0 \
    llvmlite==0.43.0

"$VENV/bin/python" - <<'EOF'
import torch, numpy, whisper
print("ok: torch", torch.__version__, "numpy", numpy.__version__,
      "whisper", whisper.__version__)
EOF
