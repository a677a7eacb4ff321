#!/usr/bin/python3
"""The transcript files of `sotto transcribe -f all --output-dir DIR` read back with real
parsers: SRT with `srt` and VTT with `webvtt` (webvtt-py), both Debian packages of the
PyPI projects (python3-srt, python3-webvtt), JSON validated against
docs/transcript.schema.json with `jsonschema` (python3-jsonschema). Every cue must be a
segment of the JSON (same text, start and end to the millisecond; a segment with words timed
by them, as openai's writers time it), TXT and TSV must hold
the same segments, and one format written to stdout must equal its file. Several inputs:
a missing one is named and skipped, the other written, exit 1 with a count; an unwritable
--output-dir is refused before decoding (exit 2, as any output that cannot be written).

usage: test_outputs.py SOTTO MODEL AUDIO SCHEMA WORKDIR [SOTTO OPTIONS...]
"""
import json
import re
import os
import subprocess
import sys

import jsonschema
import srt
import webvtt

fails = 0


def check(ok, what):
    global fails
    if not ok:
        fails += 1
        print("FAIL:", what)


def vtt_seconds(t):
    """A webvtt-py timestamp "HH:MM:SS.mmm" in seconds (its start_in_seconds is whole
    seconds in some versions and not in others)."""
    h, m, sec = t.split(":")
    return int(h) * 3600 + int(m) * 60 + float(sec)


def cue_of(s):
    """The srt/vtt cue of segment S as openai's SubtitlesWriter makes it: timed by its words
    when it has some (the first's start, the last's end; the segment's own start may be
    earlier), their text joined, stripped ("-->" written "->": a cue's text cannot hold it)."""
    words = s.get("words") or []
    if words:
        return words[0]["start"], words[-1]["end"], "".join(w["word"] for w in words).strip().replace("-->", "->")
    return s["start"], s["end"], s["text"].strip().replace("-->", "->")


def main():
    sotto, model, audio, schema_path, work = sys.argv[1:6]
    extra = sys.argv[6:]
    os.makedirs(work, exist_ok=True)
    name = os.path.splitext(os.path.basename(audio))[0]
    base = [sotto, "transcribe", "-m", model, "--quiet"] + extra
    subprocess.run(base + ["-f", "all", "--output-dir", work, audio], check=True)
    path = lambda ext: os.path.join(work, f"{name}.{ext}")
    with open(path("json"), encoding="utf-8") as f:
        result = json.load(f)
    with open(schema_path, encoding="utf-8") as f:
        jsonschema.validate(result, json.load(f))
    segs = result["segments"]
    spoken = [s for s in segs if s["text"].strip()]
    check(len(spoken) > 0, "no segment with text")
    check([s["id"] for s in segs] == list(range(len(segs))), "ids 0, 1, ...")
    check(result["text"] == "".join(s["text"] for s in segs), "text is the segments' text joined")

    with open(path("srt"), encoding="utf-8") as f:
        cues = list(srt.parse(f.read()))
    check(len(cues) == len(spoken), f"srt: {len(cues)} cues for {len(spoken)} segments with text")
    for c, s in zip(cues, spoken):
        start, end, text = cue_of(s)
        check(c.content == text, f"srt cue {c.index}: {c.content!r}")
        check(abs(c.start.total_seconds() - start) <= 0.0005 and abs(c.end.total_seconds() - end) <= 0.0005,
              f"srt cue {c.index}: {c.start} --> {c.end} for {start} --> {end}")
    check([c.index for c in cues] == list(range(1, len(cues) + 1)), "srt cues numbered from 1")

    caps = webvtt.read(path("vtt"))
    check(len(caps) == len(spoken), f"vtt: {len(caps)} captions for {len(spoken)} segments with text")
    for c, s in zip(caps, spoken):
        start, end, text = cue_of(s)
        check(c.text == text, f"vtt caption: {c.text!r}")
        check(abs(vtt_seconds(c.start) - start) <= 0.0005 and abs(vtt_seconds(c.end) - end) <= 0.0005,
              f"vtt caption: {c.start} --> {c.end} for {start} --> {end}")

    with open(path("tsv"), encoding="utf-8") as f:
        rows = f.read().splitlines()
    check(rows[0] == "start\tend\ttext", "tsv header")
    check(len(rows) - 1 == len(segs), "tsv: a row per segment")
    for r, s in zip(rows[1:], segs):
        a, b, t = r.split("\t", 2)
        check(int(a) == round(1000 * s["start"]) and int(b) == round(1000 * s["end"]), f"tsv times {a} {b}")
        check(t == s["text"].strip().replace("\t", " "), f"tsv text {t!r}")

    with open(path("txt"), encoding="utf-8") as f:
        check(f.read().splitlines() == [s["text"].strip() for s in segs], "txt: a line per segment")

    with open(path("lrc"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    check(lines[0] == "[by:sotto]", "lrc header")
    check(len(lines) - 1 == len(spoken), f"lrc: {len(lines) - 1} lines for {len(spoken)} segments with text")
    for line, s in zip(lines[1:], spoken):
        m = re.fullmatch(r"\[(\d\d+):(\d\d)\.(\d\d)\] (.*)", line)
        check(m is not None, f"lrc line {line!r}")
        if m:
            t = int(m[1]) * 60 + int(m[2]) + int(m[3]) / 100
            check(abs(t - s["start"]) <= 0.005 and m[4] == s["text"].strip(), f"lrc line {line!r} for {s}")

    out = subprocess.run(base + ["-f", "srt", audio], check=True, capture_output=True, text=True).stdout
    with open(path("srt"), encoding="utf-8") as f:
        check(out == f.read(), "srt on stdout equals the srt file")
    several_inputs(base, audio, work)
    print(f"{len(segs)} segments, {len(cues)} cues; {fails} failed")
    return 1 if fails else 0


def several_inputs(base, audio, work):
    """A missing input among several is reported and skipped, the others are written, and
    the exit code is 1 with a count; an output directory that cannot be written is refused
    before anything is decoded."""
    d = os.path.join(work, "several")
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    missing = os.path.join(work, "no-such-file.wav")
    clip = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "clips", "librivox-0870.wav")
    p = subprocess.run(base + ["--sample-len", "8", "-f", "txt", "--output-dir", d, missing, clip],
                       capture_output=True, text=True)
    check(p.returncode == 1, f"a missing input among two: exit {p.returncode}, want 1")
    check("no-such-file.wav" in p.stderr, f"the missing input is named: {p.stderr!r}")
    check("1 of 2 inputs could not be transcribed" in p.stderr, f"the count: {p.stderr!r}")
    name = os.path.splitext(os.path.basename(clip))[0]
    check(os.listdir(d) == [name + ".txt"], f"only the readable input's output: {os.listdir(d)}")
    ro = os.path.join(d, name + ".txt", "sub")  # a directory under a regular file
    p = subprocess.run(base + ["-f", "txt", "--output-dir", ro, clip], capture_output=True, text=True)
    check(p.returncode == 2 and "sub" in p.stderr, f"unwritable --output-dir: exit {p.returncode} {p.stderr!r}")


if __name__ == "__main__":
    sys.exit(main())
