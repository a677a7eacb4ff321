#!/usr/bin/env python3
"""Consistency of the committed long-form goldens (tests/golden/transcribe, tests/golden/lang),
standard library only, so a hand edit or a partial regeneration cannot go unnoticed:

- every result names the audio it was made from by sha256, and that is the sha256 in
  tests/data/long_audio.sha256 (long files) or of the committed clip;
- result and windows files agree (same meta), windows are in seek order, each window's
  kept attempt is its last, attempts at one window share its seek;
- every segment's tokens are the kept tokens of its window (segments of one window
  concatenated, emptied ones aside) and its times lie inside that window;
- the text is the concatenation of the segments' texts (openai decodes all tokens at once,
  the same string unless a character's bytes were split between two segments);
- language detection: 5 entries per clip at most, probabilities in [0, 1], descending.

  python3 tests/check_goldens.py [GOLDEN_DIR]        (default tests/golden)
"""

import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL", msg)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def long_sums():
    sums = {}
    with open(os.path.join(ROOT, "tests", "data", "long_audio.sha256")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                digest, name = line.split()
                sums[name[:-4]] = digest
    return sums


def check_result(path, sums):
    with open(path, encoding="utf-8") as f:
        res = json.load(f)
    with open(path[:-5] + ".windows.json", encoding="utf-8") as f:
        win = json.load(f)
    meta, name = res["meta"], os.path.relpath(path, ROOT)
    if meta != win["meta"]:
        fail(f"{name}: meta differs from its windows file")
    audio = meta["audio"]
    if audio.startswith("tests/data/make_long.py "):
        want = sums.get(audio.split()[-1])
    else:
        want = sha256(os.path.join(ROOT, audio))
    if meta["audio_sha256"] != want:
        fail(f"{name}: made from audio {meta['audio_sha256'][:12]}, the audio is now {str(want)[:12]}")
    windows = win["windows"]
    seeks = [w["seek"] for w in windows]
    if seeks != sorted(seeks) or len(set(seeks)) != len(seeks):
        fail(f"{name}: window seeks not increasing: {seeks}")
    by_seek = {w["seek"]: w for w in windows}
    segs_by_seek = {}
    for s in res["segments"]:
        segs_by_seek.setdefault(s["seek"], []).append(s)
    for seek, segs in segs_by_seek.items():
        w = by_seek.get(seek)
        if w is None:
            fail(f"{name}: segment at seek {seek} but no window there")
            continue
        if w["skipped_no_speech"]:
            fail(f"{name}: segments at seek {seek}, a window skipped as silence")
        kept = w["attempts"][-1]
        if kept["temperature"] != w["temperature"]:
            fail(f"{name}: window {w['window']}: kept temperature is not the last attempt's")
        toks = [t for s in segs for t in s["tokens"]]
        if toks and not is_subsequence_concat(toks, kept["tokens"]):
            fail(f"{name}: window {w['window']}: segment tokens are not the kept tokens")
        lo, hi = seek / 100.0, seek / 100.0 + 30.0  # timestamps reach 30 s past the seek
        for s in segs:
            if s["temperature"] != w["temperature"]:
                fail(f"{name}: segment {s['id']}: temperature {s['temperature']} != window's")
            if not (lo - 1e-6 <= s["start"] <= s["end"] <= hi + 1e-6):
                fail(f"{name}: segment {s['id']} [{s['start']}, {s['end']}] outside window at {lo}")
    ids = [s["id"] for s in res["segments"]]
    if ids != list(range(len(ids))):
        fail(f"{name}: segment ids not 0..n-1")
    if "".join(s["text"] for s in res["segments"]) != res["text"]:
        fail(f"{name}: text is not the segments' texts joined")
    return len(res["segments"]), len(windows)


def is_subsequence_concat(parts, whole):
    """True when PARTS (the non-empty segments' tokens, in order) appear in WHOLE in order."""
    i = 0
    for t in parts:
        while i < len(whole) and whole[i] != t:
            i += 1
        if i == len(whole):
            return False
        i += 1
    return True


def check_lang(path):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    for c in d["clips"]:
        p = [x[1] for x in c["top5"]]
        if not (0 < len(p) <= 5 and all(0 <= x <= 1 for x in p) and p == sorted(p, reverse=True)):
            fail(f"{path}: {c['clip']}: bad top5 {c['top5']}")
        if c["detected"] != c["top5"][0][0]:
            fail(f"{path}: {c['clip']}: detected {c['detected']} is not the top entry")
        if not os.path.exists(os.path.join(ROOT, c["clip"])):
            fail(f"{path}: {c['clip']} missing")
    return len(d["clips"])


def main():
    gdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "golden")
    sums = long_sums()
    n_files = n_segs = n_wins = 0
    tdir = os.path.join(gdir, "transcribe")
    for model in sorted(os.listdir(tdir)):
        for f in sorted(os.listdir(os.path.join(tdir, model))):
            if f.endswith(".json") and not f.endswith(".windows.json"):
                s, w = check_result(os.path.join(tdir, model, f), sums)
                n_files, n_segs, n_wins = n_files + 1, n_segs + s, n_wins + w
    lang = os.path.join(gdir, "lang", "base.json")
    n_lang = check_lang(lang) if os.path.exists(lang) else fail(f"{lang} missing") or 0
    print(f"{n_files} results, {n_wins} windows, {n_segs} segments, {n_lang} language entries")
    print(f"{n_files + n_lang - failures} passed, {failures} failed")
    return 1 if failures or n_files == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
