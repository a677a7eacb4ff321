#!/usr/bin/python3
"""The transcript files of `sotto transcribe -f all --output-dir DIR` read back with real
parsers: SRT with `srt` and VTT with `webvtt` (webvtt-py), both Debian packages of the
PyPI projects (python3-srt, python3-webvtt), JSON validated against
docs/transcript.schema.json with `jsonschema` (python3-jsonschema). Every cue must be a
segment of the JSON (same text, start and end to the millisecond), TXT and TSV must hold
the same segments, and one format written to stdout must equal its file.

usage: test_outputs.py SOTTO MODEL AUDIO SCHEMA WORKDIR [SOTTO OPTIONS...]
"""
import json
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
        check(c.content == s["text"].strip().replace("-->", "->"), f"srt cue {c.index}: {c.content!r}")
        check(abs(c.start.total_seconds() - s["start"]) <= 0.0005 and abs(c.end.total_seconds() - s["end"]) <= 0.0005,
              f"srt cue {c.index}: {c.start} --> {c.end} for {s['start']} --> {s['end']}")
    check([c.index for c in cues] == list(range(1, len(cues) + 1)), "srt cues numbered from 1")

    caps = webvtt.read(path("vtt"))
    check(len(caps) == len(spoken), f"vtt: {len(caps)} captions for {len(spoken)} segments with text")
    for c, s in zip(caps, spoken):
        check(c.text == s["text"].strip().replace("-->", "->"), f"vtt caption: {c.text!r}")
        check(abs(c.start_in_seconds + int(c.start[-3:]) / 1000 - s["start"]) <= 0.0015, f"vtt start {c.start}")

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

    out = subprocess.run(base + ["-f", "srt", audio], check=True, capture_output=True, text=True).stdout
    with open(path("srt"), encoding="utf-8") as f:
        check(out == f.read(), "srt on stdout equals the srt file")
    print(f"{len(segs)} segments, {len(cues)} cues; {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
