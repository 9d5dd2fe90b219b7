"""The daemon's own view of a load test: its ``/metrics`` counters before and after a run.
The difference is what the run did as the daemon counted it (other clients count too)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import httpx
from prometheus_client.parser import text_string_to_metric_families

# The counter families read, and the label each is summed by.
COUNTERS = {
    "assist_requests": ("requests", "outcome"),
    "assist_cache_hits": ("hits", "match"),
    "assist_errors": ("errors", "code"),
}
# Reads of /metrics until two in a row agree: the daemon's recorder thread counts a little late.
SETTLE_READS = 10
SETTLE_PAUSE_S = 0.3


@dataclass(frozen=True)
class DaemonFigures:
    requests: dict[str, float] = field(default_factory=dict)  # by outcome
    hits: dict[str, float] = field(default_factory=dict)  # by match
    errors: dict[str, float] = field(default_factory=dict)  # by code
    queue_depth: float | None = None

    def since(self, before: DaemonFigures) -> DaemonFigures:
        """What was counted between ``before`` and these figures (the queue as it is now)."""

        def minus(now: dict[str, float], then: dict[str, float]) -> dict[str, float]:
            changed = {k: v - then.get(k, 0.0) for k, v in now.items()}
            return {k: v for k, v in changed.items() if v}

        return DaemonFigures(
            minus(self.requests, before.requests),
            minus(self.hits, before.hits),
            minus(self.errors, before.errors),
            self.queue_depth,
        )


def parse_metrics(text: str) -> DaemonFigures:
    """The figures of a ``/metrics`` page (Prometheus' text format)."""
    sums: dict[str, dict[str, float]] = {"requests": {}, "hits": {}, "errors": {}}
    depth = None
    for family in text_string_to_metric_families(text):
        if family.name == "assist_queue_depth" and family.samples:
            depth = family.samples[0].value
        if family.name not in COUNTERS:
            continue
        target, label = COUNTERS[family.name]
        for sample in family.samples:
            if sample.name.endswith("_total"):
                key = sample.labels.get(label, "")
                sums[target][key] = sums[target].get(key, 0.0) + sample.value
    return DaemonFigures(sums["requests"], sums["hits"], sums["errors"], depth)


async def read_figures(http: httpx.AsyncClient) -> DaemonFigures | None:
    """The daemon's figures now; None when it keeps no metrics or does not show them."""
    try:
        response = await http.get("/metrics", timeout=10.0)
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    return parse_metrics(response.text)


async def settled_figures(http: httpx.AsyncClient) -> DaemonFigures | None:
    """The figures once the daemon has counted every request: two reads in a row agree."""
    last = await read_figures(http)
    for _ in range(SETTLE_READS):
        await asyncio.sleep(SETTLE_PAUSE_S)
        now = await read_figures(http)
        if now is None or (last is not None and now.requests == last.requests):
            return now
        last = now
    return last
