"""The scheduler: priorities, turns between users, bounds, idle-only background, preemption."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from daemon.scheduler import Priority, QueueFull, Scheduler


@dataclass
class FakeJob:
    name: str
    priority: Priority = Priority.INTERACTIVE
    user: str = "a"
    yielded: list[bool] = field(default_factory=list)

    def request_yield(self) -> None:
        self.yielded.append(True)

    @property
    def preemptible(self) -> bool:
        return self.priority > Priority.INTERACTIVE


def drain(scheduler: Scheduler) -> list[str]:
    names = []
    while (job := scheduler.next_job(timeout=0)) is not None:
        names.append(job.name)
        scheduler.finished(job, 0.1)
    return names


def test_more_urgent_work_goes_first():
    s = Scheduler()
    s.submit(FakeJob("fix", Priority.REPAIR))
    s.submit(FakeJob("complete"))
    assert drain(s) == ["complete", "fix"]


def test_users_take_turns_within_a_priority():
    s = Scheduler(queue_size=16, user_queue_size=8)
    for i in range(4):
        s.submit(FakeJob(f"a{i}", user="alice"))
    s.submit(FakeJob("b0", user="bob"))
    s.submit(FakeJob("c0", user="carol"))
    assert drain(s) == ["a0", "b0", "c0", "a1", "a2", "a3"]


def test_the_queue_is_bounded_in_total_and_per_user():
    s = Scheduler(queue_size=3, user_queue_size=2)
    s.submit(FakeJob("1", user="alice"))
    s.submit(FakeJob("2", user="alice"))
    with pytest.raises(QueueFull, match="your requests") as full:
        s.submit(FakeJob("3", user="alice"))
    assert full.value.retry_after >= 1
    s.submit(FakeJob("4", user="bob"))
    with pytest.raises(QueueFull, match="waiting"):
        s.check(Priority.INTERACTIVE, "carol")
    assert s.stats.refused == 2


def test_background_work_only_when_idle():
    s = Scheduler()
    s.submit(FakeJob("prefetch", Priority.BACKGROUND))
    assert drain(s) == ["prefetch"]
    s.submit(FakeJob("complete"))
    with pytest.raises(QueueFull, match="idle"):
        s.submit(FakeJob("prefetch", Priority.BACKGROUND))


def test_a_running_repair_is_asked_to_yield_to_a_completion():
    s = Scheduler()
    repair = FakeJob("fix", Priority.REPAIR)
    s.submit(repair)
    assert s.next_job(timeout=0) is repair
    s.submit(FakeJob("complete"))
    assert repair.yielded == [True]
    assert s.waiting_above(Priority.REPAIR)
    s.finished(repair, 1.0)
    s.submit(repair, front=True)  # it goes back to the head of its own line
    assert drain(s) == ["complete", "fix"]


def test_drain_hands_back_waiting_jobs_and_closes():
    s = Scheduler()
    s.submit(FakeJob("x"))
    assert [j.name for j in s.drain()] == ["x"]
    assert s.next_job(timeout=0) is None
