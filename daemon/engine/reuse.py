"""How much of a sequence's KV a new prompt can keep, after an edit anywhere in it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from daemon.engine.prefix import common_prefix


@dataclass(frozen=True)
class Move:
    """A run of cached tokens ``[start, end)`` that the new prompt has at ``to``."""

    start: int
    end: int
    to: int

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def delta(self) -> int:
        return self.to - self.start


@dataclass(frozen=True)
class ReusePlan:
    prefix: int  # tokens kept where they are
    moves: tuple[Move, ...] = ()  # chunks kept at new positions, in prompt order
    length: int = 0  # tokens in the new prompt

    @property
    def reused(self) -> int:
        return self.prefix + sum(move.size for move in self.moves)

    def gaps(self) -> list[tuple[int, int]]:
        """The ranges of the new prompt to evaluate, in order; the last reaches its end."""
        ranges, at = [], self.prefix
        for move in self.moves:
            if move.to > at:
                ranges.append((at, move.to))
            at = move.to + move.size
        ranges.append((at, self.length))
        return [(a, b) for a, b in ranges if b > a]

    def shift_order(self) -> list[Move]:
        """The moves in an order in which no moved chunk lands on one not moved yet: those
        moving left from first to last, then those moving right from last to first."""
        left = [m for m in self.moves if m.delta < 0]
        right = [m for m in self.moves if m.delta > 0]
        return left + right[::-1]


# A new prompt keeps the common prefix as it is; after an edit near the top, the unchanged chunks
# that follow are still in the cache at other positions. They are found as runs of at least
# min_chunk tokens of the new prompt that appear, in order, in the cached tokens, and their KV is
# moved to the new positions (llama_memory_seq_add) instead of being evaluated again: the same
# approximation llama.cpp's server makes with ``--cache-reuse``, used only where the model's cache
# can shift. Gaps in the middle are evaluated aside (llama.cpp requires a sequence's new tokens to
# follow its last position): in a scratch sequence sharing a unified cache's cells, or in the spare
# KV stream, joined into the slot afterwards (daemon.engine.kv_splice). So a plan keeps only middle
# gaps of at most max_gap tokens (one step's evaluation); chunks after a larger gap are evaluated
# again.
def plan_reuse(
    cached: Sequence[int],
    wanted: Sequence[int],
    *,
    min_chunk: int,
    max_gap: int,
    move: bool = True,
) -> ReusePlan:
    """What of ``cached`` the prompt ``wanted`` can keep. The prompt's last token is always
    evaluated (its logits are needed), so nothing kept reaches it."""
    limit = len(wanted) - 1
    prefix = min(common_prefix(cached, wanted), max(limit, 0))
    if not move or min_chunk <= 0 or limit - prefix < min_chunk:
        return ReusePlan(prefix, (), len(wanted))
    index: dict[tuple[int, ...], list[int]] = {}
    for c in range(prefix, len(cached) - min_chunk + 1):
        index.setdefault(tuple(cached[c : c + min_chunk]), []).append(c)
    moves: list[Move] = []
    i, after, end_of_kept = prefix, prefix, prefix
    while i + min_chunk <= limit:
        if i - end_of_kept > max_gap:
            break  # a middle gap too long to evaluate aside: the rest is evaluated again
        found = next(
            (c for c in index.get(tuple(wanted[i : i + min_chunk]), ()) if c >= after), None
        )
        if found is None:
            i += 1
            continue
        n = min_chunk
        while found + n < len(cached) and i + n < limit and cached[found + n] == wanted[i + n]:
            n += 1
        moves.append(Move(found, found + n, i))
        i += n
        after = found + n
        end_of_kept = i
    return ReusePlan(prefix, tuple(moves), len(wanted))
