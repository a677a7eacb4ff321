"""sotto: speech recognition with OpenAI Whisper models, on the sotto C engine.

    import sotto
    model = sotto.Model()                       # the default model of the sotto tool
    segments, info = model.transcribe("talk.wav", beam_size=5)
    for s in segments:
        print(f"[{s.start:.2f} -> {s.end:.2f}]{s.text}")

Coming from faster-whisper or openai-whisper, change the import alone:
``from sotto import WhisperModel`` (faster-whisper's API, :mod:`sotto.faster_whisper`) or
``import sotto as whisper`` (``whisper.load_model(name).transcribe(audio)``, openai's dict,
:mod:`sotto.whisper`).

``sotto.ray`` holds a Ray Data recipe for many files on many machines.
"""

from ._model import (
    DEFAULT_APPEND_PUNCTUATIONS,
    DEFAULT_PREPEND_PUNCTUATIONS,
    DEFAULT_TEMPERATURES,
    Model,
    Segment,
    SottoError,
    TranscriptionInfo,
    Word,
    default_model_path,
    default_vad_path,
)
from ._stream import Stream, StreamEvent, StreamWord
from ._sotto import VERSION as __version__
from ._sotto import audio_formats
from .faster_whisper import BatchedInferencePipeline, WhisperModel, decode_audio
from .models import installed_models, resolve_model
from .whisper import available_models, load_audio, load_model, transcribe

__all__ = [
    "BatchedInferencePipeline",
    "WhisperModel",
    "available_models",
    "decode_audio",
    "installed_models",
    "load_audio",
    "load_model",
    "resolve_model",
    "transcribe",
    "DEFAULT_APPEND_PUNCTUATIONS",
    "DEFAULT_PREPEND_PUNCTUATIONS",
    "DEFAULT_TEMPERATURES",
    "Model",
    "Segment",
    "SottoError",
    "Stream",
    "StreamEvent",
    "StreamWord",
    "TranscriptionInfo",
    "Word",
    "audio_formats",
    "default_model_path",
    "default_vad_path",
    "__version__",
]
