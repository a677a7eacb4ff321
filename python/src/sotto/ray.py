"""Many files on many machines with Ray Data: ``map_batches`` over a dataset of audio paths,
one :class:`sotto.Model` per actor (loaded once, reused for every batch it gets).

    import ray, sotto.ray
    ds = ray.data.from_items([{"path": p} for p in paths])
    out = sotto.ray.transcribe_dataset(ds, model_path="/models/tiny.en.gguf", actors=8, threads=4)
    out.write_json("s3://bucket/transcripts/")       # or .take_all(), .write_parquet(...)

Each row gets the columns ``text``, ``language``, ``duration``, ``segments`` (a list of
{start, end, text, avg_logprob, no_speech_prob}), ``error`` ("" or the engine's message:
one bad file does not stop the run) and ``worker`` (the actor's host:pid), with the same
Arrow types in every batch (so that ``write_parquet`` files read back together).
``batch_size`` is Ray's rows (paths) per call; batched decoding of each file is
``sotto.Model.transcribe``'s own ``batch_size``, passed as ``decode_batch_size``. The model file
must be readable at the same path on every node (a shared file system, or a copy on each).
Needs ``pip install ray[data]`` (``pip install ./python[ray]``).
"""

from __future__ import annotations

import os
import socket
from typing import Any, Dict, List, Optional

import numpy as np

from ._model import Model, SottoError


def _columns() -> List[Any]:
    import pyarrow as pa

    segment = pa.struct([("start", pa.float64()), ("end", pa.float64()), ("text", pa.string()),
                         ("avg_logprob", pa.float64()), ("no_speech_prob", pa.float64())])
    return [("text", pa.string()), ("language", pa.string()), ("duration", pa.float64()),
            ("segments", pa.list_(segment)), ("error", pa.string()), ("worker", pa.string())]


class Transcriber:
    """The callable class ``map_batches`` makes one actor of per worker: it loads the model
    in ``__init__`` and transcribes each batch's paths in ``__call__``.

    Args:
        model_path: the model (None: the default model of the ``sotto`` tool on that node).
        threads: engine threads of the actor (match ``num_cpus`` of the actor).
        device, vad_model: as for :class:`sotto.Model`.
        path_column: the column holding the audio paths.
        **options: keyword arguments of :meth:`sotto.Model.transcribe` (beam_size, language, ...).
    """

    def __init__(
        self,
        model_path: Optional[str] = None,
        threads: int = 1,
        device: str = "auto",
        vad_model: Any = None,
        path_column: str = "path",
        **options: Any,
    ) -> None:
        self.model = Model(model_path, threads=threads, device=device, vad_model=vad_model)
        self.path_column = path_column
        self.options = options
        self.worker = f"{socket.gethostname()}:{os.getpid()}"

    def __call__(self, batch: Dict[str, np.ndarray]) -> Any:
        import pyarrow as pa  # Ray Data's own dependency

        cols: Dict[str, List[Any]] = {k: [] for k in ("text", "language", "duration", "segments", "error", "worker")}
        for path in batch[self.path_column]:
            try:
                segments, info = self.model.transcribe(str(path), **self.options)
                text, language, duration, error = info.text, info.language, info.duration, ""
                segs = [
                    {"start": s.start, "end": s.end, "text": s.text, "avg_logprob": s.avg_logprob,
                     "no_speech_prob": s.no_speech_prob}
                    for s in segments
                ]
            except SottoError as e:
                text, language, duration, error, segs = "", "", 0.0, str(e), []
            cols["text"].append(text)
            cols["language"].append(language)
            cols["duration"].append(duration)
            cols["segments"].append(segs)
            cols["error"].append(error)
            cols["worker"].append(self.worker)
        # one schema for every batch: a batch of failed or silent files alone (segments all
        # []) would otherwise be typed list<null>, and its Parquet file would not read back
        # with the others'
        table = pa.table({k: pa.array(list(v)) for k, v in batch.items() if k not in cols})
        for name, typ in _columns():
            table = table.append_column(pa.field(name, typ), pa.array(cols[name], type=typ))
        return table


def _actor_pool(actors: int) -> Any:
    import ray.data

    return ray.data.ActorPoolStrategy(size=actors)  # (Ray 2.60 deprecates concurrency= for it)


def transcribe_dataset(
    ds: Any,
    model_path: Optional[str] = None,
    actors: int = 2,
    threads: int = 1,
    batch_size: int = 4,
    device: str = "auto",
    vad_model: Any = None,
    path_column: str = "path",
    decode_batch_size: int = 0,
    **options: Any,
) -> Any:
    """``ds.map_batches`` with :class:`Transcriber` on a pool of ACTORS actors, each with
    THREADS CPUs (``num_cpus``) and one model; BATCH_SIZE paths per call. OPTIONS go to
    :meth:`sotto.Model.transcribe`, and DECODE_BATCH_SIZE as its ``batch_size`` (> 0: each
    file's VAD chunks decoded N at a time, faster-whisper's batched pipeline). Returns the
    (lazy) transcribed dataset.

    Raises:
        TypeError: DS is not a Ray dataset (``pip install 'ray[data]'``, then
            ``ray.data.from_items``).
    """
    if not hasattr(ds, "map_batches"):
        raise TypeError(f"ds must be a ray.data.Dataset (pip install 'ray[data]'; ray.data.from_items), "
                        f"not {type(ds).__name__}")
    if decode_batch_size:
        options["batch_size"] = decode_batch_size
    return ds.map_batches(
        Transcriber,
        fn_constructor_kwargs=dict(
            model_path=model_path, threads=threads, device=device, vad_model=vad_model,
            path_column=path_column, **options,
        ),
        compute=_actor_pool(actors),
        num_cpus=threads,
        batch_size=batch_size,
        batch_format="numpy",
    )
