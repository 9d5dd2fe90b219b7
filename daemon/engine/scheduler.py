"""The scheduler in front of the engine: priorities, turns between users, a bounded queue."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

from daemon.errors import Busy, ShuttingDown


class Priority(IntEnum):
    INTERACTIVE = 0  # completions a user waits for
    REPAIR = 1  # fixes
    BACKGROUND = 2  # prefetch: only when nothing else waits


class Admission:
    """A place in the queue held by one request from admission until ``release``."""

    def __init__(self, scheduler: Scheduler, priority: Priority, user: str) -> None:
        self.scheduler = scheduler
        self.priority = priority
        self.user = user
        self.released = False

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.scheduler._give_back(self.user)


class Schedulable(Protocol):
    priority: Priority
    user: str
    admission: Admission | None
    owns_place: bool

    @property
    def preemptible(self) -> bool: ...


@dataclass
class SchedulerStats:
    submitted: int = 0
    refused: int = 0
    preempted: int = 0


# The bound counts places, not jobs: a request takes a place when it is admitted (admit, one atomic
# check-and-take, so simultaneous requests cannot overrun it) and keeps it until it ends, however
# many jobs it runs (a repair runs several). The bounds are on waiting requests: places whose jobs
# are running do not count. A job submitted without an admission takes a place of its own until it
# finishes. When a more urgent job arrives while less urgent ones run, they are asked to yield; the
# engine pauses them, or puts one back at the head of its line to free its place, and it resumes
# where it stopped.
class Scheduler:
    def __init__(self, queue_size: int = 16, user_queue_size: int = 8) -> None:
        self.queue_size = queue_size
        self.user_queue_size = user_queue_size
        self._lines: dict[Priority, dict[str, deque[Schedulable]]] = {p: {} for p in Priority}
        self._turns: dict[Priority, deque[str]] = {p: deque() for p in Priority}
        self._cond = threading.Condition()
        self._count = 0  # jobs waiting
        self._places = 0  # places held: admitted requests, and jobs submitted on their own
        self._places_by_user: dict[str, int] = {}
        self._per_user: dict[str, int] = {}  # jobs waiting, per user
        self._closed = False
        self.running: set[Schedulable] = set()
        self.stats = SchedulerStats()
        # Recent time per job, for a Retry-After that means something.
        self._recent_job_s = 1.0

    # -- admission -------------------------------------------------------------------------
    def _waiting(self, user: str | None = None) -> int:
        """Places held by requests that wait (all of them, or one user's): every place but
        the one whose job is generating now."""
        held = self._places if user is None else self._places_by_user.get(user, 0)
        running = {
            id(job.admission): job.admission
            for job in self.running
            if job.admission is not None and not job.admission.released
        }
        return held - sum(1 for a in running.values() if user in (None, a.user))

    def _room_for(self, priority: Priority, user: str) -> str | None:
        if priority == Priority.BACKGROUND and (self._places or self.running):
            return "background work runs only when the model is idle"
        waiting = self._waiting()
        if waiting >= self.queue_size:
            return f"{waiting} requests are waiting for the model"
        mine = self._waiting(user)
        if mine >= self.user_queue_size:
            return f"{mine} of your requests are already waiting"
        return None

    def retry_after(self) -> int:
        return max(1, round(self._recent_job_s * (1 + self._waiting())))

    def _take_place(self, priority: Priority, user: str) -> None:
        """Check for room and take a place, in one step (the caller holds the lock)."""
        if self._closed:
            raise ShuttingDown("the daemon is shutting down", retry_after=5)
        reason = self._room_for(priority, user)
        if reason is not None:
            self.stats.refused += 1
            raise Busy(f"the model is busy: {reason}", retry_after=self.retry_after())
        self._places += 1
        self._places_by_user[user] = self._places_by_user.get(user, 0) + 1

    def _give_back(self, user: str) -> None:
        with self._cond:
            self._places -= 1
            left = self._places_by_user.get(user, 1) - 1
            if left:
                self._places_by_user[user] = left
            else:
                self._places_by_user.pop(user, None)

    def admit(self, priority: Priority, user: str) -> Admission:
        """A place for a request that will run jobs, or Busy (with Retry-After) at once."""
        with self._cond:
            self._take_place(priority, user)
        return Admission(self, priority, user)

    def submit(self, job: Schedulable, front: bool = False) -> None:
        """Queue a job. One with an admission runs in its request's place; one without takes
        a place of its own (or is refused with Busy). ``front``: a job that yielded goes back
        first."""
        with self._cond:
            if self._closed:
                raise ShuttingDown("the daemon is shutting down", retry_after=5)
            if not front and job.admission is None:
                self._take_place(job.priority, job.user)
                job.admission = Admission(self, job.priority, job.user)
                job.owns_place = True
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
            # A running job less urgent than this one yields at its next step (``waiting_above``).
            if any(r.preemptible and job.priority < r.priority for r in self.running):
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
                    self.running.add(job)
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
            self.running.discard(job)
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
