"""The background read of a document's whole window: once per window, only when idle."""

from __future__ import annotations

import asyncio

from daemon.answers import warm
from daemon.answers.warm import WindowWarmer
from daemon.engine.scheduler import Priority
from tests.unit.scripted_backend import ScriptedBackend, in_turn


async def _settle(warmer: WindowWarmer) -> None:
    while len(warmer.tasks):
        await asyncio.sleep(0.01)


async def test_a_window_is_read_once_at_background_priority_and_the_place_given_back():
    backend = ScriptedBackend(in_turn())
    warmer = WindowWarmer(backend)
    assert warmer.warm(("alice", "a.py"), [1, 2, 3], "alice")
    assert not warmer.warm(("alice", "a.py"), [1, 2, 3], "alice")  # being read already
    await asyncio.wait_for(_settle(warmer), 5)
    assert [(r.tokens, r.budget.max_tokens, r.priority) for r in backend.runs] == [
        ([1, 2, 3], 0, Priority.BACKGROUND)
    ]
    assert warmer.finished == 1
    assert backend.scheduler.admit(Priority.BACKGROUND, "bob")  # the place was given back


async def test_a_newer_window_replaces_the_one_being_read():
    backend = ScriptedBackend(in_turn(), gate=asyncio.Event())
    warmer = WindowWarmer(backend)
    warmer.warm(("alice", "a.py"), [1, 2, 3], "alice")
    await asyncio.sleep(0.01)
    assert warmer.warm(("alice", "a.py"), [1, 2, 3, 4], "alice")
    backend.gate.set()
    await asyncio.wait_for(_settle(warmer), 5)
    assert backend.runs[0].withdrawn and backend.runs[-1].tokens == [1, 2, 3, 4]
    assert warmer.finished == 1


async def test_no_warm_up_while_the_model_stays_busy(monkeypatch):
    monkeypatch.setattr(warm, "ADMIT_TRIES", 3)
    monkeypatch.setattr(warm, "ADMIT_WAIT_S", 0.01)
    backend = ScriptedBackend(in_turn())
    held = backend.scheduler.admit(Priority.INTERACTIVE, "bob")
    warmer = WindowWarmer(backend)
    warmer.warm(("alice", "a.py"), [1, 2, 3], "alice")
    await asyncio.wait_for(_settle(warmer), 5)
    assert backend.runs == [] and warmer.started == 0
    held.release()
