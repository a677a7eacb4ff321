#!/bin/sh
# The 30-minute live stream of issue 26 ("real time held"): bench/make_long.sh's long.wav
# repeated to MINUTES (default 30), fed to `sotto stream --realtime --jsonl` on THREADS
# threads (default 2); prints the processing lag (emission_time - audio_time of each event:
# how far the decoding is behind the audio) at its maximum, the maximum of each 5-minute
# block (a lag that grows without bound grows block after block), the committed words and
# the wall time past the audio's end, with the load average before and after.
# usage: sh bench/stream_soak.sh [SOTTO] [MODEL] [VAD_MODEL] [OUT_DIR] [MINUTES] [THREADS]
set -eu
cd "$(dirname "$0")/.."
sotto=${1:-build/sotto}
model=${2:-models/tiny.en.gguf}
vad=${3:-models/silero-vad.gguf}
out=${4:-build-bench/soak}
minutes=${5:-30}
threads=${6:-2}
mkdir -p "$out"
[ -f "$out/long.wav" ] || sh bench/make_long.sh "$out" >/dev/null
reps=$(awk -v m="$minutes" -v d="$(soxi -D "$out/long.wav")" 'BEGIN { n = int(m * 60 / d); if (n * d < m * 60) n++; print n }')
set --
i=0
while [ "$i" -lt "$reps" ]; do set -- "$@" "$out/long.wav"; i=$((i + 1)); done
sox "$@" "$out/soak.wav"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
"$sotto" stream -m "$model" --vad-model "$vad" -t "$threads" --realtime --jsonl "$out/soak.wav" >"$out/soak.jsonl"
load1=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$out/soak.jsonl" "$load0" "$load1" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
lags = [(e["audio_time"], e["emission_time"] - e["audio_time"]) for e in ev]
blocks = {}
for t, lag in lags:
    b = int(t // 300)
    blocks[b] = max(blocks.get(b, 0.0), lag)
words = sum(len(e["words"]) for e in ev if e["type"] == "final")
end = max(e["audio_time"] for e in ev)
print(json.dumps({"audio_s": end, "committed_words": words, "lag_max_s": max(l for _, l in lags),
                  "lag_max_per_5_min_s": [round(blocks[b], 2) for b in sorted(blocks)],
                  "wall_past_the_end_s": round(max(e["emission_time"] for e in ev) - end, 2),
                  "loadavg_before": sys.argv[2], "loadavg_after": sys.argv[3]}))
PY
