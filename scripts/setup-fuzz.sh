#!/bin/sh
# setup-fuzz.sh — makes sure clang with libFuzzer (-fsanitize=fuzzer) is installed, for
# `make fuzz` / `make fuzz-ci`. Idempotent: does nothing when a fuzzer program already
# links. Installs with apt-get (Debian/Ubuntu), through sudo when not root.
set -eu

probe() {
    command -v clang >/dev/null 2>&1 || return 1
    dir=$(mktemp -d)
    printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' \
        >"$dir/p.c"
    ok=0
    clang -fsanitize=fuzzer,address,undefined "$dir/p.c" -o "$dir/p" >/dev/null 2>&1 && ok=1
    rm -rf "$dir"
    [ "$ok" = 1 ]
}

if probe; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-fuzz: clang with libFuzzer is missing and apt-get is not available; install clang and" >&2
    echo "its compiler-rt (libFuzzer, ASan, UBSan) runtime by hand" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
echo "setup-fuzz: installing clang and its sanitizer/libFuzzer runtime"
$SUDO apt-get install -y clang >/dev/null || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y clang >/dev/null; }
if ! probe; then
    # Debian 12 / Ubuntu ship libFuzzer in libclang-rt-<major>-dev
    major=$(clang -dumpversion | cut -d. -f1)
    $SUDO apt-get install -y "libclang-rt-$major-dev" >/dev/null ||
        { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y "libclang-rt-$major-dev" >/dev/null; }
fi
if ! probe; then
    echo "setup-fuzz: clang is installed but cannot link -fsanitize=fuzzer,address,undefined" >&2
    exit 1
fi
echo "setup-fuzz: $(clang --version | head -1) with libFuzzer ready"
