"""Model names for the drop-in front ends: "tiny.en", "base", ... resolved to the files
setup installs (or a folder the caller names), and compute types converted through the
library (sotto_model_save_gguf) into a cache, as faster-whisper's compute_type does."""

from __future__ import annotations

import hashlib
import os
import threading
from typing import List, Optional, Sequence

from . import _sotto

#: faster-whisper's compute types and the weight type each gives (None: as stored)
COMPUTE_TYPES = {
    "default": None,
    "auto": None,
    "int8": "q8_0",
    "int8_float32": "q8_0",
    "int8_float16": "q8_0",
    "int8_bfloat16": "q8_0",
    "float16": "f16",
    "float32": "f32",
}


def _data_home() -> str:
    return os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")


def model_dirs(extra: Sequence[str] = ()) -> List[str]:
    """Where names are looked up, in order: EXTRA (e.g. faster-whisper's download_root),
    every folder of $SOTTO_MODELS_DIR (':'-separated), then the one setup installs into,
    ${XDG_DATA_HOME:-~/.local/share}/sotto/models."""
    dirs = list(extra)
    dirs += [d for d in os.environ.get("SOTTO_MODELS_DIR", "").split(os.pathsep) if d]
    dirs.append(os.path.join(_data_home(), "sotto", "models"))
    return dirs


def _candidates(d: str, name: str) -> List[str]:
    # the repo's conventions: NAME.gguf, a NAME-ct2 CTranslate2 folder, a NAME folder or file
    return [os.path.join(d, name + ".gguf"), os.path.join(d, name + "-ct2"), os.path.join(d, name)]


def installed_models(extra: Sequence[str] = ()) -> List[str]:
    """The model names found in :func:`model_dirs` (Silero VAD files left out)."""
    names = set()
    for d in model_dirs(extra):
        try:
            entries = os.listdir(d)
        except OSError:
            continue
        for e in entries:
            if e.startswith("silero") or e.endswith(".tmp"):
                continue
            if e.endswith(".gguf"):
                names.add(e[: -len(".gguf")])
            elif e.endswith("-ct2") and os.path.isdir(os.path.join(d, e)):
                names.add(e[: -len("-ct2")])
    return sorted(names)


def resolve_vad(extra: Sequence[str] = (), names: Sequence[str] = ("silero-vad.gguf",)) -> Optional[str]:
    """The Silero VAD for vad_filter: $SOTTO_VAD_MODEL, else the first of NAMES (in order)
    in :func:`model_dirs`; None when there is none (vad_filter then says so)."""
    env = os.environ.get("SOTTO_VAD_MODEL")
    if env:
        return env
    for name in names:
        for d in model_dirs(extra):
            c = os.path.join(d, name)
            if os.path.exists(c):
                return c
    return None


def resolve_model(name_or_path: str, extra: Sequence[str] = ()) -> str:
    """NAME_OR_PATH itself when it exists, else the first installed file of that name.

    Raises:
        sotto.SottoFileNotFoundError: neither (a FileNotFoundError, and a RuntimeError
            as openai's load_model raises); the message lists the folders searched and
            the names installed there.
    """
    path = os.fspath(name_or_path)
    if os.path.exists(path):
        return path
    dirs = model_dirs(extra)
    for d in dirs:
        for c in _candidates(d, path):
            if os.path.exists(c):
                return c
    have = installed_models(extra)
    from ._model import SottoFileNotFoundError  # _model imports this module

    e = SottoFileNotFoundError(
        f"no model '{path}': not a file or folder, and no {path}.gguf or {path}-ct2 in "
        f"{', '.join(dirs)}; installed: {', '.join(have) if have else 'none'}",
    )
    e.status = "i/o error"
    raise e


def converted(model: "_sotto.Model", path: str, compute_type: str, cache: Optional[str] = None) -> Optional[str]:
    """A GGUF of the model at PATH in COMPUTE_TYPE's weight type, written once into the
    cache (${XDG_CACHE_HOME:-~/.cache}/sotto/converted) and reused; None when the model
    already has that type everywhere (or COMPUTE_TYPE is "default" or "auto").

    Raises:
        NotImplementedError: a compute type sotto has no weight type for (int16, bfloat16).
    """
    if compute_type not in COMPUTE_TYPES:
        raise NotImplementedError(
            f"compute_type={compute_type!r}: sotto has the weight types of {sorted(COMPUTE_TYPES)}"
        )
    want = COMPUTE_TYPES[compute_type]
    if want is None or model.weight_types() == (want, want):
        return None
    cache = cache or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "sotto", "converted"
    )
    st = os.stat(path)
    key = hashlib.sha256(f"{os.path.abspath(path)}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:16]
    out = os.path.join(cache, f"{os.path.basename(os.path.normpath(path))}.{key}.{want}.gguf")
    if not os.path.exists(out):
        os.makedirs(cache, exist_ok=True)
        # a name of this process and thread's own, renamed over OUT: workers converting at
        # once (gunicorn, Ray, pytest-xdist) each write a whole file and the last rename
        # wins, where one OUT.tmp was truncated and renamed away under the other writer
        mine = f"{out}.{os.getpid()}.{threading.get_ident()}"
        try:
            model.save_gguf(mine, want, want)  # itself through MINE.tmp and a rename
            os.replace(mine, out)
        finally:
            if os.path.exists(mine):
                os.remove(mine)
    return out
