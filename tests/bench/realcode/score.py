"""Scoring a line completion as CrossCodeEval and RepoEval do: the answer's first line against
the rest of the line its author wrote, by exact match and by edit similarity.

Edit similarity is 1 - (Levenshtein distance / the longer string's length), 1.0 for two empty
strings. On a ``newline`` cursor (the line's indentation already in place) both sides are
compared without surrounding whitespace; elsewhere without trailing whitespace only, since a
space the answer leaves out or adds at its start is a different line.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field


def first_line(text: str, kind: str) -> str:
    """The answer's first line as the line-level metrics read it."""
    head = text.split("\n", 1)[0]
    return head.strip() if kind == "newline" else head.rstrip()


def expected_line(expected: str, kind: str) -> str:
    return expected.strip() if kind == "newline" else expected.rstrip()


def levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            substitute = previous[j - 1] + (char != other)
            current.append(min(previous[j] + 1, current[j - 1] + 1, substitute))
        previous = current
    return previous[-1]


def edit_similarity(got: str, want: str) -> float:
    longest = max(len(got), len(want))
    return 1.0 if longest == 0 else 1.0 - levenshtein(got, want) / longest


def percentile(values: Sequence[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@dataclass
class Figures:
    """One system's figures over a set of cases."""

    label: str
    total: int = 0
    exact: int = 0
    similarity: float = 0.0  # summed; ``row`` shows the mean
    empty: int = 0
    ms: list[float] = field(default_factory=list)

    def add(self, got: str, want: str, ms: float) -> None:
        self.total += 1
        self.exact += got == want
        self.similarity += edit_similarity(got, want)
        self.empty += not got.strip()
        self.ms.append(ms)

    @property
    def exact_share(self) -> float:
        return self.exact / self.total if self.total else 0.0

    @property
    def mean_similarity(self) -> float:
        return self.similarity / self.total if self.total else 0.0

    def row(self) -> str:
        median = statistics.median(self.ms) if self.ms else float("nan")
        share = 100 * self.exact_share
        return (
            f"  {self.label:<28} exact {self.exact:>4}/{self.total:<4} ({share:5.1f}%)"
            f"  edit sim {self.mean_similarity:.3f}  empty {self.empty:>3}"
            f"  p50 {median:6.0f} ms  p90 {percentile(self.ms, 0.9):6.0f} ms"
        )
