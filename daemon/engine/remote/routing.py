"""Which remote server should take a prompt: the one that already holds the longest part of it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import xxhash

BLOCK_TOKENS = 32
# Prefix hashes each backend remembers (at 32 tokens a block, some 2 million tokens of prompts).
MEMORY_BLOCKS = 65536


# Serving engines reuse the KV of any prefix of the prompts they saw (llama.cpp's server with
# cache_prompt, vLLM's prefix caching). A prompt is cut into blocks of BLOCK_TOKENS tokens, and
# each block's hash covers every token before it (a chain), so a block's hash names a whole prefix.
# Each server remembers the prefixes it was sent (PrefixMemory, a bounded LRU of hashes).
def prefix_hashes(tokens: Sequence[int]) -> list[int]:
    """One hash per whole block of ``tokens``, each covering everything before its end."""
    array = np.asarray(tokens, dtype=np.int32)
    hashes: list[int] = []
    seed = 0
    for end in range(BLOCK_TOKENS, len(array) + 1, BLOCK_TOKENS):
        seed = xxhash.xxh3_64_intdigest(array[end - BLOCK_TOKENS : end].tobytes(), seed=seed)
        hashes.append(seed)
    return hashes


class PrefixMemory:
    """The prompt prefixes one backend was sent, most recent last (a bounded LRU); safe to use
    from several threads."""

    def __init__(self, capacity: int = MEMORY_BLOCKS) -> None:
        self.capacity = capacity
        self._blocks: OrderedDict[int, None] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._blocks)

    def held(self, hashes: Sequence[int]) -> int:
        """How many leading blocks of a prompt (its ``prefix_hashes``) this backend holds."""
        count = 0
        with self._lock:
            for value in hashes:
                if value not in self._blocks:
                    break
                count += 1
        return count

    def remember(self, hashes: Sequence[int]) -> None:
        with self._lock:
            for value in hashes:
                self._blocks[value] = None
                self._blocks.move_to_end(value)
            while len(self._blocks) > self.capacity:
                self._blocks.popitem(last=False)

    def forget(self) -> None:
        """The backend restarted (or died): whatever it held is gone."""
        with self._lock:
            self._blocks.clear()


# A new prompt goes to the server that holds most of its leading blocks, so one document's requests
# keep going to the server that has its KV. The blocks every prompt shares (the format's opening,
# the workspace profile) must not pull all documents to one server: among servers that hold equally
# much, the least busy wins, then a stable hash of the prompt's first block that they do not hold
# (rendezvous hashing), so new documents are spread and each goes to the same server every time.
def rendezvous(key: int, name: str) -> int:
    """A stable score of ``name`` for ``key``: the highest-scoring backend takes the key."""
    return xxhash.xxh3_64_intdigest(name.encode("utf-8"), seed=key)


def placing_key(tokens: Sequence[int], hashes: Sequence[int], held: int) -> int:
    """The hash that places a prompt among backends holding ``held`` of its blocks alike: its
    first block beyond them (the shared opening says nothing of the document), or, for a
    prompt all of whose whole blocks are held, its last tokens."""
    if held < len(hashes):
        return hashes[held]
    tail = np.asarray(tokens[held * BLOCK_TOKENS :], dtype=np.int32)
    return xxhash.xxh3_64_intdigest(tail.tobytes(), seed=hashes[-1] if hashes else 0)
