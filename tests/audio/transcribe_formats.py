#!/usr/bin/env python3
"""transcribe_formats.py — `sotto transcribe` on the LibriVox clips converted to other
formats (make_inputs.sh): 44.1 kHz stereo FLAC, 8 kHz WAV, 48 kHz MP3, Ogg/Opus, M4A/AAC,
an MP4 video's AAC track, 24-bit and float WAV, and the FLAC on standard input (`-`).
Each format's word error rate against the transcripts of the 16 kHz originals (eager
PyTorch's, tests/golden/<model>/NAME.txt; sotto's equal them, see wer_tiny_en) must be
at most MAX_WER percent. Normalisation: tests/wer.py's.

usage: transcribe_formats.py SOTTO MODEL INPUTS_DIR GOLDEN_DIR [MAX_WER]   (default 5)
"""
import os
import subprocess
import tempfile
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from wer import edits, normalise  # noqa: E402

FORMATS = ["flac44s", "wav8k", "mp3_48k", "opus", "m4a", "mp4video", "wav24", "wavf32"]


def transcribe(sotto, model, files):
    """One `sotto transcribe` call over FILES with --output-dir: {file: its text}."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sotto, "transcribe", "-m", model, "-t", "2", "--quiet", "-f", "txt", "--output-dir", out]
                       + files, check=True, capture_output=True, text=True)
        res = {}
        for f in files:
            name = os.path.splitext(os.path.basename(f))[0]
            with open(os.path.join(out, name + ".txt"), encoding="utf-8") as fh:
                res[f] = " ".join(line.strip() for line in fh if line.strip())
        return res


def stdin_transcripts(sotto, model, files):
    res = {}
    for f in files:
        with open(f, "rb") as fh:
            out = subprocess.run([sotto, "transcribe", "-m", model, "-t", "2", "-"], stdin=fh, check=True,
                                 capture_output=True, text=True).stdout
        res[f] = " ".join(line.strip() for line in out.splitlines() if line.strip())
    return res


def main():
    if len(sys.argv) < 5:
        raise SystemExit(__doc__)
    sotto, model, inputs, golden = sys.argv[1:5]
    max_wer = float(sys.argv[5]) if len(sys.argv) > 5 else 5.0
    names = sorted(n[:-4] for n in os.listdir(golden) if n.startswith("librivox-") and n.endswith(".txt"))
    refs = {n: normalise(open(f"{golden}/{n}.txt", encoding="utf-8").read()) for n in names}
    words = sum(len(r) for r in refs.values())
    failed = 0
    print(f"{'format':10} {'WER %':>6}  ({words} words in {len(names)} clips; bound {max_wer:.1f} %)")
    for fmt in FORMATS + ["stdin"]:
        d = f"{inputs}/{'flac44s' if fmt == 'stdin' else fmt}"
        files = {n: f"{d}/{f}" for f in sorted(os.listdir(d)) for n in names if f.startswith(n + ".")}
        if len(files) != len(names):
            print(f"FAIL {fmt}: {len(files)} of {len(names)} clips made")
            failed += 1
            continue
        got = (stdin_transcripts if fmt == "stdin" else transcribe)(sotto, model, list(files.values()))
        errors = sum(edits(refs[n], normalise(got.get(files[n], ""))) for n in names)
        wer = 100.0 * errors / words
        ok = wer <= max_wer
        failed += not ok
        print(f"{fmt:10} {wer:6.2f}  {'ok' if ok else 'FAIL'}")
        for n in names:
            e = edits(refs[n], normalise(got.get(files[n], "")))
            if e:
                print(f"    {n}: {e} errors: {got.get(files[n], '')!r}")
    print(f"{len(FORMATS) + 1 - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
