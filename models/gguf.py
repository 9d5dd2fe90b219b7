"""Read the metadata header of a GGUF file without loading the model.
Only the key/value section is parsed; large arrays (the vocabulary) are kept as a length.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GGUF_MAGIC = b"GGUF"
# Arrays longer than this are summarised instead of materialised.
MAX_KEPT_ARRAY = 64

_SCALARS: dict[int, str] = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING = 8
_ARRAY = 9


class GGUFError(ValueError):
    """The file is not a readable GGUF model."""


@dataclass(frozen=True)
class ArraySummary:
    """Stands in for an array too long to keep (the vocabulary, merges, scores)."""

    element_type: int
    length: int


@dataclass(frozen=True)
class GGUFHeader:
    version: int
    tensor_count: int
    metadata: dict[str, Any]

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))

    @property
    def name(self) -> str:
        return str(self.metadata.get("general.name", ""))

    @property
    def context_length(self) -> int | None:
        value = self.metadata.get(f"{self.architecture}.context_length")
        return int(value) if isinstance(value, int) else None

    @property
    def vocabulary_size(self) -> int | None:
        tokens = self.metadata.get("tokenizer.ggml.tokens")
        if isinstance(tokens, ArraySummary):
            return tokens.length
        if isinstance(tokens, list):
            return len(tokens)
        return None

    def _count(self, key: str) -> int | None:
        value = self.metadata.get(f"{self.architecture}.{key}")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def block_count(self) -> int | None:
        """The model's layers (transformer blocks)."""
        return self._count("block_count")

    @property
    def head_count(self) -> int | None:
        """Attention heads (the first layer's, where each layer states its own)."""
        heads = self._per_layer("attention.head_count")
        return heads[0] if heads else None

    def _per_layer(self, key: str) -> list[int] | None:
        """A count each layer has: one number for all of them, or a list of one per layer."""
        layers = self.block_count
        value = self.metadata.get(f"{self.architecture}.{key}")
        if layers is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return [value] * layers
        if (
            isinstance(value, list)
            and len(value) == layers
            and all(isinstance(v, int) for v in value)
        ):
            return value
        return None

    def kv_elements_per_token(self) -> int | None:
        """How many numbers one token's keys and values take, all layers together (each layer:
        its KV heads times the key and value head sizes); None when the header does not say."""
        heads = self._per_layer("attention.head_count")
        kv_heads = self._per_layer("attention.head_count_kv") or heads
        width = self._count("embedding_length")
        if not heads or not kv_heads or not width or not heads[0]:
            return None
        key = self._count("attention.key_length") or width // heads[0]
        value = self._count("attention.value_length") or key
        return sum(n * (key + value) for n in kv_heads)


class _Reader:
    def __init__(self, buf: mmap.mmap | bytes) -> None:
        self.buf = buf
        self.pos = 0

    def take(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buf):
            raise GGUFError("the file ends inside its metadata header (truncated download?)")
        (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return value

    def string(self) -> str:
        length = self.take("<Q")
        if self.pos + length > len(self.buf):
            raise GGUFError("the file ends inside a metadata string (truncated download?)")
        raw = self.buf[self.pos : self.pos + length]
        self.pos += length
        return bytes(raw).decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        length = self.take("<Q")
        self.pos += length

    def value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self.take(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            element = self.take("<I")
            length = self.take("<Q")
            if length > MAX_KEPT_ARRAY:
                self.skip_array(element, length)
                return ArraySummary(element, length)
            return [self.value(element) for _ in range(length)]
        raise GGUFError(f"unknown metadata value type {kind}")

    def skip_array(self, element: int, length: int) -> None:
        if element in _SCALARS:
            self.pos += struct.calcsize(_SCALARS[element]) * length
        elif element == _STRING:
            for _ in range(length):
                self.skip_string()
        else:
            for _ in range(length):
                self.value(element)
        if self.pos > len(self.buf):
            raise GGUFError("the file ends inside a metadata array (truncated download?)")


def read_header(path: str | Path) -> GGUFHeader:
    """Parse the GGUF header of ``path``; raise GGUFError saying why when it is not one."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            if path.stat().st_size < 24:
                raise GGUFError(f"{path} is too small to be a GGUF model")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                return _parse(buf, path)
    except OSError as exc:
        raise GGUFError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _parse(buf: mmap.mmap, path: Path) -> GGUFHeader:
    if buf[:4] != GGUF_MAGIC:
        raise GGUFError(f"{path} is not a GGUF model (it does not start with 'GGUF')")
    reader = _Reader(buf)
    reader.pos = 4
    version = reader.take("<I")
    if version == 1:
        tensor_count = reader.take("<I")
        kv_count = reader.take("<I")
    elif version in (2, 3):
        tensor_count = reader.take("<Q")
        kv_count = reader.take("<Q")
    else:
        raise GGUFError(f"{path} has GGUF version {version}, which this reader does not know")
    metadata: dict[str, Any] = {}
    for _ in range(kv_count):
        key = reader.string()
        kind = reader.take("<I")
        metadata[key] = reader.value(kind)
    return GGUFHeader(version=version, tensor_count=tensor_count, metadata=metadata)
