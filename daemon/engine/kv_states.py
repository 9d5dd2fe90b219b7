"""Saved KV states of recent prompts, so switching files does not throw their prefixes away.
A saved state is restored instead of evaluating its prefix again (engine worker thread only).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import llama_cpp
import numpy as np

from daemon.engine.kv_splice import read_state, write_state

log = logging.getLogger(__name__)

# States shorter than this are cheaper to evaluate again than to keep.
MIN_TOKENS = 64
# Restore only when a saved state covers this many more tokens than the live context.
MIN_GAIN = 32


@dataclass
class SavedState:
    tokens: np.ndarray
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data) + self.tokens.nbytes


def common_prefix(a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray) -> int:
    """How many tokens ``a`` and ``b`` share from their start."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = np.nonzero(np.asarray(a[:n]) != np.asarray(b[:n]))[0]
    return int(differ[0]) if len(differ) else n


@dataclass
class StateStats:
    saved: int = 0
    restored: int = 0
    evicted: int = 0
    tokens_restored: int = 0


class SequenceStates:
    """The saved states, bounded by bytes: the least recently used go first.

    The context keeps a bounded number of sequences (``daemon.engine.slots``); before a prompt
    that shares little with a sequence overwrites it, that sequence's state (the KV cache of its
    tokens) is copied here, to host memory. When a later prompt shares more with a saved state
    than with any live sequence (the user came back to that file, or another user opened it),
    the saved state is restored into a sequence instead of evaluating the prefix again: a memory
    copy instead of a prompt evaluation."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._states: OrderedDict[int, SavedState] = OrderedDict()
        self._bytes = 0
        self._next = 0
        self.stats = StateStats()

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._states)

    def best(self, tokens: Sequence[int] | np.ndarray) -> tuple[int | None, int]:
        """The saved state sharing the longest prefix with ``tokens``, and that length. Safe
        to call from another thread than the engine's (it reads a snapshot of the states)."""
        best_id, best_len = None, 0
        for state_id, state in list(self._states.items()):
            length = common_prefix(state.tokens, tokens)
            if length > best_len:
                best_id, best_len = state_id, length
        return best_id, best_len

    def save(
        self,
        ctx: llama_cpp.llama_context_p,
        seq: int,
        tokens: list[int],
        keep: int | None = None,
    ) -> None:
        """Copy sequence ``seq``'s state (it holds ``tokens``), unless it is short or already
        saved. Room is made by evicting the least recently used states other than ``keep``
        (the state about to be restored), the new one last."""
        n = len(tokens)
        if not self.enabled or n < MIN_TOKENS:
            return
        live = np.array(tokens, dtype=np.intc)
        for state_id, state in self._states.items():
            if len(state.tokens) == n and common_prefix(state.tokens, live) == n:
                self._states.move_to_end(state_id)
                return
        size = llama_cpp.llama_state_seq_get_size(ctx, seq)
        if size <= 0 or size > self.max_bytes:
            return
        data = read_state(ctx, seq, size)
        if not data:
            return
        state = SavedState(live, data.tobytes())
        # A state that is a prefix of the new one is now redundant.
        for state_id in [
            i for i, s in self._states.items() if common_prefix(s.tokens, live) == len(s.tokens)
        ]:
            self._drop(state_id)
        self._states[self._next] = state
        self._next += 1
        self._bytes += state.size
        self.stats.saved += 1
        while self._bytes > self.max_bytes:
            oldest = next((i for i in self._states if i != keep), None)
            if oldest is None:
                break
            self._drop(oldest)
            self.stats.evicted += 1

    def _drop(self, state_id: int) -> None:
        state = self._states.pop(state_id)
        self._bytes -= state.size

    def restore(self, ctx: llama_cpp.llama_context_p, seq: int, state_id: int) -> list[int]:
        """Load a saved state into sequence ``seq`` (emptied first); return the tokens it
        holds (none on failure, or when the state is no longer kept)."""
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
