"""The remote servers' figures in Prometheus form, read from the engine when /metrics is asked.
Each remote server is a ``backend`` label (its URL).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

Snapshot = Callable[[], list[dict[str, Any]]]


class BackendCollector:
    """A custom collector: the figures are the pool's own, not copied into metric objects."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def describe(self) -> list[Metric]:
        return []  # no fixed set: the families come from the backends there are

    def collect(self) -> Iterator[Metric]:
        backends = self._snapshot()
        families: list[tuple[type, str, str, Callable[[dict[str, Any]], float | None]]] = [
            (GaugeMetricFamily, "assist_backend_up", "1 when the backend answers", _up),
            (
                GaugeMetricFamily,
                "assist_backend_in_flight",
                "Requests running on it",
                _key("in_flight"),
            ),
            (
                GaugeMetricFamily,
                "assist_backend_limit",
                "Requests it may run at once",
                _key("limit"),
            ),
            (
                CounterMetricFamily,
                "assist_backend_requests",
                "Requests sent to it",
                _key("requests"),
            ),
            (CounterMetricFamily, "assist_backend_errors", "Requests it failed", _key("errors")),
            (
                CounterMetricFamily,
                "assist_backend_failovers",
                "Requests moved from it to another backend before their first token",
                _key("failovers"),
            ),
            (
                GaugeMetricFamily,
                "assist_backend_first_token_seconds",
                "Median time to its first token over recent requests",
                _seconds("first_token_p50_ms"),
            ),
            (
                GaugeMetricFamily,
                "assist_backend_answer_seconds",
                "Median time to the end of its answers over recent requests",
                _seconds("total_p50_ms"),
            ),
        ]
        for kind, name, documentation, read in families:
            family = kind(name, documentation, labels=["backend"])
            for backend in backends:
                value = read(backend)
                if value is not None:
                    family.add_metric([backend["url"]], value)
            yield family


def _up(backend: dict[str, Any]) -> float:
    return 1.0 if backend["state"] == "up" else 0.0


def _key(name: str) -> Callable[[dict[str, Any]], float | None]:
    return lambda backend: backend.get(name)


def _seconds(name: str) -> Callable[[dict[str, Any]], float | None]:
    def read(backend: dict[str, Any]) -> float | None:
        value = backend.get(name)
        return None if value is None else value / 1000

    return read
