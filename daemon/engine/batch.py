"""One llama.cpp batch, reused for every decode step: tokens of several sequences together.
Used only from the engine's worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence

import llama_cpp
import numpy as np


class TokenBatch:
    """Each token carries its position, the sequence it belongs to and whether its logits are
    wanted. The arrays are written through NumPy views of the batch's own memory, which keeps
    filling a batch cheap."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._batch = llama_cpp.llama_batch_init(capacity, 0, 1)
        self._token = np.ctypeslib.as_array(self._batch.token, shape=(capacity,))
        self._pos = np.ctypeslib.as_array(self._batch.pos, shape=(capacity,))
        self._n_seq = np.ctypeslib.as_array(self._batch.n_seq_id, shape=(capacity,))
        self._logits = np.ctypeslib.as_array(self._batch.logits, shape=(capacity,))
        self._seq = self._batch.seq_id
        self._n_seq[:] = 1
        self.size = 0

    @property
    def raw(self) -> llama_cpp.llama_batch:
        self._batch.n_tokens = self.size
        return self._batch

    @property
    def room(self) -> int:
        return self.capacity - self.size

    def clear(self) -> None:
        self.size = 0

    def add(
        self, tokens: Sequence[int], start: int, seq: int, logits: str = "last"
    ) -> tuple[int, int]:
        """Append ``tokens`` of sequence ``seq`` at positions from ``start``; ``logits`` is
        "last", "all" or "none". Returns the batch indices ``[first, end)`` they took."""
        n = len(tokens)
        if n == 0 or n > self.room:
            raise ValueError(f"{n} tokens do not fit a batch with room for {self.room}")
        first, end = self.size, self.size + n
        self._token[first:end] = tokens
        self._pos[first:end] = np.arange(start, start + n, dtype=np.int32)
        self._logits[first:end] = 1 if logits == "all" else 0
        if logits == "last":
            self._logits[end - 1] = 1
        seq_ids = self._seq
        for i in range(first, end):
            seq_ids[i][0] = seq
        self.size = end
        return first, end

    def close(self) -> None:
        if self._batch is not None:
            self._n_seq[:] = 1
            llama_cpp.llama_batch_free(self._batch)
            self._batch = None
