#!/usr/bin/env python3
"""golden_vad.py — reference outputs of the Silero VAD for tests/test_vad.c, made by the
silero-vad package itself (6.2.3): its ONNX model on onnxruntime (load_silero_vad(onnx=True),
one thread, as get_speech_timestamps runs it) and its get_speech_timestamps /
get_speech_timestamps_from_probs (utils_vad.py). docs/GOLDEN.md says how to install it.

usage: .venv-golden/bin/python scripts/golden_vad.py [--out tests/golden/vad]

Signals (all 16 kHz mono float32):
  clips/NAME.wav, clips/lang/NAME.wav  the committed clips, int16 / 32768
  noise-white   10 s: four 2.5 s stretches of uniform noise, peaks 2^-6, 2^-4, 2^-2, 1
  noise-mix     librivox-0870 plus noise at peak 2^-4 (float32 sum)
  gaps10        tests/data/make_long.py gaps10: 10 min of clips between long silences and noise
  synthetic     no audio: 3000 probabilities from a two-state random process, with values
                on and next to the thresholds, for the interval rules alone
Noise sample i of a signal is v / 32768 / 2^shift with v = (splitmix64 output >> 48) - 32768,
the generator seeded per signal (1: noise-white, 2: noise-mix); tests/test_vad.c makes the
same samples.

Writes OUT/INDEX (one line per signal: name, kind, source, n_samples), OUT/NAME.probs (one
probability per window, %.9g, which round-trips float32; not for gaps10: too long to
commit) and OUT/NAME.speech (one line per parameter set of VARIANTS: the variant's name,
the interval count, then start end pairs in samples).
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import warnings
import wave

import numpy as np
import torch

warnings.filterwarnings("ignore")  # "This model support only 16000 sampling rate!" and the like
from silero_vad import get_speech_timestamps, get_speech_timestamps_from_probs, load_silero_vad  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
M64 = (1 << 64) - 1

# parameter sets, by name (tests/test_vad.c has the same table)
VARIANTS = [
    ("default", {}),
    ("low", dict(threshold=0.3, min_silence_duration_ms=50, speech_pad_ms=10)),
    ("high", dict(threshold=0.7, neg_threshold=0.6, min_speech_duration_ms=100, speech_pad_ms=100)),
    ("split", dict(max_speech_duration_s=1.0)),
    ("split_last", dict(max_speech_duration_s=1.0, use_max_poss_sil_at_max_speech=False)),
    ("merge", dict(min_silence_duration_ms=500, speech_pad_ms=200, min_speech_duration_ms=0)),
    ("wide", dict(min_silence_duration_ms=2000, speech_pad_ms=400, min_speech_duration_ms=0,
                  max_speech_duration_s=5.0)),
]


def splitmix64(seed):
    s = seed & M64
    while True:
        s = (s + 0x9E3779B97F4A7C15) & M64
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        yield z ^ (z >> 31)


def noise(g, n, shift):
    """N samples of generator G (splitmix64) at peak 2^-SHIFT."""
    v = np.array([(next(g) >> 48) - 32768 for _ in range(n)], dtype=np.float32)
    return (v / np.float32(32768 * 2 ** shift)).astype(np.float32)  # exact: a power of two


def read_wav(path):
    with wave.open(path) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2, path
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / np.float32(32768)


def window_probs(model, audio):
    """The probabilities get_speech_timestamps computes: 512-sample chunks, the last one
    padded with zeros, the model's state reset first."""
    model.reset_states()
    x = torch.from_numpy(audio)
    out = []
    for s in range(0, len(audio), 512):
        chunk = x[s:s + 512]
        if len(chunk) < 512:
            chunk = torch.nn.functional.pad(chunk, (0, 512 - len(chunk)))
        out.append(model(chunk, 16000).item())
    return out


def speech_lines(probs, n_samples):
    lines = []
    for name, kw in VARIANTS:
        ts = get_speech_timestamps_from_probs(probs, audio_length_samples=n_samples, **kw)
        lines.append(" ".join([name, str(len(ts))] + ["%d %d" % (t["start"], t["end"]) for t in ts]))
    return lines


def synthetic_probs():
    """A two-state process (speech / silence, runs of 1..120 windows) with noisy levels and,
    every so often, a value exactly on or next to 0.5, 0.35, 0.3, 0.7 and 0.6, as float32."""
    rng = random.Random(20240601)
    out, speech = [], False
    edges = [0.5, 0.35, 0.3, 0.7, 0.6, 0.15, 0.01]
    while len(out) < 3000:
        for _ in range(rng.randint(1, 120)):
            r = rng.random()
            if r < 0.08:
                v = rng.choice(edges) + rng.choice([-1e-7, 0.0, 1e-7])
            else:
                v = min(max(rng.gauss(0.85 if speech else 0.12, 0.15), 0.0), 1.0)
            out.append(float(np.float32(v)))
        speech = not speech
    return out[:3000]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "golden", "vad"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    model = load_silero_vad(onnx=True)

    signals = []  # (name, kind, source, audio)
    for sub in ("clips", os.path.join("clips", "lang")):
        for f in sorted(os.listdir(os.path.join(DATA, sub))):
            if f.endswith(".wav"):
                src = os.path.join(sub, f).replace(os.sep, "/")
                signals.append((f[:-4], "wav", src, read_wav(os.path.join(DATA, src))))
    g = splitmix64(1)  # one generator across the four stretches
    white = np.concatenate([noise(g, 40000, s) for s in (6, 4, 2, 0)])
    signals.append(("noise-white", "noise", "white", white))
    clip = read_wav(os.path.join(DATA, "clips", "librivox-0870.wav"))
    signals.append(("noise-mix", "noise", "mix", (clip + noise(splitmix64(2), len(clip), 4)).astype(np.float32)))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(DATA, "make_long.py"), tmp, "gaps10"], check=True,
                       stdout=subprocess.DEVNULL)
        signals.append(("gaps10", "long", "gaps10", read_wav(os.path.join(tmp, "gaps10.wav"))))

    index = []
    for name, kind, src, audio in signals:
        probs = window_probs(model, audio)
        # get_speech_timestamps itself, once, must agree with the intervals from its probabilities
        ref = get_speech_timestamps(torch.from_numpy(audio), model)
        ours = get_speech_timestamps_from_probs(probs, audio_length_samples=len(audio))
        assert ref == ours, name
        if kind != "long":
            with open(os.path.join(args.out, name + ".probs"), "w") as f:
                f.writelines("%.9g\n" % p for p in probs)
        with open(os.path.join(args.out, name + ".speech"), "w") as f:
            f.writelines(line + "\n" for line in speech_lines(probs, len(audio)))
        index.append("%s %s %s %d" % (name, kind, src, len(audio)))
        print("%-20s %6d windows, %d speech intervals" % (name, len(probs), len(ours)))
    probs = synthetic_probs()
    n = 512 * len(probs) - 100
    with open(os.path.join(args.out, "synthetic.probs"), "w") as f:
        f.writelines("%.9g\n" % p for p in probs)
    with open(os.path.join(args.out, "synthetic.speech"), "w") as f:
        f.writelines(line + "\n" for line in speech_lines(probs, n))
    index.append("synthetic probs - %d" % n)
    with open(os.path.join(args.out, "INDEX"), "w") as f:
        f.writelines(line + "\n" for line in index)


if __name__ == "__main__":
    main()
