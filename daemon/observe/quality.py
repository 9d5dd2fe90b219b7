"""Whether cache hits are as good as fresh answers: their acceptance, side by side, and the alert.
Feedback is linked to its completion by request id; a hit's and a fresh answer's are compared."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# The alert looks at the feedback of this much recent time ...
ALERT_WINDOW_S = 3600.0
# ... judges only with at least this many feedback events on cache hits and as many on fresh
# answers (fewer say too little) ...
ALERT_MIN_FEEDBACK = 20
# ... fires when hits are accepted less than this share of the rate fresh answers are ...
ALERT_RATIO = 0.8
# ... and is written at most once this often (it judges the same hour of feedback again).
ALERT_EVERY_S = 3600.0


def _rate(accepted: int, count: int) -> float | None:
    return round(accepted / count, 4) if count else None


def acceptance_split(feedback: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Feedback events (each with ``accepted`` and ``cached``: True for a cache hit, False for
    a fresh answer, None when its answer is not known) counted and rated per side."""
    counts = {True: 0, False: 0, None: 0}
    accepted = {True: 0, False: 0, None: 0}
    for item in feedback:
        side = item["cached"]
        counts[side] += 1
        accepted[side] += bool(item["accepted"])
    return {
        "hit_feedback": counts[True],
        "hit_acceptance_rate": _rate(accepted[True], counts[True]),
        "fresh_feedback": counts[False],
        "fresh_acceptance_rate": _rate(accepted[False], counts[False]),
        "unlinked_feedback": counts[None],
    }


def hits_behind(split: dict[str, Any]) -> str | None:
    """The alert's line when hits are accepted clearly less often than fresh answers, with
    enough feedback on both sides to tell; None otherwise."""
    hits, fresh = split["hit_feedback"], split["fresh_feedback"]
    if hits < ALERT_MIN_FEEDBACK or fresh < ALERT_MIN_FEEDBACK:
        return None
    hit_rate, fresh_rate = split["hit_acceptance_rate"], split["fresh_acceptance_rate"]
    if hit_rate >= ALERT_RATIO * fresh_rate:
        return None
    return (
        f"cache hits are accepted less often than fresh answers: {hit_rate:.0%} of {hits} "
        f"against {fresh_rate:.0%} of {fresh} over the last {ALERT_WINDOW_S / 60:.0f} min "
        f"(the alert is under {ALERT_RATIO:g}x); the cache serves answers users no longer "
        f"take: clear it (`assist cache clear`), and if it comes back, a change to how answers "
        f"are made may not have raised its version (PROMPT_FORMAT_VERSION, "
        f"COMPLETION_RULES_VERSION in daemon/pipeline/keys.py)"
    )


class HitAlarm:
    """``hits_behind``'s line at most once every ``ALERT_EVERY_S`` (times are monotonic)."""

    def __init__(self, every_s: float = ALERT_EVERY_S) -> None:
        self.every_s = every_s
        self._last: float | None = None

    def check(self, split: dict[str, Any], now: float) -> str | None:
        if self._last is not None and now - self._last < self.every_s:
            return None
        line = hits_behind(split)
        if line is not None:
            self._last = now
        return line
