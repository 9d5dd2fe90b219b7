"""How many tokens two prompts share from their start: what a sequence or a saved state spares."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

import numpy as np

Tokens = Sequence[int] | np.ndarray
Key = TypeVar("Key")


def common_prefix(a: Tokens, b: Tokens) -> int:
    """How many tokens ``a`` and ``b`` share from their start."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = np.nonzero(np.asarray(a[:n]) != np.asarray(b[:n]))[0]
    return int(differ[0]) if len(differ) else n


def begins_with(tokens: Tokens, prefix: Tokens) -> bool:
    """Whether ``tokens`` start with every token of ``prefix``."""
    return len(tokens) >= len(prefix) and common_prefix(prefix, tokens) == len(prefix)


def longest_shared(held: Iterable[tuple[Key, Tokens]], tokens: Tokens) -> tuple[Key | None, int]:
    """Of ``held`` (a key and its tokens each), the one sharing the longest prefix with
    ``tokens`` (the first among equals), and that length; None and 0 when none shares any."""
    best_key: Key | None = None
    best_len = 0
    for key, candidate in held:
        length = common_prefix(candidate, tokens)
        if length > best_len:
            best_key, best_len = key, length
    return best_key, best_len
