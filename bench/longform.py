#!/usr/bin/env python3
"""Long-form transcription, end to end, against the peers, per CPU class (issues
"Long-form" and 24): wall time, CPU time and word error rate of each engine on the same
5-minute reading (tests/data/make_long.py libri5: the LibriVox clips over and over, with
pauses; its reference text is theirs), with each engine's defaults (beam 5, best of 5,
temperature fallback, timestamps, conditioning on previous text) and greedy (beam 1,
temperature 0 only), tiny.en and base, on BENCH_LF_THREADS threads (default 2).

CPU classes (BENCH_LF_CLASSES, default "avx2 native" on x86-64, "native" elsewhere):
  avx2    every engine pinned to AVX2 + FMA + F16C: sotto by SOTTO_KERNELS=avx2,
          ctranslate2 by CT2_FORCE_CPU_ISA=AVX2 and its GEMMs (Intel MKL, which picks its own
          instructions: AVX-512 VNNI and AMX where the CPU has them) by
          MKL_ENABLE_INSTRUCTIONS=AVX2, whisper.cpp built a second time with
          GGML_NATIVE=OFF GGML_AVX2=ON GGML_FMA=ON GGML_F16C=ON GGML_AVX512=OFF
          (bench/run.sh: build-bench/whisper.cpp-avx2)
  native  each engine's own choice on this CPU (sotto's best kernel set, ctranslate2's
          own ISA, whisper.cpp with GGML_NATIVE=ON); skipped when it is avx2 already
Rounds: BENCH_LF_RUNS (default 3) times every engine in turn (the order rotated each
round), the median run by wall time reported with its range. BENCH_LF_QUICK=1 (or
BENCH_QUICK=1): one round, tiny.en only, no sotto f32 (the f16 default model gives its
output; about 10 minutes on 2 loaded cores); BENCH_LF_MODELS / BENCH_LF_MODES override;
BENCH_LF_MERGE=1 keeps the cells of the last run (build-bench/results/longform.jsonl) that
this one does not measure, so classes and models can be measured one at a time into one
section; a run past BENCH_LF_TIMEOUT seconds
(default 900) is stopped and reported as "> T". Writes the tables at the head of
docs/BENCHMARKS.md's "## Long-form transcription", between their marks (the section's
other text, its earlier rounds, stays; bench.py carries the section over).

Run after bench/run.sh has built the peers (`make bench` does both; `make bench-longform`
this part alone). Standard library only.
"""
import json
import os
import platform
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from wer import edits, normalise  # noqa: E402
from machine import fma_peak, fmt_peak, wcpp_build, write_part  # noqa: E402

BB = "build-bench"
MD = BB + "/models"
PY = ".cache/fw-venv/bin/python"
QUICK = any(os.environ.get(k, "0") not in ("", "0") for k in ("BENCH_LF_QUICK", "BENCH_QUICK"))
THREADS = int(os.environ.get("BENCH_LF_THREADS", 2))
MODELS = os.environ.get("BENCH_LF_MODELS", "tiny.en" if QUICK else "tiny.en base").split()
MODES = os.environ.get("BENCH_LF_MODES", "default greedy").split()
TIMEOUT = int(os.environ.get("BENCH_LF_TIMEOUT", 900))
RUNS = int(os.environ.get("BENCH_LF_RUNS", 1 if QUICK else 3))
X86 = platform.machine() in ("x86_64", "AMD64")
CLASSES = os.environ.get("BENCH_LF_CLASSES", "avx2 native" if X86 else "native").split()
SOTTO_WEIGHTS = ("f16", "q8_0") if QUICK else ("f32", "f16", "q8_0")  # f16: the default model
CT2 = {"tiny.en": "models/tiny.en-ct2", "base": "models/base-ct2"}
# what each class pins: sotto's SOTTO_KERNELS, ctranslate2's CT2_FORCE_CPU_ISA and MKL's
# MKL_ENABLE_INSTRUCTIONS (ctranslate2's own ISA does not reach the MKL GEMMs it calls),
# whisper.cpp's build
PIN = {"avx2": ({"SOTTO_KERNELS": "avx2"}, {"CT2_FORCE_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
                BB + "/whisper.cpp-avx2"),
       "native": ({}, {}, BB + "/whisper.cpp")}
MERGE = os.environ.get("BENCH_LF_MERGE", "0") not in ("", "0")
BOUND = {"avx2": 0.5}  # issue 24: the avx2 class at most 0.5x the fastest pinned peer


def log(*a):
    print("[longform]", *a, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def env_without_pins(extra):
    e = {k: v for k, v in os.environ.items() if k not in ("SOTTO_KERNELS", "CT2_FORCE_CPU_ISA",
                                                          "MKL_ENABLE_INSTRUCTIONS")}
    e.update(extra)
    return e


def sotto_kernels(extra):
    """The kernel set sotto runs under the environment EXTRA (`sotto --version`)."""
    out = sh(["./build/sotto", "--version"], env=env_without_pins(extra)).stdout
    m = re.search(r"kernels: ([a-z0-9_]+)", out)
    return m.group(1) if m else "?"


def ct2_isa(extra):
    """The ISA ctranslate2 selects under EXTRA (its own log line) and the instructions its
    MKL GEMMs dispatch to (MKL's banner: e.g. "AVX2 (MKL AVX-512+AMX)"), or '?'."""
    code = ("import ctranslate2, numpy; m = ctranslate2.models.Whisper('models/tiny.en-ct2', device='cpu', "
            "intra_threads=1); m.encode(ctranslate2.StorageView.from_array(numpy.zeros((1, 80, 3000), "
            "numpy.float32)))")
    try:
        p = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=120,
                           env=env_without_pins({**extra, "CT2_VERBOSE": "1", "MKL_VERBOSE": "1"}))
    except (OSError, subprocess.SubprocessError):
        return "?"
    log_text = p.stderr + p.stdout
    m = re.search(r"Selected ISA: (\S+)", log_text)
    banner = next((l for l in log_text.splitlines() if l.startswith("MKL_VERBOSE oneMKL")), "")
    mkl = "+".join(re.findall(r"\(Intel\(R\) ([A-Z0-9-]+)\)", banner)) or "?"
    return f"{m.group(1) if m else '?'} (MKL {mkl})"


def classes():
    """[(class name, what each engine runs as)] for this machine; native is dropped when
    sotto's native set is the avx2 one (the same class twice)."""
    out = []
    for c in CLASSES:
        if c not in PIN:
            sys.exit(f"longform.py: unknown class {c!r} (avx2, native)")
        se, ce, wdir = PIN[c]
        if not os.path.exists(wdir + "/bin/whisper-cli"):
            log(f"class {c}: {wdir}/bin/whisper-cli missing (bench/run.sh builds it): skipped")
            continue
        ks = sotto_kernels(se)
        if c == "native" and "avx2" in CLASSES and ks == "avx2":
            log("class native: sotto's best set is avx2, measured already")
            continue
        out.append((c, {"sotto_kernels": ks, "ct2_isa": ct2_isa(ce), "wcpp": wdir, "wcpp_flags": wcpp_build(wdir)}))
    return out


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


def timed(cmd, env):
    """Wall seconds, CPU seconds (user + system), peak RSS MB and stdout of CMD under
    /usr/bin/time -v. On a loaded machine the CPU seconds are the steadier figure."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env)
    wall = time.perf_counter() - t0
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-1500:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    cpu = sum(float(re.search(rf"{k} time \(seconds\): ([0-9.]+)", p.stderr).group(1)) for k in ("User", "System"))
    return wall, cpu, rss, p.stdout


def configs(cls, m, mode):
    """(engine, weights, command, environment, text of its stdout) for class CLS, model M, MODE."""
    se, ce, wdir = PIN[cls]
    wav = f"{BB}/libri5.wav"
    greedy = mode == "greedy"
    c = []
    for wt in SOTTO_WEIGHTS:
        cmd = ["./build/sotto", "transcribe", "-m", f"{MD}/{m}-{wt}.gguf", "-t", str(THREADS), "-l", "en", "--quiet",
               "-f", "txt"] + (["--beam-size", "1", "--no-fallback"] if greedy else []) + [wav]
        c.append(("sotto", wt, cmd, env_without_pins(se), lambda out: out))
    for wt in ("f16", "q8_0"):
        # whisper-cli's defaults: beam 5, best of 5, fallback on; greedy: -bs 1 -bo 1 -nf
        cmd = [wdir + "/bin/whisper-cli", "-m", f"{MD}/ggml-{m}-{wt}.bin", "-f", wav, "-t", str(THREADS), "-l", "en",
               "-np"] + (["-bs", "1", "-bo", "1", "-nf"] if greedy else [])
        c.append(("whisper.cpp", wt, cmd, env_without_pins({}), lambda out: re.sub(r"\[[^\]]*-->[^\]]*\]", " ", out)))
    for ct in ("int8", "float32"):
        cmd = [PY, "bench/fw_bench.py", "longform", CT2[m], ct, str(THREADS), wav, mode]
        c.append(("faster-whisper", ct, cmd, env_without_pins(ce), lambda out: json.loads(out)["text"]))
    return c


def old_info(old):
    """{class: what each engine ran as} from the rows of an earlier run (its "info")."""
    return {r["class"]: r["info"] for r in old if "info" in r}


def cell(cls, m, mode, ref):
    """Every engine of one (class, model, mode), RUNS rounds with the order rotated: rows."""
    cs = configs(cls, m, mode)
    runs = {i: [] for i in range(len(cs))}
    timeouts = {}  # config index -> load average when its run was stopped
    for r in range(RUNS):
        for i in [(j + r) % len(cs) for j in range(len(cs))]:
            eng, wt, cmd, env, text_of = cs[i]
            load, peak = os.getloadavg()[0], fma_peak()
            try:
                wall, cpu, rss, out = timed(cmd, env)
            except subprocess.TimeoutExpired:
                log(f"TIMEOUT {cls} {m} {mode} {eng} {wt}: > {TIMEOUT} s (load {load:.1f})")
                timeouts.setdefault(i, (load, peak))
                continue
            except Exception as e:
                log(f"FAILED {cls} {m} {mode} {eng} {wt}: {e}")
                continue
            hyp = norm(text_of(out))
            runs[i].append((wall, cpu, rss, 100.0 * edits(ref, hyp) / len(ref), len(hyp), load, peak))
            log(f"{cls} {m} {mode} {eng} {wt}: {wall:.1f} s ({cpu:.1f} s CPU), WER {runs[i][-1][3]:.2f} %, "
                f"{rss:.0f} MB (load {load:.1f}, FMA {fmt_peak(peak)} GFLOP/s)")
    rows = []
    for i, rs in runs.items():
        if not rs:
            if i in timeouts:  # the peer ran past the limit: its time is > TIMEOUT
                rows.append({"class": cls, "model": m, "mode": mode, "engine": cs[i][0], "weights": cs[i][1],
                             "timed_out": TIMEOUT, "load": round(timeouts[i][0], 1), "peak": timeouts[i][1]})
            continue
        rs.sort(key=lambda x: x[0])
        wall, cpu, rss, wer, words, load, peak = rs[len(rs) // 2]  # the median run by wall time
        rows.append({"class": cls, "model": m, "mode": mode, "engine": cs[i][0], "weights": cs[i][1],
                     "wall_s": round(wall, 2), "wall_min": round(rs[0][0], 2), "wall_max": round(rs[-1][0], 2),
                     "cpu_s": round(cpu, 2), "rss_mb": round(rss, 1), "wer": round(wer, 2),
                     "wer_min": round(min(x[3] for x in rs), 2), "wer_max": round(max(x[3] for x in rs), 2),
                     "words": words, "load": round(load, 1), "peak": peak, "runs": len(rs)})
    return rows


def main():
    prepare()
    ref = norm(open(f"{BB}/libri5.txt", encoding="utf-8").read())
    audio_s = os.path.getsize(f"{BB}/libri5.wav") / 32000
    cls = classes()
    if not cls:
        sys.exit("longform.py: no class to measure (run bench/run.sh first)")
    rows = []
    for c, inf in cls:
        for m in MODELS:
            for mode in MODES:
                rows += [dict(r, info=inf) for r in cell(c, m, mode, ref)]
    os.makedirs(BB + "/results", exist_ok=True)
    res = BB + "/results/longform.jsonl"
    if MERGE and os.path.exists(res):  # the cells of an earlier run that this one did not measure
        done = {(r["class"], r["model"], r["mode"]) for r in rows}
        old = [json.loads(l) for l in open(res, encoding="utf-8") if l.strip()]
        rows = [r for r in old if (r["class"], r["model"], r["mode"]) not in done] + rows
        for c, inf in old_info(old).items():
            if c not in dict(cls):
                cls.append((c, inf))
    with open(res, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    write_doc(rows, dict(cls), audio_s)


def cpu_flags():
    try:
        flags = next(l.split(":", 1)[1].split() for l in open("/proc/cpuinfo") if l.startswith("flags"))
    except (OSError, StopIteration):
        return "?"
    keep = ("avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
            "avx512_bf16", "amx_tile", "amx_int8")
    return " ".join(f for f in keep if f in flags)


def summary(rows, cls, m, mode):
    """The ratio lines of one (class, model, mode): sotto's default model (f16; f32 gives
    the same output) and q8_0 against the fastest peer of the same run, by wall and by CPU
    time."""
    s = {r["weights"]: r for r in rows if r["class"] == cls and r["model"] == m and r["mode"] == mode
         and r["engine"] == "sotto" and "timed_out" not in r}
    p = [r for r in rows if r["class"] == cls and r["model"] == m and r["mode"] == mode and r["engine"] != "sotto"
         and "timed_out" not in r]
    if not s or not p:
        return []
    b = min(p, key=lambda r: r["wall_s"])
    bc = min(r["cpu_s"] for r in p)
    bound = BOUND.get(cls, 0.4 if mode == "default" else None)
    parts = []
    for wt in ("f16", "f32", "q8_0"):
        if wt in s:
            x = s[wt]["wall_s"] / b["wall_s"]
            verdict = "" if bound is None else (" ✓" if x <= bound else " ✗")
            parts.append(f"{wt} {s[wt]['wall_s']:.1f} s = **{x:.2f}**{verdict} (CPU {s[wt]['cpu_s'] / bc:.2f})")
    return [f"- {m} {mode}: fastest peer {b['engine']} {b['weights']} {b['wall_s']:.1f} s "
            f"(CPU {bc:.1f} s); sotto " + ", ".join(parts)]


def write_doc(rows, info, audio_s):
    try:
        rev = sh(["git", "describe", "--always", "--dirty"]).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        rev = "unknown"
    model_name = sh(["lscpu"]).stdout
    model_name = next((l.split(":", 1)[1].strip() for l in model_name.splitlines() if l.startswith("Model name")), "?")
    loads = [r["load"] for r in rows] or [0.0]
    L = ["## Long-form transcription", "",
         f"`{'BENCH_LF_QUICK=1 ' if QUICK else ''}make bench-longform` (bench/longform.py), {time.strftime('%Y-%m-%d')}, "
         f"sotto at {rev}, {THREADS} threads, `tests/data/make_long.py libri5` ({audio_s:.1f} s: the 5 LibriVox clips "
         f"over and over with 0.3–1.2 s pauses), {RUNS} round(s) of every engine in turn (the order rotated each "
         f"round; the median run by wall time, its range beside it, and the range of the WER where sampling made "
         f"the runs differ). Machine: {model_name}, {os.cpu_count()} cores, CPU flags: {cpu_flags()}. "
         f"1-minute load average at the start of each reported run: {min(loads):.1f}–{max(loads):.1f} (the "
         "`load` column; the machine is shared, so wall times carry other processes' work and the CPU seconds "
         "are the steadier figure); beside it, one core's f32 FMA rate (GFLOP/s, `build/tests/cpu_peak`) just "
         "before the run, which also sees other virtual machines on the same host: compare it across rows, a lower "
         "figure is a slower hour. "
         "`default`: each engine's own defaults (beam 5, best of 5, temperature fallback, timestamps, previous "
         "text as prompt); `greedy`: beam 1, temperature 0 only. WER against the clips' transcripts, "
         "normalised as tests/wer.py (plus Mr. → mister). All engines read the same weights (CTranslate2 "
         "f16 → GGUF / ggml / CTranslate2); sotto's default model is the f16 one `make demo` installs (its output is the f32 model's, byte for byte).", ""]
    for cls, inf in info.items():
        if not any(r["class"] == cls for r in rows):
            continue
        pin = ("`SOTTO_KERNELS=avx2`, `CT2_FORCE_CPU_ISA=AVX2`, `MKL_ENABLE_INSTRUCTIONS=AVX2`, whisper.cpp built "
               "with `GGML_NATIVE=OFF GGML_AVX2=ON GGML_FMA=ON GGML_F16C=ON GGML_AVX512=OFF`" if cls == "avx2" else
               "no pins: each engine's own choice, whisper.cpp built with `GGML_NATIVE=ON`")
        L += [f"### Class {cls}", "",
              f"{pin}. Runs as: sotto kernels `{inf['sotto_kernels']}`, ctranslate2 ISA `{inf['ct2_isa']}` (its log), "
              f"whisper.cpp from `{inf['wcpp']}`"
              + (f" (C++ flags `{inf['wcpp_flags']}`)" if inf.get("wcpp_flags") else "") + ".", "",
              "| model | mode | engine | weights | wall s | (range) | CPU s | × real time | WER % | peak RSS MB | load "
              "| FMA |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            if r["class"] != cls:
                continue
            if "timed_out" in r:
                L.append(f"| {r['model']} | {r['mode']} | {r['engine']} | {r['weights']} | > {r['timed_out']} | "
                         f"stopped | | | | | {r['load']:.1f} | {fmt_peak(r.get('peak'))} |")
                continue
            spread = f" ({r['wer_min']:.2f}–{r['wer_max']:.2f})" if r["wer_min"] != r["wer_max"] else ""
            L.append(f"| {r['model']} | {r['mode']} | {r['engine']} | {r['weights']} | {r['wall_s']:.1f} | "
                     f"{r['wall_min']:.1f}–{r['wall_max']:.1f} | {r['cpu_s']:.1f} | {audio_s / r['wall_s']:.1f} | "
                     f"{r['wer']:.2f}{spread} | {r['rss_mb']:.0f} | {r['load']:.1f} | {fmt_peak(r.get('peak'))} |")
        bound = BOUND.get(cls)
        L += ["", "sotto / the fastest peer of the same run, by wall time (by CPU time against the peer with the "
              "least CPU time in brackets)" + (f"; target ≤ {bound} (✓ met, ✗ not)" if bound else
                                               "; target with defaults ≤ 0.4 (✓ met, ✗ not)") + ":", ""]
        mine = [r for r in rows if r["class"] == cls]
        for m in dict.fromkeys(r["model"] for r in mine):
            for mode in dict.fromkeys(r["mode"] for r in mine if r["model"] == m):
                L += summary(rows, cls, m, mode)
        L.append("")
    path = "docs/BENCHMARKS.md"
    write_part(path, "Long-form transcription", "\n".join(L[2:]), "bench/longform.py")
    log(f"wrote the long-form tables in {path} (the rest of the section stays)")


if __name__ == "__main__":
    main()
