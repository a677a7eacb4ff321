#!/usr/bin/env python3
"""Live transcription figures of `sotto stream` (docs/BENCHMARKS.md, issue 26's acceptance).

AUDIO is fed at real-time pace (`sotto stream --realtime --jsonl`). For each committed word,
latency = its emission time (wall seconds since the stream began) minus the end of the same
word in an offline `sotto transcribe --word-timestamps -f json` run of the file (the words
of the two transcripts matched by difflib on normalised text). Reported: mean, p50, p90 and
max latency; the WER of the committed text and of the offline transcript (defaults: beam 5,
fallback) against the reference text, and of the committed text against the offline one;
the processing lag (emission_time - audio_time of each event: how far behind the audio the
decoding is) at its maximum and over the last minute; decoding steps. With --sessions N,
N streams of the same file run at once (each on --threads threads) and each is reported.

The reference text of bench/make_long.sh's long.wav is built from tests/data/clips
(--truth-from-clips): the clips in its order, repeated as it repeats them.

--simulate is the deterministic mode, for comparing policies whatever the machine's load:
the file is read as fast as it decodes (`sotto stream --jsonl` without --realtime: 0.1 s
per push, so a step runs at every --min-step of audio, as on a machine that keeps up) and
each event counts as emitted when the audio it was made at was due (emission_time :=
audio_time: decoding as if instant). Its latency is the policy's alone (waiting for two
decodings to agree); real time adds each step's processing. Two runs of the same build
and flags give the same events. --cpu-clock is the older estimate: the same loop through
the Python package on a virtual clock advanced by each push's CPU time / --threads
(python from .venv-python, with sotto installed).

--diff writes OUT/diff.txt: the committed words against the offline transcript's and
against the reference, word by word (an edit-distance alignment of normalised words, each with the
committed words' times and emission), to see where the two differ (lost stretches, words
committed twice, loops).

usage: bench/stream.py --sotto build/sotto -m MODEL [--vad-model V] AUDIO
                       [--truth FILE | --truth-from-clips DIR] [--threads 2] [--sessions 1]
                       [--offline-json FILE] [--out DIR] [--simulate | --cpu-clock] [--diff]
                       [-- extra sotto stream flags]
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
import wave


def normalise(text):
    """tests/wer.py's normalisation: lower case, hyphens and spaces to one space, only
    a-z, 0-9 and apostrophes kept."""
    text = re.sub(r"[\s\-]+", " ", text.lower())
    return re.sub(r"[^a-z0-9' ]", "", text).split()


def edits(ref, hyp):
    d = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, d[0] = d[0], i
        for j, h in enumerate(hyp, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (r != h))
    return d[len(hyp)]


def wer(ref_text, hyp_text):
    ref, hyp = normalise(ref_text), normalise(hyp_text)
    return 100.0 * edits(ref, hyp) / max(len(ref), 1)


def truth_from_clips(clips, audio):
    """make_long.sh's text: every clip (sorted, 0.3 s after each) repeated to >= 300 s."""
    tsv = dict(line.rstrip("\n").split("\t", 1) for line in open(os.path.join(clips, "transcripts.tsv")))
    names = sorted(f[:-4] for f in os.listdir(clips) if f.endswith(".wav"))
    once = 0.0
    for n in names:
        with wave.open(os.path.join(clips, n + ".wav")) as w:
            once += w.getnframes() / w.getframerate() + 0.3
    with wave.open(audio) as w:
        total = w.getnframes() / w.getframerate()
    reps = round(total / once)
    return " ".join(" ".join(tsv[n] for n in names) for _ in range(reps))


def word_list(words):
    """(normalised word, the word as given) for each word that normalises to one or more."""
    out = []
    for w in words:
        for piece in normalise(w["word"]):
            out.append((piece, w))
    return out


def latencies(events, offline):
    """Per committed word: emission time - the end of the same word in the offline
    transcript. The word is found by time, not by sequence (a file of repeated clips says
    the same words many times): the offline word of the same normalised text whose end is
    nearest the committed word's own end, within 1.5 s; words without one are unmatched."""
    off = {}
    for s in offline["segments"]:
        for piece, w in word_list(s.get("words") or []):
            off.setdefault(piece, []).append(w["end"])
    lat, n = [], 0
    for e in events:
        if e["type"] != "final":
            continue
        for w in e["words"]:
            for piece in normalise(w["word"]):
                n += 1
                ends = off.get(piece, [])
                best = min(ends, key=lambda t: abs(t - w["end"]), default=None)
                if best is not None and abs(best - w["end"]) <= 1.5:
                    lat.append(e["emission_time"] - best)
    return lat, n


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def report(label, events, offline, truth, wall):
    lat, n_words = latencies(events, offline)
    text = "".join(e["text"] for e in events if e["type"] == "final")
    lags = [e["emission_time"] - e["audio_time"] for e in events]
    end = max((e["audio_time"] for e in events), default=0)
    late = [e["emission_time"] - e["audio_time"] for e in events if e["audio_time"] > end - 60]
    r = {
        "label": label,
        "committed_words": n_words,
        "matched_words": len(lat),
        "latency_mean_s": statistics.fmean(lat) if lat else float("nan"),
        "latency_p50_s": pct(lat, 0.5),
        "latency_p90_s": pct(lat, 0.9),
        "latency_max_s": max(lat) if lat else float("nan"),
        "wer_stream_vs_offline": wer(offline["text"], text),
        "lag_max_s": max(lags) if lags else float("nan"),
        "lag_last_minute_max_s": max(late) if late else float("nan"),
        "audio_s": end,
        "wall_s": wall,
    }
    if truth:
        r["wer_stream"] = wer(truth, text)
        r["wer_offline"] = wer(truth, offline["text"])
    return r


def committed_words(events):
    """(normalised word, its final event's emission time, the word) of every committed word."""
    out = []
    for e in events:
        if e["type"] == "final":
            for w in e["words"]:
                out.extend((piece, e["emission_time"], w) for piece in normalise(w["word"]))
    return out


def align(a, b):
    """The edit-distance alignment of word lists A and B: (op, i1, i2, j1, j2) runs as
    difflib's opcodes ('equal', 'replace', 'delete': A's words alone, 'insert': B's)."""
    n, m = len(a), len(b)
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        d[i][0] = i
    for j in range(m + 1):
        d[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    steps, i, j = [], n, m
    while i or j:
        if i and j and d[i][j] == d[i - 1][j - 1] + (a[i - 1] != b[j - 1]):
            steps.append(("equal" if a[i - 1] == b[j - 1] else "replace", i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i and d[i][j] == d[i - 1][j] + 1:
            steps.append(("delete", i - 1, j))
            i -= 1
        else:
            steps.append(("insert", i, j - 1))
            j -= 1
    runs = []
    for op, i, j in reversed(steps):
        di, dj = op != "insert", op != "delete"
        if runs and (runs[-1][0] == "equal") == (op == "equal") and runs[-1][2] == i and runs[-1][4] == j:
            r = runs[-1]
            runs[-1] = ("equal" if op == "equal" else "edit", r[1], i + di, r[3], j + dj)
        else:
            runs.append(("equal" if op == "equal" else "edit", i, i + di, j, j + dj))
    return runs


def write_diff(path, events, offline, truth):
    """--diff: the committed words against the offline ones and the reference, aligned."""
    mine = committed_words(events)
    off = word_list(w for s in offline["segments"] for w in (s.get("words") or []))
    with open(path, "w") as f:
        for name, other in (("offline", [p for p, _ in off]), ("reference", normalise(truth or ""))):
            if not other:
                continue
            n_edits = 0
            f.write(f"## committed vs {name}\n")
            for op, i1, i2, j1, j2 in align([m[0] for m in mine], other):
                if op == "equal":
                    continue
                n_edits += max(i2 - i1, j2 - j1)
                k = min(i1, len(mine) - 1)
                at, emitted = (mine[k][2]["start"], mine[k][1]) if mine else (0, 0)
                f.write(f"{at:7.2f} (emitted {emitted:7.2f}): committed [{' '.join(m[0] for m in mine[i1:i2])}]"
                        f" {name} [{' '.join(other[j1:j2])}]\n")
            f.write(f"## {n_edits} words differ ({len(mine)} committed, {len(other)} {name})\n\n")


def deterministic(a, out_path):
    """--simulate: `sotto stream --jsonl` read as fast as it decodes; every event's
    emission_time becomes its audio_time (decoding as if instant)."""
    vad = ["--vad-model", a.vad_model] if a.vad_model else []
    cmd = [a.sotto, "stream", "-m", a.model, *vad, "-t", str(a.threads), "--jsonl", *a.extra, a.audio]
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, check=True, text=True)
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    a.cpu_s = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
    with open(out_path, "w") as f:
        for line in p.stdout.splitlines():
            e = json.loads(line)
            e["emission_time"] = e["audio_time"]
            f.write(json.dumps(e) + "\n")


def cpu_clock(a, out_path):
    """--cpu-clock: the --realtime loop on a virtual clock through the Python package. Audio
    is due when the clock passes it; a push advances the clock by the CPU time it took /
    --threads (the wall time of an idle machine whose threads all run, which a shared,
    overloaded one cannot show); each event is emitted when its push ends. Writes the
    events as `sotto stream --jsonl` does."""
    import numpy as np
    import sotto

    with wave.open(a.audio) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0
    model = sotto.Model(a.model, threads=a.threads, device="cpu", vad_model=a.vad_model or False)
    flags = {"--min-step": ("min_step", float), "--beam-size": ("beam_size", int),
             "--vad-min-silence-ms": ("vad_min_silence_ms", int), "--hold": ("hold", float)}
    kw = {}
    for k, v in zip(a.extra[::2], a.extra[1::2]):
        name, kind = flags[k]
        kw[name] = kind(v)
    s = model.stream(vad=a.vad_model is not None, **kw)
    clock, fed, rate = 0.0, 0, 16000
    with open(out_path, "w") as f:
        def emit(events):
            for e in events:
                f.write(json.dumps({"type": e.type, "start": e.start, "end": e.end, "text": e.text,
                                    "words": [{"word": w.word, "start": w.start, "end": w.end,
                                               "probability": w.probability} for w in e.words],
                                    "emission_time": clock, "audio_time": e.audio_time}) + "\n")

        while True:
            due = min(int(clock * rate), len(x))
            if due <= fed and fed < len(x):
                clock = (fed // 320 + 1) * 320 / rate  # the reader's 20 ms sleeps
                continue
            c0 = time.process_time()
            events = s.feed(x[fed:due]) if fed < len(x) else s.finish()
            clock += (time.process_time() - c0) / a.threads
            emit(events)
            if fed >= len(x):
                break
            fed = due


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sotto", required=True)
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--vad-model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sessions", type=int, default=1)
    ap.add_argument("--truth")
    ap.add_argument("--truth-from-clips")
    ap.add_argument("--offline-json", help="reuse this offline transcript (made with --word-timestamps)")
    ap.add_argument("--out", default="build-bench/stream")
    ap.add_argument("--label", default="")
    ap.add_argument("--simulate", action="store_true",
                    help="deterministic: steps at every --min-step of audio, decoding as if instant")
    ap.add_argument("--cpu-clock", action="store_true",
                    help="a virtual clock (CPU time / threads) instead of the wall clock: see cpu_clock()")
    ap.add_argument("--diff", action="store_true", help="write OUT/diff.txt (committed vs offline and reference)")
    ap.add_argument("audio")
    ap.add_argument("extra", nargs="*", help="after --: more `sotto stream` flags")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    truth = open(a.truth).read() if a.truth else truth_from_clips(a.truth_from_clips, a.audio) if a.truth_from_clips else None
    off_path = a.offline_json or os.path.join(a.out, "offline.json")
    if not a.offline_json:
        subprocess.run([a.sotto, "transcribe", "-m", a.model, "-t", str(a.threads), "--word-timestamps", "-f", "json",
                        "-o", off_path, "--quiet", a.audio], check=True)
    offline = json.load(open(off_path))
    vad = ["--vad-model", a.vad_model] if a.vad_model else []
    procs, outs = [], []
    t0 = time.monotonic()
    if a.simulate or a.cpu_clock:
        outs.append(os.path.join(a.out, "events-simulated.jsonl" if a.simulate else "events-cpu-clock.jsonl"))
        (deterministic if a.simulate else cpu_clock)(a, outs[0])
    for i in range(0 if a.simulate or a.cpu_clock else a.sessions):
        path = os.path.join(a.out, f"events{i}.jsonl")
        outs.append(path)
        cmd = [a.sotto, "stream", "-m", a.model, *vad, "-t", str(a.threads), "--realtime", "--jsonl", *a.extra, a.audio]
        procs.append(subprocess.Popen(cmd, stdout=open(path, "w"), stderr=subprocess.DEVNULL))
    for p in procs:
        if p.wait() != 0:
            sys.exit(f"stream.py: sotto stream failed (exit {p.returncode})")
    wall = time.monotonic() - t0
    load = os.getloadavg()
    for i, path in enumerate(outs):
        events = [json.loads(line) for line in open(path)]
        label = a.label or os.path.basename(a.model)
        label += " simulated" if a.simulate else " cpu-clock" if a.cpu_clock else f" session {i + 1}/{a.sessions}"
        r = report(label, events, offline, truth, wall)
        if a.diff and i == 0:
            write_diff(os.path.join(a.out, "diff.txt"), events, offline, truth)
        if a.simulate:
            r["cpu_s"] = a.cpu_s  # the stream's CPU seconds (model load included): the policy's cost
        r["flags"] = " ".join(a.extra)
        r["threads"] = a.threads
        r["loadavg_after"] = [round(x, 2) for x in load]
        print(json.dumps(r))


if __name__ == "__main__":
    main()
