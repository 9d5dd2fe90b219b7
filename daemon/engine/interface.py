"""The engine protocol that the local engine and the remote one both implement.
The rest of the daemon uses an engine through it alone (``daemon.engine.worker``, ``.remote``)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

from daemon.engine.jobs import Budget, Job, Sink, Until
from daemon.engine.report import BackendFigures, EngineKind, EngineReport
from daemon.engine.scheduler import Admission, Priority, Scheduler
from daemon.engine.speed import SpeedMeter


class ServingEngine(Protocol):
    """Jobs in, events out through their sinks; its queue, its speed, and a typed report."""

    scheduler: Scheduler
    speed: SpeedMeter
    ready: threading.Event  # set once the engine can take jobs

    @property
    def kind(self) -> EngineKind:
        """Where the forward passes run: "local", or "remote" on backends."""
        ...

    @property
    def queue_depth(self) -> int: ...

    def start(self) -> None: ...

    def close(self) -> None: ...

    def summary(self) -> str:
        """The engine in one line, for the daemon's start-up lines."""
        ...

    def report(self) -> EngineReport: ...

    def backends(self) -> list[BackendFigures]:
        """Each remote backend's figures; none for an engine that decodes here."""
        ...

    def submit(
        self,
        tokens: Sequence[int],
        budget: Budget,
        *,
        sink: Sink,
        stop_strings: Sequence[str] = (),
        until: Until | None = None,
        admission: Admission | None = None,
        priority: Priority = Priority.INTERACTIVE,
        user: str = "local",
    ) -> Job: ...

    def score(
        self,
        tokens: Sequence[int],
        score_from: int,
        *,
        sink: Sink,
        deadline: float,
        admission: Admission | None = None,
        priority: Priority = Priority.INTERACTIVE,
        user: str = "local",
    ) -> Job: ...

    def withdraw(self, job: Job) -> None: ...

    def cached_prefix(self, tokens: Sequence[int]) -> int: ...
