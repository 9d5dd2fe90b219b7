"""Join two sequences' KV into one: the cells of one below a position, of the other from it on."""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass

import llama_cpp
import numpy as np

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_MAGIC = 0xAF143CD8  # llama.cpp's sequence state header: this, then the sequence number
_CELL = np.dtype([("pos", "<i4"), ("n_seq", "<u4"), ("seq", "<i4")])


class UnsplicableState(ValueError):
    """The state is not laid out as a plain KV cache's, one sequence per cell."""


@dataclass
class _Layer:
    k_head: bytes | memoryview  # type and row size
    k: np.ndarray  # (cells, row bytes)
    v_head: bytes | memoryview  # type and row size, or type, element size and rows when transposed
    v: np.ndarray  # (cells, row bytes), or (rows, cells, element bytes) when transposed


@dataclass
class SequenceState:
    """The cells of one sequence: their positions, and every layer's K and V for them."""

    source: int  # the sequence the state was read from
    streams: int
    stream: int  # the stream holding the cells
    cells: np.ndarray  # records of _CELL
    v_trans: bool
    layers: list[_Layer]

    @property
    def positions(self) -> np.ndarray:
        return self.cells["pos"]

    def take(self, keep: np.ndarray) -> SequenceState:
        """The same state with only the cells where ``keep`` is true."""
        layers = [
            _Layer(
                layer.k_head,
                layer.k[keep],
                layer.v_head,
                layer.v[:, keep] if self.v_trans else layer.v[keep],
            )
            for layer in self.layers
        ]
        return SequenceState(
            self.source, self.streams, self.stream, self.cells[keep], self.v_trans, layers
        )

    def to_bytes(self) -> bytearray:
        head = _U32.pack(_MAGIC) + _I32.pack(self.source) + _U32.pack(self.streams)
        parts: list[bytes | memoryview] = [head]
        for stream in range(self.streams):
            count = len(self.cells) if stream == self.stream else 0
            parts.append(_U32.pack(count))
            if count == 0:
                continue
            parts.append(self.cells.tobytes())
            parts.append(_U32.pack(int(self.v_trans)) + _U32.pack(len(self.layers)))
            for layer in self.layers:
                parts += [layer.k_head, np.ascontiguousarray(layer.k).data]
            for layer in self.layers:
                parts += [layer.v_head, np.ascontiguousarray(layer.v).data]
        return bytearray().join(parts)


class _Reader:
    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self.data = memoryview(data)
        self.at = 0

    def take(self, size: int) -> memoryview:
        if size < 0 or self.at + size > len(self.data):
            raise UnsplicableState("the state ends early")
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk

    def u32(self) -> int:
        return int(_U32.unpack(self.take(4))[0])

    def array(self, shape: tuple[int, ...]) -> np.ndarray:
        size = int(np.prod(shape))
        return np.frombuffer(self.take(size), dtype=np.uint8).reshape(shape)


# After an edit near the top of a file, the chunks below it keep their KV, moved into place
# (daemon.engine.reuse); the edited lines are evaluated aside, since llama.cpp accepts a sequence's
# new tokens only after its last position. Cells cannot be shared across KV streams, so the edited
# lines are evaluated in the spare stream (holding a copy of the prefix) and the two sequences are
# joined through llama.cpp's per-sequence state: the spare's cells up to the end of the edit, then
# the slot's, written back into the slot as one state.
#
# A sequence's state (llama_state_seq_get_data) of a plain KV cache is, for each stream, the number
# of cells, each cell's position and sequence, then per layer the K rows of those cells and the V
# rows (or, transposed, per V row the cells' elements). parse_state reads that layout and checks
# that it accounts for every byte; a cache laid out otherwise (a sliding-window cache with two
# parts, cells with extra position data) is refused, and the engine keeps prefixes only.
def parse_state(data: bytes | bytearray | memoryview) -> SequenceState:
    """Read one sequence's state; ``UnsplicableState`` when it is not a plain KV cache's with
    the sequence in one stream."""
    reader = _Reader(data)
    if reader.u32() != _MAGIC:
        raise UnsplicableState("not a sequence state")
    source = int(_I32.unpack(reader.take(4))[0])
    streams = reader.u32()
    if not 0 < streams <= 4096:
        raise UnsplicableState(f"{streams} streams")
    found: SequenceState | None = None
    for stream in range(streams):
        count = reader.u32()
        if count == 0:
            continue
        if found is not None:
            raise UnsplicableState("the sequence's cells are in more than one stream")
        cells = np.frombuffer(reader.take(count * _CELL.itemsize), dtype=_CELL)
        if np.any(cells["n_seq"] != 1) or len(np.unique(cells["seq"])) != 1:
            raise UnsplicableState("cells are not of exactly one sequence")
        v_trans = reader.u32()
        n_layer = reader.u32()
        if v_trans > 1 or not 0 < n_layer <= 1024:
            raise UnsplicableState("unexpected layer header")
        heads, ks = [], []
        for _ in range(n_layer):
            head = reader.take(12)  # type, row size
            row = int(_U64.unpack(head[4:])[0])
            heads.append(head)
            ks.append(reader.array((count, row)))
        layers = []
        for k_head, k in zip(heads, ks, strict=True):
            if v_trans:
                head = reader.take(12)  # type, element size, rows
                element, rows = _U32.unpack(head[4:8])[0], _U32.unpack(head[8:])[0]
                v = reader.array((rows, count, element))
            else:
                head = reader.take(12)
                v = reader.array((count, int(_U64.unpack(head[4:])[0])))
            layers.append(_Layer(k_head, k, head, v))
        found = SequenceState(source, streams, stream, cells.copy(), bool(v_trans), layers)
    if found is None:
        raise UnsplicableState("the sequence holds no cells")
    if reader.at != len(data):
        raise UnsplicableState("bytes left after the cache's state (a cache of several parts)")
    return found


def join(head: SequenceState, tail: SequenceState, at: int) -> SequenceState:
    """``head``'s cells before position ``at``, then ``tail``'s from ``at`` on."""
    if head.v_trans != tail.v_trans or len(head.layers) != len(tail.layers):
        raise UnsplicableState("the two states are of different caches")
    first = head.take(head.positions < at)
    second = tail.take(tail.positions >= at)
    axis = 1 if head.v_trans else 0
    layers = [
        _Layer(
            a.k_head,
            np.concatenate([a.k, b.k]),
            a.v_head,
            np.concatenate([a.v, b.v], axis=axis),
        )
        for a, b in zip(first.layers, second.layers, strict=True)
    ]
    cells = np.concatenate([first.cells, second.cells])
    return SequenceState(tail.source, tail.streams, tail.stream, cells, head.v_trans, layers)


def read_state(ctx: llama_cpp.llama_context_p, seq: int, size: int | None = None) -> memoryview:
    """Sequence ``seq``'s state, as llama.cpp writes it (``size``: its size, when known);
    empty when llama.cpp could not write it."""
    if size is None:
        size = llama_cpp.llama_state_seq_get_size(ctx, seq)
    buffer = bytearray(size)
    target = (ctypes.c_uint8 * size).from_buffer(buffer)
    written = llama_cpp.llama_state_seq_get_data(ctx, target, size, seq)
    del target  # the buffer cannot be sliced while ctypes holds it
    return memoryview(buffer)[:written]


def write_state(ctx: llama_cpp.llama_context_p, seq: int, data: bytearray) -> bool:
    """Replace sequence ``seq``'s KV with ``data``; False when llama.cpp refused it (``seq``
    may then hold anything: empty it)."""
    source = (ctypes.c_uint8 * len(data)).from_buffer(data)
    return llama_cpp.llama_state_seq_set_data(ctx, source, len(data), seq) > 0


def splice(ctx: llama_cpp.llama_context_p, head_seq: int, seq: int, at: int) -> bool:
    """Give sequence ``seq`` the cells of ``head_seq`` before position ``at`` in place of its
    own; its cells from ``at`` on stay. False when the states cannot be joined or written
    (``seq`` may then hold anything: empty it)."""
    try:
        joined = join(parse_state(read_state(ctx, head_seq)), parse_state(read_state(ctx, seq)), at)
    except UnsplicableState:
        return False
    return write_state(ctx, seq, joined.to_bytes())
