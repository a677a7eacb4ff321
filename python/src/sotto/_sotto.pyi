"""Types of the extension module sotto._sotto (_sotto.c, _stream.c): the engine's C API
as sotto's Python modules call it. Users call sotto.Model, sotto.Stream and the drop-ins;
these are their building blocks."""

from typing import Any, Dict, List, Optional, Tuple, Union

from os import PathLike

VERSION: str
SAMPLE_RATE: int
MAX_SEQUENCES: int
MAX_BATCH: int
MAX_TEMPERATURES: int

_Path = Union[str, bytes, "PathLike[str]", "PathLike[bytes]"]

class SottoError(RuntimeError):
    """An error of the sotto engine; str() is its message, .status its kind."""

    status: str

class Model:
    def __init__(self, path: _Path) -> None: ...
    def info(self) -> Dict[str, Any]: ...
    def save_gguf(self, path: _Path, encoder_type: str, decoder_type: str) -> None: ...
    def weight_types(self) -> Tuple[str, str]: ...

class Vad:
    def __init__(self, path: _Path) -> None: ...
    def speech(
        self,
        samples: Any,
        threshold: float,
        neg_threshold: Optional[float],
        min_speech_ms: int,
        max_speech_s: float,
        min_silence_ms: int,
        pad_ms: int,
        n_threads: int,
        *,
        pipeline: bool = ...,
    ) -> List[Tuple[int, int]]: ...

class Context:
    max_sequences: int
    max_batch: int
    @property
    def device(self) -> str: ...
    def __init__(
        self,
        model: Model,
        n_threads: int = ...,
        device: Optional[str] = ...,
        max_sequences: int = ...,
        max_batch: int = ...,
    ) -> None: ...
    def transcribe(self, audio: Any, **options: Any) -> Dict[str, Any]: ...
    def detect_language(self, samples: Any) -> Tuple[str, float]: ...
    def detect_language_probs(self, samples: Any) -> List[float]: ...
    def detect_language_probs_mel(self, mel: Any) -> List[float]: ...

class Stream:
    def __init__(
        self,
        model: Model,
        vad: Optional[Vad],
        n_threads: int = ...,
        device: Optional[str] = ...,
        language: Optional[str] = ...,
        beam_size: int = ...,
        min_step: float = ...,
        trim: float = ...,
        max_buffer: float = ...,
        initial_prompt: Optional[str] = ...,
        vad_threshold: float = ...,
        vad_min_silence_ms: int = ...,
        hold: float = ...,
        translate: bool = ...,
    ) -> None: ...
    @property
    def device(self) -> str: ...
    @property
    def steps(self) -> Tuple[int, float]: ...
    @property
    def text(self) -> str: ...
    @property
    def time(self) -> float: ...
    def feed(self, samples: Any) -> List[Dict[str, Any]]: ...
    def finish(self) -> List[Dict[str, Any]]: ...

def backends() -> List[str]: ...
def audio_formats() -> str: ...
def audio_load(path: _Path, channel: int = ...) -> Tuple[bytes, int]: ...
def language_name(code: str) -> Optional[str]: ...
def mel_window(samples: Any, n_mels: int) -> bytes: ...

