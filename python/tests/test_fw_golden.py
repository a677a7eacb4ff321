"""sotto.WhisperModel against faster-whisper 1.2.1 on the same CTranslate2 weights: every
case of tests/golden/faster-whisper/MODEL.json (scripts/golden_faster_whisper.py made
them: greedy and beam, hotwords, prefix, clip_timestamps, without_timestamps,
word_timestamps, max_new_tokens, multilingual on English then German, language
detection) must give faster-whisper's segments: the same text, tokens, seek and times;
scores within float noise (CTranslate2 and sotto round differently). Language
probabilities agree to 0.03 only: faster-whisper's log-mel pads the audio with 160 zero
samples, openai's and sotto's with 30 s, so a window's last frames differ a little."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any, Dict

import numpy as np
import pytest

import made_audio
from sotto import WhisperModel

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden", "faster-whisper")


def load(name: str) -> Dict[str, Any]:
    with open(os.path.join(GOLDEN, name + ".json")) as f:
        return json.load(f)


_audio: Dict[str, np.ndarray] = {}


def audio_of(name: str, clips: str, tmp: str) -> np.ndarray:
    if name not in _audio:
        if name == "long":
            _audio[name] = made_audio.joined(clips, made_audio.LONG_CLIPS)
        elif name == "long512":  # whole 512-sample windows, which vad.py pads with one window more
            x = made_audio.joined(clips, made_audio.LONG_CLIPS)
            _audio[name] = x[:len(x) // 512 * 512]
        elif name == "en_de":
            _audio[name] = made_audio.read_wav(made_audio.en_then_de(clips, tmp))
        else:
            _audio[name] = made_audio.read_wav(os.path.join(clips, name))
    return _audio[name]


def same_segments(got, want, case) -> None:
    where = f"{case['audio']} {case['kwargs']}"
    assert [s.text for s in got] == [s["text"] for s in want], where
    for g, w in zip(got, want):
        assert (g.id, g.seek, list(g.tokens)) == (w["id"], w["seek"], w["tokens"]), where
        assert g.start == pytest.approx(w["start"], abs=1e-9) and g.end == pytest.approx(w["end"], abs=1e-9), where
        assert g.avg_logprob == pytest.approx(w["avg_logprob"], abs=2e-3), where
        assert g.no_speech_prob == pytest.approx(w["no_speech_prob"], abs=2e-3), where
        assert g.compression_ratio == pytest.approx(w["compression_ratio"], abs=1e-9), where
        assert g.temperature == w["temperature"], where
        assert (g.words is None) == (w["words"] is None), where
        for gw, ww in zip(g.words or [], w["words"] or []):
            assert (gw.word, gw.start, gw.end) == (ww[2], ww[0], ww[1]), where
            assert gw.probability == pytest.approx(ww[3], abs=2e-3), where
        assert len(g.words or []) == len(w["words"] or []), where


def model_of(name: str, models_dir: str) -> WhisperModel:
    path = os.path.join(models_dir, name + "-ct2")
    if not os.path.isdir(path):
        pytest.skip(f"no {path}")
    return WhisperModel(path, device="cpu", cpu_threads=2)


def _cases():
    for name in ("tiny.en", "base"):
        for i, case in enumerate(load(name)["cases"]):
            kind = "long" if name == "base" or case["audio"] in ("long", "en_de") else "short"
            yield pytest.param(name, i, id=f"{kind}-{name}-{i}-{case['audio']}")


_models: Dict[str, WhisperModel] = {}


@pytest.mark.parametrize("name,index", _cases())
def test_segments_equal_faster_whispers(name, index, models_dir, clips_dir, tmp_path):
    case = load(name)["cases"][index]
    if name not in _models:
        _models[name] = model_of(name, models_dir)
    model = _models[name]
    segments, info = model.transcribe(audio_of(case["audio"], clips_dir, str(tmp_path)), **case["kwargs"])
    same_segments(list(segments), case["segments"], case)
    assert info.language == case["language"]
    # faster-whisper's features (its log-mel of the audio, zeros after in the feature domain)
    assert info.language_probability == pytest.approx(case["language_probability"], abs=2e-3)
    if case["all_language_probs"] is None:
        assert info.all_language_probs is None
    else:
        got = info.all_language_probs
        assert len(got) == len(model.supported_languages)
        assert got[0][0] == case["all_language_probs"][0][0]
        want = dict(case["all_language_probs"])
        for lang, p in got[:5]:
            assert p == pytest.approx(want.get(lang, 0.0), abs=2e-3)


def test_detect_language_equals_faster_whispers(models_dir, clips_dir, tmp_path):
    golden = load("base")
    model = model_of("base", models_dir)
    for d in golden["detect_language"]:
        lang, prob, probs = model.detect_language(audio_of(d["audio"], clips_dir, str(tmp_path)),
                                                  language_detection_segments=d["language_detection_segments"],
                                                  language_detection_threshold=d["language_detection_threshold"])
        assert (lang, len(probs)) == (d["language"], d["n_languages"]), d["audio"]
        assert prob == pytest.approx(d["probability"], abs=2e-3), d["audio"]
        want = dict(d["top5"])
        for c, p in probs[:3]:
            assert p == pytest.approx(want.get(c, 0.0), abs=2e-3), d["audio"]
        assert probs == sorted(probs, key=lambda lp: -lp[1])


def test_detected_language_logged(models_dir, clips_dir, tmp_path, caplog):
    import logging

    model = model_of("base", models_dir)
    x = audio_of("lang/espeak-ng-de.wav", clips_dir, str(tmp_path))
    with caplog.at_level(logging.INFO, logger="faster_whisper"):
        list(model.transcribe(x)[0])
    assert "Detected language 'de' with probability 0.59" in [r.getMessage() for r in caplog.records]


def test_detect_language_over_what_faster_whisper_looks_at(models_dir, clips_dir, tmp_path):
    # detect_language cuts the audio to its windows before the log-mel (normalised by what
    # is left); transcribe detects from the whole audio's features. On 30 s of quiet German
    # then loud English they differ (faster-whisper 1.2.1 said 0.8554 and 0.8461, as sotto)
    import numpy as np

    model = model_of("base", models_dir)
    de = audio_of("lang/espeak-ng-de.wav", clips_dir, str(tmp_path))
    en = audio_of("librivox-0870.wav", clips_dir, str(tmp_path))
    a = np.concatenate([de * 0.05] * 8 + [en] * 4).astype(np.float32)
    alone = model.detect_language(a, language_detection_threshold=0.99)
    assert alone == model.detect_language(a[:480000], language_detection_threshold=0.99)
    whole = model.detect_language(features=model.feature_extractor(a), language_detection_threshold=0.99)
    assert alone[0] == whole[0] == "de" and abs(alone[1] - whole[1]) > 1e-3
    _, info = model.transcribe(a, beam_size=1, language_detection_threshold=0.99)
    assert (info.language, info.language_probability) == whole[:2]


def test_detect_language_from_features(models_dir, clips_dir, tmp_path):
    # detect_language(features=...): the log-mel's first 3000 frames, zeros after; a clip's
    # log-mel (len // 160 + 1 frames, as faster-whisper's feature extractor makes them) says
    # what its samples say
    import numpy as np

    from sotto import _sotto

    model = model_of("base", models_dir)
    x = audio_of("lang/espeak-ng-de.wav", clips_dir, str(tmp_path))
    mel = np.frombuffer(_sotto.mel_window(x, 80), dtype=np.float32).reshape(80, 3000)[:, :len(x) // 160 + 1]
    lang, prob, probs = model.detect_language(features=mel)
    want = model.detect_language(x)
    assert lang == want[0] == "de" and prob == pytest.approx(want[1], abs=1e-6) and len(probs) == 99
    for bad in (mel[0], mel[:79]):
        with pytest.raises(ValueError, match="n_mels"):
            model.detect_language(features=bad)


@pytest.mark.parametrize("index,flags", [
    (2, ["--beam-size", "1", "--hotwords", "Dashwood Norland"]),
    (4, ["--beam-size", "1", "--prefix", "And Mister"]),
    (7, ["--beam-size", "1", "--clip-timestamps", "1.5,4"]),
    (8, ["--clip-timestamps", "0.5,3,4.2"]),
], ids=["short-cli-hotwords", "short-cli-prefix", "short-cli-clip", "short-cli-clips"])
def test_cli_flags_equal_faster_whispers(index, flags, cli, models_dir, clips_dir):
    # sotto transcribe's --hotwords, --prefix, --clip-timestamps: faster-whisper's segments
    case = load("tiny.en")["cases"][index]
    cmd = [cli, "transcribe", "-m", os.path.join(models_dir, "tiny.en-ct2"), "--device", "cpu", "-t", "2",
           "--no-silence-check", "-f", "json", "--quiet", *flags, os.path.join(clips_dir, case["audio"])]
    got = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["segments"]
    want = case["segments"]
    assert [(s["text"], s["tokens"], s["seek"]) for s in got] == [(s["text"], s["tokens"], s["seek"]) for s in want]
    times = [t for s in got for t in (s["start"], s["end"])]
    assert times == pytest.approx([t for s in want for t in (s["start"], s["end"])], abs=1e-6)


def test_cli_clip_timestamps_refuses_bad_lists(cli, models_dir, clips_dir):
    for bad in ("1,,2", "a", "-1", "1,2,", "nan"):
        r = subprocess.run([cli, "transcribe", "-m", os.path.join(models_dir, "tiny.en-ct2"), "--clip-timestamps", bad,
                            os.path.join(clips_dir, "librivox-0870.wav")], capture_output=True, text=True)
        assert r.returncode == 1 and "--clip-timestamps takes seconds >= 0" in r.stderr, (bad, r.stderr)


def test_openai_clip_timestamps_short(models_dir, clips_dir):
    # openai's transcribe(clip_timestamps=...) is the same loop over the clips as
    # faster-whisper's: greedy with openai's defaults gives faster-whisper's case
    import sotto as whisper

    case = load("tiny.en")["cases"][7]
    assert case["kwargs"] == {"beam_size": 1, "clip_timestamps": "1.5,4"}
    model = whisper.load_model(os.path.join(models_dir, "tiny.en-ct2"), device="cpu")
    result = model.transcribe(os.path.join(clips_dir, case["audio"]), clip_timestamps="1.5,4")
    assert [(s["seek"], s["text"], s["tokens"]) for s in result["segments"]] == [
        (s["seek"], s["text"], s["tokens"]) for s in case["segments"]]


def test_cli_batched_refuses_what_it_cannot_do_short(cli, models_dir, clips_dir):
    # the batched engine takes no prefix (the pipeline passes none on): refused, not ignored
    # (clips, multilingual, prompts, hotwords and the VAD's options it takes: test_fw_golden_more.py)
    for flags in (["--prefix", "x"],):
        r = subprocess.run([cli, "transcribe", "-m", os.path.join(models_dir, "tiny.en-ct2"), "--batch-size", "2",
                            *flags, os.path.join(clips_dir, "librivox-0870.wav")], capture_output=True, text=True)
        assert r.returncode == 1 and "batched decoding (batch size 2) takes no" in r.stderr, (flags, r.stderr)
