"""Saved KV states of recent prompts, so switching files does not throw their prefixes away.
A saved state is restored instead of evaluating its prefix again (engine worker thread only).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import llama_cpp
import numpy as np

from daemon.engine.kv_splice import read_state, write_state
from daemon.engine.prefix import begins_with, longest_shared

if TYPE_CHECKING:
    from daemon.engine.kv_disk import DiskStates

log = logging.getLogger(__name__)

# States shorter than this are cheaper to evaluate again than to keep.
MIN_TOKENS = 64
# Restore only when a saved state covers this many more tokens than the live context.
MIN_GAIN = 32

# A saved state: one in host memory (a number), or a file of the disk tier (its name).
StateKey = int | str


@dataclass
class SavedState:
    tokens: np.ndarray
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data) + self.tokens.nbytes


@dataclass
class StateStats:
    saved: int = 0
    restored: int = 0
    evicted: int = 0
    tokens_restored: int = 0
    disk_restored: int = 0  # of the restored, those read back from disk
    disk_tokens_restored: int = 0


class SequenceStates:
    """The saved states, bounded by bytes: the least recently used go first, to the disk tier
    when there is one (``daemon.engine.kv_disk``), where every state and every document held in
    the KV cache also goes at a clean shutdown.

    The context keeps a bounded number of sequences (``daemon.engine.slots``); before a prompt
    that shares little with a sequence overwrites it, that sequence's state (the KV cache of its
    tokens) is copied here, to host memory. When a later prompt shares more with a saved state
    than with any live sequence (the user came back to that file, or another user opened it),
    the saved state is restored into a sequence instead of evaluating the prefix again: a memory
    copy instead of a prompt evaluation."""

    def __init__(self, max_bytes: int, disk: DiskStates | None = None) -> None:
        self.max_bytes = max_bytes
        self.disk = disk
        self._states: OrderedDict[int, SavedState] = OrderedDict()
        self._bytes = 0
        self._next = 0
        self.stats = StateStats()

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0 or self.disk is not None

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._states)

    def best(self, tokens: Sequence[int] | np.ndarray) -> tuple[StateKey | None, int]:
        """The saved state, in memory or on disk, sharing the longest prefix with ``tokens``,
        and that length (in memory, among equals). Safe to call from another thread than the
        engine's (it reads a snapshot of the states)."""
        held = [(state_id, state.tokens) for state_id, state in list(self._states.items())]
        best_id: StateKey | None
        best_id, best_len = longest_shared(held, tokens)
        if self.disk is not None:
            name, length = self.disk.best(np.asarray(tokens))
            if length > best_len:
                best_id, best_len = name, length
        return best_id, best_len

    def refresh(self) -> None:
        """Look for states other daemons wrote to the disk tier since the last look."""
        if self.disk is not None:
            self.disk.refresh()

    def save(
        self,
        ctx: llama_cpp.llama_context_p,
        seq: int,
        tokens: list[int],
        keep: StateKey | None = None,
    ) -> None:
        """Copy sequence ``seq``'s state (it holds ``tokens``), unless it is short or already
        saved. Room is made by evicting the least recently used states other than ``keep``
        (the state about to be restored), the new one last, to the disk tier; a state larger
        than host memory's room goes there at once."""
        n = len(tokens)
        if not self.enabled or n < MIN_TOKENS:
            return
        live = np.array(tokens, dtype=np.intc)
        for state_id, state in self._states.items():
            if np.array_equal(state.tokens, live):
                self._states.move_to_end(state_id)
                return
        size = llama_cpp.llama_state_seq_get_size(ctx, seq)
        if size <= 0:
            return
        if size > self.max_bytes:
            if self.disk is not None and (data := read_state(ctx, seq, size)):
                self.disk.put(live, data.tobytes())
            return
        data = read_state(ctx, seq, size)
        if not data:
            return
        state = SavedState(live, data.tobytes())
        # A state that is a prefix of the new one is now redundant.
        for state_id in [i for i, s in self._states.items() if begins_with(live, s.tokens)]:
            self._drop(state_id)
        self._states[self._next] = state
        self._next += 1
        self._bytes += state.size
        self.stats.saved += 1
        while self._bytes > self.max_bytes:
            oldest = next((i for i in self._states if i != keep), None)
            if oldest is None:
                break
            evicted = self._drop(oldest)
            self.stats.evicted += 1
            if self.disk is not None:
                self.disk.put(evicted.tokens, evicted.data)

    def _drop(self, state_id: int) -> SavedState:
        state = self._states.pop(state_id)
        self._bytes -= state.size
        return state

    def restore(self, ctx: llama_cpp.llama_context_p, seq: int, state_id: StateKey) -> list[int]:
        """Load a saved state into sequence ``seq`` (emptied first); return the tokens it
        holds (none on failure, or when the state is no longer kept)."""
        if isinstance(state_id, str):
            return self._restore_file(ctx, seq, state_id)
        state = self._states.get(state_id)
        if state is None:
            return []
        self._states.move_to_end(state_id)
        memory = llama_cpp.llama_get_memory(ctx)
        llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
        if not write_state(ctx, seq, bytearray(state.data)):
            log.warning("restoring a saved KV state failed; evaluating the prompt instead")
            llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
            self._drop(state_id)
            return []
        self.stats.restored += 1
        self.stats.tokens_restored += len(state.tokens)
        return state.tokens.tolist()

    def _restore_file(self, ctx: llama_cpp.llama_context_p, seq: int, name: str) -> list[int]:
        """Load a state of the disk tier into sequence ``seq``: checked before llama.cpp sees
        it, and removed when it is corrupt, another model's, or refused by llama.cpp."""
        assert self.disk is not None
        loaded = self.disk.load(name)
        if loaded is None:
            return []
        tokens, data = loaded
        memory = llama_cpp.llama_get_memory(ctx)
        llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
        if not write_state(ctx, seq, data):
            llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
            self.disk.reject(name, "llama.cpp refused its KV data")
            return []
        self.stats.restored += 1
        self.stats.tokens_restored += len(tokens)
        self.stats.disk_restored += 1
        self.stats.disk_tokens_restored += len(tokens)
        return tokens.tolist()

    def persist(self, ctx: llama_cpp.llama_context_p, held: list[tuple[int, list[int]]]) -> None:
        """At a clean shutdown: write every state in host memory, then every sequence of
        ``held`` (its number and the tokens it holds, least recently used first) to the disk
        tier, and wait until they are written. A no-op without a disk tier."""
        disk = self.disk
        if disk is None:
            return
        for state in list(self._states.values()):
            disk.put(state.tokens, state.data, wait=True)
        memory = llama_cpp.llama_get_memory(ctx)
        for seq, tokens in held:
            # A sequence whose cells do not end where its tokens do is not what they say.
            if len(tokens) < MIN_TOKENS:
                continue
            if llama_cpp.llama_memory_seq_pos_max(memory, seq) != len(tokens) - 1:
                continue
            data = read_state(ctx, seq, llama_cpp.llama_state_seq_get_size(ctx, seq))
            if data:
                disk.put(np.array(tokens, dtype=np.intc), data.tobytes(), wait=True)
        disk.close()
        log.info(
            "saved KV states for the next start: %d files of this model (%d MiB) in %s",
            len(disk),
            disk.stored_bytes // (1024 * 1024),
            disk.folder,
        )
