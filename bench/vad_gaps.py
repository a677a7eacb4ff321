#!/usr/bin/env python3
"""The VAD figure of docs/BENCHMARKS.md: `sotto transcribe` on gaps10 (tests/data/make_long.py:
10 minutes, 31 clips in groups between 20-60 s of silence and 15-45 s of white noise) with
and without --vad, the default options otherwise (beam 5, temperature fallback), on N threads:
no VAD at all (--no-silence-check: the reference's behaviour), the default (the VAD only
confirms the decoder's silent windows), and --vad (only the speech it finds is decoded). Per run:
wall time (best of RUNS) and the CPU time of that run, segments with text, those that start or end inside a long gap
(1 s margins), words written, and the share of the reference words kept (the clips'
transcripts in playing order, difflib matching as tests/test_silence.py).

usage: bench/vad_gaps.py SOTTO MODEL VAD_MODEL WORKDIR [--threads N] [--runs R]
"""
import argparse
import difflib
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from wer import normalise  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sotto")
    ap.add_argument("model")
    ap.add_argument("vad")
    ap.add_argument("work")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=1)
    a = ap.parse_args()
    wav = os.path.join(a.work, "gaps10.wav")
    if not os.path.exists(wav):
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "data", "make_long.py"), a.work, "gaps10"],
                       check=True)
    rows = [line.rstrip("\n").split("\t") for line in open(os.path.join(a.work, "gaps10.tsv"))][1:]
    gaps = [(float(s), float(e)) for s, e, kind, _ in rows if kind != "speech" and float(e) - float(s) >= 10]
    ref = normalise(open(os.path.join(a.work, "gaps10.txt"), encoding="utf-8").read().replace("mister", "mr"))
    print("| run | wall time, s | CPU time, s | segments with text | in a long gap | words | reference words kept |")
    print("|---|---|---|---|---|---|---|")
    for name, extra in (("no VAD (`--no-silence-check`)", ["--no-silence-check"]), ("default (silence check)", []),
                        ("`--vad`", ["--vad"])):
        cmd = [a.sotto, "transcribe", "-m", a.model, "--vad-model", a.vad, "-t", str(a.threads), "--quiet", "-f",
               "json", *extra, wav]
        best = cpu = None
        for _ in range(a.runs):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.monotonic()
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            dt = time.monotonic() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            c = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
            if best is None or dt < best:
                best, cpu = dt, c
        r = json.loads(out)
        segs = [s for s in r["segments"] if s["text"].strip()]
        in_gap = lambda t: any(s + 1 < t < e - 1 for s, e in gaps)
        outside = [s for s in segs if in_gap(s["start"]) or in_gap(s["end"])]
        hyp = normalise(r["text"])
        sm = difflib.SequenceMatcher(a=ref, b=hyp, autojunk=False)
        kept = sum(b.size for b in sm.get_matching_blocks())
        print(f"| {name} | {best:.1f} | {cpu:.1f} | {len(segs)} | {len(outside)} | {len(hyp)} | "
              f"{kept} / {len(ref)} ({100 * kept / len(ref):.1f} %) |")
        print("  " + " ".join(cmd), file=sys.stderr)


if __name__ == "__main__":
    main()
