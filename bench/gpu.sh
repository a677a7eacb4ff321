#!/bin/sh
# bench/gpu.sh — `make bench-gpu`: the Vulkan backend's speed against the CPU path, same
# machine, same run, engines interleaved: encoder ms per 30 s window and decoder ms per
# token (`sotto bench`: medians of RUNS runs in one process, the first included, greedy
# steps with EOS ignored), and the real-time factor of a window (30 s over encoder +
# prefill + 100 decoder steps: a dense window's worth of tokens). Writes the rows as
# Markdown to build-bench/gpu.md, the raw JSON to build-bench/gpu.jsonl.
#   models: tiny.en (models/tiny.en.gguf) and base (models/base-ct2) in f32 and q8_0;
#           BENCH_GPU_LARGE=1 adds random weights at large-v3's dimensions (f16, 3.1 GB; the
#           f32 file randmodel writes first takes 6.2 GB of disk and memory)
#   env: BENCH_GPU_DEVICE (default vulkan), BENCH_GPU_RUNS (3), BENCH_GPU_TOKENS (32),
#        BENCH_THREADS (CPU threads: all cores)
# On a datacenter GPU the targets are: tiny.en encoder <= 5 ms per window, decoder <= 1 ms
# per token, large-v3 dimensions >= 50x real time; the script prints each verdict when
# the device is a discrete or integrated GPU (on lavapipe, software Vulkan, the rows are
# for the record only).
set -eu
cd "$(dirname "$0")/.."
DEV=${BENCH_GPU_DEVICE:-vulkan}
RUNS=${BENCH_GPU_RUNS:-3}
TOK=${BENCH_GPU_TOKENS:-32}
T=${BENCH_THREADS:-$(nproc 2>/dev/null || echo 2)}
OUT=build-bench
mkdir -p $OUT
cmake --build build -j 2 --target sotto_cli randmodel >/dev/null
S=./build/sotto
AUDIO=tests/data/clips/librivox-0870.wav
$S info --devices
models=""
for t in f32 q8_0; do
    m=$OUT/tiny.en-$t.gguf
    [ -f "$m" ] || $S convert models/tiny.en-ct2 "$m" --type $t >/dev/null
    models="$models tiny.en:$t:$m"
    if [ -d models/base-ct2 ]; then
        m=$OUT/base-$t.gguf
        [ -f "$m" ] || $S convert models/base-ct2 "$m" --type $t >/dev/null
        models="$models base:$t:$m"
    fi
done
if [ "${BENCH_GPU_LARGE:-0}" = 1 ]; then
    info=$OUT/large-v3-info.tsv
    printf 'n_mels\t128\nn_vocab\t51866\nd_model\t1280\nn_head\t20\nn_layer\t32\nn_audio_ctx\t1500\nn_text_ctx\t448\nseed\t7\n' >"$info"
    if [ ! -f $OUT/large-v3-dims-f16.gguf ]; then
        ./build/tests/randmodel "$info" $OUT/large-v3-dims-f32.gguf >/dev/null
        $S convert $OUT/large-v3-dims-f32.gguf $OUT/large-v3-dims-f16.gguf --type f16 >/dev/null
        rm -f $OUT/large-v3-dims-f32.gguf
    fi
    models="$models large-v3-dims:f16:$OUT/large-v3-dims-f16.gguf"
fi
: >$OUT/gpu.jsonl
{
    echo "| model | weights | device | encoder ms/window | decoder ms/token | device/CPU encoder | device/CPU decoder | x real time |"
    echo "|---|---|---|---|---|---|---|---|"
} >$OUT/gpu.md
for entry in $models; do
    name=${entry%%:*} rest=${entry#*:} type=${rest%%:*} m=${rest#*:}
    cpu=$($S bench -m "$m" --device cpu -t "$T" --runs "$RUNS" --tokens "$TOK" --audio $AUDIO 2>/dev/null)
    gpu=$($S bench -m "$m" --device "$DEV" --runs "$RUNS" --tokens "$TOK" --audio $AUDIO 2>/dev/null)
    echo "$cpu" >>$OUT/gpu.jsonl
    echo "$gpu" >>$OUT/gpu.jsonl
    python3 - "$name" "$type" "$cpu" "$gpu" "$T" >>$OUT/gpu.md <<'PY'
import json, sys
name, typ, cpu, gpu, threads = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5]
def rt(j):  # 30 s of audio over encoder + prefill + 100 steps
    return 30000.0 / (j["encode_ms"] + j["prefill_ms"] + 100 * j["step_ms"])
for j, dev in ((cpu, f"cpu, {threads} threads"), (gpu, gpu["device"])):
    ratio_e = f'{gpu["encode_ms"] / cpu["encode_ms"]:.2f}' if j is gpu else ""
    ratio_d = f'{gpu["step_ms"] / cpu["step_ms"]:.2f}' if j is gpu else ""
    print(f'| {name} | {typ} | {dev} | {j["encode_ms"]:.1f} | {j["step_ms"]:.2f} | {ratio_e} | {ratio_d} | {rt(j):.1f} |')
PY
done
cat $OUT/gpu.md
python3 - $OUT/gpu.jsonl <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
gpu = [r for r in rows if not r["device"].startswith("cpu")]
if not any(r["device"].endswith("GPU)") for r in gpu):
    print(f'gpu.sh: {gpu[0]["device"] if gpu else "no device"} is no GPU: rows for the record, no targets checked')
    sys.exit(0)
for r in gpu:
    if "tiny.en-" in r["model"]:
        print(f'target tiny.en {r["encoder_type"]}: encoder {r["encode_ms"]:.2f} ms (<= 5): '
              f'{"met" if r["encode_ms"] <= 5 else "NOT met"}; decoder {r["step_ms"]:.3f} ms/token (<= 1): '
              f'{"met" if r["step_ms"] <= 1 else "NOT met"}')
    if "large-v3-dims" in r["model"]:
        x = 30000.0 / (r["encode_ms"] + r["prefill_ms"] + 100 * r["step_ms"])
        print(f'target large-v3 dims: {x:.1f}x real time (>= 50): {"met" if x >= 50 else "NOT met"}')
PY
