"""sotto.Model: a Whisper model and the contexts that transcribe with it.

The API follows faster-whisper's: ``segments, info = model.transcribe(audio, ...)``.
One model is loaded once and shared; each transcription runs on a context of its own
(taken from a pool, made when none is free), so threads may call ``transcribe`` on one
``Model`` at once. The engine runs with the GIL released.
"""

from __future__ import annotations

import errno
import numbers
import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from . import _sotto

if TYPE_CHECKING:
    from ._stream import Stream

SottoError = _sotto.SottoError
_INT_MAX = 2 ** 31 - 1  # the engine's int options

#: openai-whisper's temperatures, tried in order while a window fails its checks
DEFAULT_TEMPERATURES: Tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)

#: openai-whisper's (and faster-whisper's) punctuation merged into the next word
DEFAULT_PREPEND_PUNCTUATIONS = "\"'“¿([{-"
#: ... and into the previous word
DEFAULT_APPEND_PUNCTUATIONS = "\"'.。,，!！?？:：”)]}、"

AudioInput = Union[str, "os.PathLike[str]", bytes, Any]


class Word(NamedTuple):
    """One word of a segment, with ``word_timestamps=True`` (faster-whisper's Word)."""

    start: float
    """seconds from the start of the audio (rounded to 0.01 s, as openai's)"""
    end: float
    word: str
    """as openai-whisper makes it: with its leading space, punctuation merged into it"""
    probability: float
    """the mean probability of its tokens"""


class Segment(NamedTuple):
    """One segment of a transcript, as openai-whisper's transcribe() makes it."""

    id: int
    seek: int
    """mel frame (10 ms) where its 30 s window starts"""
    start: float
    """seconds from the start of the audio"""
    end: float
    text: str
    """usually with a leading space, as the reference writes it"""
    tokens: Tuple[int, ...]
    """its token ids, timestamp tokens included"""
    avg_logprob: float
    compression_ratio: float
    no_speech_prob: float
    words: Optional[List[Word]]
    """its words with ``word_timestamps=True`` (a list, maybe empty), else None"""
    temperature: float


class TranscriptionInfo(NamedTuple):
    """What ``Model.transcribe`` found out about the audio."""

    language: str
    """code of the language transcribed ("en", ...)"""
    language_probability: float
    """its probability when detected, else 1.0 (given, or an English-only model: as
    faster-whisper)"""
    duration: float
    """seconds of audio"""
    language_detected: bool
    text: str
    """every segment's text, joined"""
    stopped: bool
    """on_segment asked to stop: the segments are those up to the one it stopped at"""


class SottoFileNotFoundError(FileNotFoundError, SottoError):
    """An audio path that does not exist: a :class:`SottoError` (status "i/o error", as the
    engine reports it) and a FileNotFoundError, as faster-whisper's and openai-whisper's
    loaders raise, so that either ``except`` catches it."""


class SottoIsADirectoryError(IsADirectoryError, SottoError):
    """An audio path that is a directory: a :class:`SottoError` and an IsADirectoryError."""


class SottoValueError(ValueError, SottoError):
    """An option the engine refused while transcribing (status "invalid argument": a
    language an English-only model cannot take, a suppress token past the vocabulary,
    max_new_tokens past the context): a ValueError, as bad options are, and a
    :class:`SottoError`."""


def _gpu_backend(names: Sequence[str]) -> str:
    """The backend a "cuda" device means (CTranslate2's, torch's): this build's first one
    other than the CPU (the registry's order: vulkan today), else "vulkan", which the
    engine then refuses as not built in."""
    return next((n for n in names if n != "cpu"), "vulkan")


def _clip_seconds(clips: Union[str, Sequence[float], None]) -> Optional[List[float]]:
    """clip_timestamps as seconds: a sequence of numbers, or openai's and faster-whisper's
    str of them separated by commas ("0,5.5,8"; "" or "0": the whole audio)."""
    if clips is None:
        return None
    if isinstance(clips, str):
        try:
            return [float(t) for t in clips.split(",")] if clips.strip() else []
        except ValueError:
            raise ValueError(f"clip_timestamps={clips!r}: seconds separated by commas") from None
    out = []
    for t in clips:
        if isinstance(t, bool) or not isinstance(t, numbers.Real):
            raise TypeError(f"clip_timestamps must be seconds (numbers) or a str of them, not {clips!r}")
        out.append(float(t))
    return out


def _suppress_ids(tokens: Union[str, Sequence[int], None]) -> Optional[List[int]]:
    """openai-whisper's suppress_tokens as the engine's list: None for the model's own
    ("-1", [-1] or None), else the ids (-1 among them standing for the model's list)."""
    if tokens is None:
        return None
    if isinstance(tokens, str):
        try:
            ids = [int(t) for t in tokens.split(",")] if tokens.strip() else []
        except ValueError:
            raise ValueError(f"suppress_tokens={tokens!r}: token ids separated by commas") from None
    elif isinstance(tokens, Iterable) and not isinstance(tokens, bytes):
        ids = list(tokens)
        if not all(isinstance(t, numbers.Integral) and not isinstance(t, bool) for t in ids):
            raise TypeError(f"suppress_tokens must be token ids (ints) or a str of them, not {tokens!r}")
        ids = [int(t) for t in ids]
    else:
        raise TypeError(f"suppress_tokens must be token ids (ints) or a str of them, not {tokens!r}")
    if any(not -1 <= t <= _INT_MAX for t in ids):
        raise ValueError(f"suppress_tokens={tokens!r}: each a token id >= 0, or -1 (the model's non-speech list)")
    return None if ids == [-1] else ids


def _check_path(path: Union[str, bytes]) -> None:
    """Raises the two errors above for PATH, before the engine is asked to read it; a
    file's contents given as bytes (a NUL in them, or more than a path's length) a
    TypeError that says how to pass them."""
    if isinstance(path, bytes) and (b"\0" in path or len(path) > 4096):
        raise TypeError(f"audio as bytes is a path; these {len(path)} bytes look like a file's contents: "
                        "decode them with sotto.decode_audio(io.BytesIO(data)) and pass the samples")
    for exists, cls, code in ((os.path.isdir, SottoIsADirectoryError, errno.EISDIR),
                              (lambda p: not os.path.exists(p), SottoFileNotFoundError, errno.ENOENT)):
        if exists(path):
            e = cls(code, os.strerror(code), os.fsdecode(path))
            e.status = "i/o error"
            raise e


def _segment(t: Tuple[Any, ...]) -> Segment:
    """A Segment from the extension's tuple (id, seek, start, end, text, tokens,
    temperature, avg_logprob, compression_ratio, no_speech_prob, words), WORDS a list of
    (word, start, end, probability) tuples or None."""
    words = None if t[10] is None else [Word(w[1], w[2], w[0], w[3]) for w in t[10]]
    return Segment(t[0], t[1], t[2], t[3], t[4], t[5], t[7], t[8], t[9], words, t[6])


def _data_home() -> str:
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return xdg
    return os.path.join(os.path.expanduser("~"), ".local", "share")


def default_model_path() -> str:
    """The model the ``sotto`` tool uses without ``-m``: $SOTTO_MODEL, else the tiny.en
    model setup installs (${XDG_DATA_HOME:-~/.local/share}/sotto/models/tiny.en.gguf)."""
    env = os.environ.get("SOTTO_MODEL")
    if env:
        return env
    return os.path.join(_data_home(), "sotto", "models", "tiny.en.gguf")


def default_vad_path() -> str:
    """The Silero VAD the tool uses: $SOTTO_VAD_MODEL, else the one setup installs."""
    env = os.environ.get("SOTTO_VAD_MODEL")
    if env:
        return env
    return os.path.join(_data_home(), "sotto", "models", "silero-vad.gguf")


def default_batch_vad_path() -> str:
    """The VAD batched transcription cuts with (faster-whisper 1.2.1's own Silero export):
    $SOTTO_BATCH_VAD_MODEL, else silero-vad-fw.gguf where setup installs the models."""
    env = os.environ.get("SOTTO_BATCH_VAD_MODEL")
    if env:
        return env
    return os.path.join(_data_home(), "sotto", "models", "silero-vad-fw.gguf")


def _samples(audio: Any) -> Any:
    """AUDIO as a 1-D float32 C-contiguous buffer: numpy arrays of float dtypes are
    converted, integer PCM is refused (scale it to [-1, 1] first)."""
    dtype = getattr(audio, "dtype", None)
    if dtype is None:
        return audio  # a buffer (array('f'), memoryview): checked by the extension
    import numpy as np

    if np.issubdtype(dtype, np.integer):
        raise TypeError(f"audio samples must be float32 in [-1, 1], not {dtype} (divide int16 PCM by 32768)")
    if not np.issubdtype(dtype, np.floating):  # bool, complex, strings, objects: not samples
        raise TypeError(f"audio samples must be float32 in [-1, 1], not {dtype}")
    arr = np.ascontiguousarray(audio, dtype=np.float32)
    if arr.ndim != 1:
        raise ValueError(f"audio samples must be 1-D (16 kHz mono), not of shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("audio samples must be finite (NaN or infinity found)")
    return arr


class Model:
    """A Whisper model loaded by the sotto engine.

    Args:
        path: a .gguf file, a whisper.cpp ggml .bin, a CTranslate2 or a Hugging Face
            Whisper directory, or the name of an installed model ("tiny.en": NAME.gguf or
            NAME-ct2 in sotto.models.model_dirs()); None: the default model of the ``sotto`` tool
            (:func:`default_model_path`).
        threads: worker threads of each context (0: every core this process may use).
        device: "auto" (a GPU when there is one, else the CPU) or a device string the
            library takes: "cpu", "vulkan", "vulkan:N" (``sotto info --devices`` lists them).
        vad_model: a Silero VAD GGUF for ``vad_filter`` and the silence check; None: the
            one setup installed, if any (as the tool does); True: that one, which must be
            there (FileNotFoundError); False: none.

    Raises:
        SottoError: the model (or VAD) cannot be read; the message says why.
        FileNotFoundError: no path given and no default model installed, or no file or
            installed model of that name (a :class:`SottoFileNotFoundError`, also a
            SottoError).
    """

    def __init__(
        self,
        path: Optional[Union[str, "os.PathLike[str]"]] = None,
        threads: int = 0,
        device: str = "auto",
        vad_model: Union[None, bool, str, "os.PathLike[str]"] = None,
    ) -> None:
        if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or not 0 <= threads <= 256:
            raise (ValueError if isinstance(threads, numbers.Integral) else TypeError)(
                f"threads must be an int in 0..256 (0: every core this process may use), not {threads!r}")
        threads = int(threads)  # numpy's ints too
        if path is None:
            path = default_model_path()
            if not os.path.exists(path):
                raise FileNotFoundError(
                    f"no model given and none installed at {path}: pass a path, set SOTTO_MODEL, "
                    "or run scripts/setup.sh to install the default model"
                )
        from .models import resolve_model  # (models imports this module)

        self.path = resolve_model(os.fspath(path))  # a path, or an installed model's name ("tiny.en")
        self.threads = threads
        self.device = device
        self._model = _sotto.Model(self.path)
        self._vad: Optional[Any] = None
        if vad_model is None or vad_model is True:
            default = default_vad_path()
            if os.path.exists(default):
                self._vad = _sotto.Vad(default)
            elif vad_model is True:  # asked for: not silently none
                raise FileNotFoundError(f"vad_model=True: no Silero VAD installed at {default} (run scripts/setup.sh)")
        elif vad_model is not False:
            self._vad = _sotto.Vad(os.fspath(vad_model))
        self._vad_arg = vad_model if not isinstance(vad_model, os.PathLike) else os.fspath(vad_model)
        self._batch_vad: Optional[Any] = None  # loaded on the first batched call
        self._closed = False
        self._lock = threading.Lock()
        self._free: List[Any] = []  # idle contexts
        self._in_use = self._peak = 0  # contexts out now; the most ever out at once
        # one context now, so a bad device fails here rather than at the first transcribe
        self._release(self._context(5))

    def info(self) -> Mapping[str, Any]:
        """The model's hyper-parameters (n_mels, n_text_ctx, multilingual, ...)."""
        self._check_open()
        return self._model.info()

    def close(self) -> None:
        """Lets the model's memory go now rather than with the last reference to the
        Model: its idle contexts (KV caches, scratch), the weights and the VADs. A
        transcription or stream running in another thread keeps what it uses until it
        ends. Afterwards every call but close() raises SottoError. ``with sotto.Model(...)
        as m:`` closes it at the block's end."""
        with self._lock:
            self._closed = True
            self._free.clear()
            self._model = self._vad = self._batch_vad = None

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = ", closed" if self._closed else ""
        return f"sotto.Model({self.path!r}, threads={self.threads}, device={self.device!r}{state})"

    def __reduce__(self) -> Any:
        # pickled as how it was made: loaded again from its file where it is unpickled
        # (another process, a Ray worker), which must see the same paths
        return (Model, (self.path, self.threads, self.device, self._vad_arg))

    def _check_open(self) -> None:
        if self._closed:
            err = _sotto.SottoError(f"this Model ({self.path}) is closed")
            err.status = "invalid argument"
            raise err

    @property
    def has_vad(self) -> bool:
        """Whether a Silero VAD is loaded (for vad_filter and the silence check)."""
        return self._vad is not None

    def stream(
        self,
        language: Optional[str] = None,
        beam_size: int = 5,
        min_step: float = 0.5,
        trim: float = 12.0,
        max_buffer: float = 25.0,
        initial_prompt: Optional[str] = None,
        vad: bool = True,
        vad_threshold: float = 0.5,
        vad_min_silence_ms: int = 500,
        hold: float = 2.0,
        task: str = "transcribe",
    ) -> "Stream":
        """A live transcription session (``sotto stream``'s): feed it audio as it arrives.

        Args:
            language: as for transcribe; None: detected at the first words.
            beam_size: beams of each decoding (1: greedy: less work, more words misheard).
            min_step: seconds of new audio between two decodings.
            trim, max_buffer: the buffer is cut at a committed segment's end past ``trim``
                seconds; past ``max_buffer`` (at most 30) pending words are committed.
            initial_prompt: text before the stream.
            vad: gate decoding with the Silero VAD (when the model has one): silence costs
                nothing and a pause of ``vad_min_silence_ms`` commits what is pending.
            hold: seconds of audio a buffer that holds no committed word yet (an
                utterance's start, after a pause or a cut) must hold before two decodings'
                agreement commits words (0: at once; below ``max_buffer``). The first words
                of an utterance come later and change less (``sotto stream --hold``).
            task: "transcribe" or "translate" (into English, a multilingual model; the
                events' language stays the one spoken: ``sotto stream --task``).

        Returns:
            a :class:`sotto.Stream` on a context of its own: ``feed(samples)``,
            ``finish()`` and iteration over the events.

        Raises:
            SottoError: a bad option (the message names it) or no context on the device.
        """
        from ._stream import open_stream

        self._check_open()
        if task not in ("transcribe", "translate"):
            raise ValueError(f"task must be 'transcribe' or 'translate', not {task!r}")
        return open_stream(
            self._model, self._vad if vad else None, self.threads, self.device, language=language,
            beam_size=beam_size, min_step=min_step, trim=trim, max_buffer=max_buffer,
            initial_prompt=initial_prompt, vad_threshold=vad_threshold, vad_min_silence_ms=vad_min_silence_ms,
            hold=hold, translate=task == "translate",
        )

    def _context(self, max_sequences: int, max_batch: int = 1) -> Any:
        with self._lock:
            self._check_open()
            self._in_use += 1
            self._peak = max(self._peak, self._in_use)
            for i, ctx in enumerate(self._free):
                if ctx.max_sequences >= max_sequences and ctx.max_batch >= max_batch:
                    return self._free.pop(i)
        try:
            return _sotto.Context(self._model, self.threads, self.device, max_sequences, max_batch)
        except BaseException:
            with self._lock:
                self._in_use -= 1
            raise

    def _batch_vad_model(self) -> Any:
        self._check_open()
        if self._batch_vad is None:
            path = default_batch_vad_path()
            if not os.path.exists(path):
                raise ValueError(f"batch_size needs faster-whisper's Silero VAD at {path}: run scripts/setup.sh "
                                 "or set SOTTO_BATCH_VAD_MODEL")
            self._batch_vad = _sotto.Vad(path)
        return self._batch_vad

    def _release(self, ctx: Any) -> None:
        """Back to the pool, which holds no more idle contexts than were ever out at once
        (threads transcribing together keep theirs), dropping first one that another
        idle one can stand in for: beam sizes 1..16 one after another leave the beam-16
        context alone (they held 12 contexts, 123 -> 912 MB)."""
        with self._lock:
            self._in_use -= 1
            if self._closed:  # closed while it ran: the context goes
                return
            self._free.append(ctx)
            while len(self._free) > self._peak:
                covered = [c for c in self._free if any(
                    d is not c and d.max_sequences >= c.max_sequences and d.max_batch >= c.max_batch
                    for d in self._free)]
                if not covered:
                    break
                self._free.remove(min(covered, key=lambda c: (c.max_sequences * c.max_batch, c.max_batch)))

    def transcribe(
        self,
        audio: AudioInput,
        language: Optional[str] = None,
        task: str = "transcribe",
        beam_size: int = 5,
        best_of: int = 5,
        patience: float = 1.0,
        length_penalty: Optional[float] = None,
        temperature: Union[float, Sequence[float]] = DEFAULT_TEMPERATURES,
        compression_ratio_threshold: Optional[float] = 2.4,
        log_prob_threshold: Optional[float] = -1.0,
        no_speech_threshold: Optional[float] = 0.6,
        condition_on_previous_text: bool = True,
        initial_prompt: Union[str, Sequence[int], None] = None,
        suppress_blank: bool = True,
        without_timestamps: bool = False,
        max_initial_timestamp: float = 1.0,
        word_timestamps: bool = False,
        prepend_punctuations: str = DEFAULT_PREPEND_PUNCTUATIONS,
        append_punctuations: str = DEFAULT_APPEND_PUNCTUATIONS,
        hallucination_silence_threshold: Optional[float] = None,
        vad_filter: Union[bool, int] = False,
        vad_parameters: Optional[Mapping[str, float]] = None,
        silence_check: bool = True,
        seed: int = 0,
        sample_len: Optional[int] = None,
        on_segment: Optional[Callable[[Segment], Any]] = None,
        batch_size: int = 0,
        hotwords: Optional[str] = None,
        prefix: Optional[str] = None,
        multilingual: bool = False,
        clip_timestamps: Union[str, Sequence[float], None] = None,
        max_new_tokens: Optional[int] = None,
        repetition_penalty: float = 1.0,
        no_repeat_ngram_size: int = 0,
        batch_vad: bool = True,
        carry_initial_prompt: bool = False,
        on_language: Optional[Callable[[str, float], Any]] = None,
        fallback_best: bool = False,
        suppress_tokens: Union[str, Sequence[int], None] = "-1",
        ctranslate2_search: bool = False,
        prompt_reset_on_temperature: float = 0.5,
    ) -> Tuple[List[Segment], TranscriptionInfo]:
        """Transcribes AUDIO with openai-whisper's long-form semantics (30 s windows
        advanced by the timestamps, beam search, temperature fallback, conditioning on
        the previous text), exactly as ``sotto transcribe`` does with the same options.

        Args:
            audio: a path to any file FFmpeg reads, or 16 kHz mono float32 samples (a 1-D
                numpy array or any float32 buffer).
            language: "en", "de", ...; None or "auto": detected (multilingual models).
            task: "transcribe" or "translate" (into English).
            beam_size: beams at temperature 0 (1: greedy); best_of: samples above it.
            patience, length_penalty: beam search ranking (None: by logprob / length;
                a number: by logprob / ((5 + length) / 6) ** length_penalty, openai's, or
                with ctranslate2_search by logprob / length ** length_penalty,
                CTranslate2's, where 0 also ends the search when its best candidate ends).
            temperature: one temperature or the sequence tried while a window fails.
            compression_ratio_threshold, log_prob_threshold, no_speech_threshold: the
                reference's thresholds; None turns that check off.
            condition_on_previous_text: feed each window's text to the next.
            prompt_reset_on_temperature: a window decoded at a temperature above this
                is not fed to the next (openai-whisper's 0.5; faster-whisper's option).
            initial_prompt: text before the first window (names, spelling, style); or
                token ids, put there as they are (faster-whisper's initial_prompt as ids).
            carry_initial_prompt: openai-whisper's: initial_prompt begins every window's
                prompt, the previous text after it (what fits with it).
            fallback_best: when every temperature fails, keep faster-whisper's choice (the
                highest avg_logprob among the decodes within compression_ratio_threshold,
                else among all; the last temperature reported) instead of openai's last
                decode.
            ctranslate2_search: beam search as CTranslate2 (faster-whisper) steps it
                instead of openai-whisper's BeamSearchDecoder: the 2 x beam_size best of
                all beams, only an end of text among the first beam_size finishing one
                (sotto.h: sotto_transcribe_params.ctranslate2_search). The two may end on
                different text; batch_size always takes CTranslate2's.
            suppress_blank: no blank or end of text as the first token.
            suppress_tokens: the token ids never sampled, openai-whisper's: a list of
                ints or a str of them separated by commas; -1 (the default "-1")
                stands for the model's non-speech symbols, "" or [] for none of them;
                the special tokens (<|startoftranscript|>, ...) always.
            without_timestamps: one segment per 30 s window, no timestamp tokens.
            max_initial_timestamp: the first timestamp at most this many seconds.
            word_timestamps: a time for every word (openai-whisper's method: the
                cross-attention of the alignment heads, DTW); each Segment's ``words``
                is then a list of :class:`Word`, and segment times and seeking are
                refined by them, as ``sotto transcribe --word-timestamps``.
            prepend_punctuations, append_punctuations: with word timestamps, the
                punctuation merged into the next word and into the previous one.
            hallucination_silence_threshold: with word timestamps, silences longer than
                this many seconds around a segment of anomalous words are skipped, and
                the segment with them (openai's option); None: no such skip. Ignored
                without word timestamps, as openai's and faster-whisper's.
            vad_filter: transcribe only the speech Silero VAD finds (needs a VAD model);
                a segment that spans a silence it dropped is cut there. 2: as
                faster-whisper 1.2.1 leaves such segments, whole (sotto.h vad_filter).
            vad_parameters: {"threshold", "neg_threshold", "min_speech_duration_ms",
                "max_speech_duration_s", "min_silence_duration_ms", "speech_pad_ms"}
                (faster-whisper's VadOptions, applied as its vad.py applies them); the
                keys not given at VadOptions' defaults (0.5, threshold - 0.15, 0 ms, no
                maximum, 2000 ms, 400 ms). With batch_size, the cut's (the pipeline's
                vad_parameters: max_speech_duration_s is 30 unless given); None: the
                pipeline's own cut (min_silence_duration_ms 160).
            silence_check: with a VAD, skip windows the decoder and the VAD both call
                silence.
            seed: of the sampling at temperature > 0.
            sample_len: most tokens per window (None: n_text_ctx / 2).
            on_segment: called with each Segment as its window is done (in the calling
                thread, the GIL held); a true return stops there (the segments up to
                that one are returned), an exception stops and is raised from transcribe. Ctrl-C (SIGINT in the
                main thread) raises KeyboardInterrupt after the window in progress.
            on_language: called with the language detected (its code, "en", ..., and
                probability) before the first window is decoded, only when it is
                detected (language None on a multilingual model); a true return stops
                there (no segments), an exception stops and is raised from transcribe.
            batch_size: 0 (default): the long-form loop above. N >= 1: faster-whisper's
                BatchedInferencePipeline: the speech cut by faster-whisper's own Silero VAD
                (:func:`default_batch_vad_path`) into chunks of at most 30 s, each decoded on
                its own (no previous text, max_initial_timestamp 0, the first temperature
                only), N chunks encoded and decoded together; the same segments as
                ``sotto transcribe --batch-size N --timestamps`` (with
                without_timestamps=True, the tool's default: as without --timestamps). initial_prompt (its tokens as
                written, no space added) and hotwords begin every chunk's prompt, as the
                pipeline's.
            hotwords, prefix, multilingual, clip_timestamps, max_new_tokens:
                faster-whisper 1.2.1's options with its meaning (sotto.h
                sotto_transcribe_params): hint text in every window's prompt; the text
                the first window starts with; every window's language detected; the
                clips [start, end, ...] in seconds to transcribe (or a str "0,5.5,8"); its cap on the tokens
                of a window. With batch_size, multilingual detects each chunk's language
                and clip_timestamps [start, end, ...] are the chunks (faster-whisper's
                pipeline), in place of the VAD's.
            repetition_penalty, no_repeat_ngram_size: CTranslate2's, as faster-whisper
                passes them (1 and 0: off): every token a window has sampled has its
                logit divided by the penalty (a negative one multiplied); no n-gram of
                that many tokens sampled twice in a window.
            batch_vad: with batch_size, True (default): the chunks from the VAD (or
                clip_timestamps); False: the whole audio as one chunk (at most 30 s),
                faster-whisper's pipeline with vad_filter=False.

        Returns:
            (segments, info): the list of :class:`Segment` and a :class:`TranscriptionInfo`.

        Raises:
            SottoError: the engine failed (unreadable audio, ...), with its message; a
                path that does not exist is also a FileNotFoundError, a directory an
                IsADirectoryError (faster-whisper's and openai-whisper's errors).
            ValueError, TypeError: an option or the samples are invalid (the library's
                sotto_transcribe_params_check says which).

        Warns:
            RuntimeWarning: the input was read around: a WAV file cut short is
                transcribed as far as it goes, as ffmpeg reads it.
        """
        self._check_open()
        prompt_ids = None
        if initial_prompt is not None and not isinstance(initial_prompt, str):  # token ids
            if isinstance(initial_prompt, (bytes, bytearray)) or not isinstance(initial_prompt, Iterable):
                raise TypeError(f"initial_prompt must be a str, token ids or None, not {type(initial_prompt).__name__}")
            prompt_ids = list(initial_prompt)
            if not all(isinstance(i, numbers.Integral) and not isinstance(i, bool) and 0 <= i <= _INT_MAX
                       for i in prompt_ids):
                raise ValueError(f"initial_prompt as token ids: each an int >= 0, not {prompt_ids!r}")
            prompt_ids, initial_prompt = [int(i) for i in prompt_ids], None
        for name, text in (("language", language), ("initial_prompt", initial_prompt), ("hotwords", hotwords),
                           ("prefix", prefix)):
            if text is not None and not isinstance(text, str):
                raise TypeError(f"{name} must be a str or None, not {type(text).__name__}")
        # numbers named when wrong, before the engine's parser sees them ("argument 17 must
        # be int", a bare OverflowError, a temperature string read a character at a time)
        ints = (("seed", seed, 0, 2 ** 64 - 1), ("sample_len", sample_len, 0, _INT_MAX),
                ("max_new_tokens", max_new_tokens, 0, _INT_MAX), ("no_repeat_ngram_size", no_repeat_ngram_size, 0, _INT_MAX))
        for name, v, lo, hi in ints:  # numbers.Integral, Real: numpy's scalars too
            if v is None and name in ("sample_len", "max_new_tokens"):
                continue
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not lo <= v <= hi:
                raise (ValueError if isinstance(v, numbers.Integral) else TypeError)(
                    f"{name} must be an int in {lo}..{hi}, not {v!r}")
        nums = (("patience", patience, False), ("max_initial_timestamp", max_initial_timestamp, False),
                ("repetition_penalty", repetition_penalty, False), ("length_penalty", length_penalty, True),
                ("prompt_reset_on_temperature", prompt_reset_on_temperature, False),
                ("compression_ratio_threshold", compression_ratio_threshold, True),
                ("log_prob_threshold", log_prob_threshold, True), ("no_speech_threshold", no_speech_threshold, True),
                ("hallucination_silence_threshold", hallucination_silence_threshold, True))
        for name, v, none_ok in nums:
            if not (v is None and none_ok) and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
                raise TypeError(f"{name} must be a number{' or None' if none_ok else ''}, not {v!r}")
        if not 0 < patience <= 100:  # beam_size * patience candidates (sotto_transcribe_params_check's bound)
            raise ValueError(f"patience must be in (0, 100], not {patience!r}")
        def real(t: Any) -> bool:
            return isinstance(t, numbers.Real) and not isinstance(t, bool)

        wrong = TypeError(f"temperature must be a number or a sequence of numbers, not {temperature!r}")
        if real(temperature):
            given: Tuple[Any, ...] = (temperature,)
        elif isinstance(temperature, (str, bytes)) or not isinstance(temperature, Iterable):
            raise wrong
        else:
            given = tuple(temperature)  # read once: a generator too; () is the library's to refuse
            if not all(real(t) for t in given):
                raise wrong
        puncts = (("prepend_punctuations", prepend_punctuations), ("append_punctuations", append_punctuations))
        for name, punct in puncts:
            if not isinstance(punct, str):
                raise TypeError(f"{name} must be a str, not {type(punct).__name__}")
        if hallucination_silence_threshold is not None and not hallucination_silence_threshold >= 0:
            raise ValueError(
                f"hallucination_silence_threshold must be seconds >= 0 or None, not {hallucination_silence_threshold!r}"
            )
        if task not in ("transcribe", "translate"):
            raise ValueError(f"task must be 'transcribe' or 'translate', not {task!r}")
        for name, n in (("beam_size", beam_size), ("best_of", best_of)):
            if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 1 <= n <= _sotto.MAX_SEQUENCES:
                raise ValueError(f"{name} must be an int in 1..{_sotto.MAX_SEQUENCES}, not {n!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or not 0 <= batch_size <= 64:
            raise ValueError(f"batch_size must be an int in 0..64 (0: no batching), not {batch_size!r}")
        beam_size, best_of, batch_size = int(beam_size), int(best_of), int(batch_size)  # numpy's ints too
        if batch_size and (vad_filter or prefix is not None or carry_initial_prompt):
            raise ValueError("batch_size cuts by VAD itself (vad_parameters set how) and gives every chunk one "
                             "prompt: no vad_filter, prefix or carry_initial_prompt")
        if vad_filter not in (False, True, 0, 1, 2):
            raise ValueError(f"vad_filter must be False, True or 2, not {vad_filter!r}")
        if vad_filter and self._vad is None:
            raise ValueError(
                f"vad_filter needs a Silero VAD model: pass Model(vad_model=PATH) or install one at {default_vad_path()}"
            )
        suppress = _suppress_ids(suppress_tokens)
        temps: Optional[Sequence[float]]
        temps = tuple(float(t) for t in given)
        if temps == DEFAULT_TEMPERATURES:
            temps = None  # the library's own six, bit for bit the tool's
        vp = dict(vad_parameters or {})
        known = {"threshold", "neg_threshold", "min_speech_duration_ms", "max_speech_duration_s",
                 "min_silence_duration_ms", "speech_pad_ms"}
        unknown = set(vp) - known
        if unknown:
            raise ValueError(f"vad_parameters: unknown {sorted(unknown)} (known: {sorted(known)})")
        for key, v in vp.items():  # named here, not as the engine's parser's "must be real number"
            if not (v is None and key == "neg_threshold") and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
                raise TypeError(f"vad_parameters[{key!r}] must be a number, not {v!r}")
        batch_vad_params = None
        if batch_size and vad_parameters is not None:  # VadOptions' defaults, the dict's keys over them
            neg = vp.get("neg_threshold")
            batch_vad_params = (float(vp.get("threshold", 0.5)), None if neg is None else float(neg),
                                int(vp.get("min_speech_duration_ms", 0)), float(vp.get("max_speech_duration_s", 30.0)),
                                int(vp.get("min_silence_duration_ms", 2000)), int(vp.get("speech_pad_ms", 400)))
        options = dict(
            language=None if language in (None, "auto") else language,
            translate=task == "translate",
            timestamps=not without_timestamps,
            beam_size=beam_size,
            best_of=best_of,
            patience=float(patience),
            length_penalty=length_penalty,
            temperatures=temps,
            compression_ratio_threshold=compression_ratio_threshold,
            log_prob_threshold=log_prob_threshold,
            no_speech_threshold=no_speech_threshold,
            condition_on_previous_text=condition_on_previous_text,
            initial_prompt=initial_prompt,
            suppress_blank=suppress_blank,
            max_initial_timestamp=float(max_initial_timestamp),
            seed=int(seed),  # numpy's ints too: the parser takes Python's
            sample_len=int(sample_len or 0),
            vad=(self._batch_vad_model() if batch_vad and clip_timestamps is None else None) if batch_size else self._vad,
            batch_size=batch_size,
            silence_check=silence_check,
            vad_filter=int(vad_filter),
            vad_threshold=vp.get("threshold", 0.5),
            vad_min_speech_ms=int(vp.get("min_speech_duration_ms", 0)),
            vad_min_silence_ms=int(vp.get("min_silence_duration_ms", 2000)),
            vad_speech_pad_ms=int(vp.get("speech_pad_ms", 400)),
            vad_neg_threshold=None if vp.get("neg_threshold") is None else float(vp["neg_threshold"]),
            vad_max_speech_s=float(vp.get("max_speech_duration_s", float("inf"))),
            word_timestamps=bool(word_timestamps),
            prepend_punctuations=prepend_punctuations,
            append_punctuations=append_punctuations,
            hallucination_silence_threshold=hallucination_silence_threshold if word_timestamps else None,
            hotwords=hotwords,
            prefix=prefix,
            multilingual=bool(multilingual),
            clip_timestamps=_clip_seconds(clip_timestamps),
            max_new_tokens=int(max_new_tokens or 0),
            repetition_penalty=float(repetition_penalty),
            no_repeat_ngram_size=int(no_repeat_ngram_size),
            carry_initial_prompt=bool(carry_initial_prompt),
            fallback_best=bool(fallback_best),
            ctranslate2_search=bool(ctranslate2_search),
            prompt_reset_on_temperature=float(prompt_reset_on_temperature),
            batch_vad_params=batch_vad_params,
            suppress_tokens=suppress,
            initial_prompt_tokens=prompt_ids,
        )
        if not isinstance(audio, (str, bytes, os.PathLike)):
            audio = _samples(audio)
        else:
            _check_path(os.fspath(audio))
        for name, f in (("on_segment", on_segment), ("on_language", on_language)):
            if f is not None and not callable(f):
                raise TypeError(f"{name} must be callable or None")
        callback = None if on_segment is None else (lambda t: on_segment(_segment(t)))
        ctx = self._context(max(beam_size, best_of), max(batch_size, 1))
        try:
            r = ctx.transcribe(audio, on_segment=callback, on_language=on_language, **options)
        except SottoError as e:
            if getattr(e, "status", None) != "invalid argument" or isinstance(e, ValueError):
                raise
            err = SottoValueError(str(e))
            err.status = e.status
            raise err from e
        finally:
            self._release(ctx)
        segments = [_segment(s) for s in r["segments"]]
        # faster-whisper: 1 when the language is not detected (given, or an English-only model)
        probability = r["language_probability"] if r["language_detected"] else 1.0
        info = TranscriptionInfo(
            r["language"], probability, r["duration"], r["language_detected"], r["text"], r["stopped"]
        )
        return segments, info
