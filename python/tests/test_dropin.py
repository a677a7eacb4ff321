"""The drop-in front ends: faster-whisper's API (WhisperModel, BatchedInferencePipeline,
decode_audio) checked with the assertions faster-whisper's own tests make, on our clips,
and openai-whisper's (``import sotto as whisper``) against openai's long-form goldens."""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
import os
import sys
import threading
import time
from typing import Any, Dict, List

import numpy as np
import pytest

import sotto
import sotto as whisper
from conftest import read_wav
from sotto import BatchedInferencePipeline, WhisperModel, decode_audio

# faster-whisper 1.2.1's WhisperModel.transcribe parameters and defaults, in order
FW_TRANSCRIBE = [
    ("audio", inspect.Parameter.empty), ("language", None), ("task", "transcribe"), ("log_progress", False),
    ("beam_size", 5), ("best_of", 5), ("patience", 1), ("length_penalty", 1), ("repetition_penalty", 1),
    ("no_repeat_ngram_size", 0), ("temperature", [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    ("compression_ratio_threshold", 2.4), ("log_prob_threshold", -1.0), ("no_speech_threshold", 0.6),
    ("condition_on_previous_text", True), ("prompt_reset_on_temperature", 0.5), ("initial_prompt", None),
    ("prefix", None), ("suppress_blank", True), ("suppress_tokens", [-1]), ("without_timestamps", False),
    ("max_initial_timestamp", 1.0), ("word_timestamps", False), ("prepend_punctuations", "\"'“¿([{-"),
    ("append_punctuations", "\"'.。,，!！?？:：”)]}、"), ("multilingual", False), ("vad_filter", False),
    ("vad_parameters", None), ("max_new_tokens", None), ("chunk_length", None), ("clip_timestamps", "0"),
    ("hallucination_silence_threshold", None), ("hotwords", None), ("language_detection_threshold", 0.5),
    ("language_detection_segments", 1),
]


@pytest.fixture(scope="module")
def fw(models_dir: str) -> WhisperModel:
    os.environ["SOTTO_MODELS_DIR"] = models_dir
    return WhisperModel("tiny.en", device="cpu", cpu_threads=2)


def clip(clips: List[str], name: str) -> str:
    return [c for c in clips if c.endswith(name)][0]


def test_signatures_are_faster_whispers():
    params = inspect.signature(WhisperModel.transcribe).parameters
    got = [(n, p.default) for n, p in params.items() if n != "self"]
    assert got == FW_TRANSCRIBE
    batched = [n for n in inspect.signature(BatchedInferencePipeline.transcribe).parameters if n != "self"]
    assert batched == [n for n, _ in FW_TRANSCRIBE[:-3]] + ["batch_size", "hotwords", "language_detection_threshold",
                                                             "language_detection_segments"]
    ctor = list(inspect.signature(WhisperModel.__init__).parameters)[1:]
    assert ctor == ["model_size_or_path", "device", "device_index", "compute_type", "cpu_threads", "num_workers",
                    "download_root", "local_files_only", "files", "revision", "use_auth_token", "model_kwargs"]
    assert list(inspect.signature(decode_audio).parameters) == ["input_file", "sampling_rate", "split_stereo"]


def test_supported_languages(fw, models_dir):
    assert fw.supported_languages == ["en"]
    if os.path.isdir(os.path.join(models_dir, "base-ct2")):
        base = WhisperModel("base", device="cpu", cpu_threads=2)
        langs = base.supported_languages
        # faster-whisper's order: alphabetical ("yue", large-v3's, last)
        assert len(langs) in (99, 100) and langs[:3] == ["af", "am", "ar"] and langs[:99] == sorted(langs[:99])


def test_transcribe(fw, model, clips):
    # faster-whisper's test_transcribe: language, probability, duration, segment fields,
    # and the text of the segments is the transcript; here equal to sotto.Model's
    path = clip(clips, "librivox-0870.wav")
    segments, info = fw.transcribe(path, word_timestamps=True)
    assert info.language == "en" and info.language_probability == 1.0  # English-only: faster-whisper's 1.0
    assert info.duration == pytest.approx(7.1, abs=0.01) and info.duration_after_vad == info.duration
    assert info.all_language_probs is None and info.vad_options is None
    assert info.transcription_options.beam_size == 5 and info.transcription_options.word_timestamps
    assert inspect.isgenerator(segments)
    segments = list(segments)
    ref, _ = model.transcribe(path, word_timestamps=True, silence_check=False)
    assert [native(s) for s in segments] == ref and segments[0].id == 1
    text = "".join(s.text for s in segments).strip()
    assert text.startswith("And Mr. John Dashwood")
    for s in segments:
        assert s.words and s.start <= s.words[0].start and s.words[-1].end <= s.end + 0.01
        assert dataclasses.asdict(s)["text"] == s.text
    assert segments[0].words[0].word == " And"


def native(s: Any) -> sotto.Segment:
    """faster-whisper's segment as sotto.Model's (ids from 0, tokens a tuple)."""
    words = None if s.words is None else [sotto.Word(w.start, w.end, w.word, w.probability) for w in s.words]
    return sotto.Segment(s.id - 1, s.seek, s.start, s.end, s.text, tuple(s.tokens), s.avg_logprob,
                         s.compression_ratio, s.no_speech_prob, words, s.temperature)


def test_all_temperatures_failing_keep_faster_whispers_choice(fw, model, clips):
    # every decode fails (no avg_logprob is >= 0): faster-whisper's generate_with_fallback keeps
    # the one with the highest avg_logprob (within the compression threshold) and reports the
    # last temperature (measured on 1.2.1: " He was not an old-sposed young man." -0.401, 1.0);
    # openai's loop, sotto.Model's default, keeps the last decode (here the sample at 1.0)
    path = clip(clips, "librivox-0880.wav")
    greedy, _ = model.transcribe(path, temperature=0.0, silence_check=False)
    got = list(fw.transcribe(path, temperature=[0.0, 1.0], log_prob_threshold=0.0)[0])
    assert [(s.text, s.avg_logprob, s.temperature) for s in got] == [(s.text, s.avg_logprob, 1.0) for s in greedy]
    last, _ = model.transcribe(path, temperature=[0.0, 1.0], log_prob_threshold=0.0, silence_check=False)
    assert [s.temperature for s in last] == [1.0] * len(last)
    assert [(s.text, s.avg_logprob) for s in last] != [(s.text, s.avg_logprob) for s in greedy]
    best, _ = model.transcribe(path, temperature=[0.0, 1.0], log_prob_threshold=0.0, silence_check=False,
                               fallback_best=True)
    assert [(s.text, s.avg_logprob) for s in best] == [(s.text, s.avg_logprob) for s in greedy]


def test_faster_whispers_log_lines_and_format_timestamp(fw, clips, caplog):
    from sotto.faster_whisper import available_models, format_timestamp

    assert (format_timestamp(3661.5), format_timestamp(59.9996), format_timestamp(1.5, True, ",")) == (
        "01:01:01.500", "01:00.000", "00:00:01,500")  # faster-whisper 1.2.1's
    assert "tiny.en" in available_models()
    path = clip(clips, "librivox-0880.wav")
    with caplog.at_level(logging.INFO, logger="faster_whisper"):
        list(fw.transcribe(path, vad_filter=True, multilingual=True)[0])
        list(BatchedInferencePipeline(fw).transcribe(path, batch_size=2)[0])
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "faster_whisper"]
    assert lines == [
        ("WARNING", "The current model is English-only but the multilingual parameter is set to True; "
                    "setting to False instead."),
        ("INFO", "Processing audio with duration 00:02.990"), ("INFO", "VAD filter removed 00:00.000 of audio"),
        ("INFO", "Processing audio with duration 00:02.990"), ("INFO", "VAD filter removed 00:00.000 of audio"),
    ]


def test_faster_whispers_feature_extractor_and_constants(fw, clips):
    fe = fw.feature_extractor
    assert (fe.sampling_rate, fe.hop_length, fe.chunk_length, fe.n_samples, fe.nb_max_frames, fe.n_fft) == (
        16000, 160, 30, 480000, 3000, 400) and fe.time_per_frame == 0.01
    assert (fw.num_samples_per_token, fw.frames_per_second, fw.tokens_per_second, fw.input_stride,
            fw.time_precision, fw.max_length) == (320, 100, 50, 2, 0.02, 448)
    assert fw.logger is logging.getLogger("faster_whisper")
    x = decode_audio(clip(clips, "librivox-0870.wav"))  # 7.1 s
    f = fe(x)
    assert f.shape == (80, len(x) // 160 + 1) and f.dtype == np.float32  # faster-whisper's 711 frames
    # its log-mel (to 3.4e-6 of faster-whisper 1.2.1's on this clip and on six of it end to
    # end, measured): frames across the 30 s windows it is made of are the audio's own, a
    # frame past 30 s the same as that frame of audio starting 10 frames before it
    long = np.concatenate([x] * 6)
    g = fe(long)
    assert g.shape == (80, len(long) // 160 + 1)
    np.testing.assert_allclose(g[:, 2990:3010], fe(long[2980 * 160:])[:, 10:30], atol=1e-5)
    with pytest.raises(NotImplementedError):
        fe(x, padding=0)


def test_refused_max_new_tokens_is_a_value_error(fw, clips, capsys):
    path = clip(clips, "librivox-0870.wav")
    segments, _ = fw.transcribe(path, max_new_tokens=500)  # past the 448 positions: at the window, as theirs
    with pytest.raises(ValueError, match="max_new_tokens") as e:
        list(segments)
    assert isinstance(e.value, sotto.SottoError)
    list(fw.transcribe(path, log_progress=True)[0])
    assert capsys.readouterr().err.count("100.0 %") == 1


def test_log_progress_is_a_tqdm_bar_where_tqdm_is(fw, clips, monkeypatch, capsys):
    # faster-whisper's log_progress: tqdm(total=duration, unit="seconds"), updated as the audio
    # is done; a stand-in tqdm module records what the drop-in does with it
    import types
    calls = []

    class Bar:
        def __init__(self, total, unit):
            calls.append(("new", total, unit))

        def update(self, n):
            calls.append(("update", n))

        def close(self):
            calls.append(("close",))

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=Bar))
    segments, info = fw.transcribe(clip(clips, "librivox-0870.wav"), log_progress=True)
    list(segments)
    assert calls[0] == ("new", info.duration, "seconds") and calls[-1] == ("close",)
    steps = [c[1] for c in calls if c[0] == "update"]
    assert all(n >= 0 for n in steps) and sum(steps) == pytest.approx(info.duration)
    assert "%" not in capsys.readouterr().err  # the bar, not the lines


def test_segments_are_faster_whispers_dataclasses(fw, clips):
    # faster-whisper 1.2.1's Segment and Word are dataclasses: asdict, replace, assignment,
    # tokens a list; _asdict still answers, with its DeprecationWarning
    s = next(fw.transcribe(clip(clips, "librivox-0870.wav"), word_timestamps=True, beam_size=1)[0])
    d = dataclasses.asdict(s)
    assert list(d) == ["id", "seek", "start", "end", "text", "tokens", "avg_logprob", "compression_ratio",
                       "no_speech_prob", "words", "temperature"]
    assert isinstance(s.tokens, list) and list(d["words"][0]) == ["start", "end", "word", "probability"]
    assert dataclasses.replace(s, text="x").text == "x"
    s.start += 10
    s.words[0].start += 10
    with pytest.warns(DeprecationWarning, match="dataclasses.asdict"):
        assert s._asdict()["start"] == s.start


def test_empty_prefix_and_hotwords_are_none(fw, clips):
    # faster-whisper's `if prefix` and `if hotwords`: "" is no prefix, no hotwords (sotto had
    # forced <|0.00|> and nothing, and written an empty transcript)
    path = clip(clips, "librivox-0870.wav")
    plain = list(fw.transcribe(path, beam_size=1)[0])
    assert plain[0].text.strip().startswith("And Mr. John")
    assert list(fw.transcribe(path, beam_size=1, prefix="")[0]) == plain
    assert list(fw.transcribe(path, beam_size=1, hotwords="")[0]) == plain


def test_language_and_task_as_faster_whisper(fw, clips, models_dir, caplog):
    # an English-only model transcribes English whatever language and task say (with the
    # logger's warning); a multilingual one refuses a code it lacks when transcribe() is called
    path = clip(clips, "librivox-0870.wav")
    plain = list(fw.transcribe(path, beam_size=1)[0])
    with caplog.at_level(logging.WARNING, logger="faster_whisper"):
        segments, info = fw.transcribe(path, beam_size=1, language="fr", task="translate")
    assert "English-only" in caplog.text and info.language == "en"
    assert list(segments) == plain
    if not os.path.isdir(os.path.join(models_dir, "base-ct2")):
        pytest.skip("no base-ct2")
    base = WhisperModel("base", device="cpu", cpu_threads=2)
    for bad in ({"language": "xx"}, {"language": "German"}, {"task": "bogus"}):
        with pytest.raises(ValueError):
            base.transcribe(path, **bad)  # at the call, not when the segments are read
    with pytest.raises(ValueError, match=r"^'xx' is not a valid language code \(accepted language codes: af, am, "):
        base.transcribe(path, language="xx")  # faster-whisper's message


def test_input_errors_are_pythons(fw, model, clips, tmp_path):
    # a missing path: FileNotFoundError (faster-whisper's and openai's loaders), a directory:
    # IsADirectoryError, each also a sotto.SottoError; integer PCM refused as sotto.Model does
    missing = str(tmp_path / "no-such.wav")
    for call in (lambda: list(fw.transcribe(missing)[0]), lambda: decode_audio(missing),
                 lambda: model.transcribe(missing), lambda: whisper.load_audio(missing)):
        with pytest.raises(FileNotFoundError, match="no-such.wav") as e:
            call()
        assert isinstance(e.value, sotto.SottoError) and e.value.status == "i/o error"
    with pytest.raises(IsADirectoryError):
        fw.transcribe(str(tmp_path))
    pcm = (read_wav(clip(clips, "librivox-0870.wav")) * 32767).astype(np.int16)
    with pytest.raises(TypeError, match="int16"):
        fw.transcribe(pcm)


def test_transcribe_inputs(fw, clips):
    # a path, a binary file object, bytes and numpy samples give the same segments
    path = clip(clips, "librivox-0880.wav")
    by_path = list(fw.transcribe(path, beam_size=1)[0])
    with open(path, "rb") as f:
        assert list(fw.transcribe(f, beam_size=1)[0]) == by_path
    assert list(fw.transcribe(decode_audio(path), beam_size=1)[0]) == by_path
    assert np.array_equal(decode_audio(path), read_wav(path))


def test_segments_are_lazy(fw, clips):
    # nothing runs before the first next(); the engine runs a window ahead of the consumer
    # and stops when the generator is closed
    samples = np.concatenate([read_wav(c) for c in clips])  # 59 s: two windows or more
    before = {t.name for t in threading.enumerate()}
    segments, info = fw.transcribe(samples, beam_size=1)
    assert info.duration > 55
    assert "sotto-transcribe" not in {t.name for t in threading.enumerate()} - before
    first = next(segments)
    assert first.id == 1 and first.end <= 30.0
    assert any(t.name == "sotto-transcribe" for t in threading.enumerate())  # later windows in progress
    segments.close()
    assert not any(t.name == "sotto-transcribe" for t in threading.enumerate())
    every = list(fw.transcribe(samples, beam_size=1)[0])
    assert every[0] == first and every[-1].end > 55


def test_an_unread_generator_holds_the_engine(fw, clips, monkeypatch):
    # faster-whisper's generator does no work while the reader does not ask for more: after
    # a `break`, sotto's worker waits once _AHEAD segments are made, instead of decoding the
    # rest of the file (it had gone on to the end: 8 CPU seconds of a 5-minute file)
    monkeypatch.setattr(sotto.faster_whisper, "_AHEAD", 1)
    samples = np.concatenate([read_wav(c) for c in clips] * 3)  # 3 minutes: many windows
    segments, _ = fw.transcribe(samples, beam_size=1)
    for s in segments:
        break
    cpu, deadline = time.process_time(), time.monotonic() + 60
    while time.monotonic() < deadline:  # until the process does nothing more
        time.sleep(1.0)
        now = time.process_time()
        if now - cpu < 0.05:
            break
        cpu = now
    assert any(t.name == "sotto-transcribe" for t in threading.enumerate()), "the worker decoded to the end"
    segments.close()
    assert not any(t.name == "sotto-transcribe" for t in threading.enumerate())


def test_vad_filter(fw, clips, vad_path):
    # speech, 5 s of silence, speech: duration_after_vad counts the speech alone
    a, b = read_wav(clip(clips, "librivox-0870.wav")), read_wav(clip(clips, "librivox-0880.wav"))
    samples = np.concatenate([a, np.zeros(80000, np.float32), b])
    segments, info = fw.transcribe(samples, vad_filter=True, vad_parameters={"min_silence_duration_ms": 500},
                                   beam_size=1)
    assert info.vad_options.min_silence_duration_ms == 500
    assert info.duration == pytest.approx(len(samples) / 16000)
    assert info.duration - 5.5 < info.duration_after_vad < info.duration - 3.0
    segments = list(segments)
    assert segments[0].start < 1.0 and segments[-1].end > info.duration - 2.0


def test_batch_size_over_64_runs_64_at_a_time(fw, clips):
    path = clip(clips, "librivox-0870.wav")
    segments, info = BatchedInferencePipeline(fw).transcribe(path, batch_size=8)
    want = [s.text for s in segments]
    assert info.transcription_options.temperatures == [0.0]  # faster-whisper's: the first alone
    assert [s.text for s in BatchedInferencePipeline(fw).transcribe(path, batch_size=100)[0]] == want


def test_batched_transcribe(fw, clips):
    # faster-whisper's test_batched_transcribe: the segments of the VAD chunks, with words
    # inside their segment; batch_size 1 and 4 give the same segments
    samples = np.concatenate([read_wav(c) for c in clips if "librivox" in c])
    pipe = BatchedInferencePipeline(fw)
    segments, info = pipe.transcribe(samples, batch_size=4)
    assert info.language == "en" and info.duration == pytest.approx(len(samples) / 16000)
    assert 0 < info.duration_after_vad <= info.duration
    segments = list(segments)
    assert segments and [s.id for s in segments] == list(range(1, len(segments) + 1))
    assert all(s.end - s.start <= 30.0 for s in segments)
    text = "".join(s.text for s in segments)
    assert "Dashwood" in text
    assert list(pipe.transcribe(samples, batch_size=1)[0]) == segments
    worded = list(pipe.transcribe(samples, word_timestamps=True)[0])
    assert [s.text for s in worded] == [s.text for s in segments]
    for s in worded:
        assert s.words and s.words[0].start >= s.start - 0.01 and s.words[-1].end <= s.end + 0.01
    with pytest.raises(ValueError, match="batch_size"):
        pipe.transcribe(samples, batch_size=0)
    with pytest.raises(RuntimeError, match="No clip timestamps found"):  # faster-whisper's, over 30 s
        pipe.transcribe(np.concatenate([samples] * (1 + int(30 * 16000 // len(samples)))), vad_filter=False)
    assert [s.text for s in pipe.transcribe(samples[:16000 * 8], vad_filter=False)[0]]  # under 30 s: one chunk


def test_prompt_and_options(fw, model, clips):
    path = clip(clips, "librivox-0870.wav")
    kw = dict(beam_size=1, temperature=0.0, initial_prompt="Mr. Dashwood.")
    segments = list(fw.transcribe(path, **kw)[0])
    ref, _ = model.transcribe(path, beam_size=1, temperature=0.0, initial_prompt="Mr. Dashwood.",
                              silence_check=False)
    assert [s.text for s in segments] == [s.text for s in ref]
    # max_new_tokens as CTranslate2 caps it: a 1-token prompt and 8 give min(9 // 2, 9) = 4
    # tokens (test_fw_golden holds more of its cases against faster-whisper itself)
    capped = list(fw.transcribe(path, beam_size=1, max_new_tokens=8)[0])
    assert len(capped) == 1 and len(capped[0].tokens) == 4
    with pytest.raises(sotto.SottoError, match="max_new_tokens"):
        list(fw.transcribe(path, max_new_tokens=448)[0])  # faster-whisper refuses it too


def test_new_parameters_check_their_values(fw, clips):
    with pytest.raises(ValueError, match="clip_timestamps"):
        fw.transcribe(clips[0], clip_timestamps="0,five")
    with pytest.raises(ValueError, match="clip_timestamps"):
        fw.transcribe(clips[0], clip_timestamps=[-1.0, 2.0])
    with pytest.raises(TypeError, match="hotwords"):
        fw.transcribe(clips[0], hotwords=["Dashwood"])
    # a clip past the end: nothing to transcribe, no failure
    assert list(fw.transcribe(clips[0], clip_timestamps=[100.0])[0]) == []


@pytest.mark.parametrize("kwargs", [dict(chunk_length=20)])
def test_not_yet_supported_parameters_say_so(fw, clips, kwargs):
    (name,) = kwargs
    with pytest.raises(NotImplementedError, match=name):
        fw.transcribe(clips[0], **kwargs)


def test_suppress_tokens_refused_when_malformed(fw, model_path, clips):
    # openai's forms ("-1,13", a list with -1) and faster-whisper's (a list) are taken (the
    # openai goldens and python_fw_golden_more hold their results); what is not a token id
    # is refused, named
    model = sotto.Model(model_path, threads=2)
    for bad, err in (("x", ValueError), ([1.5], TypeError), ([-2], ValueError), (5, TypeError)):
        with pytest.raises(err, match="suppress_tokens"):
            model.transcribe(clips[0], beam_size=1, suppress_tokens=bad)
    with pytest.raises(sotto.SottoError, match="suppress token 99999"):
        list(fw.transcribe(clips[0], beam_size=1, suppress_tokens=[99999])[0])
    with pytest.raises(TypeError, match="suppress_tokens"):
        fw.transcribe(clips[0], suppress_tokens="13")


def test_vad_parameters_take_every_vadoptions_field(fw, clips):
    # neg_threshold and max_speech_duration_s as vad.py applies them (python_fw_golden_more
    # holds them to faster-whisper's own segments); an unknown key is faster-whisper's TypeError
    segments, info = fw.transcribe(clips[0], vad_filter=True, beam_size=1,
                                   vad_parameters={"max_speech_duration_s": 3.0, "neg_threshold": 0.3,
                                                   "min_silence_duration_ms": 300})
    assert list(segments) and info.vad_options.max_speech_duration_s == 3.0
    with pytest.raises(TypeError):
        fw.transcribe(clips[0], vad_filter=True, vad_parameters={"max_speech": 3.0})


def test_split_stereo(clips, tmp_path):
    # faster-whisper's split_stereo: (left, right), on a file made with sox from two readers
    import made_audio

    d = os.path.dirname(clips[0])
    path = made_audio.stereo(d, str(tmp_path))
    left, right = decode_audio(path, split_stereo=True)
    a, b = (read_wav(os.path.join(d, c)) for c in made_audio.STEREO_CLIPS)
    n = max(len(a), len(b))
    assert len(left) == len(right) == n
    assert np.array_equal(left[:len(a)], a) and np.array_equal(right[:len(b)], b)  # each side alone, exactly
    assert not left[len(a):].any() and not right[len(b):].any()  # sox pads the shorter with silence
    mono, again = decode_audio(clips[0], split_stereo=True)  # a mono file: its samples twice
    assert np.array_equal(mono, again) and np.array_equal(mono, decode_audio(clips[0]))
    with open(path, "rb") as f:
        l2, r2 = decode_audio(f, split_stereo=True)
    assert np.array_equal(l2, left) and np.array_equal(r2, right)


def test_empty_audio(fw, tmp_path):
    # faster-whisper's test_empty_audio: no segments, no failure
    segments, info = fw.transcribe(np.zeros(0, dtype=np.float32))
    assert list(segments) == [] and info.duration == 0.0
    # a WAV of 0 frames: an empty array, as PyAV (faster-whisper) and ffmpeg (openai) give
    import wave

    empty = str(tmp_path / "empty.wav")
    with wave.open(empty, "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
    assert decode_audio(empty).shape == (0,) and whisper.load_audio(empty).shape == (0,)
    left, right = decode_audio(empty, split_stereo=True)
    assert left.shape == right.shape == (0,)
    segments, info = fw.transcribe(empty)
    assert list(segments) == [] and info.duration == 0.0


def test_detect_language(fw, models_dir, clips):
    assert fw.detect_language(read_wav(clips[0]))[:2] == ("en", 1.0)
    if not os.path.isdir(os.path.join(models_dir, "base-ct2")):
        pytest.skip("no base model")
    base = WhisperModel("base", device="cpu", cpu_threads=2)
    fr = os.path.join(os.path.dirname(clips[0]), "lang", "espeak-ng-fr.wav")
    lang, prob, probs = base.detect_language(decode_audio(fr))
    assert lang == "fr" and 0.5 < prob <= 1.0 and probs[0] == (lang, prob)
    segments, info = base.transcribe(fr, beam_size=1)
    engine = base._model.transcribe(fr, beam_size=1)[1]  # openai's detection (silence's log-mel after
    assert (engine.language, engine.language_detected) == ("fr", True)  # the clip, not zeros): the same language
    assert info.language == "fr" and info.language_probability == pytest.approx(prob)
    assert info.all_language_probs == probs and len(probs) == len(base.supported_languages)
    assert [p for _, p in probs] == sorted((p for _, p in probs), reverse=True)
    assert sum(p for _, p in probs) == pytest.approx(1.0, abs=1e-4)
    assert list(segments)


def test_model_names_and_errors(models_dir, model_path, tmp_path, monkeypatch):
    monkeypatch.setenv("SOTTO_MODELS_DIR", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="installed: none"):
        WhisperModel("tiny.en")
    assert WhisperModel("tiny.en", download_root=models_dir).model_path == model_path
    monkeypatch.setenv("SOTTO_MODELS_DIR", models_dir)
    with pytest.raises(FileNotFoundError, match="installed: .*tiny.en"):
        WhisperModel("large-v9")
    assert "tiny.en" in sotto.installed_models() and "tiny.en" in whisper.available_models()
    with pytest.raises(NotImplementedError, match="compute_type='bfloat16'"):
        WhisperModel("tiny.en", compute_type="bfloat16")
    with pytest.raises(ValueError, match="Invalid compute type: bogus"):  # CTranslate2's errors
        WhisperModel("tiny.en", compute_type="bogus")
    with pytest.raises(ValueError, match="unsupported device tpu"):
        WhisperModel("tiny.en", device="tpu")
    # the devices are the build's backends (sotto._sotto.backends(), as `sotto info --devices`),
    # cuda the first that is not the CPU: no backend's name is written into the package
    from sotto import _sotto
    from sotto._model import _gpu_backend
    assert _sotto.backends()[0] == "cpu" and _gpu_backend(["cpu", "metal", "vulkan"]) == "metal"
    assert _gpu_backend(["cpu"]) == "vulkan"  # none: the engine says it is not built in
    with pytest.raises(NotImplementedError, match="revision"):
        WhisperModel("tiny.en", revision="main")
    with pytest.raises(NotImplementedError, match="flash_attention"):
        WhisperModel("tiny.en", flash_attention=True)


def test_compute_type_converts_once(model_path, clips, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    m = WhisperModel(model_path, device="cpu", compute_type="int8", cpu_threads=2)
    assert m.model_path.startswith(str(tmp_path)) and m.model_path.endswith(".q8_0.gguf")
    assert m._model._model.weight_types() == ("q8_0", "q8_0")
    stamp = os.stat(m.model_path).st_mtime_ns
    again = WhisperModel(model_path, device="cpu", compute_type="int8_float16", cpu_threads=2)
    assert again.model_path == m.model_path and os.stat(m.model_path).st_mtime_ns == stamp  # reused
    text = "".join(s.text for s in m.transcribe(clip(clips, "librivox-0870.wav"), beam_size=1)[0])
    assert "Dashwood" in text
    assert WhisperModel(model_path, device="cpu", compute_type="default").model_path == model_path


# ---- openai-whisper ------------------------------------------------------------------


def _golden(name: str) -> Dict[str, Any]:
    with open(os.path.join(os.environ["SOTTO_TEST_GOLDEN"], "transcribe", "tiny.en", name), encoding="utf-8") as f:
        return json.load(f)


def _same_segments(got: Dict[str, Any], ref: Dict[str, Any]) -> None:
    # tests/test_longform.py's exact mode, on the dict openai's transcribe() returns
    assert set(got) == {"text", "segments", "language"}
    assert got["language"] == ref["language"] and got["text"] == ref["text"]
    assert len(got["segments"]) == len(ref["segments"])
    for g, r in zip(got["segments"], ref["segments"]):
        assert set(g) == set(r) | ({"words"} if "words" in g else set())
        assert (g["id"], g["seek"], g["text"], g["tokens"]) == (r["id"], r["seek"], r["text"], r["tokens"])
        assert g["start"] == pytest.approx(r["start"], abs=1e-9) and g["end"] == pytest.approx(r["end"], abs=1e-9)
        assert g["temperature"] == r["temperature"]
        assert g["avg_logprob"] == pytest.approx(r["avg_logprob"], abs=1e-3)


def test_openai_script_long_form(model_path):
    # an openai-whisper script, unchanged but for the import, on long2 (168 s): greedy as
    # openai's transcribe() made the golden, with its own keyword arguments
    ref = _golden("long2.greedy.json")
    audio = os.path.join(os.environ["SOTTO_TEST_LONGAUDIO"], "long2.wav")
    model = whisper.load_model(model_path, device="cpu", threads=2)
    result = model.transcribe(audio, **ref["meta"]["transcribe_kwargs"])
    _same_segments(result, ref)
    assert whisper.transcribe(model, audio, **ref["meta"]["transcribe_kwargs"]) == result


def test_openai_word_timestamps(model_path, clips):
    ref = _golden("librivox-0870.words.json")
    model = whisper.load_model(model_path, device="cpu")
    result = model.transcribe(whisper.load_audio(clip(clips, "librivox-0870.wav")), **ref["meta"]["transcribe_kwargs"])
    _same_segments(result, ref)
    for g, r in zip(result["segments"], ref["segments"]):
        assert [w["word"] for w in g["words"]] == [w["word"] for w in r["words"]]
        for gw, rw in zip(g["words"], r["words"]):
            assert abs(gw["start"] - rw["start"]) <= 0.02 + 1e-9 and abs(gw["end"] - rw["end"]) <= 0.02 + 1e-9
            assert gw["probability"] == pytest.approx(rw["probability"], abs=2e-4)
    with pytest.raises(TypeError, match="unexpected"):
        model.transcribe(clips[0], no_such_option=1)


def test_openai_options_checked_as_openai_does(model_path, clips, models_dir, tmp_path, monkeypatch):
    model = whisper.load_model(model_path, device="cpu")
    audio = clip(clips, "librivox-0870.wav")
    with pytest.raises(ValueError, match="patience requires beam_size"):
        model.transcribe(audio, patience=2.0)
    model.transcribe(audio, temperature=0.5, patience=2.0, sample_len=4)  # no decode at 0: openai drops it
    with pytest.raises(ValueError, match="length_penalty .alpha. should be a value between 0 and 1"):
        model.transcribe(audio, beam_size=5, length_penalty=2.0)
    for name in ("beam_size", "best_of"):  # was read as 1
        with pytest.raises(ValueError, match=name):
            model.transcribe(audio, **{name: 0})
    # openai's falsy max_initial_timestamp: no bound
    assert model.transcribe(audio, max_initial_timestamp=None, temperature=0.0)["text"]
    # openai's warning for words of a translation (an English-only model transcribes anyway)
    with pytest.warns(UserWarning, match="Word-level timestamps on translations may not be reliable"):
        model.transcribe(audio, task="translate", word_timestamps=True, sample_len=4, temperature=0.0)
    # a prompt among the decode options: openai's transcribe() overwrites it with each
    # window's own, so it changes nothing; its prefix (every window's) is not supported
    plain = model.transcribe(audio, temperature=0.0)
    assert model.transcribe(audio, temperature=0.0, prompt=[1770, 13, 1757])["segments"] == plain["segments"]
    with pytest.raises(NotImplementedError, match="prefix"):
        model.transcribe(audio, prefix="And")
    # a name that is not installed: openai's RuntimeError, and a FileNotFoundError
    monkeypatch.setenv("SOTTO_MODELS_DIR", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    for cls in (RuntimeError, FileNotFoundError, sotto.SottoError):
        with pytest.raises(cls, match="no model 'tiny'"):
            whisper.load_model("tiny")


def test_openai_verbose_prints_segments(model_path, clips, capsys):
    model = whisper.load_model(model_path, device="cpu")
    result = model.transcribe(clip(clips, "librivox-0870.wav"), temperature=0.0, verbose=True)
    out = capsys.readouterr().out
    assert out.startswith("[00:00.000 --> ") and result["segments"][0]["text"] in out
    # openai's format_timestamp: the hours from an hour on
    assert sotto.whisper._timestamp(3599.9994) == "59:59.999" and sotto.whisper._timestamp(3600) == "01:00:00.000"


def test_openai_verbose_prints_language(models_dir, clips, capsys):
    """openai's transcribe() prints the language it detects (verbose True or False), and
    with True the line before; nothing where the language is given or the model is
    English-only."""
    if not os.path.isdir(os.path.join(models_dir, "base-ct2")):
        pytest.skip("no base-ct2")
    base = whisper.load_model("base", device="cpu", download_root=models_dir)
    audio = clip(clips, "librivox-0870.wav")
    result = base.transcribe(audio, temperature=0.0, verbose=True)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["Detecting language using up to the first 30 seconds. Use `--language` to specify the "
                         "language", "Detected language: English"] and lines[2].startswith("[00:00.000 --> ")
    assert result["language"] == "en"
    base.transcribe(audio, temperature=0.0, verbose=False)
    assert capsys.readouterr().out == "Detected language: English\n"
    base.transcribe(audio, temperature=0.0, verbose=False, language="en")
    assert capsys.readouterr().out == ""
    assert sotto._sotto.language_name("ht").title() == "Haitian Creole" and sotto._sotto.language_name("xx") is None


def test_openai_model_and_options(model_path, clips):
    # openai's model.dims (ModelDimensions, attributes); an English-only model transcribes
    # English whatever language and task say (openai's tokenizer has neither), the result's
    # language the one given, as openai's
    model = whisper.load_model(model_path, device="cpu")
    assert model.dims.n_mels == 80 and model.dims.n_text_layer == 4 and model.dims["n_vocab"] == 51864
    path = clip(clips, "librivox-0870.wav")
    plain = model.transcribe(path, temperature=0.0)
    other = model.transcribe(path, temperature=0.0, language="fr", task="translate")
    assert other["text"] == plain["text"] and other["language"] == "fr" and plain["language"] == "en"



def test_cli_channel_each(cli, model_path, clips, tmp_path):
    # `sotto transcribe --channel each` on a two-channel file made with sox, a reader per
    # side: both transcripts, each the transcript of its clip alone, labelled, merged by
    # time, in every output format; --channel left/right give one side
    import subprocess

    import made_audio

    d = os.path.dirname(clips[0])
    stereo = made_audio.stereo(d, str(tmp_path))
    base = [cli, "transcribe", "-m", model_path, "--device", "cpu", "-t", "2", "--quiet", "--no-silence-check"]

    def run(*args: str) -> str:
        return subprocess.run([*base, *args], check=True, capture_output=True, text=True).stdout

    left, right = (run("-f", "txt", os.path.join(d, c)).strip() for c in made_audio.STEREO_CLIPS)
    assert run("--channel", "left", stereo).strip() == left and run("--channel", "2", stereo).strip() == right
    out = tmp_path / "out"
    run("--channel", "each", "-f", "all", "--output-dir", str(out), stereo)
    assert (out / "stereo.txt").read_text().splitlines() == [f"[left] {left}", f"[right] {right}"]
    for ext in ("srt", "vtt", "tsv", "json", "lrc"):
        text = (out / f"stereo.{ext}").read_text()
        assert "[left] And Mr. John Dashwood" in text and "[right] Unless" in text, ext
    merged = json.loads((out / "stereo.json").read_text())
    segments = merged["segments"]
    assert merged["text"] == " ".join(s["text"] for s in segments)  # a space where each label took one
    assert [s["id"] for s in segments] == list(range(len(segments)))
    assert [s["start"] for s in segments] == sorted(s["start"] for s in segments)
    r = subprocess.run([*base, "--channel", "3", stereo], capture_output=True, text=True)
    assert r.returncode == 1 and "channel 3 of a 2-channel stream" in r.stderr


def test_cli_channel_with_directories_and_jobs(cli, model_path, clips, tmp_path):
    # --channel in batch mode: a directory of two stereo files on -j 2 contexts, each file
    # transcribed per channel (each: both sides labelled; right: the right side alone)
    import subprocess

    import made_audio

    d = os.path.dirname(clips[0])
    src = tmp_path / "in"
    src.mkdir()
    stereo = made_audio.stereo(d, str(src))
    subprocess.run(["sox", stereo, str(src / "swapped.wav"), "remix", "2", "1"], check=True, capture_output=True)
    base = [cli, "transcribe", "-m", model_path, "--device", "cpu", "-t", "1", "--quiet", "--no-silence-check"]
    left, right = (subprocess.run([*base, "-f", "txt", os.path.join(d, c)], check=True, capture_output=True,
                                  text=True).stdout.strip() for c in made_audio.STEREO_CLIPS)
    each, one = tmp_path / "each", tmp_path / "right"
    subprocess.run([*base, "--channel", "each", "-j", "2", "-f", "txt", "-f", "json", "--output-dir", str(each),
                    str(src)], check=True, capture_output=True, text=True)
    assert (each / "stereo.txt").read_text().splitlines() == [f"[left] {left}", f"[right] {right}"]
    assert sorted((each / "swapped.txt").read_text().splitlines()) == sorted([f"[left] {right}", f"[right] {left}"])
    assert "[right] Unless" in (each / "stereo.json").read_text()
    subprocess.run([*base, "--channel", "right", "-j", "2", "--output-dir", str(one), str(src)], check=True,
                   capture_output=True, text=True)
    assert (one / "stereo.txt").read_text().strip() == right and (one / "swapped.txt").read_text().strip() == left


def test_openai_more_options_equal_openais(model_path, clips):
    # openai's transcribe() options sotto took last (carry_initial_prompt: the initial
    # prompt at the head of every window's prompt, a long one cut as openai cuts it), on
    # a minute of clips joined: openai-whisper's own segments
    # (scripts/golden_openai_more.py, tests/golden/openai/tiny.en.json)
    import made_audio

    with open(os.path.join(os.environ["SOTTO_TEST_GOLDEN"], "openai", "tiny.en.json"), encoding="utf-8") as f:
        ref = json.load(f)
    model = whisper.load_model(model_path, device="cpu", threads=2)
    audio = made_audio.joined(os.path.dirname(clips[0]), made_audio.LONG_CLIPS)
    for case in ref["cases"]:
        _same_segments(model.transcribe(audio, **case["kwargs"]), case["result"])
