"""Many files on many machines with Ray Data: ``map_batches`` over a dataset of audio paths,
one :class:`sotto.Model` per actor (loaded once, reused for every batch it gets).

    import ray, sotto.ray
    ds = ray.data.from_items([{"path": p} for p in paths])
    out = sotto.ray.transcribe_dataset(ds, model_path="/models/tiny.en.gguf", actors=8, threads=4)
    out.write_json("s3://bucket/transcripts/")       # or .take_all(), .write_parquet(...)

Each row gets the columns ``text``, ``language``, ``duration``, ``segments`` (a list of
{start, end, text, avg_logprob, no_speech_prob}), ``error`` ("" or the engine's message:
one bad file does not stop the run) and ``worker`` (the actor's host:pid). The model file
must be readable at the same path on every node (a shared file system, or a copy on each).
Needs ``pip install ray[data]`` (``pip install ./python[ray]``).
"""

from __future__ import annotations

import os
import socket
from typing import Any, Dict, List, Optional

import numpy as np

from ._model import Model, SottoError


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

    def __call__(self, batch: Dict[str, np.ndarray]) -> Dict[str, Any]:
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
        out: Dict[str, Any] = dict(batch)
        out.update(cols)
        return out


def transcribe_dataset(
    ds: Any,
    model_path: Optional[str] = None,
    actors: int = 2,
    threads: int = 1,
    batch_size: int = 4,
    device: str = "auto",
    vad_model: Any = None,
    path_column: str = "path",
    **options: Any,
) -> Any:
    """``ds.map_batches`` with :class:`Transcriber` on a pool of ACTORS actors, each with
    THREADS CPUs (``num_cpus``) and one model; BATCH_SIZE paths per call. OPTIONS go to
    :meth:`sotto.Model.transcribe`. Returns the (lazy) transcribed dataset."""
    return ds.map_batches(
        Transcriber,
        fn_constructor_kwargs=dict(
            model_path=model_path, threads=threads, device=device, vad_model=vad_model,
            path_column=path_column, **options,
        ),
        concurrency=actors,
        num_cpus=threads,
        batch_size=batch_size,
        batch_format="numpy",
    )
