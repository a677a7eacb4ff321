#!/usr/bin/env python3
"""Ten minutes of digital silence and ten of white noise (tests/data/make_long.py
silence10, noise10) give no segment with text under the default options: the reference
writes "you" into every window of silence and ". ." into noise (its no-speech rule skips a
window only when its avg_logprob is below -1, and a hallucination is confident); sotto's
silence check skips a window the decoder calls silence (no_speech_prob > 0.6) in which
Silero VAD hears no speech. Also: with --vad, a 10-minute file of speech between long
silences and noise (gaps10) starts and ends no segment in a long gap (the 15-60 s
stretches of silence and noise, with 1 s margins: timestamps inside speech are Whisper's
own, a second off at times), and keeps at least 85 % of the reference words.

usage: test_silence.py SOTTO MODEL VAD_MODEL LONG_AUDIO_DIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wer import normalise  # noqa: E402


def transcribe(sotto, model, vad, wav, *extra):
    out = subprocess.run([sotto, "transcribe", "-m", model, "--vad-model", vad, "--quiet", "-f", "json", *extra, wav],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def kept(ref, hyp):
    import difflib
    sm = difflib.SequenceMatcher(a=ref, b=hyp, autojunk=False)
    return sum(b.size for b in sm.get_matching_blocks()) / max(1, len(ref))


def main():
    sotto, model, vad, audio = sys.argv[1:5]
    bad = 0
    for name in ("silence10", "noise10"):
        r = transcribe(sotto, model, vad, os.path.join(audio, name + ".wav"))
        texts = [s["text"] for s in r["segments"] if s["text"].strip()]
        print(f"{name}: {len(texts)} segments with text {texts[:3]}")
        bad += len(texts) > 0
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(audio, "gaps10.tsv"))][1:]
    gaps = [(float(a), float(b)) for a, b, kind, _ in rows if kind != "speech" and float(b) - float(a) >= 10]
    r = transcribe(sotto, model, vad, os.path.join(audio, "gaps10.wav"), "--vad")
    in_gap = lambda t: any(a + 1 < t < b - 1 for a, b in gaps)
    segs = [s for s in r["segments"] if s["text"].strip()]
    outside = [(s["start"], s["end"], s["text"]) for s in segs if in_gap(s["start"]) or in_gap(s["end"])]
    ref = normalise(open(os.path.join(audio, "gaps10.txt"), encoding="utf-8").read().replace("mister", "mr"))
    k = kept(ref, normalise(r["text"]))
    print(f"gaps10 --vad: {len(segs)} segments, {len(outside)} starting or ending in a long gap {outside[:3]}; "
          f"{100 * k:.1f} % of the reference words kept")
    bad += len(outside) > 0 or k < 0.85
    print(f"{3 - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
