#!/usr/bin/env python3
"""`sotto transcribe --word-timestamps -f json` against openai-whisper's own
transcribe(word_timestamps=True) on the same fp32 weights (tests/golden/transcribe/, made by
scripts/golden_transcribe.py): the same segments (seek, text, tokens; start and end within
TOL), in each the same words in order (identical strings), each word's start and end
within TOL = 0.02 s (one DTW frame) and its probability within 2e-4.

usage: test_words.py SOTTO MODEL AUDIO GOLDEN.json [SOTTO OPTIONS...]
"""
import json
import subprocess
import sys

TOL = 0.02 + 1e-9
PROB_TOL = 2e-4


def main():
    sotto, model, audio, golden = sys.argv[1:5]
    extra = sys.argv[5:]
    out = subprocess.run([sotto, "transcribe", "-m", model, "--quiet", "-f", "json", "--word-timestamps"]
                         + extra + [audio], check=True, capture_output=True, text=True).stdout
    got = json.loads(out)
    with open(golden, encoding="utf-8") as f:
        ref = json.load(f)
    gs, rs = got["segments"], ref["segments"]
    bad, n_words, worst, worst_p, off = 0, 0, 0.0, 0.0, 0

    def fail(msg):
        nonlocal bad
        bad += 1
        if bad <= 8:
            print(msg)

    if len(gs) != len(rs):
        fail(f"{len(gs)} segments, the reference has {len(rs)}")
    for i, (g, r) in enumerate(zip(gs, rs)):
        if (g["seek"], g["text"], g["tokens"]) != (r["seek"], r["text"], r["tokens"]):
            fail(f"segment {i} differs:\n  ref {r['seek']} {r['text']!r}\n  got {g['seek']} {g['text']!r}")
            continue
        for k in ("start", "end"):
            if abs(g[k] - r[k]) > TOL:
                fail(f"segment {i} {k} {g[k]} (ref {r[k]})")
        gw, rw = g.get("words"), r["words"]
        if gw is None:
            fail(f"segment {i} has no words")
            continue
        if [w["word"] for w in gw] != [w["word"] for w in rw]:
            fail(f"segment {i} words differ:\n  ref {[w['word'] for w in rw]}\n  got {[w['word'] for w in gw]}")
            continue
        for a, b in zip(gw, rw):
            n_words += 1
            d = max(abs(a["start"] - b["start"]), abs(a["end"] - b["end"]))
            worst = max(worst, d)
            off += d > 1e-9
            worst_p = max(worst_p, abs(a["probability"] - b["probability"]))
            if d > TOL:
                fail(f"segment {i} word {b['word']!r}: {a['start']}-{a['end']} (ref {b['start']}-{b['end']})")
            if abs(a["probability"] - b["probability"]) > PROB_TOL:
                fail(f"segment {i} word {b['word']!r}: probability {a['probability']} (ref {b['probability']})")
    if got["text"] != ref["text"]:
        fail("text differs")
    print(f"{len(rs)} segments, {n_words} words compared, {bad} problems; {off} words off by a frame or more, "
          f"max |time - ref| {worst:.3f} s, max |probability - ref| {worst_p:.2e}")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
