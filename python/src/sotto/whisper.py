"""openai-whisper's Python API on the sotto engine: ``import sotto as whisper``, then
``whisper.load_model(name).transcribe(audio, **options)`` returns openai's dict (text,
segments with openai's keys, language), from the same long-form decoding."""

from __future__ import annotations

import numbers
import os
import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _sotto
from ._model import DEFAULT_APPEND_PUNCTUATIONS, DEFAULT_PREPEND_PUNCTUATIONS, Model, _gpu_backend
from .faster_whisper import decode_audio
from .models import installed_models, resolve_model, resolve_vad

__all__ = ["ModelDimensions", "WhisperOpenAI", "available_models", "load_audio", "load_model", "transcribe"]

_TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)

#: openai's DecodingOptions that transcribe() takes as **decode_options, and sotto's name
_DECODE = {"task", "language", "sample_len", "best_of", "beam_size", "patience", "length_penalty", "prompt",
           "prefix", "suppress_tokens", "suppress_blank", "without_timestamps", "max_initial_timestamp", "fp16",
           "temperature"}


def available_models(download_root: Optional[str] = None) -> List[str]:
    """The model names installed (openai lists what it can download; sotto never does)."""
    return installed_models([download_root] if download_root else [])


def load_audio(file: str, sr: int = 16000) -> Any:
    """openai's load_audio: FILE as 16 kHz mono float32 samples (a numpy array)."""
    return decode_audio(file, sampling_rate=sr)


def load_model(name: str, device: Optional[str] = None, download_root: Optional[str] = None,
               in_memory: bool = False, threads: int = 0) -> "WhisperOpenAI":
    """openai's load_model: NAME a model name installed ("tiny.en", "base", see
    :func:`sotto.models.resolve_model`) or a file or folder sotto reads. DEVICE: None
    ("auto"), "cpu", "cuda" or "cuda:N" (a GPU through Vulkan) or a sotto device string. IN_MEMORY is
    accepted (sotto maps the weights either way)."""
    gpu = _gpu_backend(_sotto.backends())
    dev = {None: "auto", "cuda": gpu}.get(device, device)
    if isinstance(device, str) and device.startswith("cuda:") and device[5:].isdigit():
        dev = f"{gpu}:{device[5:]}"  # torch's "cuda:N": the Nth GPU
    extra = [download_root] if download_root else []
    return WhisperOpenAI(Model(resolve_model(name, extra), threads=threads, device=dev, vad_model=resolve_vad(extra)))


def _segment_dict(s: Any, with_words: bool) -> Dict[str, Any]:
    d: Dict[str, Any] = {
        "id": s.id, "seek": s.seek, "start": s.start, "end": s.end, "text": s.text, "tokens": list(s.tokens),
        "temperature": s.temperature, "avg_logprob": s.avg_logprob, "compression_ratio": s.compression_ratio,
        "no_speech_prob": s.no_speech_prob,
    }
    if with_words:
        d["words"] = [{"word": w.word, "start": w.start, "end": w.end, "probability": w.probability}
                      for w in s.words or []]
    return d


def _timestamp(seconds: float) -> str:
    """openai's format_timestamp: [HH:]MM:SS.mmm, the hours only from an hour on."""
    ms = int(round(seconds * 1000))
    hours = f"{ms // 3600000:02d}:" if ms >= 3600000 else ""
    return f"{hours}{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def _print_segment(s: Any) -> None:
    print(f"[{_timestamp(s.start)} --> {_timestamp(s.end)}] {s.text}")


def _print_language(code: str, probability: float) -> None:
    print(f"Detected language: {(_sotto.language_name(code) or code).title()}")


def _given(value: Any, default: Any) -> Any:
    return default if value is None else value


def _check_decode_options(opts: Dict[str, Any], temps: Any) -> None:
    """openai's DecodingTask._verify_options, as its transcribe() reaches them: beam_size
    and patience go to the decodes at temperature 0 only, best_of to the others."""
    zero = temps == 0 if isinstance(temps, (int, float)) else any(t == 0 for t in temps)
    if zero and opts.get("patience") is not None and opts.get("beam_size") is None:
        raise ValueError("patience requires beam_size to be given")
    alpha = opts.get("length_penalty")
    if isinstance(alpha, numbers.Real) and not 0 <= alpha <= 1:
        raise ValueError("length_penalty (alpha) should be a value between 0 and 1")


@dataclass
class ModelDimensions:
    """openai's ModelDimensions (``model.dims.n_mels``); also read as a mapping
    (``model.dims["n_mels"]``), as sotto's earlier dict was."""

    n_mels: int
    n_audio_ctx: int
    n_audio_state: int
    n_audio_head: int
    n_audio_layer: int
    n_vocab: int
    n_text_ctx: int
    n_text_state: int
    n_text_head: int
    n_text_layer: int

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


class WhisperOpenAI:
    """What :func:`load_model` returns: openai's Whisper model, as far as transcribe goes."""

    def __init__(self, model: Model) -> None:
        self.model = model
        info = model.info()
        self.is_multilingual = bool(info["multilingual"])
        self.num_languages = int(info["n_languages"]) if self.is_multilingual else 0
        self.dims = ModelDimensions(**{k: int(info[k]) for k in ModelDimensions.__dataclass_fields__})

    def transcribe(
        self,
        audio: Union[str, Any],
        *,
        verbose: Optional[bool] = None,
        temperature: Union[float, Tuple[float, ...]] = _TEMPERATURES,
        compression_ratio_threshold: Optional[float] = 2.4,
        logprob_threshold: Optional[float] = -1.0,
        no_speech_threshold: Optional[float] = 0.6,
        condition_on_previous_text: bool = True,
        initial_prompt: Optional[str] = None,
        carry_initial_prompt: bool = False,
        word_timestamps: bool = False,
        prepend_punctuations: str = DEFAULT_PREPEND_PUNCTUATIONS,
        append_punctuations: str = DEFAULT_APPEND_PUNCTUATIONS,
        clip_timestamps: Union[str, List[float]] = "0",
        hallucination_silence_threshold: Optional[float] = None,
        **decode_options: Any,
    ) -> Dict[str, Any]:
        """openai-whisper's transcribe(): {"text", "segments", "language"}, each segment
        with openai's keys (id, seek, start, end, text, tokens, temperature, avg_logprob,
        compression_ratio, no_speech_prob, and words with word_timestamps).

        decode_options as openai's DecodingOptions: task, language, sample_len, best_of
        (None: 1), beam_size (None: greedy), patience, length_penalty, suppress_tokens
        ("-1", a str of ids or a list; "", [] or None: only the special tokens), suppress_blank,
        without_timestamps, max_initial_timestamp, fp16 (accepted; the weights' own
        types decide). verbose=True prints each segment as openai's does; verbose
        True or False prints the language detected ("Detected language: English"), True
        also the line before its detection, as openai's.

        Raises:
            NotImplementedError: prefix (openai's: forced at the start of every window).
            TypeError: an option openai's transcribe() does not have.
        """
        unknown = set(decode_options) - _DECODE
        if unknown:
            raise TypeError(f"transcribe() got unexpected options {sorted(unknown)}")
        from .faster_whisper import _clip_times  # openai's and faster-whisper's clips are the same

        clips = _clip_times(clip_timestamps)
        # openai's transcribe() sets every window's prompt itself (its initial_prompt and the
        # text before): a prompt given among decode_options is overwritten, so ignored here too
        for name, default in (("prefix", None),):
            if decode_options.get(name, default) != default:
                raise NotImplementedError(f"{name}={decode_options[name]!r}: not supported by sotto yet")
        opts = decode_options
        temps = temperature if isinstance(temperature, (int, float)) else tuple(temperature)
        if "temperature" in opts:  # openai lets DecodingOptions' temperature through too
            temps = opts["temperature"]
        if isinstance(audio, (str, os.PathLike)):
            audio = os.fspath(audio)
        _check_decode_options(opts, temps)
        language, task = opts.get("language"), opts.get("task", "transcribe")
        if word_timestamps and task == "translate":  # openai's warning, word for word
            warnings.warn("Word-level timestamps on translations may not be reliable.")
        if not self.is_multilingual:  # openai's English-only tokenizer has no language or task tokens
            language, task = (None if language is None else "en"), "transcribe"
        elif language is None and verbose:
            print("Detecting language using up to the first 30 seconds. Use `--language` to specify the language")
        segments, info = self.model.transcribe(
            audio,
            language=language,
            task=task,
            beam_size=_given(opts.get("beam_size"), 1),  # 0 refused, not greedy
            best_of=_given(opts.get("best_of"), 1),
            patience=_given(opts.get("patience"), 1.0),
            length_penalty=opts.get("length_penalty"),
            temperature=temps,
            compression_ratio_threshold=compression_ratio_threshold,
            log_prob_threshold=logprob_threshold,
            no_speech_threshold=no_speech_threshold,
            condition_on_previous_text=condition_on_previous_text,
            initial_prompt=initial_prompt,
            carry_initial_prompt=bool(carry_initial_prompt),
            suppress_blank=opts.get("suppress_blank", True),
            without_timestamps=opts.get("without_timestamps", False),
            # openai's: a false value (None, 0) sets no bound; the library's is < 0
            max_initial_timestamp=opts.get("max_initial_timestamp", 1.0) or -1.0,
            word_timestamps=word_timestamps,
            prepend_punctuations=prepend_punctuations,
            append_punctuations=append_punctuations,
            hallucination_silence_threshold=hallucination_silence_threshold,
            silence_check=False,
            sample_len=opts.get("sample_len"),
            on_segment=_print_segment if verbose else None,
            on_language=None if verbose is None else _print_language,
            clip_timestamps=clips,
            # openai's: None is the empty list (the special tokens alone)
            suppress_tokens=_given(opts.get("suppress_tokens", "-1"), []),
        )
        return {
            "text": info.text,
            "segments": [_segment_dict(s, word_timestamps) for s in segments],
            # openai's: the language given, even one an English-only model cannot say
            "language": opts.get("language") or info.language,
        }


def transcribe(model: WhisperOpenAI, audio: Union[str, Any], **options: Any) -> Dict[str, Any]:
    """openai's whisper.transcribe(model, audio, ...): model.transcribe(audio, ...)."""
    return model.transcribe(audio, **options)
