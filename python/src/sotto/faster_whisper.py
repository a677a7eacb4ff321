"""faster-whisper 1.2.1's Python API on the sotto engine: WhisperModel, its transcribe()
(a lazy generator of segments fed by a worker thread), detect_language, decode_audio and
BatchedInferencePipeline. Every parameter of their signatures is taken: it works with
faster-whisper's meaning, mapped onto sotto.Model's, or raises NotImplementedError naming
it when given a value sotto cannot honour yet."""

from __future__ import annotations

import io
import logging
import os
import queue
import sys
import tempfile
import threading
import warnings
from dataclasses import asdict, dataclass, replace as _replace
from typing import Any, BinaryIO, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _sotto
from . import _model
from ._model import DEFAULT_APPEND_PUNCTUATIONS, DEFAULT_PREPEND_PUNCTUATIONS, Model, _gpu_backend
from .models import COMPUTE_TYPES, converted, installed_models, resolve_model, resolve_vad

#: openai-whisper's language codes, in the order of its language tokens
LANGUAGE_CODES: Tuple[str, ...] = tuple(
    "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg "
    "lt la mi ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so "
    "af oc ka be tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su yue".split()
)

_TEMPERATURES = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
_FRAMES = 3000  # log-mel frames of a 30 s window

__all__ = [
    "BatchedInferencePipeline",
    "FeatureExtractor",
    "Segment",
    "TranscriptionInfo",
    "TranscriptionOptions",
    "VadOptions",
    "WhisperModel",
    "Word",
    "available_models",
    "decode_audio",
    "format_timestamp",
]


_logger = logging.getLogger("faster_whisper")
_quiet = threading.local()  # the pipeline's check of its options: no log lines of its own


def _info(msg: str, *args: Any) -> None:
    if not getattr(_quiet, "on", False):
        _logger.info(msg, *args)


def _log_mel(samples: Any, n_mels: int) -> Any:
    """faster-whisper's feature_extractor(samples): the log-mel of the samples with 160 zeros
    after (len // 160 + 1 frames), normalised by the whole audio's maximum.
    From 30 s windows of the library's log-mel (mel_window) 2980 frames apart, each frame
    taken where its window has 10 frames of audio on both sides (the frames at a window's
    edges see its padding), each window normalised by its own maximum and floored here at
    the whole audio's maximum - 8 (below which both are that floor)."""
    import numpy as np

    margin, want = 10, len(samples) // 160 + 1
    used, top, g0 = [], -np.inf, 0
    while g0 < want:
        w = max(0, g0 - margin)  # the window's first frame
        mel = np.frombuffer(_sotto.mel_window(np.ascontiguousarray(samples[w * 160:w * 160 + 30 * _sotto.SAMPLE_RATE],
                                                                   dtype=np.float32), n_mels),
                            dtype=np.float32).reshape(n_mels, _FRAMES)
        n = min(w + _FRAMES - margin - g0, want - g0)
        part = mel[:, g0 - w:g0 - w + n]
        top = max(top, float(part.max()) * 4 - 4)  # (x + 4) / 4 of the largest log-mel value
        used.append(part)
        g0 += n
    out = np.concatenate(used, axis=1) if used else np.zeros((n_mels, 0), dtype=np.float32)
    return np.maximum(out, np.float32((top - 8 + 4) / 4))


class FeatureExtractor:
    """faster-whisper's FeatureExtractor as WhisperModel.feature_extractor: its attributes
    (feature_size, sampling_rate, hop_length, chunk_length, n_fft, n_samples,
    nb_max_frames, time_per_frame) and its call, on sotto's log-mel."""

    def __init__(self, feature_size: int = 80) -> None:
        self.feature_size = feature_size
        self.sampling_rate = _sotto.SAMPLE_RATE
        self.hop_length = 160
        self.chunk_length = 30
        self.n_fft = 400
        self.n_samples = self.chunk_length * self.sampling_rate
        self.nb_max_frames = self.n_samples // self.hop_length
        self.time_per_frame = self.hop_length / self.sampling_rate

    def __call__(self, waveform: Any, padding: int = 160, chunk_length: Optional[int] = None) -> Any:
        """The log-mel [feature_size, len // 160 + 1] of 16 kHz float32 WAVEFORM, as
        faster-whisper's (160 zeros after it, normalised by its maximum).

        Raises:
            NotImplementedError: padding other than 160, chunk_length other than 30.
        """
        if padding != 160 or chunk_length not in (None, 30):
            raise NotImplementedError("sotto's feature extractor pads 160 samples and takes 30 s chunks only")
        return _log_mel(_samples(waveform), self.feature_size)


def _multilingual(asked: bool, model_has: bool) -> bool:
    if asked and not model_has:
        _logger.warning("The current model is English-only but the multilingual parameter is set to True; "
                        "setting to False instead.")
    return bool(asked and model_has)


def format_timestamp(seconds: float, always_include_hours: bool = False, decimal_marker: str = ".") -> str:
    """faster-whisper's utils.format_timestamp: [HH:]MM:SS.mmm, the hours from an hour on
    (or always), the milliseconds rounded."""
    assert seconds >= 0, "non-negative timestamp expected"
    ms = round(seconds * 1000.0)
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{f'{h:02d}:' if always_include_hours or h > 0 else ''}{m:02d}:{s:02d}{decimal_marker}{ms:03d}"


def available_models() -> List[str]:
    """The model names installed (faster-whisper lists what it can download; sotto never
    downloads): :func:`sotto.models.installed_models`."""
    return installed_models()


@dataclass
class Word:
    """faster-whisper 1.2.1's Word (a dataclass: ``dataclasses.asdict`` and assignment work)."""

    start: float
    end: float
    word: str
    probability: float

    def _asdict(self) -> Dict[str, Any]:
        warnings.warn("Word._asdict() method is deprecated, use dataclasses.asdict(Word) instead",
                      DeprecationWarning, 2)
        return asdict(self)


@dataclass
class Segment:
    """faster-whisper 1.2.1's Segment (a dataclass; ``tokens`` a list; ids from 1)."""

    id: int
    seek: int
    start: float
    end: float
    text: str
    tokens: List[int]
    avg_logprob: float
    compression_ratio: float
    no_speech_prob: float
    words: Optional[List[Word]]
    temperature: Optional[float]

    def _asdict(self) -> Dict[str, Any]:
        warnings.warn("Segment._asdict() method is deprecated, use dataclasses.asdict(Segment) instead",
                      DeprecationWarning, 2)
        return asdict(self)


def _fw_segment(s: "_model.Segment", id_offset: int = 1) -> Segment:
    """sotto.Model's segment as faster-whisper's (its id counted from 1)."""
    words = None if s.words is None else [Word(w.start, w.end, w.word, w.probability) for w in s.words]
    return Segment(s.id + id_offset, s.seek, s.start, s.end, s.text, list(s.tokens), s.avg_logprob,
                   s.compression_ratio, s.no_speech_prob, words, s.temperature)


@dataclass
class VadOptions:
    """faster-whisper's VAD options (silero-vad's get_speech_timestamps parameters)."""

    threshold: float = 0.5
    neg_threshold: Optional[float] = None
    min_speech_duration_ms: int = 0
    max_speech_duration_s: float = float("inf")
    min_silence_duration_ms: int = 2000
    speech_pad_ms: int = 400


@dataclass
class TranscriptionOptions:
    """The options a transcription ran with, as faster-whisper reports them."""

    beam_size: int
    best_of: int
    patience: float
    length_penalty: float
    repetition_penalty: float
    no_repeat_ngram_size: int
    log_prob_threshold: Optional[float]
    no_speech_threshold: Optional[float]
    compression_ratio_threshold: Optional[float]
    condition_on_previous_text: bool
    prompt_reset_on_temperature: float
    temperatures: List[float]
    initial_prompt: Optional[Union[str, Iterable[int]]]
    prefix: Optional[str]
    suppress_blank: bool
    suppress_tokens: Optional[List[int]]
    without_timestamps: bool
    max_initial_timestamp: float
    word_timestamps: bool
    prepend_punctuations: str
    append_punctuations: str
    multilingual: bool
    max_new_tokens: Optional[int]
    clip_timestamps: Union[str, List[float]]
    hallucination_silence_threshold: Optional[float]
    hotwords: Optional[str]


@dataclass
class TranscriptionInfo:
    """faster-whisper's TranscriptionInfo. ``all_language_probs``: every language of the
    model with its probability, most probable first, from the last 30 s window the
    detection looked at; None when the language was given or the model is English-only."""

    language: str
    language_probability: float
    duration: float
    duration_after_vad: float
    all_language_probs: Optional[List[Tuple[str, float]]]
    transcription_options: TranscriptionOptions
    vad_options: Optional[VadOptions]


def decode_audio(
    input_file: Union[str, "os.PathLike[str]", BinaryIO], sampling_rate: int = 16000, split_stereo: bool = False
) -> Any:
    """The audio of INPUT_FILE (a path or a binary file object) as float32 samples in
    [-1, 1] at 16 kHz: openai-whisper's load_audio, through the library's FFmpeg decoder
    (a numpy array). With split_stereo, faster-whisper's (left, right) pair: channels 1
    and 2 alone (sotto_audio_source.channel), a mono file's samples twice; the other
    channels of a file of more than two are left out (faster-whisper mixes them in).

    Raises:
        NotImplementedError: a rate other than 16000.
        SottoError: the file cannot be decoded, with the engine's message (a missing
            path: also a FileNotFoundError, a directory: an IsADirectoryError). A file
            that holds no samples (a WAV of 0 frames) gives an empty array, as
            faster-whisper's and openai's loaders do.
    """
    import numpy as np

    if sampling_rate != _sotto.SAMPLE_RATE:
        raise NotImplementedError(f"decode_audio(sampling_rate={sampling_rate}): sotto decodes at 16000 Hz only")
    if hasattr(input_file, "read"):
        data = input_file.read()  # type: ignore[union-attr]
        with tempfile.NamedTemporaryFile(suffix=".audio") as f:
            f.write(data)
            f.flush()
            return decode_audio(f.name, sampling_rate, split_stereo)
    path = os.fspath(input_file)  # type: ignore[arg-type]
    _model._check_path(path)
    try:
        raw, channels = _sotto.audio_load(path, 1 if split_stereo else 0)
    except _sotto.SottoError as e:  # a file of no samples: nothing, as PyAV's and ffmpeg's decoding gives
        if "no audio samples" not in str(e):
            raise
        raw, channels = b"", 1
    samples = np.frombuffer(raw, dtype=np.float32).copy()
    if not split_stereo:
        return samples
    if channels < 2:
        return samples, samples.copy()
    right, _ = _sotto.audio_load(path, 2)
    return samples, np.frombuffer(right, dtype=np.float32).copy()


def _samples(audio: Any) -> Any:
    import numpy as np

    if isinstance(audio, (str, os.PathLike)) or hasattr(audio, "read"):
        return decode_audio(audio)
    if isinstance(audio, (bytes, bytearray)):
        return decode_audio(io.BytesIO(bytes(audio)))
    if np.issubdtype(getattr(audio, "dtype", np.dtype(np.float32)), np.integer):
        raise TypeError(f"audio samples must be float32 in [-1, 1], not {audio.dtype} (divide int16 PCM by 32768)")
    arr = np.ascontiguousarray(audio, dtype=np.float32)
    if arr.ndim != 1:
        raise ValueError(f"audio samples must be 1-D (16 kHz mono), not of shape {arr.shape}")
    return arr


def _clip_times(clip_timestamps: Union[str, List[float]]) -> Optional[List[float]]:
    """faster-whisper's clip_timestamps ("0,5.5,8,10" or [0, 5.5, ...], seconds) as the
    engine's list; None for the whole file ("0", the default)."""
    times = _model._clip_seconds(clip_timestamps) or []  # the text or the numbers, as sotto.Model reads them
    if any(not t >= 0 for t in times):
        raise ValueError(f"clip_timestamps={clip_timestamps!r}: each time a number of seconds >= 0")
    return None if times in ([], [0.0]) else times


def _collect(samples: Any, speech: Sequence[Tuple[int, int]]) -> Any:
    """The speech intervals of SAMPLES joined (faster-whisper's collect_chunks)."""
    import numpy as np

    if not speech:
        return samples[:0]
    return np.concatenate([samples[s:e] for s, e in speech])


def _suppress(tokens: Optional[Sequence[int]]) -> List[int]:
    """faster-whisper's suppress_tokens as sotto.Model takes them: None is the empty list."""
    if tokens is None:
        return []
    if isinstance(tokens, (str, bytes)):
        raise TypeError(f"suppress_tokens must be a list of token ids, not {tokens!r}")
    return list(tokens)


def _length_penalty(penalty: Any) -> Any:
    """CTranslate2's length_penalty as sotto.Model takes it with ctranslate2_search: None
    for its default 1 (logprob / length, the ranking the goldens were made with)."""
    return None if not isinstance(penalty, bool) and penalty == 1 else penalty


def _vad_options(vad_parameters: Union[None, Dict[str, Any], VadOptions], **defaults: Any) -> VadOptions:
    if vad_parameters is None:
        return VadOptions(**defaults)
    if isinstance(vad_parameters, VadOptions):
        return vad_parameters
    return VadOptions(**{**defaults, **vad_parameters})


class WhisperModel:
    """faster-whisper's WhisperModel on the sotto engine: ``from sotto import WhisperModel``
    in place of ``from faster_whisper import WhisperModel``.

    Args:
        model_size_or_path: a model file or folder, or a name ("tiny.en", "base") looked up
            by :func:`sotto.models.resolve_model` in download_root, $SOTTO_MODELS_DIR and
            ${XDG_DATA_HOME:-~/.local/share}/sotto/models (NAME.gguf or NAME-ct2); nothing
            is downloaded.
        device: "auto", "cpu", or "cuda" (a GPU: sotto's Vulkan device device_index), or any
            device string sotto takes ("vulkan:1").
        device_index: the GPU's index with device="cuda" (one int).
        compute_type: "default"/"auto" (the file's weight types), "int8*" (q8_0),
            "float16" (f16), "float32" (f32): converted once through the library into
            ${XDG_CACHE_HOME:-~/.cache}/sotto/converted.
        cpu_threads: threads per transcription (0: every core this process may use).
        num_workers: transcriptions that may run at once from several Python threads
            (sotto makes a context per thread anyway; this many are made up front).
        download_root: one more folder to look the name up in.
        local_files_only: accepted (sotto never downloads).
        files, revision, use_auth_token, model_kwargs: refused (they are about downloads
            and CTranslate2's loader).
    """

    def __init__(
        self,
        model_size_or_path: str,
        device: str = "auto",
        device_index: Union[int, List[int]] = 0,
        compute_type: str = "default",
        cpu_threads: int = 0,
        num_workers: int = 1,
        download_root: Optional[str] = None,
        local_files_only: bool = False,
        files: Optional[dict] = None,
        revision: Optional[str] = None,
        use_auth_token: Union[str, bool, None] = None,
        **model_kwargs: Any,
    ) -> None:
        for name, value in (("files", files), ("revision", revision), ("use_auth_token", use_auth_token)):
            if value not in (None, False):
                raise NotImplementedError(f"{name}={value!r}: sotto loads local files only")
        if model_kwargs:
            raise NotImplementedError(f"WhisperModel({', '.join(sorted(model_kwargs))}=...): not supported by sotto")
        if not isinstance(device_index, int):
            raise NotImplementedError(f"device_index={device_index!r}: sotto runs a model on one device")
        if not isinstance(num_workers, int) or num_workers < 1:
            raise ValueError(f"num_workers must be an int >= 1, not {num_workers!r}")
        names = _sotto.backends()
        if not isinstance(device, str) or not (device in ("auto", "cuda", "gpu") or device.split(":")[0] in names):
            raise ValueError(f"unsupported device {device}")  # CTranslate2's
        if compute_type not in COMPUTE_TYPES and compute_type not in ("int16", "bfloat16"):
            raise ValueError(f"Invalid compute type: {compute_type}")  # CTranslate2's
        gpu = _gpu_backend(names)  # CTranslate2's cuda: this build's GPU backend, its device_index-th device
        engine_device = {"cuda": f"{gpu}:{device_index}", "gpu": f"{gpu}:{device_index}"}.get(device, device)
        path = resolve_model(model_size_or_path, [download_root] if download_root else [])
        # faster-whisper's own Silero export first: its vad_filter cuts with that model
        vad = resolve_vad([download_root] if download_root else [], ("silero-vad-fw.gguf", "silero-vad.gguf"))
        self._model = Model(path, threads=cpu_threads, device=engine_device, vad_model=vad)
        target = converted(self._model._model, path, compute_type)
        if target is not None:
            self._model = Model(target, threads=cpu_threads, device=engine_device, vad_model=vad)
        self.model_path = self._model.path
        self.compute_type = compute_type
        self.num_workers = num_workers
        for ctx in [self._model._context(5) for _ in range(num_workers - 1)]:
            self._model._release(ctx)
        info = self._model.info()
        self.is_multilingual = bool(info["multilingual"])
        self._n_languages = int(info["n_languages"])
        # faster-whisper's attributes of a WhisperModel (its CTranslate2 model and Hugging
        # Face tokenizer aside): Whisper's constants, its logger, its feature extractor
        self.logger = _logger
        self.feature_extractor = FeatureExtractor(int(info["n_mels"]))
        self.input_stride = 2
        self.num_samples_per_token = self.feature_extractor.hop_length * self.input_stride  # 320
        self.frames_per_second = self.feature_extractor.sampling_rate // self.feature_extractor.hop_length  # 100
        self.tokens_per_second = self.feature_extractor.sampling_rate // self.num_samples_per_token  # 50
        self.time_precision = 0.02
        self.max_length = int(info["n_text_ctx"])  # 448

    def _language_task(self, language: Optional[str], task: str) -> Tuple[Optional[str], str]:
        """LANGUAGE and TASK as faster-whisper's transcribe() takes them, checked before it
        returns: an English-only model transcribes English whatever they say (a warning
        when LANGUAGE is another, as its logger gives); a multilingual one refuses a
        language code it does not have and a task that is not "transcribe" or
        "translate" (ValueError, at the call, not when the segments are read)."""
        if not self.is_multilingual:
            if language not in (None, "en"):
                _logger.warning("The current model is English-only but the language parameter is set to '%s'; "
                                "using 'en' instead.", language)
            return (None if language is None else "en"), "transcribe"
        if language is not None and language not in self.supported_languages:
            raise ValueError(f"'{language}' is not a valid language code (accepted language codes: "
                             f"{', '.join(self.supported_languages)})")
        if task not in ("transcribe", "translate"):
            raise ValueError(f"'{task}' is not a valid task (accepted tasks: transcribe, translate)")
        return language, task

    @property
    def supported_languages(self) -> List[str]:
        """The language codes the model knows (["en"] for an English-only one), in
        faster-whisper's order: alphabetical, "yue" (large-v3's) last."""
        if not self.is_multilingual:
            return ["en"]
        have = LANGUAGE_CODES[: self._n_languages]
        return sorted(c for c in have if c != "yue") + (["yue"] if "yue" in have else [])

    def detect_language(
        self,
        audio: Optional[Any] = None,
        features: Optional[Any] = None,
        vad_filter: bool = False,
        vad_parameters: Union[None, Dict[str, Any], VadOptions] = None,
        language_detection_segments: int = 1,
        language_detection_threshold: float = 0.5,
    ) -> Tuple[str, float, List[Tuple[str, float]]]:
        """(language, probability, all_language_probs) of AUDIO (samples or a file), as
        faster-whisper's: with vad_filter its speech alone; up to
        language_detection_segments windows of 30 s, stopping at the first whose most
        probable language passes language_detection_threshold, else the language most
        windows chose (with its highest probability); all_language_probs is every
        language of the last window looked at, most probable first. An English-only
        model says ("en", 1.0, [("en", 1.0)]) (faster-whisper's fails there). With
        features (a log-mel [n_mels, frames], as faster-whisper's feature extractor makes
        it) and no audio, the same over its first windows of 3000 frames, zeros after.
        """
        if audio is None and features is not None:
            import numpy as np

            f = np.ascontiguousarray(features, dtype=np.float32)
            if f.ndim != 2 or f.shape[0] != int(self._model.info()["n_mels"]):
                raise ValueError(f"features must be [n_mels, frames] with n_mels {self._model.info()['n_mels']}, "
                                 f"not {list(f.shape)}")
            return self._detect(None, language_detection_segments, language_detection_threshold, features=f)
        if audio is None:
            raise ValueError("detect_language needs the audio")
        samples = _samples(audio)
        if vad_filter:
            samples = _collect(samples, self._speech(samples, _vad_options(vad_parameters)))
        if isinstance(language_detection_segments, int):  # faster-whisper's: the windows looked at, alone
            samples = samples[: max(language_detection_segments, 1) * 30 * _sotto.SAMPLE_RATE]
        return self._detect(samples, language_detection_segments, language_detection_threshold)

    def _detect(self, samples: Any, segments: int = 1,
                threshold: Optional[float] = 0.5, features: Any = None) -> Tuple[str, float, List[Tuple[str, float]]]:
        """faster-whisper's detect_language loop over the first SEGMENTS windows of SAMPLES,
        or with FEATURES ([n_mels, frames] float32) over theirs (pad_or_trim: zeros after)."""
        if not self.is_multilingual:
            return "en", 1.0, [("en", 1.0)]
        if not isinstance(segments, int) or segments < 1:
            raise ValueError(f"language_detection_segments must be an int >= 1, not {segments!r}")
        import numpy as np

        n = 30 * _sotto.SAMPLE_RATE
        if features is None and samples is not None:  # faster-whisper's features of the audio
            features = _log_mel(samples, int(self._model.info()["n_mels"]))
        if features is not None:
            n, frames = _FRAMES, features[:, :segments * _FRAMES]
        votes: Dict[str, List[float]] = {}
        ctx = self._model._context(1)
        try:
            total = frames.shape[1] if features is not None else min(len(samples), segments * n)
            for i in range(0, max(1, total), n):
                if features is not None:
                    window = np.zeros((frames.shape[0], _FRAMES), dtype=np.float32)
                    piece = frames[:, i:i + _FRAMES]
                    window[:, :piece.shape[1]] = piece
                    probs = ctx.detect_language_probs_mel(window)
                else:
                    probs = ctx.detect_language_probs(samples[i:i + n])
                ranked = sorted(zip(LANGUAGE_CODES, probs), key=lambda lp: -lp[1])
                language, probability = ranked[0]
                if threshold is not None and probability > threshold:
                    return language, probability, ranked
                votes.setdefault(language, []).append(probability)
        finally:
            self._model._release(ctx)
        language = max(votes, key=lambda k: len(votes[k]))
        return language, max(votes[language]), ranked

    def _features(self, pieces: List[Any], segments: int) -> Any:
        """The batched pipeline's features for detect_language: each piece's log-mel
        (feature_extractor(chunk)[..., :-1]: len // 160 frames), end to end, then a frame of
        -1.5 (faster-whisper's "dummy feature"); the first SEGMENTS windows' worth."""
        import numpy as np

        n_mels, want, out = int(self._model.info()["n_mels"]), segments * _FRAMES, []
        got = 0
        for p in pieces:
            if got >= want:
                break
            frames = min(len(p) // 160, _FRAMES)
            if frames:
                mel = np.frombuffer(_sotto.mel_window(np.ascontiguousarray(p, dtype=np.float32), n_mels),
                                    dtype=np.float32).reshape(n_mels, _FRAMES)
                out.append(mel[:, :frames])
                got += frames
        out.append(np.full((n_mels, 1), -1.5, dtype=np.float32))
        return np.concatenate(out, axis=1)

    def _speech(self, samples: Any, vo: VadOptions, vad: Any = None, pipeline: bool = False) -> List[Tuple[int, int]]:
        vad = vad or self._model._vad
        if vad is None:
            raise ValueError("vad_filter needs a Silero VAD model: install one with scripts/setup.sh")
        return vad.speech(samples, vo.threshold, vo.neg_threshold, int(vo.min_speech_duration_ms),
                          float(vo.max_speech_duration_s), int(vo.min_silence_duration_ms),
                          int(vo.speech_pad_ms), self._model.threads, pipeline=pipeline)

    def transcribe(
        self,
        audio: Union[str, BinaryIO, Any],
        language: Optional[str] = None,
        task: str = "transcribe",
        log_progress: bool = False,
        beam_size: int = 5,
        best_of: int = 5,
        patience: float = 1,
        length_penalty: float = 1,
        repetition_penalty: float = 1,
        no_repeat_ngram_size: int = 0,
        temperature: Union[float, List[float], Tuple[float, ...]] = _TEMPERATURES,
        compression_ratio_threshold: Optional[float] = 2.4,
        log_prob_threshold: Optional[float] = -1.0,
        no_speech_threshold: Optional[float] = 0.6,
        condition_on_previous_text: bool = True,
        prompt_reset_on_temperature: float = 0.5,
        initial_prompt: Optional[Union[str, Iterable[int]]] = None,
        prefix: Optional[str] = None,
        suppress_blank: bool = True,
        suppress_tokens: Optional[List[int]] = [-1],  # noqa: B006 (faster-whisper's default)
        without_timestamps: bool = False,
        max_initial_timestamp: float = 1.0,
        word_timestamps: bool = False,
        prepend_punctuations: str = DEFAULT_PREPEND_PUNCTUATIONS,
        append_punctuations: str = DEFAULT_APPEND_PUNCTUATIONS,
        multilingual: bool = False,
        vad_filter: bool = False,
        vad_parameters: Union[None, Dict[str, Any], VadOptions] = None,
        max_new_tokens: Optional[int] = None,
        chunk_length: Optional[int] = None,
        clip_timestamps: Union[str, List[float]] = "0",
        hallucination_silence_threshold: Optional[float] = None,
        hotwords: Optional[str] = None,
        language_detection_threshold: Optional[float] = 0.5,
        language_detection_segments: int = 1,
    ) -> Tuple[Iterator[Segment], TranscriptionInfo]:
        """faster-whisper's transcribe(): openai-whisper's long-form decoding of AUDIO (a
        path, a binary file object or 16 kHz float samples). Returns (segments, info) at
        once; the segments are a generator: decoding starts at the first ``next()`` and
        runs in a worker thread (the GIL released) a window ahead of the consumer.
        Closing the generator early stops the engine after the window in progress.

        Works as faster-whisper's: language, task, log_progress, beam_size, best_of,
        patience, length_penalty (CTranslate2's: hypotheses ranked by logprob / length **
        length_penalty; 0 also ends a beam search when its best candidate ends),
        temperature, the three thresholds, condition_on_previous_text,
        prompt_reset_on_temperature,
        initial_prompt (text, or token ids put before the first window as they are), prefix
        (the first window's start), suppress_blank,
        suppress_tokens (a list of ids, -1 standing for the model's non-speech list; the
        special tokens always, also for [] and None, which suppress nothing in
        CTranslate2), without_timestamps,
        max_initial_timestamp, word_timestamps, the punctuations, multilingual (each
        window's language detected), vad_filter (ignored when clip_timestamps is given,
        as faster-whisper), vad_parameters (every VadOptions field, as its vad.py
        applies them), max_new_tokens (CTranslate2's cap per window), chunk_length (30),
        clip_timestamps ("start,end,..." or a list of seconds),
        hallucination_silence_threshold, hotwords (in every window's prompt but a
        prefixed one), language_detection_threshold and language_detection_segments.

        repetition_penalty and no_repeat_ngram_size are CTranslate2's, as faster-whisper
        passes them (sotto.h sotto_transcribe_params).

        Raises NotImplementedError naming the parameter for other values of those.
        """
        if chunk_length not in (None, 30):
            raise NotImplementedError(f"chunk_length={chunk_length!r}: sotto decodes 30 s windows only")
        clips = _clip_times(clip_timestamps)
        for name, text in (("hotwords", hotwords), ("prefix", prefix)):
            if text is not None and not isinstance(text, str):
                raise TypeError(f"{name} must be a str or None, not {type(text).__name__}")
        language, task = self._language_task(language, task)
        multilingual = _multilingual(multilingual, self.is_multilingual)
        vo = _vad_options(vad_parameters)
        samples = _samples(audio)
        duration = len(samples) / _sotto.SAMPLE_RATE
        duration_after_vad = duration
        _info("Processing audio with duration %s", format_timestamp(duration))
        vad_filter = vad_filter and clip_timestamps == "0"  # faster-whisper: clips replace the VAD
        speech = samples
        if vad_filter:
            speech = _collect(samples, self._speech(samples, vo, pipeline=True))
            duration_after_vad = len(speech) / _sotto.SAMPLE_RATE
            _info("VAD filter removed %s of audio", format_timestamp(duration - duration_after_vad))
        temps = [float(temperature)] if isinstance(temperature, (int, float)) else [float(t) for t in temperature]
        all_probs = None
        if language is None and self.is_multilingual:
            start = round(clips[0] * _sotto.SAMPLE_RATE) if clips else 0  # from the first clip on
            language, probability, all_probs = self._detect(
                speech[start:] if start < len(speech) else speech, language_detection_segments,
                language_detection_threshold)
            _info("Detected language '%s' with probability %.2f", language, probability)
        else:
            language, probability = language or "en", 1.0
        options = TranscriptionOptions(
            beam_size, best_of, patience, length_penalty, repetition_penalty, no_repeat_ngram_size,
            log_prob_threshold, no_speech_threshold, compression_ratio_threshold, condition_on_previous_text,
            prompt_reset_on_temperature, temps, initial_prompt, prefix, suppress_blank, suppress_tokens,
            without_timestamps, max_initial_timestamp, word_timestamps, prepend_punctuations, append_punctuations,
            multilingual, max_new_tokens, clip_timestamps, hallucination_silence_threshold, hotwords,
        )
        info = TranscriptionInfo(language, probability, duration, duration_after_vad, all_probs, options,
                                 vo if vad_filter else None)
        kwargs = dict(
            language=language, task=task, beam_size=beam_size, best_of=best_of, patience=patience,
            temperature=temps, compression_ratio_threshold=compression_ratio_threshold,
            log_prob_threshold=log_prob_threshold, no_speech_threshold=no_speech_threshold,
            condition_on_previous_text=condition_on_previous_text, initial_prompt=initial_prompt,
            suppress_blank=suppress_blank, without_timestamps=without_timestamps,
            max_initial_timestamp=max_initial_timestamp, word_timestamps=word_timestamps,
            prepend_punctuations=prepend_punctuations, append_punctuations=append_punctuations,
            hallucination_silence_threshold=hallucination_silence_threshold, vad_filter=2 if vad_filter else 0,
            vad_parameters=None if not vad_filter else dict(
                threshold=vo.threshold, neg_threshold=vo.neg_threshold, min_speech_duration_ms=vo.min_speech_duration_ms,
                max_speech_duration_s=vo.max_speech_duration_s, min_silence_duration_ms=vo.min_silence_duration_ms,
                speech_pad_ms=vo.speech_pad_ms),
            silence_check=False, hotwords=hotwords, prefix=prefix, multilingual=multilingual,
            clip_timestamps=clips, max_new_tokens=max_new_tokens, repetition_penalty=repetition_penalty,
            no_repeat_ngram_size=no_repeat_ngram_size, fallback_best=True,  # generate_with_fallback's choice
            ctranslate2_search=True,  # its beams, CTranslate2's
            length_penalty=_length_penalty(length_penalty), prompt_reset_on_temperature=prompt_reset_on_temperature,
            suppress_tokens=_suppress(suppress_tokens),
        )
        return _stream(self._model, samples, kwargs, duration if log_progress else None), info


#: segments the worker may make ahead of the consumer: then it waits, inside the engine's
#: callback, until the consumer takes one (a generator left unconsumed, after a `break`,
#: holds the engine there instead of letting it decode the rest of the file)
_AHEAD = 8


def _stream(model: Model, samples: Any, kwargs: Dict[str, Any], progress_of: Optional[float]) -> Iterator[Segment]:
    """The segments of model.transcribe(samples, **kwargs) as they are made: a worker
    thread runs the engine and hands each segment over a queue of _AHEAD; closing the
    generator asks the engine to stop after the window in progress, and waits for it."""
    q: "queue.Queue[Tuple[str, Any]]" = queue.Queue(_AHEAD)
    stop = threading.Event()

    def on_segment(s: "_model.Segment") -> bool:
        while not stop.is_set():
            try:
                q.put(("segment", s), timeout=0.1)
                break
            except queue.Full:
                continue
        return stop.is_set()

    def work() -> None:
        try:
            model.transcribe(samples, on_segment=on_segment, **kwargs)
            item: Tuple[str, Any] = ("end", None)
        except BaseException as e:  # handed to the consumer
            item = ("error", e)
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    worker = threading.Thread(target=work, name="sotto-transcribe", daemon=True)
    worker.start()
    bar = _progress_bar(progress_of) if progress_of else None
    done = 0.0
    try:
        while True:
            kind, value = q.get()
            if kind == "end":
                if bar:
                    bar.update(progress_of - done)
                elif progress_of:
                    print("sotto: 100.0 %", file=sys.stderr)
                return
            if kind == "error":  # (an option the decoding refused is a ValueError, as faster-whisper's)
                raise value
            if bar:
                now = min(progress_of, max(done, value.end))
                bar.update(now - done)
                done = now
            elif progress_of:
                shown = min(100.0, 100.0 * value.end / progress_of)
                print(f"sotto: {shown:5.1f} %", file=sys.stderr)
                if shown >= 100.0:
                    progress_of = None  # said: not again at the end
            yield _fw_segment(value)  # faster-whisper counts from 1
    finally:
        stop.set()
        worker.join()
        if bar:
            bar.close()


def _progress_bar(total_s: float) -> Any:
    """log_progress's bar as faster-whisper's (tqdm, in seconds of audio) where tqdm is
    installed (faster-whisper requires it); None: lines of percent on stderr instead."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total_s, unit="seconds")


def _pipeline_clips(clip_timestamps: Optional[List[dict]]) -> List[Tuple[float, float]]:
    """The pipeline's clip_timestamps ([{"start": s, "end": s}, ...], seconds) as pairs;
    [] for None or an empty list (faster-whisper: `if not clip_timestamps`)."""
    if not clip_timestamps:
        return []
    out = []
    for c in clip_timestamps:
        try:
            a, b = float(c["start"]), float(c["end"])
        except (TypeError, KeyError, ValueError):
            raise ValueError(f"clip_timestamps: each clip a dict {{'start': s, 'end': s}} in seconds, not {c!r}") from None
        if not (0 <= a < b):
            raise ValueError(f"clip_timestamps: a clip's start >= 0 and before its end, not {c!r}")
        out.append((a, b))
    return out


def _collect_chunks(speech: Sequence[Tuple[int, int]], max_samples: int) -> List[List[Tuple[int, int]]]:
    """faster-whisper's collect_chunks over SPEECH: the intervals of each chunk, whose
    samples it joins end to end (an interval that would pass MAX_SAMPLES starts the next
    chunk; the first chunk is empty when the first interval alone passes it, as theirs)."""
    if not speech:
        return [[]]
    chunks: List[List[Tuple[int, int]]] = []
    cur: List[Tuple[int, int]] = []
    n = 0
    for s, e in speech:
        if n + e - s > max_samples:
            chunks.append(cur)
            cur, n = [(s, e)], e - s
        else:
            cur.append((s, e))
            n += e - s
    chunks.append(cur)
    return chunks


class BatchedInferencePipeline:
    """faster-whisper's BatchedInferencePipeline: the speech Silero VAD finds, merged into
    chunks of at most 30 s, each decoded on its own (no conditioning on the previous
    chunk, no timestamps unless asked, max_initial_timestamp 0), times offset by the
    chunk's start.

    The chunks (speech intervals merged as faster-whisper's collect_chunks) come from
    sotto's batched engine with ``batch_size`` > 0: ``batch_size`` chunks through the
    encoder as one pass and the decoder stepping all their beams together. The cut is
    faster-whisper's own (its Silero export and vad.py, the same chunk boundaries), with
    any vad_parameters; initial_prompt and hotwords begin every chunk's prompt.
    """

    def __init__(self, model: WhisperModel) -> None:
        if not isinstance(model, WhisperModel):
            raise TypeError("BatchedInferencePipeline takes a sotto.WhisperModel")
        self.model = model

    def transcribe(
        self,
        audio: Union[str, BinaryIO, Any],
        language: Optional[str] = None,
        task: str = "transcribe",
        log_progress: bool = False,
        beam_size: int = 5,
        best_of: int = 5,
        patience: float = 1,
        length_penalty: float = 1,
        repetition_penalty: float = 1,
        no_repeat_ngram_size: int = 0,
        temperature: Union[float, List[float], Tuple[float, ...]] = _TEMPERATURES,
        compression_ratio_threshold: Optional[float] = 2.4,
        log_prob_threshold: Optional[float] = -1.0,
        no_speech_threshold: Optional[float] = 0.6,
        condition_on_previous_text: bool = True,
        prompt_reset_on_temperature: float = 0.5,
        initial_prompt: Optional[Union[str, Iterable[int]]] = None,
        prefix: Optional[str] = None,
        suppress_blank: bool = True,
        suppress_tokens: Optional[List[int]] = [-1],  # noqa: B006 (faster-whisper's default)
        without_timestamps: bool = True,
        max_initial_timestamp: float = 1.0,
        word_timestamps: bool = False,
        prepend_punctuations: str = DEFAULT_PREPEND_PUNCTUATIONS,
        append_punctuations: str = DEFAULT_APPEND_PUNCTUATIONS,
        multilingual: bool = False,
        vad_filter: bool = True,
        vad_parameters: Union[None, Dict[str, Any], VadOptions] = None,
        max_new_tokens: Optional[int] = None,
        chunk_length: Optional[int] = None,
        clip_timestamps: Optional[List[dict]] = None,
        hallucination_silence_threshold: Optional[float] = None,
        batch_size: int = 8,
        hotwords: Optional[str] = None,
        language_detection_threshold: Optional[float] = 0.5,
        language_detection_segments: int = 1,
    ) -> Tuple[Iterator[Segment], TranscriptionInfo]:
        """faster-whisper's batched transcribe(); the parameters work and are refused as
        WhisperModel.transcribe's, and: condition_on_previous_text and
        max_initial_timestamp are ignored, as faster-whisper's batched decoding ignores
        them; batch_size must be an int >= 1, and more than 64 (sotto's largest batch)
        runs 64 at a time (the same segments: a chunk's tokens do not depend on its
        batch). The chunks, as faster-whisper's: with
        clip_timestamps (a list of {"start": s, "end": s} in seconds) each clip, at its
        own offset, whatever vad_filter says; else with vad_filter the VAD's speech
        merged into chunks of at most 30 s; else the whole audio as one chunk when it is
        shorter than 30 s (RuntimeError for longer audio, as theirs). multilingual:
        each chunk's language detected from it (info.language stays the first's).

        Raises:
            RuntimeError: vad_filter=False, no clip_timestamps and 30 s of audio or more.
        """
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, not {batch_size!r}")
        batch_size = min(batch_size, _sotto.MAX_BATCH)  # faster-whisper takes any (a GPU's habit)
        language, task = self.model._language_task(language, task)
        multilingual = _multilingual(multilingual, self.model.is_multilingual)
        chunk_s = chunk_length or 30
        if chunk_s != 30:
            raise NotImplementedError(f"chunk_length={chunk_length!r}: sotto decodes 30 s windows only")
        if initial_prompt is not None and not isinstance(initial_prompt, str):
            raise TypeError("TextInputSequence must be str")  # faster-whisper's: its tokenizer.encode of the ids
        rate = _sotto.SAMPLE_RATE
        clips = _pipeline_clips(clip_timestamps)
        samples = _samples(audio)
        duration = len(samples) / rate
        _info("Processing audio with duration %s", format_timestamp(duration))
        vo: Optional[VadOptions] = None
        if clips:  # faster-whisper: int(seconds * sampling_rate), each clip a chunk
            chunks = [(int(a * rate), int(b * rate)) for a, b in clips]
            speech = chunks
        elif vad_filter:
            # faster-whisper's: VadOptions as given; a dict's keys over VadOptions' defaults,
            # its max_speech_duration_s replaced by chunk_length; none: the pipeline's two
            if isinstance(vad_parameters, dict):
                given = {k: v for k, v in vad_parameters.items() if k != "max_speech_duration_s"}
                vo = _vad_options(given, max_speech_duration_s=chunk_s)
            else:
                vo = _vad_options(vad_parameters, max_speech_duration_s=chunk_s, min_silence_duration_ms=160)
            # faster-whisper's own Silero export and vad.py, as the batched engine cuts with
            speech = self.model._speech(samples, vo, self.model._model._batch_vad_model(), pipeline=True)
            chunks = []  # the engine cuts them; _collect_chunks below when the language is detected
        elif duration < chunk_s:
            vo = None if vad_parameters is None else _vad_options(vad_parameters)
            chunks = speech = [(0, len(samples))]
        else:
            raise RuntimeError("No clip timestamps found. Set 'vad_filter' to True or provide 'clip_timestamps'.")
        first = samples[chunks[0][0]:chunks[0][1]] if chunks else samples[:rate]  # for the options' check
        probability, all_probs = 1.0, None
        if language is None:  # faster-whisper: from the chunks' log-mels end to end, then one of -1.5
            import numpy as np

            if clips or not vad_filter:
                pieces = [samples[a:b] for a, b in chunks]
            else:
                pieces = [np.concatenate([samples[a:b] for a, b in group] or [samples[:0]])
                          for group in _collect_chunks(speech, chunk_s * rate)]
            language, probability, all_probs = self.model._detect(
                None, language_detection_segments, language_detection_threshold,
                features=self.model._features(pieces, language_detection_segments) if self.model.is_multilingual
                else None)
            all_probs = all_probs if self.model.is_multilingual else None
            if self.model.is_multilingual:
                _info("Detected language '%s' with probability %.2f", language, probability)
        opts = dict(
            language=language, task=task, log_progress=False, beam_size=beam_size, best_of=best_of,
            patience=patience, length_penalty=length_penalty, repetition_penalty=repetition_penalty,
            no_repeat_ngram_size=no_repeat_ngram_size, temperature=temperature,
            compression_ratio_threshold=compression_ratio_threshold, log_prob_threshold=log_prob_threshold,
            no_speech_threshold=no_speech_threshold, condition_on_previous_text=False,
            prompt_reset_on_temperature=0.5, initial_prompt=initial_prompt, prefix=prefix,
            suppress_blank=suppress_blank, suppress_tokens=suppress_tokens, without_timestamps=without_timestamps,
            max_initial_timestamp=0.0, word_timestamps=word_timestamps,
            prepend_punctuations=prepend_punctuations, append_punctuations=append_punctuations,
            multilingual=multilingual, max_new_tokens=max_new_tokens,
            hallucination_silence_threshold=hallucination_silence_threshold, hotwords=hotwords,
            language_detection_threshold=language_detection_threshold,
            language_detection_segments=language_detection_segments,
        )
        # every option checked now (the segments of this call are never started)
        _quiet.on = True
        try:
            _, probe = self.model.transcribe(first, **opts)
        finally:
            _quiet.on = False
        _info("VAD filter removed %s of audio", format_timestamp(max(duration - sum(e - s for s, e in speech) / rate, 0)))
        # the pipeline's options name the one temperature it decodes with
        given = [temperature] if isinstance(temperature, (int, float)) else list(temperature)[:1]
        info = TranscriptionInfo(
            language, probability, duration, sum(e - s for s, e in speech) / rate, all_probs,
            _replace(probe.transcription_options, temperatures=given), vo,
        )
        # the batched engine: faster-whisper's cut with vad_parameters (or the clips, or the
        # whole audio), batch_size chunks at a time; generate_segment_batched's prompt:
        # initial_prompt and hotwords (the pipeline passes no prefix)
        temps = [float(temperature)] if isinstance(temperature, (int, float)) else [float(t) for t in temperature]
        cut = None
        if vo is not None and vad_filter and not clips and vad_parameters is not None:
            cut = dict(threshold=vo.threshold, neg_threshold=vo.neg_threshold,
                       min_speech_duration_ms=vo.min_speech_duration_ms, max_speech_duration_s=vo.max_speech_duration_s,
                       min_silence_duration_ms=vo.min_silence_duration_ms, speech_pad_ms=vo.speech_pad_ms)
        kw = dict(language=language, task=task, beam_size=beam_size, best_of=best_of, patience=patience,
                  temperature=temps[:1], suppress_blank=suppress_blank, without_timestamps=without_timestamps,
                  word_timestamps=word_timestamps, prepend_punctuations=prepend_punctuations,
                  append_punctuations=append_punctuations, silence_check=False, max_new_tokens=max_new_tokens,
                  condition_on_previous_text=False, batch_size=batch_size,
                  multilingual=multilingual and self.model.is_multilingual,
                  repetition_penalty=repetition_penalty, no_repeat_ngram_size=no_repeat_ngram_size,
                  clip_timestamps=[t for c in clips for t in c] if clips else None,
                  batch_vad=bool(vad_filter), vad_parameters=cut, initial_prompt=initial_prompt, hotwords=hotwords,
                  length_penalty=_length_penalty(length_penalty), suppress_tokens=_suppress(suppress_tokens))
        return _stream(self.model._model, samples, kw, duration if log_progress else None), info
