"""The scheduler in front of the engine: priorities, fairness between users, a bounded queue.

Interactive completions go before repairs, repairs before background work (prefetch). Within a
priority, users take turns (round robin), so one user's burst waits behind everyone else's
single request instead of starving them. The queue is bounded in total and per user: a request
that does not fit is refused at once ("busy, try again"), never queued without limit. When a
more urgent job arrives while a less urgent one is generating, the running job is asked to
yield; it is put back at the head of its line and resumes where it stopped.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol


class Priority(IntEnum):
    INTERACTIVE = 0  # completions a user waits for
    REPAIR = 1  # fixes
    BACKGROUND = 2  # prefetch: only when nothing else waits


class Schedulable(Protocol):
    priority: Priority
    user: str

    def request_yield(self) -> None: ...

    @property
    def preemptible(self) -> bool: ...


@dataclass
class SchedulerStats:
    submitted: int = 0
    refused: int = 0
    preempted: int = 0


class QueueFull(RuntimeError):
    """No room: ``retry_after`` is a hint in seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Scheduler:
    def __init__(self, queue_size: int = 16, user_queue_size: int = 8) -> None:
        self.queue_size = queue_size
        self.user_queue_size = user_queue_size
        self._lines: dict[Priority, dict[str, deque[Schedulable]]] = {p: {} for p in Priority}
        self._turns: dict[Priority, deque[str]] = {p: deque() for p in Priority}
        self._cond = threading.Condition()
        self._count = 0
        self._per_user: dict[str, int] = {}
        self._closed = False
        self.running: Schedulable | None = None
        self.stats = SchedulerStats()
        # Recent time per job, for a Retry-After that means something.
        self._recent_job_s = 1.0

    # -- admission -------------------------------------------------------------------------
    def _room_for(self, priority: Priority, user: str) -> str | None:
        if priority == Priority.BACKGROUND and (self._count or self.running is not None):
            return "background work runs only when the model is idle"
        if self._count >= self.queue_size:
            return f"{self._count} requests are waiting for the model"
        if self._per_user.get(user, 0) >= self.user_queue_size:
            return f"{self._per_user[user]} of your requests are already waiting"
        return None

    def retry_after(self) -> int:
        return max(1, round(self._recent_job_s * (1 + self._count)))

    def check(self, priority: Priority, user: str) -> None:
        """Raise QueueFull if a job of this priority and user would not be accepted now."""
        with self._cond:
            reason = self._room_for(priority, user)
            if reason is not None:
                self.stats.refused += 1
                raise QueueFull(f"the model is busy: {reason}", self.retry_after())

    def submit(self, job: Schedulable, front: bool = False, admitted: bool = False) -> None:
        """Queue a job. ``admitted``: its request already passed ``check`` (a request is
        never refused halfway through); ``front``: a job that yielded goes back first."""
        with self._cond:
            if self._closed:
                raise QueueFull("the daemon is shutting down", 5)
            if not front and not admitted:
                reason = self._room_for(job.priority, job.user)
                if reason is not None:
                    self.stats.refused += 1
                    raise QueueFull(f"the model is busy: {reason}", self.retry_after())
            if not front:
                self.stats.submitted += 1
            line = self._lines[job.priority].setdefault(job.user, deque())
            if front:
                line.appendleft(job)
            else:
                line.append(job)
            if job.user not in self._turns[job.priority]:
                if front:
                    self._turns[job.priority].appendleft(job.user)
                else:
                    self._turns[job.priority].append(job.user)
            self._count += 1
            self._per_user[job.user] = self._per_user.get(job.user, 0) + 1
            running = self.running
            if running is not None and running.preemptible and job.priority < running.priority:
                running.request_yield()
                self.stats.preempted += 1
            self._cond.notify()

    # -- the worker's side -----------------------------------------------------------------
    def next_job(self, timeout: float | None = None) -> Schedulable | None:
        """The next job to run (blocking); None when closed or on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                if self._closed:
                    return None
                job = self._pop()
                if job is not None:
                    self.running = job
                    return job
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._cond.wait(remaining)

    def _pop(self) -> Schedulable | None:
        for priority in Priority:
            turns = self._turns[priority]
            for _ in range(len(turns)):
                user = turns.popleft()
                line = self._lines[priority].get(user)
                if not line:
                    self._lines[priority].pop(user, None)
                    continue
                job = line.popleft()
                if line:
                    turns.append(user)  # the user's next job waits for everyone else's turn
                else:
                    del self._lines[priority][user]
                self._count -= 1
                self._per_user[job.user] -= 1
                if not self._per_user[job.user]:
                    del self._per_user[job.user]
                return job
        return None

    def remove(self, job: Schedulable) -> bool:
        """Take a waiting job out (it was cancelled): it no longer holds a place in line."""
        with self._cond:
            line = self._lines[job.priority].get(job.user)
            if not line or job not in line:
                return False
            line.remove(job)
            if not line:
                del self._lines[job.priority][job.user]
                if job.user in self._turns[job.priority]:
                    self._turns[job.priority].remove(job.user)
            self._count -= 1
            self._per_user[job.user] -= 1
            if not self._per_user[job.user]:
                del self._per_user[job.user]
            return True

    def finished(self, job: Schedulable, seconds: float) -> None:
        with self._cond:
            if self.running is job:
                self.running = None
            self._recent_job_s = 0.8 * self._recent_job_s + 0.2 * seconds

    def drain(self) -> list[Schedulable]:
        """Close the scheduler and hand back every job still waiting."""
        with self._cond:
            self._closed = True
            waiting = []
            while (job := self._pop()) is not None:
                waiting.append(job)
            self._cond.notify_all()
            return waiting

    def waiting_above(self, priority: Priority) -> bool:
        """Whether a job more urgent than ``priority`` is waiting."""
        with self._cond:
            return any(self._lines[p] for p in Priority if p < priority)

    @property
    def depth(self) -> int:
        return self._count

    def depth_by_priority(self) -> dict[str, int]:
        with self._cond:
            return {
                p.name.lower(): sum(len(line) for line in self._lines[p].values()) for p in Priority
            }
