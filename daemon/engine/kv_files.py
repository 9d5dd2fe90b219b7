"""The file of one saved KV state on disk: a header naming its owner, its tokens, then its KV.
Written whole or not at all; checked (owner, checksum) before llama.cpp sees a byte."""

from __future__ import annotations

import os
import struct
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import xxhash

MAGIC = b"ASSISTKV"
VERSION = 1
SUFFIX = ".kvstate"
# magic, version, n_ctx, token count, reserved, data length, fingerprint, layout, checksum.
_HEADER = struct.Struct("<8sIIIIQ16s16s16s")
HEADER_SIZE = _HEADER.size
_TOKEN = np.dtype("<i4")
_CHUNK = 16 * 1024 * 1024


class BadStateFile(ValueError):
    """The file is not a whole state file (not one, truncated, or its checksum differs)."""


class ForeignStateFile(ValueError):
    """The file is a state file of another model, ``n_ctx``, context layout or format version."""


# A file is written to a temporary name, flushed to the disk and renamed into place, so a reader
# (this daemon or another sharing the folder) sees the whole file or none. Its header says which
# model (the fingerprint of its weights), which ``n_ctx`` and which context layout (the KV types,
# the sequences and streams, the flash attention and RoPE settings, the llama.cpp version: what
# llama.cpp's sequence state data depends on) wrote it; the tokens come right after the header, so
# the folder's index reads them without the KV data; a checksum (xxh3-128) covers the header, the
# tokens and the data, and is checked before any byte of it is given to llama.cpp.
@dataclass(frozen=True)
class StateOwner:
    """What a state file must have been written by to be loaded here."""

    fingerprint: str  # the model's weights
    n_ctx: int
    layout: str  # the context's settings the KV data depends on, as text

    @property
    def fingerprint_digest(self) -> bytes:
        return xxhash.xxh3_128_digest(self.fingerprint.encode())

    @property
    def layout_digest(self) -> bytes:
        return xxhash.xxh3_128_digest(self.layout.encode())

    def file_name(self, tokens: np.ndarray) -> str:
        """The file of a state of ``tokens``: the same tokens of the same owner, the same name."""
        digest = xxhash.xxh3_128()
        digest.update(self.fingerprint_digest + self.layout_digest)
        digest.update(struct.pack("<I", self.n_ctx))
        digest.update(np.ascontiguousarray(tokens, dtype=_TOKEN).tobytes())
        return digest.hexdigest() + SUFFIX


@dataclass(frozen=True)
class FileHead:
    """A state file's header and tokens, as read without its data."""

    version: int
    n_ctx: int
    fingerprint_digest: bytes
    layout_digest: bytes
    data_size: int
    checksum: bytes
    tokens: np.ndarray

    def belongs_to(self, owner: StateOwner) -> bool:
        return (
            self.version == VERSION
            and self.n_ctx == owner.n_ctx
            and self.fingerprint_digest == owner.fingerprint_digest
            and self.layout_digest == owner.layout_digest
        )

    @property
    def file_size(self) -> int:
        return HEADER_SIZE + self.tokens.nbytes + self.data_size


def _header(owner: StateOwner, tokens: bytes, data: bytes | memoryview, count: int) -> bytes:
    fields = (MAGIC, VERSION, owner.n_ctx, count, 0, len(data))
    unsigned = _HEADER.pack(*fields, owner.fingerprint_digest, owner.layout_digest, bytes(16))
    digest = xxhash.xxh3_128()
    digest.update(unsigned[: HEADER_SIZE - 16])
    digest.update(tokens)
    digest.update(data)
    return _HEADER.pack(*fields, owner.fingerprint_digest, owner.layout_digest, digest.digest())


def write_state_file(
    folder: Path, owner: StateOwner, tokens: np.ndarray, data: bytes | memoryview
) -> Path:
    """Write a state atomically into ``folder`` under its name; returns its path. Raises
    ``OSError`` (a full disk, a read-only folder), leaving no file behind."""
    token_bytes = np.ascontiguousarray(tokens, dtype=_TOKEN).tobytes()
    target = folder / owner.file_name(tokens)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(_header(owner, token_bytes, data, len(tokens)))
            handle.write(token_bytes)
            view = memoryview(data)
            for start in range(0, len(view), _CHUNK):
                handle.write(view[start : start + _CHUNK])
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def _parse_head(raw: bytes) -> tuple[FileHead, int]:
    """A header's fields (tokens still empty) and its token count."""
    if len(raw) < HEADER_SIZE:
        raise BadStateFile("shorter than a state file's header")
    magic, version, n_ctx, count, _, size, fingerprint, layout, checksum = _HEADER.unpack(
        raw[:HEADER_SIZE]
    )
    if magic != MAGIC:
        raise BadStateFile("not a state file")
    empty = np.zeros(0, dtype=np.intc)
    return FileHead(version, n_ctx, fingerprint, layout, size, checksum, empty), count


def read_head(path: Path) -> FileHead:
    """A state file's header and tokens. Raises ``BadStateFile`` (``ForeignStateFile`` for a
    file of another format version, whose tokens are not read) or ``OSError``."""
    with path.open("rb") as handle:
        head, count = _parse_head(handle.read(HEADER_SIZE))
        if head.version != VERSION:
            raise ForeignStateFile(f"format version {head.version}, not {VERSION}")
        raw = handle.read(count * _TOKEN.itemsize)
    if len(raw) != count * _TOKEN.itemsize:
        raise BadStateFile("its tokens end early")
    return replace(head, tokens=np.frombuffer(raw, dtype=_TOKEN).astype(np.intc))


def read_state_file(path: Path, owner: StateOwner) -> tuple[np.ndarray, bytearray]:
    """A state's tokens and KV data, once its header names ``owner`` and its checksum holds.
    Raises ``ForeignStateFile``, ``BadStateFile`` or ``OSError``."""
    with path.open("rb") as handle:
        raw_head = handle.read(HEADER_SIZE)
        head, count = _parse_head(raw_head)
        if not head.belongs_to(owner):
            raise ForeignStateFile("written by another model, n_ctx, layout or format version")
        token_bytes = handle.read(count * _TOKEN.itemsize)
        data = bytearray(head.data_size)
        got = handle.readinto(data)
        extra = handle.read(1)
    if len(token_bytes) != count * _TOKEN.itemsize or got != head.data_size:
        raise BadStateFile("the file ends early")
    if extra:
        raise BadStateFile("bytes after the state's data")
    digest = xxhash.xxh3_128()
    digest.update(raw_head[: HEADER_SIZE - 16])
    digest.update(token_bytes)
    digest.update(data)
    if digest.digest() != head.checksum:
        raise BadStateFile("its checksum differs")
    return np.frombuffer(token_bytes, dtype=_TOKEN).astype(np.intc), data
