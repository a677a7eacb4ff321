"""Recordings the drop-in tests make from the committed clips with sox (never committed
themselves): English then German (espeak-ng voices) for multilingual=True, and a
two-channel file with a different LibriVox reader on each side. scripts/
golden_faster_whisper.py makes the same files for faster-whisper's goldens."""

from __future__ import annotations

import os
import subprocess
import wave
from typing import List

import numpy as np

#: the English clips (espeak-ng's en voice, 25.3 s), 5 s of silence, then German twice
EN_CLIPS = ["espeak-ng-01.wav", "espeak-ng-02.wav", "espeak-ng-03.wav", "espeak-ng-04.wav", "espeak-ng-05.wav"]
#: the clips the long tiny.en cases join: 59 s, two windows and more
LONG_CLIPS = ["librivox-0870.wav", "librivox-0880.wav", "librivox-0890.wav", "librivox-0920.wav",
              "librivox-0930.wav", "espeak-ng-03.wav", "espeak-ng-04.wav", "espeak-ng-05.wav",
              "espeak-ng-06.wav", "espeak-ng-07.wav"]
#: left and right of the stereo file
STEREO_CLIPS = ("librivox-0870.wav", "librivox-0890.wav")


def _sox(*args: str) -> None:
    subprocess.run(["sox", *args], check=True, capture_output=True)


def en_then_de(clips: str, out_dir: str) -> str:
    """OUT_DIR/en_de.wav: EN_CLIPS, 5 s of silence, the German clip, 0.5 s, it again (43 s)."""
    out = os.path.join(out_dir, "en_de.wav")
    de = os.path.join(clips, "lang", "espeak-ng-de.wav")
    en = os.path.join(out_dir, "en.wav")
    gap = os.path.join(out_dir, "gap.wav")
    _sox(*[os.path.join(clips, c) for c in EN_CLIPS], en, "pad", "0", "5")
    _sox("-n", "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", gap, "trim", "0", "0.5")
    _sox(en, de, gap, de, out)
    return out


def stereo(clips: str, out_dir: str) -> str:
    """OUT_DIR/stereo.wav: STEREO_CLIPS[0] on the left, [1] on the right (the shorter
    padded with silence), 16 kHz 16-bit."""
    out = os.path.join(out_dir, "stereo.wav")
    _sox("-M", *[os.path.join(clips, c) for c in STEREO_CLIPS], out)
    return out


def read_wav(path: str) -> np.ndarray:
    with wave.open(path, "rb") as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0


def joined(clips: str, names: List[str]) -> np.ndarray:
    return np.concatenate([read_wav(os.path.join(clips, n)) for n in names])
