"""sotto.Stream: live transcription (``Model.stream``), the library's sotto_stream session.

Audio is fed as it arrives (``feed``), the end of it is said by ``finish``; each call runs
the decoding steps it makes due with the GIL released and returns the events they made,
which iterating over the stream also yields. The policy is LocalAgreement-2
(whisper_streaming): words two successive decodings agree on are committed ("final"
events, never revised), the rest is the "tentative" tail, replaced by the next one.
"""

from __future__ import annotations

from typing import Any, Iterator, List, NamedTuple, Tuple

from . import _sotto


class StreamWord(NamedTuple):
    """A word of an event, its times on the stream's timeline (seconds from its start)."""

    word: str
    start: float
    end: float
    probability: float


class StreamEvent(NamedTuple):
    """One event of a live transcription."""

    type: str
    """"final": committed words (the finals in order are the transcript); "tentative": the
    uncommitted tail now, replacing the previous tentative event (text may be "")"""
    start: float
    end: float
    text: str
    tokens: Tuple[int, ...]
    words: List[StreamWord]
    audio_time: float
    """seconds of audio fed when the event was made"""
    id: int
    """finals: 0, 1, ... in order"""


def _event(d: Any) -> StreamEvent:
    words = [StreamWord(*w) for w in d["words"]]
    return StreamEvent(d["type"], d["start"], d["end"], d["text"], d["tokens"], words, d["audio_time"], d["id"])


class Stream:
    """A live transcription session (made by :meth:`sotto.Model.stream`).

    ``feed(samples)`` takes 16 kHz mono float32 samples (a 1-D numpy array or a float32
    buffer) of any length; ``finish()`` ends the stream and commits everything. Both return
    the events they made; ``for event in stream`` yields the events made and not yet
    iterated. One thread at a time.
    """

    def __init__(self, native: Any) -> None:
        self._native = native
        self._queue: List[StreamEvent] = []
        self.finished = False

    def feed(self, samples: Any) -> List[StreamEvent]:
        from ._model import _samples

        events = [_event(d) for d in self._native.feed(_samples(samples))]
        self._queue.extend(events)
        return events

    def finish(self) -> List[StreamEvent]:
        events = [_event(d) for d in self._native.finish()]
        self._queue.extend(events)
        self.finished = True
        return events

    def __iter__(self) -> Iterator[StreamEvent]:
        while self._queue:
            yield self._queue.pop(0)

    @property
    def text(self) -> str:
        """Every committed word so far, joined."""
        return self._native.text

    @property
    def time(self) -> float:
        """Seconds of audio fed so far."""
        return self._native.time

    @property
    def steps(self) -> Tuple[int, float]:
        """(decoding steps run, audio seconds they decoded)."""
        return self._native.steps

    @property
    def device(self) -> str:
        return self._native.device


def open_stream(model: Any, vad: Any, threads: int, device: str, **kw: Any) -> Stream:
    native = _sotto.Stream(model, vad, threads, None if device == "auto" else device, **kw)
    return Stream(native)
