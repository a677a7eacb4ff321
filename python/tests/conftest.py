"""Fixtures of the sotto package's tests. ctest (tests/CMakeLists.txt, test python_package)
names what they run against in the environment: SOTTO_CLI (the sotto tool, whose output
the package must equal), SOTTO_TEST_MODEL, SOTTO_TEST_VAD and SOTTO_TEST_CLIPS."""

from __future__ import annotations

import json
import os
import subprocess
import wave
from typing import Any, Dict, List

import numpy as np
import pytest

import sotto


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run these tests through ctest (ctest -R python_package)")
    return value


@pytest.fixture(scope="session")
def cli() -> str:
    return _env("SOTTO_CLI")


@pytest.fixture(scope="session")
def model_path() -> str:
    return _env("SOTTO_TEST_MODEL")


@pytest.fixture(scope="session")
def vad_path() -> str:
    return _env("SOTTO_TEST_VAD")


@pytest.fixture(scope="session")
def clips() -> List[str]:
    d = _env("SOTTO_TEST_CLIPS")
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".wav"))


@pytest.fixture(scope="session")
def models_dir(model_path: str) -> str:
    """The models directory: the test model's folder (setup's models/)."""
    return os.path.dirname(model_path)


@pytest.fixture(scope="session")
def clips_dir(clips: List[str]) -> str:
    return os.path.dirname(clips[0])


@pytest.fixture(scope="session")
def model(model_path: str, vad_path: str) -> sotto.Model:
    return sotto.Model(model_path, threads=2, device="cpu", vad_model=vad_path)


def cli_json(cli: str, model_path: str, vad_path: str, audio: str, *flags: str) -> Dict[str, Any]:
    """What `sotto transcribe -f json` writes for AUDIO with FLAGS (verbose_json)."""
    cmd = [cli, "transcribe", "-m", model_path, "--vad-model", vad_path, "--device", "cpu", "-t", "2",
           "-f", "json", "--quiet", *flags, audio]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def assert_same(segments: List[sotto.Segment], info: sotto.TranscriptionInfo, ref: Dict[str, Any]) -> None:
    """The package's transcript is the tool's: text, times and tokens exactly, scores to
    the digits the JSON writer prints."""
    assert info.text == ref["text"]
    assert info.language == ref["language"]
    assert info.duration == pytest.approx(ref["duration"], abs=0.005)
    assert len(segments) == len(ref["segments"])
    for s, r in zip(segments, ref["segments"]):
        assert (s.id, s.seek, s.text, list(s.tokens)) == (r["id"], r["seek"], r["text"], r["tokens"])
        assert s.start == pytest.approx(r["start"], abs=1e-9) and s.end == pytest.approx(r["end"], abs=1e-9)
        for key in ("avg_logprob", "compression_ratio", "no_speech_prob", "temperature"):
            assert getattr(s, key) == pytest.approx(r[key], rel=1e-9, abs=1e-12), key


def read_wav(path: str) -> np.ndarray:
    """A 16 kHz mono 16-bit WAV as float32 samples, as the engine's reader scales them."""
    with wave.open(path) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return pcm.astype(np.float32) / 32768.0
