#!/usr/bin/env python3
"""Timing driver of bench/run.sh (python3, standard library only). Runs sotto,
whisper.cpp and faster-whisper on the same machine, weights, audio and thread counts,
alternating engines run by run, then writes the medians and ratios to docs/BENCHMARKS.md.

usage: python3 bench/bench.py   (after bench/run.sh has built and installed everything)
environment: BENCH_QUICK=1 (fewer runs, no small model), BENCH_RUNS, BENCH_E2E_RUNS,
             BENCH_BIG_RUNS, BENCH_THREADS ("1 2"), BENCH_BIG ("base small"),
             BENCH_NOTES (a JSON list of notes added to the Notes section)
The Notes section's hand-written items (those this script does not make) are kept.
Raw results: build-bench/results/*.jsonl (one JSON object per sample).
"""
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(ROOT)
from machine import wcpp_build  # noqa: E402  (bench/, the script's directory)

BB = "build-bench"
MD = BB + "/models"
RES = BB + "/results"
WCPP = BB + "/whisper.cpp/bin"
PY = ".cache/fw-venv/bin/python"
WINDOW, LONG = BB + "/window30.wav", BB + "/long.wav"
QUICK = os.environ.get("BENCH_QUICK", "0") not in ("", "0")
RUNS = int(os.environ.get("BENCH_RUNS", 3 if QUICK else 5))
E2E_RUNS = int(os.environ.get("BENCH_E2E_RUNS", 1))
BIG_RUNS = int(os.environ.get("BENCH_BIG_RUNS", 1))
THREADS = [int(t) for t in os.environ.get("BENCH_THREADS", "1 2").split()]
BIG = os.environ.get("BENCH_BIG", "base" if QUICK else "base small").split()
# Time limits (seconds): per command, and per phase (a phase stops starting new rounds once
# past its budget; at least one round always runs). Keep `make bench` near 20 minutes.
T_ENGINE = int(os.environ.get("BENCH_T_ENGINE", 90))
T_E2E = int(os.environ.get("BENCH_T_E2E", 300))
BUDGET = {"tiny.en": 360, "rand-base": 120, "rand-small": 180, "e2e": 420}
TIMEOUTS = []
WCPP_FLAGS = ["-bs", "1", "-bo", "1", "-nt", "-nf", "-mc", "0", "-l", "en"]
# the same decoding for sotto (its transcribe defaults are openai's since 1ddb1ab: beam 5,
# fallback, timestamps, the previous text as prompt; bench/longform.py measures those)
SOTTO_E2E_FLAGS = ["--beam-size", "1", "--no-fallback", "--no-timestamps", "--no-condition", "-l", "en"]


def log(*a):
    print("[bench]", *a, file=sys.stderr, flush=True)


def run(cmd, timeout=T_ENGINE):
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        TIMEOUTS.append(" ".join(os.path.basename(c) if "/" in c else c for c in cmd[:8]) + f" … > {timeout} s")
        raise
    wall = (time.perf_counter() - t0) * 1000
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} -> rc {p.returncode}\n{p.stderr[-2000:]}")
    return p.stdout, p.stderr, wall


def loadavg():
    return os.getloadavg()[0]


# ---------------------------------------------------------------- engine figures
def sotto_engine(model, t, tokens):
    out, _, _ = run(["./build/sotto", "bench", "-m", model, "-t", str(t), "--runs", "1",
                     "--tokens", str(tokens), "--audio", WINDOW])
    j = json.loads(out)
    return {k: j[k] for k in ("load_ms", "encode_ms", "prefill_ms", "step_ms", "step_tokens")}


def wcpp_timings(err):
    r = {}
    for key in ("load", "encode", "decode", "batchd", "prompt", "sample"):
        m = re.search(r"%s time =\s*([\d.]+) ms(?: /\s*(\d+) runs)?" % key, err)
        if m:
            r[key] = (float(m.group(1)), int(m.group(2) or 1))
    return r


def wcpp_engine(model, t, tokens=None):
    _, err, _ = run([WCPP + "/whisper-cli", "-m", model, "-f", WINDOW, "-t", str(t)] + WCPP_FLAGS)
    tm = wcpp_timings(err)
    dec, n = tm["decode"]
    bd, nb = tm["batchd"]
    return {"load_ms": tm["load"][0], "encode_ms": tm["encode"][0] / tm["encode"][1],
            "prefill_ms": bd / max(nb, 1), "step_ms": dec / max(n, 1), "step_tokens": n}


def fw_engine(model, ct, t, tokens):
    out, _, _ = run([PY, "bench/fw_bench.py", "engine", model, ct, str(t), "1", WINDOW, str(tokens)])
    j = json.loads(out)
    return {k: j[k] for k in ("load_ms", "encode_ms", "prefill_ms", "step_ms", "step_tokens")}


def configs(size):
    """(engine, row weight type, label, callable(threads, tokens)) for one model size."""
    name = size  # tiny.en, rand-base, rand-small
    ct2 = "models/tiny.en-ct2" if size == "tiny.en" else f"{MD}/{size}-ct2"
    c = []
    for wt in ("f32", "f16", "q8_0"):
        if size != "tiny.en" and wt == "f32":
            continue
        m = f"{MD}/{name}-{wt}.gguf"
        c.append(("sotto", wt, f"sotto {wt}", lambda t, k, m=m: sotto_engine(m, t, k)))
    for wt in ("f16", "q8_0"):
        m = f"{MD}/ggml-{name}-{wt}.bin"
        c.append(("whisper.cpp", wt, f"whisper.cpp {wt}", lambda t, k, m=m: wcpp_engine(m, t, k)))
    for ct, wt in (("float32", "f32"), ("int8", "q8_0")):
        if size != "tiny.en" and wt == "f32":
            continue
        c.append(("faster-whisper", wt, f"faster-whisper {ct}", lambda t, k, ct=ct: fw_engine(ct2, ct, t, k)))
    return c


def engine_rounds(size, runs, tokens, f):
    cs = configs(size)
    t_start = time.time()
    for r in range(runs):
        if r and time.time() - t_start > BUDGET.get(size, 300):
            log(f"{size}: time budget spent after {r} round(s)")
            break
        for t in THREADS:
            order = cs[r % len(cs):] + cs[:r % len(cs)]  # rotate the start each round
            for eng, wt, label, fn in order:
                la = loadavg()
                try:
                    res = fn(t, tokens)
                except Exception as e:  # record and go on: one failure must not lose the rest
                    log(f"FAILED {size} {label} t={t}: {e}")
                    continue
                rec = {"size": size, "engine": eng, "wtype": wt, "label": label, "threads": t,
                       "round": r, "loadavg": round(la, 2), **res}
                f.write(json.dumps(rec) + "\n")
                f.flush()
                log(f"{size} r{r} t={t} {label}: enc {res['encode_ms']:.0f} ms, step {res['step_ms']:.2f} ms "
                    f"(load avg {la:.1f})")


# ---------------------------------------------------------------- end to end
def timev(cmd):
    out, err, wall = run(["/usr/bin/time", "-v"] + cmd, timeout=T_E2E)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1)) / 1024
    cpu = sum(float(re.search(r"%s time \(seconds\): ([\d.]+)" % k, err).group(1)) for k in ("User", "System"))
    return out, err, wall, rss, cpu


def e2e_configs():
    c = []
    for wt in ("f32", "f16", "q8_0"):
        m = f"{MD}/tiny.en-{wt}.gguf"
        c.append(("sotto", wt, f"sotto {wt}",
                  lambda t, m=m: ["./build/sotto", "transcribe", "-m", m, "-t", str(t)] + SOTTO_E2E_FLAGS + [LONG]))
    for wt in ("f16", "q8_0"):
        m = f"{MD}/ggml-tiny.en-{wt}.bin"
        c.append(("whisper.cpp", wt, f"whisper.cpp {wt}",
                  lambda t, m=m: [WCPP + "/whisper-cli", "-m", m, "-f", LONG, "-t", str(t)] + WCPP_FLAGS))
    for ct, wt in (("float32", "f32"), ("int8", "q8_0")):
        c.append(("faster-whisper", wt, f"faster-whisper {ct}",
                  lambda t, ct=ct: [PY, "bench/fw_bench.py", "e2e", "models/tiny.en-ct2", ct, str(t), LONG]))
    return c


def e2e_rounds(f, audio_s):
    cs = e2e_configs()
    t_start = time.time()
    for r in range(E2E_RUNS):
        if r and time.time() - t_start > BUDGET["e2e"]:
            break
        for t in THREADS:
            order = cs[r % len(cs):] + cs[:r % len(cs)]
            for eng, wt, label, fn in order:
                la = loadavg()
                try:
                    out, err, wall, rss, cpu = timev(fn(t))
                except subprocess.TimeoutExpired:
                    log(f"TIMEOUT e2e {label} t={t} (> {T_E2E} s)")
                    f.write(json.dumps({"engine": eng, "wtype": wt, "label": label, "threads": t, "round": r,
                                        "loadavg": round(la, 2), "timed_out": T_E2E}) + "\n")
                    continue
                except Exception as e:
                    log(f"FAILED e2e {label} t={t}: {e}")
                    continue
                text = json.loads(out)["text"] if eng == "faster-whisper" else out
                rec = {"engine": eng, "wtype": wt, "label": label, "threads": t, "round": r,
                       "loadavg": round(la, 2), "wall_ms": round(wall, 1), "rtf": round(wall / 1000 / audio_s, 4),
                       "peak_rss_mb": round(rss, 1), "cpu_per_wall": round(cpu * 1000 / wall, 2),
                       "words": len(text.split())}
                f.write(json.dumps(rec) + "\n")
                f.flush()
                with open(f"{RES}/e2e-{label.replace(' ', '-')}-t{t}.txt", "w") as tf:
                    tf.write(text)
                log(f"e2e r{r} t={t} {label}: {wall / 1000:.1f} s, RTF {rec['rtf']:.3f}, {rss:.0f} MB (load avg {la:.1f})")


# ---------------------------------------------------------------- report
def med(xs):
    return statistics.median(xs) if xs else None


def fmt(x, d=1):
    if x is None:
        return "—"
    return f"{x:.{d}f}" if abs(x) < 100 else f"{x:.0f}"


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "—"


def table(recs, key, sizes, digits=1, lower="lower is better"):
    rows = []
    peers = [("whisper.cpp", {"f16": "f16", "q8_0": "q8_0"}), ("faster-whisper", {"f32": "f32", "q8_0": "q8_0"})]
    for size in sizes:
        for t in THREADS:
            for wt in ("f32", "f16", "q8_0"):
                get = lambda eng: med([r[key] for r in recs if r.get("size", "tiny.en") == size and r["engine"] == eng
                                       and r["wtype"] == wt and r["threads"] == t and r.get(key) is not None])
                s, w, fw = get("sotto"), get("whisper.cpp"), get("faster-whisper")
                cell = lambda eng, x: fmt(x, digits) if x is not None else (
                    f"> {max(r['timed_out'] for r in recs if r.get('timed_out') and r['engine'] == eng and r['wtype'] == wt and r['threads'] == t)} s"
                    if any(r.get("timed_out") and r["engine"] == eng and r["wtype"] == wt and r["threads"] == t
                           and r.get("size", "tiny.en") == size for r in recs) else "—")
                if s is None and w is None and fw is None and not any(
                        r.get("timed_out") and r["wtype"] == wt and r["threads"] == t for r in recs):
                    continue
                rows.append(f"| {size} | {t} | {wt} | {cell('sotto', s)} | {cell('whisper.cpp', w)} | {cell('faster-whisper', fw)} | "
                            f"{ratio(s, w)} | {ratio(s, fw)} |")
    return rows


def targets(eng, e2e):
    """The speed targets of the project (tiny.en, the most threads measured), each as
    measured ratio, bound and verdict."""
    t = max(THREADS)

    def get(recs, key, engine, wt):
        return med([r[key] for r in recs if r.get("size", "tiny.en") == "tiny.en" and r["engine"] == engine
                    and r["wtype"] == wt and r["threads"] == t and r.get(key) is not None])

    rows = []

    def add(what, num, den, bound):
        if num is None or den is None or not den:
            rows.append(f"| {what} | — | ≤ {bound:g} | not measured |")
            return
        r = num / den
        rows.append(f"| {what} | {r:.2f} | ≤ {bound:g} | {'met' if r <= bound else 'not met'} |")

    for wt in ("f16", "q8_0"):
        add(f"encoder per window, {wt}: sotto / whisper.cpp", get(eng, "encode_ms", "sotto", wt),
            get(eng, "encode_ms", "whisper.cpp", wt), 0.4)
    add("encoder per window: sotto q8_0 / faster-whisper int8", get(eng, "encode_ms", "sotto", "q8_0"),
        get(eng, "encode_ms", "faster-whisper", "q8_0"), 0.8)
    for wt in ("f16", "q8_0"):
        add(f"decoder per token, {wt}: sotto / whisper.cpp", get(eng, "step_ms", "sotto", wt),
            get(eng, "step_ms", "whisper.cpp", wt), 0.6)
    add("decoder per token: sotto q8_0 / faster-whisper int8", get(eng, "step_ms", "sotto", "q8_0"),
        get(eng, "step_ms", "faster-whisper", "q8_0"), 0.8)
    peers = [x for x in (get(e2e, "wall_ms", e, wt) for e in ("whisper.cpp", "faster-whisper")
                         for wt in ("f32", "f16", "q8_0")) if x is not None]
    add("end to end, long file: sotto q8_0 / the faster peer (any weight type)", get(e2e, "wall_ms", "sotto", "q8_0"),
        min(peers) if peers else None, 0.7)
    for wt in ("f16", "q8_0"):
        add(f"peak RSS, {wt}: sotto / whisper.cpp", get(e2e, "peak_rss_mb", "sotto", wt),
            get(e2e, "peak_rss_mb", "whisper.cpp", wt), 1.0)
    return [f"## Targets ({t} threads, tiny.en)", "",
            "The project's speed targets, from the medians below (ratio = sotto / peer).", "",
            "| target | ratio | bound | verdict |", "|---|---|---|---|"] + rows + [""]


def machine():
    lines = subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
    keep = ("Architecture", "Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket", "Socket(s)",
            "L1d cache", "L2 cache", "L3 cache", "Hypervisor vendor")
    out = [l.strip() for l in lines if l.split(":")[0].strip() in keep]
    flags = next((l.split(":", 1)[1].split() for l in lines if l.startswith("Flags")), [])
    simd = [f for f in ("avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile") if f in flags]
    out.append("SIMD flags: " + " ".join(simd))
    u = platform.uname()
    out.append(f"uname -srm: {u.system} {u.release} {u.machine}")
    mem = open("/proc/meminfo").readline().split()
    out.append(f"MemTotal: {int(mem[1]) // 1024} MiB")
    cc = subprocess.run(["cc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    out.append(f"compiler: {cc}")
    return out


def versions():
    v = {}
    try:
        v["whisper.cpp"] = re.search(r'project\("whisper.cpp" VERSION ([\d.]+)\)',
                                     open(".cache/npm/package/cpp/whisper.cpp/CMakeLists.txt").read()).group(1)
    except Exception:
        v["whisper.cpp"] = "?"
    v["whisper.cpp flags"] = wcpp_build(os.path.dirname(WCPP))
    try:
        v["nodejs-whisper"] = json.load(open(".cache/npm/package/package.json"))["version"]
    except Exception:
        v["nodejs-whisper"] = "?"
    out, _, _ = run([PY, "-c", "import ctranslate2, faster_whisper; print(ctranslate2.__version__, faster_whisper.__version__)"])
    v["ctranslate2"], v["faster-whisper"] = out.split()
    out, _, _ = run(["./build/sotto", "bench", "-m", f"{MD}/tiny.en-q8_0.gguf", "--runs", "1", "--tokens", "2"])
    v["sotto"] = json.loads(out)["version"] + " (" + subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() + ")"
    return v


def report(eng, e2e, meta):
    L = []
    w = L.append
    w("# Benchmarks: sotto vs whisper.cpp vs faster-whisper")
    w("")
    w("Made by `make bench` (= `sh bench/run.sh`): one command builds whisper.cpp from its npm")
    w("package, installs faster-whisper from PyPI into `.cache/`, converts one set of weights for")
    w("all three engines, runs them alternately on this machine and writes this file. Raw samples:")
    w("`build-bench/results/*.jsonl`. Every figure is the **median** of the samples; the ratio")
    w("columns are sotto / peer (below 1 = sotto is faster / smaller). The long-form, per-class and")
    w("batched targets, with their latest figures at quiet and busy hours: \"Where the speed targets")
    w("stand\" below.")
    w("")
    w(f"- Date: {meta['date']}; mode: {'BENCH_QUICK=1' if QUICK else 'full'}; engine samples per figure: "
      f"{RUNS} (tiny.en), {BIG_RUNS} (random base/small); end-to-end samples: {E2E_RUNS}.")
    w(f"- Versions: sotto {meta['v']['sotto']}; whisper.cpp {meta['v']['whisper.cpp']} (source of npm "
      f"`nodejs-whisper@{meta['v']['nodejs-whisper']}`, CMake Release, `GGML_NATIVE=ON`, OpenMP, static"
      + (f", C++ flags `{meta['v']['whisper.cpp flags']}`" if meta['v'].get('whisper.cpp flags') else "") + "); "
      f"faster-whisper {meta['v']['faster-whisper']} with ctranslate2 {meta['v']['ctranslate2']} (PyPI wheels).")
    w(f"- Load average (1 min) during the samples: median {meta['load_med']:.1f}, range "
      f"{meta['load_min']:.1f}–{meta['load_max']:.1f} (other jobs shared the machine; see notes).")
    w("")
    L.extend(targets(eng, e2e))
    w("## Machine")
    w("")
    w("```")
    L.extend(meta["machine"])
    w("```")
    w("")
    w("## Weights and audio")
    w("")
    w("- tiny.en: the CTranslate2 f16 weights of `models/tiny.en-ct2` (scripts/setup.sh) for all")
    w("  three. sotto: `sotto convert models/tiny.en-ct2 X.gguf --type f32|f16|q8_0`. whisper.cpp:")
    w("  `bench/ct2_to_ggml.py` writes its legacy ggml .bin (f16; f32 biases, norms, positional")
    w("  tables and conv biases, as its convert-pt-to-ggml.py), then whisper.cpp's own")
    w("  `whisper-quantize … q8_0`. faster-whisper reads the directory itself, `compute_type`")
    w("  float32 or int8 (this CPU has no f16 path in ctranslate2).")
    w("- Rows by weight type: f32 = sotto f32 vs faster-whisper float32; f16 = sotto f16 vs")
    w("  whisper.cpp f16; q8_0 = sotto q8_0 vs whisper.cpp q8_0 and faster-whisper int8 (int8")
    w("  weights, per-row scales, int8 activations: the nearest equivalent).")
    w(f"- Audio: `bench/make_long.sh` concatenates the committed clips (tests/data/clips, 0.3 s gaps)")
    w(f"  and repeats them to {meta['audio_s']:.1f} s (`build-bench/long.wav`); engine figures use its first")
    w("  30 s (`build-bench/window30.wav`).")
    w("")
    w("## Engine figures (tiny.en, one 30 s window)")
    w("")
    w("Each sample is a fresh process and the first call in it (no warm-up, as a CLI transcription")
    w("sees it), engines interleaved. encode = encoder for one 30 s window (sotto and whisper.cpp")
    w("include the cross-attention K/V projection; ctranslate2 computes it in the first decoder call,")
    w("so it lands in faster-whisper's prefill). prefill = the forced prefix `<|sot|><|notimestamps|>`")
    w("(faster-whisper: prefix + first token). step = one decoder step per generated token, greedy,")
    w(f"averaged over {meta['tokens']} tokens (sotto and faster-whisper: <|endoftext|> ignored/suppressed to")
    w("get exactly that many; whisper.cpp: its own greedy decode of the window, which produced that")
    w("many; whisper.cpp's step excludes its sampling time, which it reports apart).")
    w("")
    hdr = ["| model | threads | weights | sotto | whisper.cpp | faster-whisper | sotto/whisper.cpp | sotto/faster-whisper |",
           "|---|---|---|---|---|---|---|---|"]
    for key, title, d in (("encode_ms", "Encoder, ms per 30 s window", 0), ("step_ms", "Decoder, ms per token", 2),
                          ("prefill_ms", "Decoder prefill, ms", 1), ("load_ms", "Model load, ms", 1)):
        w(f"### {title}")
        w("")
        L.extend(hdr)
        L.extend(table(eng, key, ["tiny.en"], d))
        w("")
    w("## End to end (tiny.en, long file)")
    w("")
    w(f"`/usr/bin/time -v` around the whole command on the {meta['audio_s']:.1f} s file: process start, model")
    w("load, audio read, log-mel, all windows, text out, every engine decoding alike: sotto")
    w("`transcribe " + " ".join(SOTTO_E2E_FLAGS) + "`; whisper.cpp")
    w("`whisper-cli " + " ".join(WCPP_FLAGS) + "` (greedy, no timestamps, no temperature")
    w("fallback, no conditioning on previous text); faster-whisper")
    w("`WhisperModel.transcribe(beam_size=1, best_of=1, temperature=0, without_timestamps=True,")
    w("condition_on_previous_text=False, vad_filter=False)` in a Python process (interpreter start")
    w("and imports included). RTF = wall / audio duration.")
    w("")
    for key, title, d in (("wall_ms", "Wall time, ms", 0), ("rtf", "Real-time factor", 3),
                          ("peak_rss_mb", "Peak RSS, MB", 1),
                          ("cpu_per_wall", "CPU time / wall time (cores kept busy; spinning counts)", 2)):
        w(f"### {title}")
        w("")
        L.extend(hdr)
        L.extend(table(e2e, key, ["tiny.en"], d))
        w("")
    words = {}
    for r in e2e:
        if "words" in r:
            words.setdefault(r["label"], r["words"])
    w("Words transcribed (sanity check, same audio): " + ", ".join(f"{k} {v}" for k, v in words.items()) +
      ". Differences come from each engine's window and decoding details, so the amount of decoding")
    w("work differs somewhat too; transcripts: `build-bench/results/e2e-*.txt`.")
    w("")
    big = [s for s in BIG if any(r.get("size") == "rand-" + s for r in eng)]
    if big:
        w("## Larger models (random weights)")
        w("")
        w("`bench/fw_bench.py rand SIZE` writes one CTranslate2 model (f16) of Whisper base (6 layers,")
        w("512 wide) or small (12 layers, 768 wide) dimensions with random weights and tiny.en's")
        w("vocabulary; the same file feeds all three engines, converted as above. Values do not")
        w("change the cost of a step, but greedy decoding of random weights does not stop where a")
        w("real model would: whisper.cpp's step is averaged over its own decode (up to 224 tokens),")
        w(f"the others over {meta['tokens']} tokens.")
        w("")
        for key, title, d in (("encode_ms", "Encoder, ms per 30 s window", 0), ("step_ms", "Decoder, ms per token", 2)):
            w(f"### {title}")
            w("")
            L.extend(hdr)
            L.extend(table(eng, key, ["rand-" + s for s in big], d))
            w("")
    gpu = gpu_section()
    if gpu:
        L.extend(gpu)
    w("## Notes")
    w("")
    for n in meta["notes"]:
        w(f"- {n}")
    w("")
    w("## Reproduce")
    w("")
    w("```sh")
    w("make bench                 # full run; BENCH_QUICK=1 make bench for a shorter one")
    w("```")
    w("")
    w("Needs: what `make test` needs (scripts/setup.sh), plus sox, npm and python3-venv; network")
    w("access to the npm registry and PyPI on the first run only. A run rewrites the sections above")
    w("from its own figures and keeps every other section, and the Notes it does not make itself")
    w("(hand-written ones); `BENCH_NOTES='[\"...\"]'` adds notes of its own.")
    return "\n".join(L) + "\n"


def gpu_section():
    """The GPU (Vulkan) section of the current docs/BENCHMARKS.md, kept as it is: bench/gpu.sh
    (make bench-gpu) makes its rows, on another machine than this run's peers, maybe."""
    try:
        old = open("docs/BENCHMARKS.md").read().split("\n")
    except OSError:
        return []
    out, keep = [], False
    for line in old:
        if line.startswith("## "):
            keep = line.startswith("## GPU (Vulkan)")
        if keep:
            out.append(line)
    return out


# the beginnings of the notes this script makes from its run (replaced at every run)
MADE_NOTES = ("whisper-bench ", "The machine was shared", "Timed out (not counted", "Engine samples per cell")


def kept_notes(made):
    """The items of docs/BENCHMARKS.md's Notes that this run does not make: hand-written
    notes on earlier runs, kept in their order (a rerun had dropped them)."""
    if not os.path.exists("docs/BENCHMARKS.md"):
        return []
    m = re.search(r"\n## Notes\n(.*?)(?=\n## |\Z)", open("docs/BENCHMARKS.md").read(), re.S)
    items = re.findall(r"^- (.*)$", m.group(1), re.M) if m else []
    return [t for t in items if t not in made and not t.startswith(MADE_NOTES)]


def main():
    os.makedirs(RES, exist_ok=True)
    audio_s = float(subprocess.run(["soxi", "-D", LONG], capture_output=True, text=True).stdout)
    for p in [f for f in os.listdir(MD) if f.endswith((".gguf", ".bin"))]:
        with open(os.path.join(MD, p), "rb") as fh:  # page cache: load times from memory for all
            while fh.read(1 << 24):
                pass
    # token count: whisper.cpp's greedy decode of the window (f16, 1 thread)
    try:
        tokens = wcpp_engine(f"{MD}/ggml-tiny.en-f16.bin", 1)["step_tokens"]
    except Exception as e:
        log(f"whisper.cpp warm-up failed: {e}")
        tokens = 86
    log(f"decoder tokens per sample: {tokens}")
    t_start = time.time()
    phases = os.environ.get("BENCH_PHASES", "engine e2e").split()  # a subset reuses the other's results
    if "engine" in phases:
        with open(f"{RES}/engine.jsonl", "w") as f:
            engine_rounds("tiny.en", RUNS, tokens, f)
            for s in BIG:
                engine_rounds("rand-" + s, BIG_RUNS, tokens, f)
        json.dump({"timeouts": TIMEOUTS}, open(f"{RES}/engine-meta.json", "w"))
    else:
        TIMEOUTS.extend(json.load(open(f"{RES}/engine-meta.json"))["timeouts"])
    if "e2e" in phases:
        with open(f"{RES}/e2e.jsonl", "w") as f:
            e2e_rounds(f, audio_s)
    eng = [json.loads(l) for l in open(f"{RES}/engine.jsonl")]
    e2e = [json.loads(l) for l in open(f"{RES}/e2e.jsonl")]
    loads = [r["loadavg"] for r in eng + e2e]
    notes = [
        "whisper.cpp's `whisper-bench` (its own encoder benchmark) is not part of the default run: "
        "each call also decodes 3 × 256 single tokens and 16 × 256-token prompts (about 30 s per "
        "call at 1 thread here). `BENCH_WHISPER_BENCH=1` adds its encoder figure.",
        "whisper.cpp runs with whisper-cli's defaults otherwise: flash attention on, OpenMP threads.",
        "sotto's peak RSS from `sotto bench` and faster-whisper's from `ru_maxrss` are in the raw "
        "samples; the table's RSS comes from `/usr/bin/time -v` only, the same measure for all.",
    ]
    if os.environ.get("BENCH_WHISPER_BENCH", "0") not in ("", "0"):
        for t in THREADS:
            for wt in ("f16", "q8_0"):
                _, err, _ = run([WCPP + "/whisper-bench", "-m", f"{MD}/ggml-tiny.en-{wt}.bin", "-t", str(t)], 1800)
                tm = wcpp_timings(err)
                notes.append(f"whisper-bench tiny.en {wt}, {t} thread(s): encode {tm['encode'][0]:.0f} ms, "
                             f"decode {tm['decode'][0] / tm['decode'][1]:.2f} ms per token (positions 0–255).")
    multi = [r["cpu_per_wall"] for r in e2e if r.get("cpu_per_wall") and r["threads"] > 1]
    if multi and statistics.median(multi) < 1.5:
        notes.append(f"The machine was shared: at {max(THREADS)} threads the end-to-end runs kept a median of only "
                     f"{statistics.median(multi):.2f} cores busy (CPU time / wall), for every engine. The "
                     "multi-thread rows therefore measure behaviour under contention (thread pools that spin "
                     "at barriers, as whisper.cpp's OpenMP build and ctranslate2's do, lose most when a "
                     "thread is descheduled), not scaling on idle cores; rerun on a quiet machine for that.")
    if TIMEOUTS:
        notes.append("Timed out (not counted in the medians): " + "; ".join(TIMEOUTS) + ".")
    n_eng = {}
    for r in eng:
        k = (r["size"], r["label"], r["threads"])
        n_eng[k] = n_eng.get(k, 0) + 1
    for size in sorted({k[0] for k in n_eng}):
        counts = sorted({v for k, v in n_eng.items() if k[0] == size})
        notes.append(f"Engine samples per cell, {size}: " + (f"{counts[0]}" if len(counts) == 1 else
                     f"{counts[0]}–{counts[-1]}") + " (a phase stops starting rounds once past its time budget).")
    notes += json.loads(os.environ.get("BENCH_NOTES", "[]"))
    notes += kept_notes(notes)
    meta = {"date": datetime.date.today().isoformat(), "v": versions(), "machine": machine(), "audio_s": audio_s,
            "tokens": tokens, "load_med": statistics.median(loads), "load_min": min(loads), "load_max": max(loads),
            "notes": notes}
    # every section this run does not write (audio input, long-form, per CPU class, server,
    # VAD, fallback, ARM, ...: other scripts' and tests' figures) is carried over as it is
    kept = ""
    mine = ("Targets", "Machine", "Weights and audio", "Engine figures", "End to end",
            "Larger models", "GPU (Vulkan)", "Notes", "Reproduce")
    if os.path.exists("docs/BENCHMARKS.md"):
        old = open("docs/BENCHMARKS.md").read()
        for part in re.split(r"\n(?=## )", "\n" + old)[1:]:
            if not any(part.startswith("## " + t) for t in mine):
                kept += "\n" + part.rstrip("\n") + "\n"
    # the report first: it reads the GPU section of the file that open(..., "w") would empty
    text = report(eng, e2e, meta).rstrip("\n") + "\n" + kept
    with open("docs/BENCHMARKS.md", "w") as f:
        f.write(text)
    log(f"wrote docs/BENCHMARKS.md ({(time.time() - t_start) / 60:.1f} min of timing)")


if __name__ == "__main__":
    main()
