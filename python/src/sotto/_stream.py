"""sotto.Stream: live transcription (``Model.stream``), the library's sotto_stream session.

Audio is fed as it arrives (``feed``), the end of it is said by ``finish``; each call runs
the decoding steps it makes due with the GIL released and returns the events they made,
which iterating over the stream also yields. The policy is LocalAgreement-2
(whisper_streaming): words two successive decodings agree on are committed ("final"
events, never revised), the rest is the "tentative" tail, replaced by the next one.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Deque, Iterator, List, NamedTuple, Optional, Tuple

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
    language: Optional[str] = None
    """code of the language its words were decoded in ("en", "de"): the one given, else
    detected at each step until a step with words has heard ``hold`` seconds, then the
    session's"""


def _event(d: Any) -> StreamEvent:
    words = [StreamWord(*w) for w in d["words"]]
    return StreamEvent(d["type"], d["start"], d["end"], d["text"], d["tokens"], words, d["audio_time"], d["id"],
                       d["language"])


class Stream:
    """A live transcription session (made by :meth:`sotto.Model.stream`).

    ``feed(samples)`` takes 16 kHz mono float32 samples (a 1-D numpy array or a float32
    buffer) of any length; ``finish()`` ends the stream and commits everything. Both return
    the events they made; ``for event in stream`` yields the events made and not yet
    iterated: every final, and of the tentative events the last (each replaces the one
    before it), at most the last 4096 of them (a caller who only reads what ``feed``
    returns holds no growing queue). One thread at a time.
    """

    _KEPT = 4096  # events not iterated that are kept

    def __init__(self, native: Any) -> None:
        self._native = native
        self._queue: Deque[StreamEvent] = deque(maxlen=self._KEPT)
        self.finished = False

    def _keep(self, events: List[StreamEvent]) -> List[StreamEvent]:
        for e in events:
            if self._queue and self._queue[-1].type == "tentative":
                self._queue.pop()  # replaced: a tentative event is the uncommitted tail now
            self._queue.append(e)
        return events

    def feed(self, samples: Any) -> List[StreamEvent]:
        """Feeds SAMPLES (16 kHz mono, float32 or convertible, any length) and runs the
        decoding steps they make due (the GIL released); returns their events."""
        from ._model import _samples

        return self._keep([_event(d) for d in self._native.feed(_samples(samples))])

    def finish(self) -> List[StreamEvent]:
        """Ends the stream: the last decoding, every pending word committed; returns its
        events ([] when the stream is finished already)."""
        if self.finished:
            return []
        events = self._keep([_event(d) for d in self._native.finish()])
        self.finished = True
        return events

    def __iter__(self) -> Iterator[StreamEvent]:
        while self._queue:
            yield self._queue.popleft()

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
        """The device the session decodes on ("cpu (avx512 kernels, 2 threads)", ...)."""
        return self._native.device


def open_stream(model: Any, vad: Any, threads: int, device: str, **kw: Any) -> Stream:
    native = _sotto.Stream(model, vad, threads, None if device == "auto" else device, **kw)
    return Stream(native)
