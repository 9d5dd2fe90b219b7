"""Figures from the request records: percentiles, rates, a heat map and time series.
One function serves ``GET /v1/stats``, ``assist stats`` and the dashboard, so all three agree.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from typing import Any

from daemon.observe.quality import acceptance_split

# Latency buckets of the heat map: label, upper bound in ms.
HEAT_BUCKETS = (
    ("0–100 ms", 100.0),
    ("100–500 ms", 500.0),
    ("0.5–2 s", 2000.0),
    ("over 2 s", math.inf),
)
GROUPINGS = ("language", "path", "user")
SERIES_POINTS = 30


def percentile(values: list[float], share: float) -> float | None:
    """The nearest-rank percentile, taken from the records themselves, never from running
    means."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return round(ordered[rank - 1], 2)


def parse_window(text: str | int | float) -> float:
    """Seconds from '90', '15m', '2h' or '7d'."""
    if isinstance(text, int | float):
        return float(text)
    raw = text.strip().lower()
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    if raw and raw[-1] in units:
        return float(raw[:-1]) * units[raw[-1]]
    return float(raw)


def _figures(rows: list[dict[str, Any]], feedback: list[dict[str, Any]]) -> dict[str, Any]:
    answered = [r for r in rows if r["outcome"] == "done"]
    latencies = [r["total_ms"] for r in answered if r["total_ms"] is not None]
    first = [
        r["first_token_ms"] for r in answered if r["first_token_ms"] is not None and not r["cached"]
    ]
    generated = [r for r in answered if not r["cached"] and r["tokens"] > 1]
    decode_ms = sum(
        (r["total_ms"] or 0) - (r["first_token_ms"] or 0) for r in generated if r["total_ms"]
    )
    tokens = sum(r["tokens"] - 1 for r in generated)
    fixes = [r for r in answered if r["task"] == "fix"]
    repairable = [r for r in fixes if r["changed"] or not r["verified"]]
    fixed = [r for r in repairable if r["changed"] and r["verified"]]
    accepted = sum(1 for f in feedback if f["accepted"])
    return {
        "requests": len(rows),
        "answered": len(answered),
        "errors": sum(1 for r in rows if r["outcome"] == "error"),
        "refused": sum(1 for r in rows if r["outcome"] in ("busy", "refused")),
        "p50_ms": percentile(latencies, 0.50),
        "p90_ms": percentile(latencies, 0.90),
        "p99_ms": percentile(latencies, 0.99),
        "first_token_p50_ms": percentile(first, 0.50),
        "first_token_p90_ms": percentile(first, 0.90),
        "first_token_p99_ms": percentile(first, 0.99),
        "tokens_per_second": round(tokens / (decode_ms / 1000), 1) if decode_ms > 0 else None,
        "cache_hits": sum(1 for r in answered if r["cached"]),
        "cache_hit_rate": round(sum(1 for r in answered if r["cached"]) / len(answered), 4)
        if answered
        else None,
        "feedback": len(feedback),
        "acceptance_rate": round(accepted / len(feedback), 4) if feedback else None,
        "fixes": len(repairable),
        "fix_rate": round(len(fixed) / len(repairable), 4) if repairable else None,
        **acceptance_split(feedback),
        **_verification(answered),
    }


def _verification(answered: list[dict[str, Any]]) -> dict[str, Any]:
    """Of the completions answered: the share whose final text verified, among those a checker
    could judge, and how many none could (no parser for their language). Records from before
    ``checked`` was recorded count as judged."""
    completions = [r for r in answered if r["task"] == "complete" and r["verified"] is not None]
    judged = [r for r in completions if r["checked"] is None or r["checked"]]
    verified = sum(1 for r in judged if r["verified"])
    return {
        "verified_rate": round(verified / len(judged), 4) if judged else None,
        "unchecked": len(completions) - len(judged),
    }


def _heat_bucket(ms: float) -> str:
    for label, bound in HEAT_BUCKETS:
        if ms < bound:
            return label
    return HEAT_BUCKETS[-1][0]


def summarize(
    rows: list[dict[str, Any]],
    feedback: list[dict[str, Any]],
    window_s: float,
    by: str = "language",
    now: float | None = None,
) -> dict[str, Any]:
    """Every figure the stats views show, for the records of the last ``window_s`` seconds."""
    if by not in GROUPINGS:
        raise ValueError(f"group by one of {', '.join(GROUPINGS)}, not {by!r}")
    now = now or time.time()
    since = now - window_s
    rows = [r for r in rows if r["at"] >= since]
    feedback = [f for f in feedback if f["at"] >= since]

    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row[by] or "unknown", row["task"])].append(row)
    feedback_by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if by in ("language", "user"):
        for item in feedback:
            feedback_by[item[by] or "unknown"].append(item)
    table = []
    for (name, task), members in sorted(groups.items()):
        marks = feedback_by.get(name, []) if task == "complete" else []
        table.append({by: name, "task": task, **_figures(members, marks)})

    heat: dict[str, dict[str, int]] = defaultdict(lambda: {label: 0 for label, _ in HEAT_BUCKETS})
    for row in rows:
        if row["outcome"] == "done" and row["total_ms"] is not None:
            heat[row["language"] or "unknown"][_heat_bucket(row["total_ms"])] += 1

    step = window_s / SERIES_POINTS
    series = []
    for index in range(SERIES_POINTS):
        start = since + index * step
        inside = [r for r in rows if start <= r["at"] < start + step and r["outcome"] == "done"]
        latencies = [r["total_ms"] for r in inside if r["total_ms"] is not None]
        series.append(
            {
                "start": round(start, 3),
                "requests": len(inside),
                "p50_ms": percentile(latencies, 0.50),
                "p90_ms": percentile(latencies, 0.90),
                "p99_ms": percentile(latencies, 0.99),
                "cache_hit_rate": round(sum(1 for r in inside if r["cached"]) / len(inside), 4)
                if inside
                else None,
            }
        )
    return {
        "window_s": window_s,
        "since": since,
        "until": now,
        "by": by,
        "totals": _figures(rows, feedback),
        "groups": table,
        "heatmap": {"buckets": [label for label, _ in HEAT_BUCKETS], "rows": dict(heat)},
        "series": series,
    }
