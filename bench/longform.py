#!/usr/bin/env python3
"""Long-form transcription, end to end, against the peers (issue "Long-form"): wall time
and word error rate of each engine on the same 5-minute reading (tests/data/make_long.py
libri5: the LibriVox clips over and over, with pauses; its reference text is theirs),
BENCH_LF_RUNS times each (default 3; the median run is reported, with the range),
with each engine's defaults (beam 5, best of 5, temperature fallback, timestamps,
conditioning on previous text) and greedy (beam 1, temperature 0 only), tiny.en and base,
on BENCH_LF_THREADS threads (default 2), one engine after the other. Writes the section
"## Long-form transcription" of docs/BENCHMARKS.md (bench.py carries it over).

Run after bench/run.sh has built the peers (`make bench` does both; `make bench-longform`
this part alone). Standard library only.
"""
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from wer import edits, normalise  # noqa: E402

BB = "build-bench"
MD = BB + "/models"
WCPP = BB + "/whisper.cpp/bin/whisper-cli"
PY = ".cache/fw-venv/bin/python"
THREADS = int(os.environ.get("BENCH_LF_THREADS", 2))
MODELS = os.environ.get("BENCH_LF_MODELS", "tiny.en base").split()
MODES = os.environ.get("BENCH_LF_MODES", "default greedy").split()
TIMEOUT = int(os.environ.get("BENCH_LF_TIMEOUT", 900))
RUNS = int(os.environ.get("BENCH_LF_RUNS", 3))  # per cell: the median run is reported
CT2 = {"tiny.en": "models/tiny.en-ct2", "base": "models/base-ct2"}


def log(*a):
    print("[longform]", *a, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def prepare():
    """The audio and every model file each engine reads, made from the same weights."""
    sh([sys.executable, "tests/data/make_long.py", BB, "libri5"])
    for m in MODELS:
        for wt in ("f32", "f16", "q8_0"):
            out = f"{MD}/{m}-{wt}.gguf"
            if not os.path.exists(out):
                sh(["./build/sotto", "convert", CT2[m], out, "--type", wt])
        f16 = f"{MD}/ggml-{m}-f16.bin"
        if not os.path.exists(f16):
            sh([sys.executable, "bench/ct2_to_ggml.py", CT2[m], f16])
        q8 = f"{MD}/ggml-{m}-q8_0.bin"
        if not os.path.exists(q8):
            sh([BB + "/whisper.cpp/bin/whisper-quantize", f16, q8, "q8_0"])


def norm(text):
    return normalise(re.sub(r"\bMr\.", "mister", text))


def timed(cmd):
    """Wall seconds, CPU seconds (user + system), peak RSS MB and stdout of CMD under
    /usr/bin/time -v. On a loaded machine the CPU seconds are the steadier figure."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, timeout=TIMEOUT)
    wall = time.perf_counter() - t0
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-1500:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    cpu = sum(float(re.search(rf"{k} time \(seconds\): ([0-9.]+)", p.stderr).group(1)) for k in ("User", "System"))
    return wall, cpu, rss, p.stdout


def configs(m, mode):
    """(engine, weights, command, text of its stdout) for model M in MODE."""
    wav = f"{BB}/libri5.wav"
    greedy = mode == "greedy"
    c = []
    for wt in ("f32", "f16", "q8_0"):
        cmd = ["./build/sotto", "transcribe", "-m", f"{MD}/{m}-{wt}.gguf", "-t", str(THREADS), "-l", "en", "--quiet",
               "-f", "txt"] + (["--beam-size", "1", "--no-fallback"] if greedy else []) + [wav]
        c.append(("sotto", wt, cmd, lambda out: out))
    for wt in ("f16", "q8_0"):
        # whisper-cli's defaults: beam 5, best of 5, fallback on; greedy: -bs 1 -bo 1 -nf
        cmd = [WCPP, "-m", f"{MD}/ggml-{m}-{wt}.bin", "-f", wav, "-t", str(THREADS), "-l", "en", "-np"]
        cmd += ["-bs", "1", "-bo", "1", "-nf"] if greedy else []
        c.append(("whisper.cpp", wt, cmd, lambda out: re.sub(r"\[[^\]]*-->[^\]]*\]", " ", out)))
    for ct in ("int8", "float32"):
        cmd = [PY, "bench/fw_bench.py", "longform", CT2[m], ct, str(THREADS), wav, mode]
        c.append(("faster-whisper", ct, cmd, lambda out: json.loads(out)["text"]))
    return c


def main():
    prepare()
    ref = norm(open(f"{BB}/libri5.txt", encoding="utf-8").read())
    audio_s = os.path.getsize(f"{BB}/libri5.wav") / 32000
    rows = []
    for m in MODELS:
        for mode in MODES:
            for eng, wt, cmd, text_of in configs(m, mode):
                runs = []
                try:
                    for _ in range(RUNS):
                        wall, cpu, rss, out = timed(cmd)
                        hyp = norm(text_of(out))
                        runs.append((wall, cpu, rss, 100.0 * edits(ref, hyp) / len(ref), len(hyp)))
                except Exception as e:
                    log(f"FAILED {m} {mode} {eng} {wt}: {e}")
                    continue
                runs.sort()
                wall, cpu, rss, wer, words = runs[len(runs) // 2]  # the median run by wall time
                rows.append({"model": m, "mode": mode, "engine": eng, "weights": wt, "wall_s": round(wall, 2),
                             "wall_min": round(runs[0][0], 2), "wall_max": round(runs[-1][0], 2),
                             "cpu_s": round(cpu, 2), "rss_mb": round(rss, 1), "wer": round(wer, 2),
                             "wer_min": round(min(r[3] for r in runs), 2), "wer_max": round(max(r[3] for r in runs), 2),
                             "words": words})
                log(f"{m} {mode} {eng} {wt}: {wall:.1f} s ({cpu:.1f} s CPU; runs {runs[0][0]:.1f}-{runs[-1][0]:.1f} s), "
                    f"WER {wer:.2f} %, {rss:.0f} MB")
    os.makedirs(BB + "/results", exist_ok=True)
    with open(BB + "/results/longform.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    write_doc(rows, audio_s)


def write_doc(rows, audio_s):
    load = os.getloadavg()[0]
    try:
        rev = sh(["git", "describe", "--always", "--dirty"]).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        rev = "unknown"
    L = ["## Long-form transcription", "",
         f"`make bench-longform` (bench/longform.py), {time.strftime('%Y-%m-%d')}, sotto at {rev}, {THREADS} threads, "
         f"`tests/data/make_long.py libri5` ({audio_s:.1f} s: the 5 LibriVox clips over and over with 0.3–1.2 s "
         f"pauses), {RUNS} runs per cell (the median run by wall time; its range beside it, and the range "
         f"of the WER where sampling made the runs differ), engines one after the other (load average at the end "
         f"{load:.1f}). "
         "`default`: each engine's own defaults (beam 5, best of 5, temperature fallback, timestamps, previous "
         "text as prompt); `greedy`: beam 1, temperature 0 only. WER against the clips' transcripts, "
         "normalised as tests/wer.py (plus Mr. → mister). All engines read the same weights (CTranslate2 "
         "f16 → GGUF / ggml / CTranslate2).", "",
         "| model | mode | engine | weights | wall s | (range) | CPU s | × real time | WER % | peak RSS MB |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        spread = f" ({r['wer_min']:.2f}–{r['wer_max']:.2f})" if r["wer_min"] != r["wer_max"] else ""
        L.append(f"| {r['model']} | {r['mode']} | {r['engine']} | {r['weights']} | {r['wall_s']:.1f} | "
                 f"{r['wall_min']:.1f}–{r['wall_max']:.1f} | {r['cpu_s']:.1f} | {audio_s / r['wall_s']:.1f} | "
                 f"{r['wer']:.2f}{spread} | {r['rss_mb']:.0f} |")
    L += ["", "Target (issue Long-form): sotto ≤ 0.5 × the fastest peer with defaults.", ""]
    for m in sorted({r["model"] for r in rows}):
        for mode in ("default", "greedy"):
            s = [r for r in rows if r["model"] == m and r["mode"] == mode and r["engine"] == "sotto"]
            p = [r for r in rows if r["model"] == m and r["mode"] == mode and r["engine"] != "sotto"]
            if s and p:
                a, b = min(s, key=lambda r: r["wall_s"]), min(p, key=lambda r: r["wall_s"])
                L.append(f"- {m} {mode}: fastest sotto ({a['weights']}) {a['wall_s']:.1f} s / fastest peer "
                         f"({b['engine']} {b['weights']}) {b['wall_s']:.1f} s = **{a['wall_s'] / b['wall_s']:.2f}**; "
                         f"CPU seconds, fastest of each: {min(r['cpu_s'] for r in s):.1f} / "
                         f"{min(r['cpu_s'] for r in p):.1f} = {min(r['cpu_s'] for r in s) / min(r['cpu_s'] for r in p):.2f}")
    section = "\n".join(L) + "\n"
    path = "docs/BENCHMARKS.md"
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    if "\n## Long-form transcription" in old:
        a = old.index("\n## Long-form transcription") + 1
        b = old.find("\n## ", a + 3)
        old = old[:a] + section + (old[b + 1:] if b >= 0 else "")
    else:
        old = old.rstrip("\n") + "\n\n" + section
    open(path, "w", encoding="utf-8").write(old)
    log(f"wrote the long-form section of {path}")


if __name__ == "__main__":
    main()
