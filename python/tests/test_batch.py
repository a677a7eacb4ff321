"""Batched transcription from Python (issue 25): sotto.Model.transcribe(batch_size=N) equals
`sotto transcribe --batch-size N` segment for segment, and faster-whisper's
BatchedInferencePipeline runs on the same engine with the same chunks. ctest python_batch
sets SOTTO_TEST_LONG (make_long.py's long2: 6 chunks) and SOTTO_BATCH_VAD_MODEL
(faster-whisper's Silero export, models/silero-vad-fw.gguf)."""

from __future__ import annotations

import os

import pytest

import sotto
from conftest import assert_same, cli_json
from sotto.faster_whisper import BatchedInferencePipeline, WhisperModel


@pytest.fixture(scope="module")
def long_audio() -> str:
    return os.environ["SOTTO_TEST_LONG"]


@pytest.fixture(scope="module")
def batch_vad() -> str:
    return os.environ["SOTTO_BATCH_VAD_MODEL"]


def test_batched_equals_cli(cli: str, model: sotto.Model, model_path: str, batch_vad: str, long_audio: str) -> None:
    ref = cli_json(cli, model_path, batch_vad, long_audio, "--batch-size", "3", "--beam-size", "1")
    segments, info = model.transcribe(long_audio, batch_size=3, beam_size=1, without_timestamps=True)
    assert len(segments) >= 5  # one a chunk
    assert_same(segments, info, ref)
    # with timestamps on both sides
    ref = cli_json(cli, model_path, batch_vad, long_audio, "--batch-size", "3", "--beam-size", "1", "--timestamps")
    segments, info = model.transcribe(long_audio, batch_size=3, beam_size=1)
    assert_same(segments, info, ref)


def test_pipeline_on_the_engine(cli: str, model_path: str, batch_vad: str, long_audio: str) -> None:
    os.environ["SOTTO_MODELS_DIR"] = os.path.dirname(model_path)
    pipe = BatchedInferencePipeline(WhisperModel("tiny.en", device="cpu", cpu_threads=2))
    segments, info = pipe.transcribe(long_audio, batch_size=3, beam_size=1)
    ref = cli_json(cli, model_path, batch_vad, long_audio, "--batch-size", "3", "--beam-size", "1")
    got = list(segments)
    assert [s.text for s in got] == [r["text"] for r in ref["segments"]]
    assert [(s.start, s.end) for s in got] == [(round(r["start"], 3), round(r["end"], 3)) for r in ref["segments"]]


def test_pipeline_does_not_sample(model: sotto.Model, long_audio: str) -> None:
    # faster-whisper 1.2.1's pipeline passes its first temperature to CTranslate2's generate
    # as sampling_temperature, which (sampling_topk 1) decodes as at 0: the same text and
    # avg_logprob at 0.5, 1 and 2 (measured), the segments saying the temperature given
    at0, _ = model.transcribe(long_audio, batch_size=3, beam_size=1, without_timestamps=True)
    for t in (0.5, 1.0):
        hot, _ = model.transcribe(long_audio, batch_size=3, beam_size=1, without_timestamps=True, temperature=t,
                                  best_of=5, seed=7)
        assert [(s.text, s.avg_logprob) for s in hot] == [(s.text, s.avg_logprob) for s in at0]
        assert {s.temperature for s in hot} == {t}


def test_clip_over_30_s_warns(model: sotto.Model, long_audio: str) -> None:
    # only a clip's first 30 s are decoded (one window), as the pipeline; it logs that, we warn
    with pytest.warns(RuntimeWarning, match=r"clip 0 \(1.000 to 41.000 s\) is longer than 30 seconds"):
        model.transcribe(long_audio, batch_size=2, beam_size=1, clip_timestamps=[1.0, 41.0])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.transcribe(long_audio, batch_size=2, beam_size=1, clip_timestamps=[1.0, 31.0])


def test_batch_size_checked(model: sotto.Model, long_audio: str) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        model.transcribe(long_audio, batch_size=65)
    # an initial_prompt is every chunk's (since the pipeline's prompt); a prefix is refused
    with pytest.raises(ValueError, match="prefix"):
        model.transcribe(long_audio, batch_size=2, prefix="Hello")
    with pytest.raises(ValueError, match="carry_initial_prompt"):
        model.transcribe(long_audio, batch_size=2, initial_prompt="Hello", carry_initial_prompt=True)
