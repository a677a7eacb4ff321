#!/usr/bin/env python3
"""Batched transcription against sequential and against faster-whisper's batched pipeline
(issue 25), measured in one run on the same machine: a 10-minute reading
(tests/data/make_long.py read5 twice: 603.7 s, the clips' transcripts as the reference),
BENCH_B_THREADS threads (default 2), tiny.en and base on the same CTranslate2 weights
(models/tiny.en-ct2, models/base-ct2: sotto reads the directory itself, faster-whisper
with compute_type float32), for each CPU class in BENCH_B_CLASSES (default "native avx2":
avx2 is SOTTO_KERNELS=avx2 with CT2_FORCE_CPU_ISA=AVX2 and MKL_ENABLE_INSTRUCTIONS=AVX2 for
ctranslate2's MKL GEMMs, docs/BENCHMARKS.md "Per CPU class"):
  sotto sequential   `sotto transcribe` defaults (beam 5, best of 5, fallback, timestamps,
                     conditioning on previous text)
  sotto batched      `sotto transcribe --batch-size 8` (beam 5, VAD chunks, no timestamps)
  fw batched         BatchedInferencePipeline(WhisperModel(...)).transcribe(batch_size=8)
Wall and CPU seconds (/usr/bin/time), WER (tests/wer.py). Writes build-bench/results/batched.jsonl
and the table at the head of docs/BENCHMARKS.md's "## Batched transcription" (between
its marks: the section's other text stays). One run per cell
(BENCH_B_RUNS: the median of more); BENCH_B_APPEND=1 keeps the cells of the last run's
batched.jsonl and adds this run's (BENCH_B_MODELS, BENCH_B_CLASSES narrow it;
BENCH_B_WEIGHTS="float32 int8" adds sotto's q8_0 against faster-whisper's int8). Standard library only; faster-whisper from .cache/fw-venv.
"""
import json
import os
import re
import subprocess
import sys
import time
import wave

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from wer import edits, normalise  # noqa: E402
from machine import fma_peak, fmt_peak, write_part  # noqa: E402

BB = "build-bench"
PY = ".cache/fw-venv/bin/python"
THREADS = int(os.environ.get("BENCH_B_THREADS", 2))
MODELS = os.environ.get("BENCH_B_MODELS", "tiny.en base").split()
CLASSES = os.environ.get("BENCH_B_CLASSES", "native avx2").split()
RUNS = int(os.environ.get("BENCH_B_RUNS", 1))
BATCH = int(os.environ.get("BENCH_B_BATCH", 8))
WEIGHTS = os.environ.get("BENCH_B_WEIGHTS", "float32").split()  # and/or int8
CT2 = {"tiny.en": "models/tiny.en-ct2", "base": "models/base-ct2"}
WAV, REF = BB + "/reading10.wav", BB + "/reading10.txt"


def log(*a):
    print("[batched]", *a, file=sys.stderr, flush=True)


def prepare():
    subprocess.run([sys.executable, "tests/data/make_long.py", BB, "read5"], check=True, capture_output=True)
    with wave.open(BB + "/read5.wav", "rb") as w:
        params, frames = w.getparams(), w.readframes(w.getnframes())
    with wave.open(WAV + ".tmp", "wb") as w:
        w.setparams(params)
        w.writeframes(frames + frames)
    os.replace(WAV + ".tmp", WAV)
    text = open(BB + "/read5.txt", encoding="utf-8").read().strip()
    open(REF, "w", encoding="utf-8").write(text + " " + text + "\n")


def timed(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, env=env, timeout=1800)
    wall = time.perf_counter() - t0
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-1500:]}")
    cpu = sum(float(re.search(rf"{k} time \(seconds\): ([0-9.]+)", p.stderr).group(1)) for k in ("User", "System"))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    return wall, cpu, rss, p.stdout


def configs(m, weights):
    """The three engines on float32 weights (the CTranslate2 directory itself), or on int8:
    sotto's q8_0 GGUF of the same checkpoint (build-bench/models, bench/run.sh converts it)
    against faster-whisper's compute_type int8."""
    model = CT2[m] if weights == "float32" else f"{BB}/models/{m}-q8_0.gguf"
    base = ["./build/sotto", "transcribe", "-m", model, "-t", str(THREADS), "-l", "en", "--device", "cpu", "--quiet",
            "-f", "txt"]
    return [
        ("sotto sequential", base + [WAV], lambda o: o),
        ("sotto batched", base + ["--batch-size", str(BATCH), "--vad-model", "models/silero-vad-fw.gguf", WAV],
         lambda o: o),
        ("fw batched", [PY, "bench/fw_bench.py", "batched", CT2[m], weights, str(THREADS), WAV, str(BATCH)],
         lambda o: json.loads(o)["text"]),
    ]


def main():
    prepare()
    ref = normalise(re.sub(r"\bMr\.", "mister", open(REF, encoding="utf-8").read()))
    rows = []
    path = BB + "/results/batched.jsonl"
    if os.environ.get("BENCH_B_APPEND") == "1" and os.path.exists(path):  # add to an earlier run's cells
        rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    for cls in CLASSES:
        env = dict(os.environ)
        if cls == "avx2":
            env.update(SOTTO_KERNELS="avx2", CT2_FORCE_CPU_ISA="AVX2", MKL_ENABLE_INSTRUCTIONS="AVX2")
        for m, weights in [(m, w) for m in MODELS for w in WEIGHTS]:
            for name, cmd, text_of in configs(m, weights):
                runs = []
                for _ in range(RUNS):
                    peak = fma_peak()
                    wall, cpu, rss, out = timed(cmd, env)
                    hyp = normalise(re.sub(r"\bMr\.", "mister", text_of(out)))
                    runs.append((wall, cpu, rss, 100.0 * edits(ref, hyp) / len(ref), peak))
                runs.sort(key=lambda x: x[0])
                wall, cpu, rss, wer, peak = runs[len(runs) // 2]
                r = {"class": cls, "model": m, "weights": weights, "engine": name, "wall_s": round(wall, 2),
                     "cpu_s": round(cpu, 2),
                     "rss_mb": round(rss), "wer": round(wer, 2), "load": round(os.getloadavg()[0], 1), "peak": peak}
                rows.append(r)
                log(json.dumps(r))
    os.makedirs(BB + "/results", exist_ok=True)
    with open(BB + "/results/batched.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    write_doc(rows)


def write_doc(rows):
    rev = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
    L = ["## Batched transcription", "",
         f"`python3 bench/batched.py` (bench/batched.py), {time.strftime('%Y-%m-%d')}, sotto at {rev}, {THREADS} "
         f"threads, batch size {BATCH}, `{WAV}` (tests/data/make_long.py read5 twice, 603.7 s), one engine after "
         "the other on the same checkpoint (weights float32: the CTranslate2 directory, faster-whisper compute_type "
         "float32; int8: sotto's q8_0 GGUF of it against compute_type int8); the load average when each "
         "run ended is beside it (the machine is shared: CPU seconds are the steadier figure), and one core's f32 "
         "FMA rate (GFLOP/s, `build/tests/cpu_peak`) just before the run, which also sees other virtual machines on "
         "the same host (a lower figure is a slower hour). WER against the "
         "clips' transcripts (tests/wer.py, Mr. → mister).", "",
         "| CPU class | model | weights | engine | wall s | CPU s | × real time | WER % | peak RSS MB | load | FMA |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append(f"| {r['class']} | {r['model']} | {r.get('weights', 'float32')} | {r['engine']} | {r['wall_s']:.1f} | "
                 f"{r['cpu_s']:.1f} | "
                 f"{603.7 / r['wall_s']:.1f} | {r['wer']:.2f} | {r['rss_mb']} | {r['load']} | "
                 f"{fmt_peak(r.get('peak'))} |")
    L += ["", "Targets (issue 25): batched >= 2x the throughput of sequential defaults; <= 0.5x the wall time "
          "of faster-whisper's BatchedInferencePipeline(batch_size=8); batched WER within 1 point of sequential.", ""]
    for cls in sorted({r["class"] for r in rows}):
        for m, w in [(m, w) for m in MODELS for w in ("float32", "int8")]:
            g = {r["engine"]: r for r in rows
                 if r["class"] == cls and r["model"] == m and r.get("weights", "float32") == w}
            if len(g) < 3:
                continue
            s, b, f = g["sotto sequential"], g["sotto batched"], g["fw batched"]
            L.append(f"- {cls} {m} {w}: batched / sequential throughput **{s['wall_s'] / b['wall_s']:.2f}x** "
                     f"(CPU {s['cpu_s'] / b['cpu_s']:.2f}x); sotto batched / fw batched wall "
                     f"**{b['wall_s'] / f['wall_s']:.2f}** (CPU {b['cpu_s'] / f['cpu_s']:.2f}); WER batched "
                     f"{b['wer']:.2f} vs sequential {s['wer']:.2f} ({b['wer'] - s['wer']:+.2f} points), fw batched "
                     f"{f['wer']:.2f}")
    path = "docs/BENCHMARKS.md"
    write_part(path, "Batched transcription", "\n".join(L[2:]), "bench/batched.py")
    log("wrote the batched section's table in", path, "(the rest of the section stays)")


if __name__ == "__main__":
    main()
