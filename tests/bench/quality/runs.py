"""Running one completion through a daemon and recording what the user saw, and when."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.client.daemon_client import DaemonClient
from daemon.protocol import CompleteRequest, DoneEvent, ErrorEvent, StageEvent


@dataclass
class Answer:
    """One completion as shown: the final text, and the time of each stage."""

    text: str
    ms: float
    stages: dict[str, float] = field(default_factory=dict)
    error: str | None = None

    @property
    def first_line(self) -> str:
        head, newline, _ = self.text.partition("\n")
        return head + newline


def ask(client: DaemonClient, request: CompleteRequest) -> Answer:
    stages: dict[str, float] = {}
    text, ms, error = "", 0.0, None
    for event in client.complete(request):
        if isinstance(event, StageEvent):
            stages.setdefault(event.stage, event.elapsed_ms)
            if event.stage == "final":
                text = event.text if event.ok else ""
        elif isinstance(event, ErrorEvent):
            error = event.message
        elif isinstance(event, DoneEvent):
            ms = event.timings.total_ms
    return Answer(text, ms, stages, error)


def request(
    text: str, line: int, column: int, path: Path | str, profile: Any, **extra: Any
) -> CompleteRequest:
    return CompleteRequest(
        text=text,
        line=line,
        column=column,
        path=str(path),
        language="python",
        profile=profile,
        cache=False,
        **extra,
    )


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
