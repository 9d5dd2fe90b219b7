"""A stand-in for llama.cpp's per-stream KV memory, for unit tests of the engine's slots: what
each stream holds, changed the way llama.cpp's copy and removal change it, and saved or
restored whole the way a sequence's state is."""

from __future__ import annotations

import llama_cpp
import numpy as np
import pytest

import daemon.engine.kv_states


class Streams:
    """What each stream holds (its tokens, one cell each)."""

    def __init__(self, count: int) -> None:
        self.held: dict[int, tuple[int, ...]] = {seq: () for seq in range(count)}
        self.copies = 0

    def seq_cp(self, _memory, source: int, target: int, p0: int, p1: int) -> None:
        assert (p0, p1) == (-1, -1), "across streams only whole streams are copied"
        self.held[target] = self.held[source]
        self.copies += 1

    def seq_rm(self, _memory, seq: int, p0: int, p1: int) -> bool:
        if p0 < 0:
            self.held[seq] = ()
        else:
            self.held[seq] = self.held[seq][:p0]
        return True

    def clear(self, _memory, _data: bool) -> None:
        self.held = {seq: () for seq in self.held}

    def seq_pos_max(self, _memory, seq: int) -> int:
        return len(self.held[seq]) - 1

    def state_size(self, _ctx, seq: int) -> int:
        return 4 * len(self.held[seq])

    def read_state(self, _ctx, seq: int, _size: int) -> memoryview:
        return memoryview(np.array(self.held[seq], dtype=np.int32).tobytes())

    def write_state(self, _ctx, seq: int, data: bytearray) -> bool:
        self.held[seq] = tuple(int(t) for t in np.frombuffer(bytes(data), dtype=np.int32))
        return True


def fake_streams(monkeypatch: pytest.MonkeyPatch, count: int) -> Streams:
    """``count`` streams, with llama.cpp's memory and state functions replaced by theirs."""
    fake = Streams(count)
    monkeypatch.setattr(llama_cpp, "llama_get_memory", lambda ctx: object())
    monkeypatch.setattr(llama_cpp, "llama_memory_seq_cp", fake.seq_cp)
    monkeypatch.setattr(llama_cpp, "llama_memory_seq_rm", fake.seq_rm)
    monkeypatch.setattr(llama_cpp, "llama_memory_seq_pos_max", fake.seq_pos_max)
    monkeypatch.setattr(llama_cpp, "llama_memory_clear", fake.clear)
    monkeypatch.setattr(llama_cpp, "llama_state_seq_get_size", fake.state_size)
    monkeypatch.setattr(daemon.engine.kv_states, "read_state", fake.read_state)
    monkeypatch.setattr(daemon.engine.kv_states, "write_state", fake.write_state)
    return fake
