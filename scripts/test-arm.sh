#!/bin/sh
# test-arm.sh — `make test-arm`: the 64-bit ARM build (NEON kernels) cross-compiled with
# Debian's gcc-aarch64-linux-gnu and run under qemu-user on this machine: the unit tests,
# the kernel tests once per NEON set (neon, neon_dot, neon_i8mm: every kernel against its
# scalar reference, each set on a qemu CPU model with just its extensions, where it must
# be the set chosen), then the real tiny.en model with the best set (max CPU model) against
# the eager PyTorch goldens on two clips (ids exact, encoder and logits correlated), in
# build-arm/. Installs the cross compiler and qemu-user with apt-get
# (through sudo when not root) when they are missing. Emulation is slow (about 40x): the
# other golden sets run natively in `make test`. Needs the models of scripts/setup.sh.
set -eu
cd "$(dirname "$0")/.."

if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-aarch64 >/dev/null 2>&1; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "test-arm: needs aarch64-linux-gnu-gcc and qemu-aarch64 (apt-get is not available here)" >&2
        exit 1
    fi
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
    export DEBIAN_FRONTEND=noninteractive
    pkgs="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"
    echo "test-arm: installing $pkgs"
    $SUDO apt-get install -y $pkgs >/dev/null || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y $pkgs >/dev/null; }
fi

# zlib for arm64 (the fallback's compression ratio): Debian's zlib1g-dev:arm64 package
# downloaded and unpacked into .cache/zlib-arm64, never installed: installing it would
# install libc6:arm64 beside the cross libc, and qemu's loader would then take that libc
# (another build) and hang in pthread_create. Linked statically, so qemu needs no libz.so.
ZDIR=.cache/zlib-arm64
ZLIB_A=$ZDIR/usr/lib/aarch64-linux-gnu/libz.a
if [ ! -f $ZLIB_A ]; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "test-arm: needs zlib for arm64 (Debian's zlib1g-dev:arm64 unpacked into $ZDIR)" >&2
        exit 1
    fi
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
    echo "test-arm: fetching zlib1g-dev:arm64 (unpacked into $ZDIR)"
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        $SUDO dpkg --add-architecture arm64
        $SUDO apt-get update >/dev/null
    fi
    rm -rf $ZDIR && mkdir -p $ZDIR
    (cd $ZDIR && apt-get download zlib1g-dev:arm64 >/dev/null 2>&1) ||
        { $SUDO apt-get update >/dev/null && (cd $ZDIR && apt-get download zlib1g-dev:arm64 >/dev/null); }
    dpkg-deb -x $ZDIR/zlib1g-dev_*_arm64.deb $ZDIR
fi

cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
    -DSOTTO_WERROR=ON -DZLIB_LIBRARY=$PWD/$ZLIB_A -DZLIB_INCLUDE_DIR=$PWD/$ZDIR/usr/include >/dev/null
cmake --build build-arm -j 2 --target test_quant test_json test_bytelevel test_idlist test_pretok test_finite \
    test_kernels test_header test_golden >/dev/null

run() { qemu-aarch64 -L /usr/aarch64-linux-gnu "$@"; }
# one test program, its summary line shown, the whole log when it fails
quiet() {
    log=build-arm/$(basename "$1").log
    if run "$@" >"$log" 2>&1; then tail -1 "$log"; else cat "$log"; echo "test-arm: $1 failed" >&2; exit 1; fi
}
echo "== units, kernels, header (aarch64, qemu-user)"
for unit in quant json bytelevel idlist pretok finite; do quiet build-arm/tests/test_$unit; done
quiet build-arm/tests/test_header
# each NEON set forced (SOTTO_KERNELS) on the CPU model with just its extensions, where
# test_kernels --best also checks that the hwcaps choose it: an instruction of a later
# extension in an earlier set would stop it there (SIGILL). The three run at once: each
# runs mostly on one thread (2 cores, an Intel Xeon: 271 s in turn, 196 s at once).
pids=""
for cpu_set in cortex-a53:neon cortex-a76:neon_dot max:neon_i8mm; do
    cpu=${cpu_set%%:*}
    ks=${cpu_set#*:}
    env SOTTO_KERNELS="$ks" qemu-aarch64 -cpu "$cpu" -L /usr/aarch64-linux-gnu build-arm/tests/test_kernels \
        --best "$ks" >build-arm/test_kernels-$ks.log 2>&1 &
    pids="$pids $!"
done
failed=""
set -- $pids
for cpu_set in cortex-a53:neon cortex-a76:neon_dot max:neon_i8mm; do
    cpu=${cpu_set%%:*}
    ks=${cpu_set#*:}
    pid=$1 && shift
    log=build-arm/test_kernels-$ks.log
    if wait "$pid"; then
        echo "kernels $ks (qemu -cpu $cpu): $(tail -1 "$log")"
    else
        cat "$log"; echo "test-arm: test_kernels $ks (-cpu $cpu) failed" >&2; failed="$failed $ks"
    fi
done
[ -z "$failed" ] || exit 1

# clips of the tiny.en goldens (SOTTO_ARM_CLIPS; by default one LibriVox recording and
# one espeak-ng sentence, about 5 emulated minutes each; CI's `make test-arm-ci` the first)
clips=${SOTTO_ARM_CLIPS:-librivox-0870 espeak-ng-01}
sub=build-arm/golden-tiny.en
rm -rf "$sub" && mkdir -p "$sub"
n=0
for clip in $clips; do
    [ -f tests/golden/tiny.en/"$clip".ids ] || { echo "test-arm: no golden clip $clip in tests/golden/tiny.en" >&2; exit 1; }
    for f in tests/golden/tiny.en/"$clip".*; do ln -s "$PWD/$f" "$sub/"; done
    n=$((n + 1))
done
echo "== tiny.en (the default f16 GGUF) against eager PyTorch, $n clip(s) (aarch64, qemu-user -cpu max: neon_i8mm)"
run -cpu max build-arm/tests/test_golden models/tiny.en.gguf "$sub" tests/data/clips
