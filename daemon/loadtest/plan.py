"""The load test's plan: the mix of request kinds, and when each request starts (open loop).
Kinds are interleaved by smooth weighted round robin: exact counts, no randomness."""

from __future__ import annotations

import math
from dataclasses import dataclass

# hits: a place already answered, sent again; typing: the next keystroke at a place whose answer
# is being typed out; misses: a new place; fixes: a file with one typo, to /v1/fix.
KINDS = ("hits", "typing", "misses", "fixes")
DEFAULT_MIX = "hits=60,typing=30,misses=8,fixes=2"
# A virtual programmer sends at most this many requests a second (keystrokes, after the
# editor's debounce): the number of users grows with the rate, as a team's would.
PER_USER_RATE = 4.0
MIN_USERS = 4


class PlanError(ValueError):
    """A mix or rate that cannot be planned; the message says what to write instead."""


# Requests start on a fixed schedule, evenly spaced at the asked rate, whether or not the earlier
# ones have finished: a closed loop (send, wait, send) would slow down with the daemon and hide its
# queueing. The kinds are interleaved by smooth weighted round robin, so any stretch of the run has
# the mix's proportions and the counts are exact, with no randomness to seed.
@dataclass(frozen=True)
class Mix:
    """The share of each kind of request, as weights (they need not add up to 100)."""

    weights: tuple[tuple[str, float], ...]

    @classmethod
    def parse(cls, text: str) -> Mix:
        """``hits=60,typing=30,misses=8,fixes=2``; kinds left out send nothing."""
        weights: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            kind, equals, value = part.partition("=")
            kind = kind.strip()
            if not equals or kind not in KINDS:
                raise PlanError(f"--mix {text!r}: write KIND=WEIGHT pairs, KIND one of {KINDS}")
            if kind in weights:
                raise PlanError(f"--mix {text!r}: {kind} is given twice")
            try:
                weight = float(value)
            except ValueError:
                raise PlanError(f"--mix {text!r}: {value.strip()!r} is not a number") from None
            if not math.isfinite(weight) or weight < 0:
                raise PlanError(f"--mix {text!r}: a weight is a number of 0 or more")
            weights[kind] = weight
        kept = tuple((kind, weights[kind]) for kind in KINDS if weights.get(kind, 0) > 0)
        if not kept:
            raise PlanError(f"--mix {text!r}: give at least one kind a weight above 0")
        return cls(kept)

    @classmethod
    def only(cls, kind: str) -> Mix:
        return cls.parse(f"{kind}=1")

    def kinds(self) -> tuple[str, ...]:
        return tuple(kind for kind, _ in self.weights)

    def describe(self) -> str:
        total = sum(w for _, w in self.weights)
        return ", ".join(f"{kind} {w / total:.0%}" for kind, w in self.weights)


@dataclass(frozen=True)
class Planned:
    """One request of the run: when it starts (seconds after the start), its kind, its user."""

    index: int
    at: float
    kind: str
    user: int


def users_for(rate: float) -> int:
    """Virtual programmers for a rate: enough that none sends more than PER_USER_RATE a second."""
    return max(MIN_USERS, math.ceil(rate / PER_USER_RATE))


def interleave(mix: Mix, count: int) -> list[str]:
    """``count`` kinds in the mix's proportions, spread evenly (smooth weighted round robin)."""
    total = sum(w for _, w in mix.weights)
    current = dict.fromkeys(mix.kinds(), 0.0)
    order: list[str] = []
    for _ in range(count):
        for kind, weight in mix.weights:
            current[kind] += weight
        chosen = max(mix.kinds(), key=lambda kind: current[kind])  # first on a tie
        current[chosen] -= total
        order.append(chosen)
    return order


def schedule(rate: float, duration: float, mix: Mix, users: int) -> list[Planned]:
    """Every request of a run of ``duration`` seconds at ``rate`` a second, in order."""
    if not (math.isfinite(rate) and rate > 0):
        raise PlanError(f"the rate is requests a second, above 0 (not {rate:g})")
    if not (math.isfinite(duration) and duration > 0):
        raise PlanError(f"the duration is seconds, above 0 (not {duration:g})")
    if users < 1:
        raise PlanError(f"at least one user sends the requests (not {users})")
    count = max(1, round(rate * duration))
    kinds = interleave(mix, count)
    return [Planned(i, i / rate, kind, i % users) for i, kind in enumerate(kinds)]
