"""sotto.Model.transcribe against the sotto tool: file and numpy input, the options, the
errors, and threads from Python running at once on one model with the GIL released."""

from __future__ import annotations

import array
import os
import signal
import subprocess
import threading
import time
import wave
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

import sotto
from conftest import assert_same, cli_json, read_wav


def test_file_input_equals_cli_defaults(model, cli, model_path, vad_path, clips):
    # openai's defaults (beam 5, best of 5, temperature fallback)
    for clip in clips[-1:]:
        segments, info = model.transcribe(clip)
        assert_same(segments, info, cli_json(cli, model_path, vad_path, clip))
        assert info.language == "en" and not info.language_detected
        assert info.language_probability == 1.0  # English-only: as faster-whisper
        assert segments and segments[0].words is None


def test_numpy_input_equals_file_input(model, clips):
    clip = clips[-1]
    by_file = model.transcribe(clip, beam_size=1)
    samples = read_wav(clip)
    assert model.transcribe(samples, beam_size=1) == by_file
    # float64 is converted; a non-contiguous view is made contiguous; array('f') is a buffer
    assert model.transcribe(samples.astype(np.float64), beam_size=1) == by_file
    doubled = np.repeat(samples, 2)[::2]
    assert not doubled.flags["C_CONTIGUOUS"]
    assert model.transcribe(doubled, beam_size=1) == by_file
    assert model.transcribe(array.array("f", samples.tolist()), beam_size=1) == by_file
    assert by_file[1].duration == pytest.approx(len(samples) / 16000, abs=0.01)


@pytest.mark.parametrize(
    "kwargs, flags",
    [
        (dict(beam_size=1, temperature=0.0), ["--beam-size", "1", "--no-fallback"]),
        (dict(beam_size=3, patience=2.0, length_penalty=0.5), ["--beam-size", "3", "--patience", "2",
                                                                "--length-penalty", "0.5"]),
        (dict(without_timestamps=True, beam_size=1), ["--no-timestamps", "--beam-size", "1"]),
        (dict(initial_prompt="Mr. Dashwood, Elinor and Marianne.", condition_on_previous_text=False),
         ["--prompt", "Mr. Dashwood, Elinor and Marianne.", "--no-condition"]),
        (dict(temperature=0.5, best_of=2, seed=7, compression_ratio_threshold=None),
         ["--temperature", "0.5", "--no-fallback", "--best-of", "2", "--seed", "7",
          "--compression-ratio-threshold", "none"]),
        (dict(vad_filter=True, vad_parameters={"min_silence_duration_ms": 500, "speech_pad_ms": 200}),
         ["--vad", "--vad-min-silence-ms", "500", "--vad-speech-pad-ms", "200"]),
        (dict(vad_filter=True, vad_parameters={"max_speech_duration_s": 3, "neg_threshold": 0.3,
                                               "min_silence_duration_ms": 300}),
         ["--vad", "--vad-max-speech-s", "3", "--vad-neg-threshold", "0.3", "--vad-min-silence-ms", "300"]),
        (dict(language="en", max_initial_timestamp=0.0, sample_len=8, beam_size=1),
         ["-l", "en", "--max-initial-timestamp", "0", "--sample-len", "8", "--beam-size", "1"]),
    ],
)
def test_options_equal_cli(model, cli, model_path, vad_path, clips, kwargs, flags):
    clip = [c for c in clips if c.endswith("librivox-0870.wav")][0]
    segments, info = model.transcribe(clip, **kwargs)
    assert_same(segments, info, cli_json(cli, model_path, vad_path, clip, *flags))


def test_options_change_the_transcript(model, clips):
    clip = [c for c in clips if c.endswith("librivox-0870.wav")][0]
    base, _ = model.transcribe(clip, beam_size=1)
    short, _ = model.transcribe(clip, beam_size=1, sample_len=8)
    notime, _ = model.transcribe(clip, beam_size=1, without_timestamps=True)
    assert len(short[0].tokens) < len(base[0].tokens)
    assert all(t < 50363 for t in notime[0].tokens[1:])  # no timestamp tokens after <|notimestamps|>


def test_initial_prompt_as_token_ids(model, clips):
    """Ids go before the first window as they are: the text's own ids (" " + it) decode as
    the text does; ids outside the vocabulary, or not ints, are refused."""
    clip = [c for c in clips if c.endswith("librivox-0870.wav")][0]
    text = "Mr. Dashwood, Elinor and Marianne."
    by_text, _ = model.transcribe(clip, beam_size=1, initial_prompt=text)
    ids = [1770, 13, 16189, 3822, 11, 2574, 259, 273, 290, 37919, 710, 13]  # tiny.en's " " + text
    by_ids, _ = model.transcribe(clip, beam_size=1, initial_prompt=ids)
    plain, _ = model.transcribe(clip, beam_size=1)
    assert [s.tokens for s in by_ids] == [s.tokens for s in by_text]
    assert [s.avg_logprob for s in by_ids] == [s.avg_logprob for s in by_text] != [s.avg_logprob for s in plain]
    with pytest.raises(ValueError, match=r"initial prompt token 60000 \(at 1\): not an id"):
        model.transcribe(clip, initial_prompt=[13, 60000])
    with pytest.raises(ValueError, match="each an int >= 0"):
        model.transcribe(clip, initial_prompt=[13, "a"])
    with pytest.raises(TypeError, match="not bytes"):
        model.transcribe(clip, initial_prompt=b"13")


def test_ffmpeg_log_lines_are_silenced(model, clips, tmp_path, capfd):
    # an MP3 without a Xing header: FFmpeg logs "[mp3 @ 0x...] Estimating duration from bitrate"
    mp3 = tmp_path / "noxing.mp3"
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", clips[0], "-c:a", "libmp3lame",
                    "-write_xing", "0", str(mp3)], check=True)
    capfd.readouterr()
    segments, _ = model.transcribe(str(mp3), beam_size=1)
    err = capfd.readouterr().err
    assert segments and " @ 0x" not in err and "Estimating duration" not in err, err


def test_errors_carry_the_engines_message(model, model_path, tmp_path):
    with pytest.raises(sotto.SottoError, match="no-such.wav") as e:
        model.transcribe(str(tmp_path / "no-such.wav"))
    assert e.value.status == "i/o error"
    garbage = tmp_path / "garbage.wav"
    garbage.write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunkjunkjunk")
    with pytest.raises(sotto.SottoError, match="garbage.wav"):
        model.transcribe(str(garbage))
    with pytest.raises(sotto.SottoError, match="no-model.gguf"):
        sotto.Model(str(tmp_path / "no-model.gguf"))
    with pytest.raises(sotto.SottoError, match="device"):
        sotto.Model(model_path, device="vulkan:99")
    with pytest.raises(TypeError, match="int16"):
        model.transcribe(np.zeros(16000, dtype=np.int16))
    with pytest.raises(ValueError, match="1-D"):
        model.transcribe(np.zeros((2, 16000), dtype=np.float32))
    with pytest.raises(TypeError, match="float32"):
        model.transcribe(array.array("d", [0.0] * 100))
    with pytest.raises(ValueError, match="finite"):
        model.transcribe(np.full(16000, np.nan, dtype=np.float32))
    with pytest.raises(TypeError, match="decode_audio"):  # a file's contents, not its path
        model.transcribe(b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00")
    with pytest.raises(ValueError, match="NaN or infinity at sample 3"):  # any float32 buffer, not only numpy's
        model.transcribe(array.array("f", [0.0, 0.0, 0.0, float("inf")]))
    with pytest.raises(TypeError, match="language must be a str"):
        model.transcribe(str(garbage), language=5)
    with pytest.raises(ValueError, match="beam_size"):
        model.transcribe(str(garbage), beam_size=0)
    with pytest.raises(ValueError, match="task"):
        model.transcribe(str(garbage), task="summarize")
    with pytest.raises(ValueError, match="temperature"):
        model.transcribe(str(garbage), temperature=[0.0] * 17)
    with pytest.raises(ValueError, match="patience"):  # the library's check, before the audio is read
        model.transcribe(str(garbage), patience=0.0)
    with pytest.raises(ValueError, match="temperature"):
        model.transcribe(str(garbage), temperature=float("nan"))
    # every number named when it is not one, or out of range, before the engine's parser
    # ("argument 17 must be int", a bare OverflowError, "0.5" read a character at a time)
    for kwargs, error, name in ((dict(patience="1"), TypeError, "patience"), (dict(patience=1e30), ValueError, "patience"),
                                (dict(seed="1"), TypeError, "seed"), (dict(sample_len=10 ** 12), ValueError, "sample_len"),
                                (dict(max_new_tokens=2.5), TypeError, "max_new_tokens"),
                                (dict(temperature="0.5"), TypeError, "temperature"),
                                (dict(temperature=None), TypeError, "temperature"),
                                (dict(max_initial_timestamp="1"), TypeError, "max_initial_timestamp"),
                                (dict(word_timestamps=True, hallucination_silence_threshold="x"), TypeError,
                                 "hallucination_silence_threshold")):
        with pytest.raises(error, match=name):
            model.transcribe(str(garbage), **kwargs)
    # numpy's scalars and arrays are numbers and sequences of them: taken as before
    with pytest.raises(sotto.SottoError, match="garbage"):  # past every option check, to the audio
        model.transcribe(str(garbage), temperature=np.arange(0.0, 1.0, 0.5), seed=np.int64(3),
                         patience=np.float32(1.5), beam_size=2)
    with pytest.raises(ValueError, match="vad_parameters"):
        model.transcribe(str(garbage), vad_parameters={"treshold": 0.4})
    with pytest.raises(TypeError, match="vad_parameters\\['threshold'\\]"):
        model.transcribe(str(garbage), vad_parameters={"threshold": "x"})
    with pytest.raises(TypeError, match="append_punctuations"):
        model.transcribe(str(garbage), word_timestamps=True, append_punctuations=None)
    with pytest.raises(ValueError, match="hallucination_silence_threshold"):
        model.transcribe(str(garbage), word_timestamps=True, hallucination_silence_threshold=-1.0)
    with pytest.raises(ValueError, match="Silero VAD"):
        sotto.Model(model_path, vad_model=False).transcribe(str(garbage), vad_filter=True)
    with pytest.raises(ValueError, match="threads"):
        sotto.Model(model_path, threads=-1)
    # what only the engine can judge: a ValueError (bad options are) and a SottoError
    for kwargs in (dict(language="de"), dict(task="translate"), dict(suppress_tokens=[10 ** 6])):
        for cls in (ValueError, sotto.SottoError):
            with pytest.raises(cls):
                model.transcribe(array.array("f", [0.0] * 16000), **kwargs)
    with pytest.raises(ValueError, match="threads"):  # (a bare OverflowError before)
        sotto.Model(model_path, threads=2 ** 40)
    with pytest.raises(sotto.SottoError, match="garbage"):  # numpy's ints as counts: past the checks
        sotto.Model(model_path, threads=np.int64(2)).transcribe(str(garbage), beam_size=np.int64(2),
                                                               best_of=np.int32(2))


def test_close_repr_and_pickle(model_path, vad_path, clips):
    # close() lets the memory go (a with block closes); afterwards every call is refused;
    # pickled as how it was made (loaded again from its file)
    import pickle

    with sotto.Model(model_path, threads=2, vad_model=vad_path) as m:
        text = m.transcribe(clips[0], beam_size=1)[1].text
        assert repr(m) == f"sotto.Model({model_path!r}, threads=2, device='auto')"
        again = pickle.loads(pickle.dumps(m))
        assert again.has_vad and again.transcribe(clips[0], beam_size=1)[1].text == text
    assert "closed" in repr(m)
    for call in (lambda: m.transcribe(clips[0]), lambda: m.stream(), m.info):
        with pytest.raises(sotto.SottoError, match="closed"):
            call()
    m.close()  # twice: nothing more


def test_a_model_by_its_installed_name(model_path, clips, monkeypatch):
    # sotto.Model("tiny.en") as WhisperModel("tiny.en") and the tool's -m tiny.en: NAME.gguf
    # in $SOTTO_MODELS_DIR (or setup's folder); an unknown name is a FileNotFoundError
    monkeypatch.setenv("SOTTO_MODELS_DIR", os.path.dirname(model_path))
    name = os.path.basename(model_path)[: -len(".gguf")]
    m = sotto.Model(name, threads=2)
    assert m.path == os.path.join(os.path.dirname(model_path), name + ".gguf")
    assert m.transcribe(clips[0], beam_size=1)[1].text
    with pytest.raises(FileNotFoundError, match="no model 'no-such-model'"):
        sotto.Model("no-such-model")


def test_a_truncated_wav_is_transcribed_with_a_warning(model, clips, tmp_path):
    # issue 23: what a cut WAV holds, as ffmpeg reads it, and the library's warning
    cut = tmp_path / "cut.wav"
    clip = next(c for c in clips if c.endswith("librivox-0870.wav"))
    with open(clip, "rb") as f:
        cut.write_bytes(f.read()[:100000])
    with pytest.warns(RuntimeWarning, match=r"cut\.wav: data chunk claims 227200 bytes but only 99956 follow"):
        segments, info = model.transcribe(str(cut), beam_size=1)
    assert "Dashwood" in "".join(s.text for s in segments)
    assert abs(info.duration - 49978 / 16000) < 1e-6


def test_junk_after_a_file_is_skipped_as_ffmpeg_skips_it(model, clips, tmp_path):
    # a whole FLAC with 500 zero bytes after it: openai-whisper's ffmpeg command and
    # faster-whisper's PyAV loop read every sample; so do the drop-ins, with a warning
    from sotto.whisper import load_audio
    clip = next(c for c in clips if c.endswith("librivox-0870.wav"))
    flac = tmp_path / "talk.flac"
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", clip, str(flac)], check=True)
    flac.write_bytes(flac.read_bytes() + bytes(500))
    ref = subprocess.run(["ffmpeg", "-nostdin", "-threads", "0", "-i", str(flac), "-f", "s16le", "-ac", "1",
                          "-acodec", "pcm_s16le", "-ar", "16000", "-"], capture_output=True, check=True).stdout
    with pytest.warns(RuntimeWarning, match=r"talk\.flac: 1 packet of its flac stream did not decode"):
        got = load_audio(str(flac))
    assert np.array_equal(got, np.frombuffer(ref, "<i2").astype(np.float32) / 32768)
    with pytest.warns(RuntimeWarning, match="did not decode"):
        segments, _ = model.transcribe(str(flac), beam_size=1)
    assert "Dashwood" in "".join(s.text for s in segments)


def assert_same_words(segments: List[sotto.Segment], ref: Dict[str, Any]) -> None:
    """Every segment's words are the tool's (--word-timestamps -f json): the text exactly,
    the times to the millisecond, the probability to 1e-6."""
    assert len(segments) == len(ref["segments"])
    for s, r in zip(segments, ref["segments"]):
        assert s.words is not None and len(s.words) == len(r["words"]), s.text
        for w, rw in zip(s.words, r["words"]):
            assert isinstance(w, sotto.Word)
            assert w.word == rw["word"]
            assert w.start == pytest.approx(rw["start"], abs=5e-4) and w.end == pytest.approx(rw["end"], abs=5e-4)
            assert w.probability == pytest.approx(rw["probability"], abs=1e-6)


def test_word_timestamps_equal_cli(model, cli, model_path, vad_path, clips):
    # openai's defaults (beam 5, fallback) with word_timestamps; numpy input gives the same
    clip = [c for c in clips if c.endswith("librivox-0870.wav")][0]
    seen: List[sotto.Segment] = []
    segments, info = model.transcribe(clip, word_timestamps=True, on_segment=seen.append)
    ref = cli_json(cli, model_path, vad_path, clip, "--word-timestamps")
    assert_same(segments, info, ref)
    assert_same_words(segments, ref)
    assert sum(len(s.words or []) for s in segments) > 10
    assert seen == segments  # on_segment's segments carry the words too
    assert model.transcribe(read_wav(clip), word_timestamps=True) == (segments, info)


def test_punctuations_equal_cli(model, cli, model_path, vad_path, clips):
    # no punctuation merged: the full stops are words of their own, as the tool's
    clip = [c for c in clips if c.endswith("librivox-0870.wav")][0]
    segments, info = model.transcribe(clip, beam_size=1, word_timestamps=True, prepend_punctuations="",
                                      append_punctuations="")
    ref = cli_json(cli, model_path, vad_path, clip, "--beam-size", "1", "--word-timestamps",
                   "--prepend-punctuations", "", "--append-punctuations", "")
    assert_same(segments, info, ref)
    assert_same_words(segments, ref)
    assert "." in [w.word for s in segments for w in s.words or []]


def test_hallucination_silence_threshold_equals_cli(model, cli, model_path, vad_path, clips, tmp_path):
    # 2 s of silence, a clip at double speed (tiny.en makes an improbable " I'm going to go
    # to the next one." of it), 3 s of silence, a clip: with the threshold the anomalous
    # first segment is skipped, as the tool skips it; numpy input against the tool's WAV
    fast, tail = [read_wav(c) for c in clips[3:5]]
    samples = np.concatenate([np.zeros(32000, np.float32), fast[::2], np.zeros(48000, np.float32), tail])
    path = str(tmp_path / "hallucination.wav")
    with wave.open(path, "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes(np.round(samples * 32768).astype("<i2").tobytes())
    segments, info = model.transcribe(samples, beam_size=1, temperature=0.0, word_timestamps=True,
                                      hallucination_silence_threshold=1.0)
    ref = cli_json(cli, model_path, vad_path, path, "--beam-size", "1", "--no-fallback", "--word-timestamps",
                   "--hallucination-silence-threshold", "1")
    assert_same(segments, info, ref)
    assert_same_words(segments, ref)
    assert segments and segments[0].start > 8.0  # the hallucination before 8 s is gone


def test_default_model_is_the_tools(model_path, tmp_path, monkeypatch):
    monkeypatch.setenv("SOTTO_MODEL", model_path)
    assert sotto.default_model_path() == model_path
    assert sotto.Model(threads=1).info()["n_mels"] == 80
    monkeypatch.delenv("SOTTO_MODEL")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert sotto.default_model_path() == str(tmp_path / "sotto" / "models" / "tiny.en.gguf")
    with pytest.raises(FileNotFoundError, match="SOTTO_MODEL"):
        sotto.Model()


def test_threads_run_at_once(model, clips):
    # serial references, then 4 threads on one Model (4 contexts, one model)
    chosen = clips[:4]
    serial = {c: model.transcribe(c, beam_size=1) for c in chosen}
    results: Dict[str, Tuple] = {}
    errors: List[BaseException] = []

    def work(clip: str) -> None:
        try:
            results[clip] = model.transcribe(clip, beam_size=1)
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(c,)) for c in chosen]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == serial
    assert len(model._free) >= 2  # contexts were made for the threads and returned


def test_vad_model_true_needs_the_installed_one(model_path, vad_path, tmp_path, monkeypatch):
    monkeypatch.setenv("SOTTO_VAD_MODEL", vad_path)
    assert sotto.Model(model_path, vad_model=True)._vad is not None
    monkeypatch.setenv("SOTTO_VAD_MODEL", str(tmp_path / "none.gguf"))  # asked for and absent: said, not none
    with pytest.raises(FileNotFoundError, match="vad_model=True"):
        sotto.Model(model_path, vad_model=True)


def test_idle_contexts_are_bounded(model_path, clips):
    # beam sizes one after another leave the largest context alone (each call made one:
    # 12 contexts, 123 -> 912 MB for beams 1..16); threads at once keep one each
    m = sotto.Model(model_path, threads=1, vad_model=False)
    clip = clips[0]
    for beam in range(1, 7):
        m.transcribe(clip, beam_size=beam, best_of=1, temperature=0.0)
    assert [c.max_sequences for c in m._free] == [6]
    done = threading.Barrier(3)

    def work() -> None:
        m.transcribe(clip, beam_size=1, temperature=0.0, on_segment=lambda s: done.wait(60) and None)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(m._free) == 3 and m._peak == 3  # three out at once: three kept


def test_the_gil_is_released_while_the_engine_runs(model, clips):
    # one transcription in a thread; this thread ticks every 10 ms meanwhile. Holding the
    # GIL through the call would leave one gap as long as the call and no tick inside it;
    # a loaded machine only delays ticks, so the bound is half the call
    clip = [c for c in clips if c.endswith("librivox-0870.wav")][0]
    span: List[float] = []

    def work() -> None:
        span.append(time.monotonic())
        model.transcribe(clip, beam_size=5)
        span.append(time.monotonic())

    t = threading.Thread(target=work)
    ticks = [time.monotonic()]
    t.start()
    while t.is_alive():
        time.sleep(0.01)
        ticks.append(time.monotonic())
    t.join()
    start, end = span
    inside = [x for x in ticks if start < x < end]
    gaps = np.diff([start] + inside + [end])
    assert end - start > 0.2, "the transcription ended too soon to observe the GIL"
    assert len(inside) >= 5, f"{len(inside)} ticks in a {end - start:.2f} s transcription"
    assert gaps.max() < 0.5 * (end - start), f"this thread waited {gaps.max():.2f} s of a {end - start:.2f} s call"


@pytest.fixture(scope="module")
def long_audio(model, clips) -> Tuple[np.ndarray, List[sotto.Segment], List[sotto.Segment], bool]:
    """Every clip one after the other (57 s: two 30 s windows or more), its greedy
    transcript, the segments on_segment saw meanwhile, and whether it stopped."""
    samples = np.concatenate([read_wav(c) for c in clips])
    seen: List[sotto.Segment] = []
    segments, info = model.transcribe(samples, beam_size=1, on_segment=seen.append)
    return samples, segments, seen, info.stopped


def test_on_segment_streams_and_stops(model, clips, long_audio):
    samples, segments, seen, stopped = long_audio
    assert seen == segments and not stopped and segments[-1].end > 30
    first: List[sotto.Segment] = []
    part, info = model.transcribe(samples, beam_size=1, on_segment=lambda s: first.append(s) or True)
    assert info.stopped and len(first) == 1
    assert part == segments[:1] and info.text == segments[0].text
    # stopped at the 3rd segment: the 3 segments up to the stop, not the rest of its window
    assert len([s for s in segments if s.seek == 0]) > 3
    seen: List[sotto.Segment] = []
    part, info = model.transcribe(samples, beam_size=1, on_segment=lambda s: seen.append(s) or len(seen) == 3)
    assert info.stopped and part == seen == segments[:3]
    assert info.text == "".join(s.text for s in segments[:3])

    class Boom(Exception):
        pass

    def boom(s: sotto.Segment) -> None:
        raise Boom(s.text)

    with pytest.raises(Boom):
        model.transcribe(samples, beam_size=1, on_segment=boom)
    with pytest.raises(TypeError, match="callable"):
        model.transcribe(samples, on_segment=42)
    assert model.transcribe(clips[0], beam_size=1)[1].text  # the context is fine afterwards
    # batched: a chunk's segments stop at the one whose callback said so, as sequential
    calls: List[int] = []
    whole, _ = model.transcribe(samples, beam_size=1, batch_size=2)
    assert len(whole) > 2
    part, info = model.transcribe(samples, beam_size=1, batch_size=2,
                                  on_segment=lambda s: calls.append(s.id) or len(calls) == 2)
    assert info.stopped and calls == [0, 1] and part == whole[:2]


def test_clip_timestamps_as_text_and_samples_of_no_float_type(model, clips):
    # openai's and faster-whisper's "start,end" text, as a list of seconds (it had been read
    # a character at a time: "05" as clips at 0 and 5 s); what is not samples is refused
    x = read_wav(clips[0])
    listed, _ = model.transcribe(x, beam_size=1, clip_timestamps=[0.5, 3.0])
    texted, _ = model.transcribe(x, beam_size=1, clip_timestamps="0.5,3")
    assert listed == texted and listed and listed[0].start >= 0.5
    with pytest.raises(ValueError, match="clip_timestamps"):
        model.transcribe(x, clip_timestamps="0.5;3")
    with pytest.raises(TypeError, match="clip_timestamps"):
        model.transcribe(x, clip_timestamps=[{"start": 0, "end": 5}])
    for bad in (x > 0, x.astype(np.complex64), np.array(["a", "b"])):
        with pytest.raises(TypeError, match="float32"):
            model.transcribe(bad)


def test_ctrl_c_interrupts_after_the_window(model, long_audio):
    samples, segments, _, _ = long_audio
    seen: List[sotto.Segment] = []
    timer = threading.Timer(0.3, lambda: signal.raise_signal(signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            model.transcribe(samples, beam_size=1, on_segment=seen.append)
    finally:
        timer.cancel()
    assert len(seen) < len(segments) and seen == segments[: len(seen)]  # stopped at a window's end
