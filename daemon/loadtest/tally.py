"""The load test's figures: counts and latency per kind, the rate held, and the verdict.
Pure functions of the outcomes; nearest-rank percentiles over the answered requests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from daemon.loadtest.driver import Outcome
from daemon.observe.stats import percentile

# The rate held must be at least this share of the rate asked: requests that were all answered
# but whose answers trail far behind the sending did not keep up.
HELD_SHARE = 0.95
RESULTS = ("ok", "429", "error", "hung")


@dataclass(frozen=True)
class KindFigures:
    """One row of the table: a kind (or ``all``), its counts and its answers' latency."""

    kind: str
    sent: int
    ok: int
    refused: int  # 429
    errors: int
    hung: int
    cached: int  # answers that came from the cache (exact or typed)
    cut: int  # answers cut at their deadline: the engine had no time for them
    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    mean_ms: float | None


def figures_of(kind: str, outcomes: Sequence[Outcome]) -> KindFigures:
    counts = Counter(o.result for o in outcomes)
    latencies = [o.latency_ms for o in outcomes if o.result == "ok"]
    return KindFigures(
        kind=kind,
        sent=len(outcomes),
        ok=counts["ok"],
        refused=counts["429"],
        errors=counts["error"],
        hung=counts["hung"],
        cached=sum(1 for o in outcomes if o.result == "ok" and o.cached),
        cut=sum(1 for o in outcomes if o.result == "ok" and o.cut),
        p50_ms=percentile(latencies, 0.5),
        p90_ms=percentile(latencies, 0.9),
        p99_ms=percentile(latencies, 0.99),
        mean_ms=sum(latencies) / len(latencies) if latencies else None,
    )


def table(outcomes: Sequence[Outcome], kinds: Sequence[str]) -> list[KindFigures]:
    """A row per kind, in ``kinds``' order, and one for ``all``."""
    rows = [figures_of(kind, [o for o in outcomes if o.kind == kind]) for kind in kinds]
    return [*rows, figures_of("all", outcomes)]


@dataclass(frozen=True)
class Rate:
    """The rate asked, and the rate of answers the daemon held over the whole run: answered
    requests a second, from the start until the later of the sending's end and the last
    answer. ``lag_p99_ms``: how late the sender itself started requests."""

    asked: float
    held: float
    elapsed_s: float
    lag_p99_ms: float | None


def rate_of(outcomes: Sequence[Outcome], asked: float, duration: float) -> Rate:
    answered = [o for o in outcomes if o.result == "ok"]
    elapsed = max([duration, *(o.ended_s for o in answered)])
    lag = percentile([o.lag_ms for o in outcomes], 0.99)
    return Rate(asked, len(answered) / elapsed if elapsed > 0 else 0.0, elapsed, lag)


@dataclass(frozen=True)
class Limits:
    """What a run must meet to have held: the answers' mean and P99 when given."""

    mean_ms: float | None = None
    p99_ms: float | None = None


@dataclass(frozen=True)
class Verdict:
    held: bool
    reasons: list[str] = field(default_factory=list)


def judge(total: KindFigures, rate: Rate, limits: Limits) -> Verdict:
    """Held: every request answered in full (no 429, error, hung request or answer cut at its
    deadline), at no less than HELD_SHARE of the rate asked, within the latency limits given."""
    reasons = []
    for count, what in ((total.refused, "refused with 429"), (total.errors, "failed")):
        if count:
            reasons.append(f"{count} of {total.sent} requests {what}")
    if total.hung:
        reasons.append(f"{total.hung} of {total.sent} requests hung (no answer in the timeout)")
    if total.cut:
        reasons.append(f"{total.cut} of {total.sent} answers were cut at their deadline")
    if rate.held < HELD_SHARE * rate.asked:
        reasons.append(
            f"answers came at {rate.held:.1f}/s, under {HELD_SHARE:.0%} of the {rate.asked:g}/s "
            "asked"
        )
    checks = (("mean", total.mean_ms, limits.mean_ms), ("P99", total.p99_ms, limits.p99_ms))
    for name, value, limit in checks:
        if limit is not None and (value is None or value > limit):
            shown = "no answer" if value is None else f"{value:.0f} ms"
            reasons.append(f"{name} latency {shown}, over the {limit:g} ms limit")
    return Verdict(not reasons, reasons)


def codes(outcomes: Sequence[Outcome], result: str) -> dict[str, int]:
    """How many requests ended in ``result``, by code (the 429's reason, the error's code)."""
    return dict(Counter(o.code or "unknown" for o in outcomes if o.result == result).most_common())


def as_json(rows: Sequence[KindFigures], rate: Rate) -> dict[str, Any]:
    return {"kinds": [asdict(row) for row in rows], "rate": asdict(rate)}
