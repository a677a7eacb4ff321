#!/bin/bash
# test_install.sh — `cmake --install` into a temporary prefix gives a library a C program
# can be built against: the README's Library example (the ```c block of its "## Library"
# section, so the two cannot drift) is compiled with `pkg-config --cflags --libs sotto`
# against libsotto.so and against libsotto.a, and with the README's CMake project
# (find_package(sotto), sotto::sotto and sotto::sotto_static), run on a clip (its segments
# must be the ones the installed `sotto transcribe` prints) and on bad arguments (its error
# checks); the shared library exports exactly the functions sotto.h declares.
# usage: test_install.sh BUILD_DIR SRC_DIR MODEL CLIP WORK_DIR [CFLAGS]
# (CFLAGS: what a program linking this build's library needs besides sotto.pc, i.e. the
# sanitizer flags of an ASan build)
set -u
BUILD=$1 SRC=$2 MODEL=$3 CLIP=$4 TMP=$5 EXTRA=${6:-}
rm -rf "$TMP"
mkdir -p "$TMP"
pass=0 fail=0
. "$SRC/tests/cli/lib.sh"
check() { # check WHAT CONDITION...
    local what=$1
    shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what"; fi
}

P=$TMP/prefix
cmake --install "$BUILD" --prefix "$P" >"$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; echo "FAIL: cmake --install"; exit 1; }
LIBDIR=$(find "$P" -name libsotto.a -printf '%h\n' | head -1)
for f in include/sotto.h bin/sotto share/man/man1/sotto.1; do check "installed $f" test -f "$P/$f"; done
check "installed libsotto.a" test -f "$LIBDIR/libsotto.a"
check "installed libsotto.so" test -L "$LIBDIR/libsotto.so"
check "installed sotto.pc" test -f "$LIBDIR/pkgconfig/sotto.pc"
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
check "pkg-config finds sotto" pkg-config --exists sotto
check "sotto.pc's version is sotto.h's" test "$(pkg-config --modversion sotto)" = \
    "$(sed -n 's/^#define SOTTO_VERSION "\(.*\)"/\1/p' "$P/include/sotto.h")"
check "sotto.pc's libdir is the install's" test "$(cd "$(pkg-config --variable=libdir sotto)" && pwd -P)" = \
    "$(cd "$LIBDIR" && pwd -P)"

# the components a packager splits: runtime (the versioned shared library alone), dev, cli
for c in runtime dev cli; do
    cmake --install "$BUILD" --prefix "$TMP/$c" --component "$c" >"$TMP/install_$c.log" 2>&1 ||
        echo "FAIL: cmake --install --component $c"
    (cd "$TMP/$c" && find . -type f -o -type l | sed 's|^\./||' | sort) >"$TMP/files_$c"
done
check "runtime holds libsotto.so.0 and nothing else" test "$(sed 's|.*/||' "$TMP/files_runtime" | sort | tr '\n' ' ')" = \
    "$(cd "$LIBDIR" && ls libsotto.so.0*| sort | tr '\n' ' ')"
check "dev holds the header, libsotto.a, the link and sotto.pc, no libsotto.so.0" \
    sh -c "grep -q 'include/sotto.h' '$TMP/files_dev' && grep -q 'libsotto.a' '$TMP/files_dev' &&
           grep -q '/libsotto.so\$' '$TMP/files_dev' && grep -q 'sotto.pc' '$TMP/files_dev' &&
           ! grep -q 'libsotto.so.0' '$TMP/files_dev'"
check "cli holds the tool and its manual page" test "$(tr '\n' ' ' <"$TMP/files_cli")" = "bin/sotto share/man/man1/sotto.1 "
check "the tool runs without the library installed" "$TMP/cli/bin/sotto" --version

# the README's example, built both ways
sed -n '/^## Library$/,/^## /p' "$SRC/README.md" | sed -n '/^```c$/,/^```$/p' | sed '1d;$d' >"$TMP/demo.c"
check "README has the example" grep -q 'int main' "$TMP/demo.c"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror $EXTRA "$TMP/demo.c" $(pkg-config --cflags --libs sotto) -o "$TMP/demo_shared" ||
    echo "FAIL: building the example against libsotto.so"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror $EXTRA "$TMP/demo.c" $(pkg-config --cflags sotto) -o "$TMP/demo_static" -Wl,--as-needed \
    "$(pkg-config --variable=libdir sotto)/libsotto.a" $(pkg-config --static --libs sotto) ||
    echo "FAIL: building the example against libsotto.a"
# the README's CMake project (its ```cmake block), configured against the prefix alone
mkdir -p "$TMP/cmk"
cp "$TMP/demo.c" "$TMP/cmk/demo.c"
sed -n '/^## Library$/,/^## /p' "$SRC/README.md" | sed -n '/^```cmake$/,/^```$/p' | sed '1d;$d' >"$TMP/cmk/CMakeLists.txt"
check "README has the CMake project" grep -q 'find_package(sotto' "$TMP/cmk/CMakeLists.txt"
if cmake -S "$TMP/cmk" -B "$TMP/cmk/build" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_FLAGS="$EXTRA" >"$TMP/cmk.log" 2>&1 &&
    cmake --build "$TMP/cmk/build" >>"$TMP/cmk.log" 2>&1; then
    cp "$TMP/cmk/build/demo" "$TMP/demo_cmake" && cp "$TMP/cmk/build/demo_static" "$TMP/demo_cmake_static"
else
    cat "$TMP/cmk.log"
    echo "FAIL: building the README's CMake project against the installed package"
fi
check "demo_cmake needs libsotto.so" bash -c "readelf -d '$TMP/demo_cmake' | grep -q 'NEEDED.*libsotto\.so'"
check "demo_cmake_static does not" bash -c "! readelf -d '$TMP/demo_cmake_static' | grep -q 'NEEDED.*libsotto'"
check "demo_shared needs libsotto.so" bash -c "readelf -d '$TMP/demo_shared' | grep -q 'NEEDED.*libsotto\.so'"
check "demo_static does not" bash -c "! readelf -d '$TMP/demo_static' | grep -q 'NEEDED.*libsotto'"

# what it prints: the installed tool's txt lines, each segment's text
"$P/bin/sotto" transcribe -m "$MODEL" -f txt --quiet "$CLIP" >"$TMP/cli.txt" 2>/dev/null
check "the installed tool transcribes" test -s "$TMP/cli.txt"
for how in shared static cmake cmake_static; do
    env LD_LIBRARY_PATH="$LIBDIR" "$TMP/demo_$how" "$MODEL" "$CLIP" >"$TMP/$how.out" 2>"$TMP/$how.err"
    check "demo_$how exits 0" test $? -eq 0
    sed 's/^\[[0-9.]* -> [0-9.]*\] *//' "$TMP/$how.out" >"$TMP/$how.txt"
    check "demo_$how prints the CLI's segments" cmp -s "$TMP/$how.txt" "$TMP/cli.txt"
    check "demo_$how prints times" grep -qE '^\[0\.00 -> [0-9]+\.[0-9]{2}\] ' "$TMP/$how.out"
    expect 2 "usage:" env LD_LIBRARY_PATH="$LIBDIR" "$TMP/demo_$how"
    expect 1 "$TMP/none.gguf" env LD_LIBRARY_PATH="$LIBDIR" "$TMP/demo_$how" "$TMP/none.gguf" "$CLIP"
    expect 1 "$TMP/none.wav" env LD_LIBRARY_PATH="$LIBDIR" "$TMP/demo_$how" "$MODEL" "$TMP/none.wav"
done

# exports: the functions sotto.h declares, nothing else (no sotto__ internals, no libc)
so=$(readlink -f "$LIBDIR/libsotto.so")
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sed 's/@.*//' | sort -u >"$TMP/exported"
grep -oE '\bsotto_[a-z][a-z0-9_]*\(' "$P/include/sotto.h" | tr -d '(' | sort -u >"$TMP/declared"
check "libsotto.so exports the API" test "$(wc -l <"$TMP/declared")" -gt 40
if ! cmp -s "$TMP/exported" "$TMP/declared"; then
    fail=$((fail + 1))
    echo "FAIL: libsotto.so's exports differ from sotto.h's functions (< exported, > declared):"
    diff "$TMP/exported" "$TMP/declared" | head -20
else
    pass=$((pass + 1))
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
