"""Model.stream: live transcription from Python. Fed in odd-sized chunks, the finals are
the transcript in order and the end flushes the tail; fed whole, it is the tool's `sotto
stream` of the same file; the GIL is released while it decodes; bad options and input
raise with the engine's message."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time

import numpy as np
import pytest

import sotto

from conftest import read_wav


def _clip(clips, name):
    return next(c for c in clips if os.path.basename(c) == name)


def test_chunks_commit_in_order_and_the_end_flushes(model, clips):
    x = read_wav(_clip(clips, "librivox-0870.wav"))
    s = model.stream(min_step=1.0)
    seen = []
    for i in range(0, len(x), 2777):
        s.feed(x[i : i + 2777])
        seen.extend(s)
    seen.extend(s.finish())
    finals = [e for e in seen if e.type == "final"]
    assert finals and [e.id for e in finals] == list(range(len(finals)))
    assert "".join(e.text for e in finals) == s.text
    ends = [w.end for e in finals for w in e.words]
    assert ends == sorted(ends) and 0 <= ends[0] and ends[-1] <= len(x) / 16000 + 0.1
    assert seen[-1].type == "tentative" and seen[-1].text == "" and not seen[-1].words
    for word in ("dashwood", "leisure", "prudently"):
        assert word in s.text.lower()
    assert isinstance(finals[0].words[0], sotto.StreamWord) and finals[0].tokens
    assert all(e.language == "en" for e in seen)  # tiny.en: English, in every event
    assert s.time == pytest.approx(len(x) / 16000)
    with pytest.raises(sotto.SottoError, match="finished"):
        s.feed(x[:100])
    assert s.finish() == []  # finished already: nothing more


def test_a_feed_longer_than_a_window_is_heard_whole(model, clips):
    # a minute fed at once: a step each time the buffer fills max_buffer (25 s), none of
    # it cut away unheard (one step over all 59 s had heard its first 30 s alone, and the
    # trim after it cut away what came after: 28-49 s of it lost)
    import made_audio

    x = made_audio.joined(os.path.dirname(clips[0]), made_audio.LONG_CLIPS)
    s = model.stream(beam_size=1)
    s.feed(x)
    s.finish()
    assert s.steps[0] >= 2 and s.steps[1] > 58, s.steps
    text = s.text.lower()
    for words in ("leisure to consider", "ill-disposed young man", "cold-hearted", "more respectable",
                  "amiable himself", "apples", "children played", "paris", "stella", "o'clock"):
        assert words in text, (words, text)


def test_events_not_iterated_do_not_pile_up(model, clips):
    # a caller who reads only what feed returns: the queue keeps the finals and the last
    # tentative event, not every tentative one (115 events a minute of speech)
    x = read_wav(_clip(clips, "librivox-0870.wav"))
    s = model.stream(min_step=0.5)
    got = []
    for i in range(0, len(x), 1600):
        got.extend(s.feed(x[i : i + 1600]))
    queued = list(s)
    finals = [e for e in got if e.type == "final"]
    assert [e for e in queued if e.type == "final"] == finals
    assert [e.type for e in queued].count("tentative") <= 1 and len(got) > len(queued)


def test_whole_feed_equals_the_tool(model, cli, model_path, vad_path, clips):
    path = _clip(clips, "librivox-0880.wav")
    out = subprocess.run([cli, "stream", "-m", model_path, "--vad-model", vad_path, "--device", "cpu", "-t", "2",
                          "--min-step", "1", "--jsonl", path], check=True, capture_output=True, text=True).stdout
    tool = "".join(e["text"] for e in map(json.loads, out.splitlines()) if e["type"] == "final")
    x = read_wav(path)
    s = model.stream(min_step=1.0)
    for i in range(0, len(x), 1600):  # the tool reads a file a tenth of a second at a time
        s.feed(x[i : i + 1600])
    s.finish()
    assert s.text == tool


def test_hold_equals_the_tool(model, cli, model_path, vad_path, clips):
    # greedy: under beam 5 this clip's decodings of 2.3 s and 4.3 s drop the sentence's
    # first word ("And"), so nothing agrees, and so nothing commits, before the end
    path = _clip(clips, "librivox-0870.wav")
    out = subprocess.run([cli, "stream", "-m", model_path, "--vad-model", vad_path, "--device", "cpu", "-t", "2",
                          "--min-step", "1", "--hold", "3", "--beam-size", "1", "--jsonl", path], check=True,
                         capture_output=True, text=True).stdout
    tool = "".join(e["text"] for e in map(json.loads, out.splitlines()) if e["type"] == "final")
    x = read_wav(path)

    def first_final(hold):  # seconds of audio fed when the first words are committed
        s = model.stream(min_step=1.0, hold=hold, beam_size=1)
        at = None
        for i in range(0, len(x), 1600):
            s.feed(x[i : i + 1600])
            if at is None and any(e.type == "final" for e in s):
                at = (i + 1600) / 16000
        s.finish()
        return at, s.text

    at0, _ = first_final(0.0)
    at3, text = first_final(3.0)
    assert text == tool
    assert at0 is not None and at3 is not None and at3 >= 3.0 and at3 > at0, (at0, at3)
    with pytest.raises(sotto.SottoError, match="hold"):
        model.stream(hold=-1)
    with pytest.raises(sotto.SottoError, match="hold"):
        model.stream(hold=25.0)


def test_the_gil_is_released_while_decoding(model, clips):
    x = read_wav(_clip(clips, "librivox-0870.wav"))
    s = model.stream(vad=False, min_step=5.0)
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    t = threading.Thread(target=tick)
    t.start()
    t0 = time.monotonic()
    s.feed(x)  # one decoding of 7 s
    t1 = time.monotonic()
    stop.set()
    t.join()
    assert s.steps[0] == 1
    during = [u for u in ticks if t0 < u < t1]
    assert len(during) >= 0.3 * (t1 - t0) / 0.005, (len(during), t1 - t0)


def test_bad_options_and_input(model):
    with pytest.raises(sotto.SottoError, match="minimum step"):
        model.stream(min_step=0)
    with pytest.raises(sotto.SottoError, match="beam size 100"):  # named, not the context's max_sequences
        model.stream(beam_size=100)
    with pytest.raises(sotto.SottoError, match="English-only"):  # as transcribe refuses it
        model.stream(language="de")
    with pytest.raises(sotto.SottoError, match="klingon"):
        model.stream(language="klingon")
    with pytest.raises(sotto.SottoError, match="cannot translate"):  # as `sotto stream --task translate`
        model.stream(task="translate")
    with pytest.raises(ValueError, match="task must be"):
        model.stream(task="summarize")
    with pytest.raises(sotto.SottoError, match="bound"):
        model.stream(max_buffer=40)
    s = model.stream()
    with pytest.raises(TypeError, match="float32"):
        s.feed(np.zeros(10, dtype=np.int16))
    with pytest.raises(ValueError, match="1-D"):
        s.feed(np.zeros((2, 10), dtype=np.float32))
    assert s.feed(np.zeros(0, dtype=np.float32)) == []
