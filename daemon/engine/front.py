"""What every engine does in front of its queue: accept jobs, cancel the waiting ones on close.
The local and the remote engine differ in where the forward passes run, not in how jobs queue.
"""

from __future__ import annotations

from collections.abc import Sequence

from daemon.engine.jobs import Budget, Finished, Job, Sink, Until
from daemon.engine.report import (
    EngineReport,
    EngineStats,
    LocalFigures,
    QueueFigures,
    RemoteFigures,
    SavedStateFigures,
)
from daemon.engine.scheduler import Admission, Priority, Scheduler
from daemon.errors import ShuttingDown


class QueueFront:
    scheduler: Scheduler
    stats: EngineStats
    _closed: bool
    _format_stops: tuple[str, ...]  # the prompt format's end pieces: they end every answer

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
    ) -> Job:
        """Queue a generation. With ``until``, text is released a whole line at a time and
        ``until`` decides after each line whether the answer is complete. With an
        ``admission`` the job runs in its request's place, at its priority and for its user;
        without one it takes a place of its own or is refused (``Busy``). The model's own stop
        strings (its prompt format's end pieces) always end the answer."""
        if self._closed:
            raise ShuttingDown("the engine is shutting down", retry_after=5)
        stops = (*stop_strings, *self._format_stops)
        job = Job.generation(list(tokens), budget, stops, sink, until, admission, priority, user)
        self.scheduler.submit(job)
        return job

    def _cancel_waiting(self) -> None:
        """Close the queue: every job still waiting ends "cancelled"."""
        for pending in self.scheduler.drain():
            assert isinstance(pending, Job)
            pending.cancel()
            pending.end(Finished("cancelled", 0, ""))

    @property
    def queue_depth(self) -> int:
        return self.scheduler.depth

    def report(self) -> EngineReport:
        """The engine's figures for /health: its own, its queue's and its saved states'."""
        scheduler = self.scheduler
        queue = QueueFigures(
            scheduler.depth_by_priority(),
            scheduler.stats.refused,
            scheduler.stats.preempted,
            self.stats.yielded,
        )
        return EngineReport(self._figures(), queue, self._saved_states())

    def _figures(self) -> LocalFigures | RemoteFigures:
        raise NotImplementedError

    def _saved_states(self) -> SavedStateFigures:
        return SavedStateFigures()  # an engine that keeps no KV states of its own
