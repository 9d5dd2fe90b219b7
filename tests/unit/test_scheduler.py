"""The scheduler: priorities, turns between users, bounds, idle-only background, preemption."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from daemon.engine.scheduler import Admission, Priority, Scheduler
from daemon.errors import Busy


@dataclass(eq=False)
class FakeJob:
    name: str
    priority: Priority = Priority.INTERACTIVE
    user: str = "a"
    admission: Admission | None = None
    owns_place: bool = False

    @property
    def preemptible(self) -> bool:
        return self.priority > Priority.INTERACTIVE


def drain(scheduler: Scheduler) -> list[str]:
    names = []
    while (job := scheduler.next_job(timeout=0)) is not None:
        names.append(job.name)
        scheduler.finished(job, 0.1)
        if job.owns_place and job.admission is not None:
            job.admission.release()  # as the engine does when a job ends
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
    with pytest.raises(Busy, match="your requests") as full:
        s.submit(FakeJob("3", user="alice"))
    assert full.value.retry_after >= 1
    s.submit(FakeJob("4", user="bob"))
    with pytest.raises(Busy, match="waiting"):
        s.admit(Priority.INTERACTIVE, "carol")
    assert s.stats.refused == 2


def test_background_work_only_when_idle():
    s = Scheduler()
    s.submit(FakeJob("prefetch", Priority.BACKGROUND))
    assert drain(s) == ["prefetch"]
    s.submit(FakeJob("complete"))
    with pytest.raises(Busy, match="idle"):
        s.submit(FakeJob("prefetch", Priority.BACKGROUND))


def test_a_running_repair_is_asked_to_yield_to_a_completion():
    s = Scheduler()
    repair = FakeJob("fix", Priority.REPAIR)
    s.submit(repair)
    assert s.next_job(timeout=0) is repair
    s.submit(FakeJob("complete"))
    assert s.waiting_above(Priority.REPAIR)  # what the engine's step asks before each token
    assert s.stats.preempted == 1
    s.finished(repair, 1.0)
    s.submit(repair, front=True)  # it goes back to the head of its own line
    assert drain(s) == ["complete", "fix"]


def test_drain_hands_back_waiting_jobs_and_closes():
    s = Scheduler()
    s.submit(FakeJob("x"))
    assert [j.name for j in s.drain()] == ["x"]
    assert s.next_job(timeout=0) is None


def test_simultaneous_admissions_never_overrun_the_bound():
    """Check and take are one step: 64 requests at once get exactly ``queue_size`` places."""
    s = Scheduler(queue_size=16, user_queue_size=64)
    start = threading.Barrier(64)
    admitted: list[Admission] = []
    refused: list[Busy] = []
    lock = threading.Lock()

    def ask(index: int) -> None:
        start.wait()
        try:
            place = s.admit(Priority.INTERACTIVE, f"user{index % 4}")
        except Busy as exc:
            with lock:
                refused.append(exc)
            return
        with lock:
            admitted.append(place)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(admitted) == 16 and len(refused) == 48
    assert all(exc.retry_after and exc.retry_after >= 1 for exc in refused)
    for place in admitted:
        place.release()
        place.release()  # giving a place back twice gives it back once
    assert len([s.admit(Priority.INTERACTIVE, "again") for _ in range(16)]) == 16


def test_jobs_of_an_admitted_request_run_in_its_place():
    """A repair runs several jobs one after another: none of them is refused half-way."""
    s = Scheduler(queue_size=1, user_queue_size=1)
    place = s.admit(Priority.REPAIR, "alice")
    for name in ("hint", "rewrite"):
        s.submit(FakeJob(name, Priority.REPAIR, "alice", admission=place))
    assert drain(s) == ["hint", "rewrite"]
    with pytest.raises(Busy):
        s.submit(FakeJob("other", user="bob"))  # the place is still the repair's
    place.release()
    s.submit(FakeJob("other", user="bob"))


def test_the_request_generating_now_is_not_counted_as_waiting():
    s = Scheduler(queue_size=2, user_queue_size=1)
    running = s.admit(Priority.INTERACTIVE, "alice")
    job = FakeJob("generating", user="alice", admission=running)
    s.submit(job)
    assert s.next_job(timeout=0) is job
    waiting = s.admit(Priority.INTERACTIVE, "alice")  # one waiting request of alice's
    with pytest.raises(Busy, match="your requests"):
        s.admit(Priority.INTERACTIVE, "alice")
    s.admit(Priority.INTERACTIVE, "bob")
    with pytest.raises(Busy, match="2 requests are waiting"):
        s.admit(Priority.INTERACTIVE, "carol")
    waiting.release()
    s.admit(Priority.INTERACTIVE, "carol")
