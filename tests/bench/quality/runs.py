"""Running one completion through a daemon and recording what the user saw, and when."""

from __future__ import annotations

import signal
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from daemon.client.daemon_client import DaemonClient
from daemon.client.launcher import free_port, launch
from daemon.protocol import CompleteRequest, DoneEvent, ErrorEvent, StageEvent
from daemon.settings import Settings


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


def _exit(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def stopped_on_sigterm() -> Iterator[None]:
    """Inside it, SIGTERM ends the program as an exception does, so ``finally`` blocks run (a
    benchmark stopped with ``kill`` stops its daemon too); only on the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def daemon(base: Settings, work: Path, **overrides: Any) -> Iterator[DaemonClient]:
    """A daemon of its own (``base`` with ``overrides``, a cache file of its own in ``work``) on
    a free loopback port, and a client of it; stopped at the end, SIGTERM included."""
    settings = base.model_copy(
        update={
            "port": free_port(),
            "cache_path": work / f"cache-{free_port()}.sqlite3",
            **overrides,
        }
    )
    with stopped_on_sigterm():
        process, _ = launch(settings, work / f"daemon-{settings.port}.log")
        try:
            with DaemonClient(settings.daemon_url, timeout=300) as client:
                yield client
        finally:
            process.terminate()
            process.wait(timeout=60)


def wait_idle(client: DaemonClient, limit_s: float = 120.0) -> None:
    """Until the daemon runs nothing and has no window to read, or ``limit_s`` passed."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        health = client.health()
        warming = health.workload.get("windows_warming")
        if not health.engine.get("running") and not health.queue_depth and not warming:
            return
        time.sleep(0.1)
