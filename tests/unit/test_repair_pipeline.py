"""The repair pipeline against a scripted engine: parser hints first, model candidates in the
repair's place, verification, stages, cache hits and refusals."""

from __future__ import annotations

from typing import Any

import pytest

from daemon.engine.scheduler import Priority
from daemon.errors import UnsupportedLanguage
from daemon.protocol import DoneEvent, FixRequest, StageEvent, WorkspaceProfile
from daemon.repair.pipeline import RepairPipeline
from daemon.settings import load_settings
from tests.unit.scripted_backend import ScriptedBackend, in_turn

SETTINGS = load_settings().model_copy(update={"fix_deadline_ms": 60_000})
PYTHON = WorkspaceProfile(language="python")
BROKEN = "def area(width, height)\n    return width * height\n\n\nprint(area(2, 3))\n"
FIXED = "def area(width, height):\n    return width * height\n\n\nprint(area(2, 3))\n"


def pipeline(backend: ScriptedBackend, **settings: Any) -> RepairPipeline:
    return RepairPipeline(backend, SETTINGS.model_copy(update=settings))


async def collect(events: Any) -> list[Any]:
    return [event async for event in events]


async def test_a_parser_hint_repairs_without_the_model():
    backend = ScriptedBackend(in_turn("unused"))
    events = await collect(
        await pipeline(backend).start(FixRequest(text=BROKEN, profile=PYTHON), "alice")
    )
    names = [e.stage for e in events if isinstance(e, StageEvent)]
    assert names == ["skeleton", "logic", "final"]
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.changed and done.verified
    assert done.text == FIXED and "+def area(width, height):" in (done.diff or "")
    assert backend.runs == []
    assert next(iter(backend.cache.values())).text == FIXED


async def test_model_candidates_run_in_the_repairs_place_and_are_verified():
    # The model continues the broken line with the missing piece.
    backend = ScriptedBackend(lambda run: ":" if run.stage == "logic" else "")
    repairs = pipeline(backend, fix_parser_hints=False)
    events = await collect(await repairs.start(FixRequest(text=BROKEN, profile=PYTHON), "alice"))
    assert events[-1].text == FIXED and events[-1].verified
    assert backend.runs and all(run.priority == Priority.REPAIR for run in backend.runs)
    assert all(run.user == "alice" for run in backend.runs)
    assert backend.scheduler._places == 0


async def test_no_verified_candidate_leaves_the_file_as_it_was():
    backend = ScriptedBackend(lambda run: "(((")
    repairs = pipeline(backend, fix_parser_hints=False, fix_candidates=2)
    events = await collect(await repairs.start(FixRequest(text=BROKEN, profile=PYTHON), "alice"))
    final = next(e for e in events if isinstance(e, StageEvent) and e.stage == "final")
    assert not final.ok and final.text == BROKEN
    assert events[-1].changed is False and events[-1].verified is False
    assert backend.cache == {}


async def test_a_stored_fix_is_answered_from_the_cache():
    backend = ScriptedBackend(in_turn("unused"))
    repairs = pipeline(backend)
    await collect(await repairs.start(FixRequest(text=BROKEN, profile=PYTHON), "alice"))
    again = await collect(await repairs.start(FixRequest(text=BROKEN, profile=PYTHON), "bob"))
    assert again[-1].cached and again[-1].text == FIXED


async def test_a_file_that_parses_is_left_alone():
    backend = ScriptedBackend(in_turn("unused"))
    events = await collect(
        await pipeline(backend).start(FixRequest(text=FIXED, profile=PYTHON), "alice")
    )
    assert events[-1].changed is False and events[-1].verified and events[-1].text == FIXED
    assert backend.runs == []


async def test_a_language_without_a_parser_is_refused():
    backend = ScriptedBackend(in_turn("unused"))
    req = FixRequest(text="some words", profile=WorkspaceProfile(language="cobol"))
    with pytest.raises(UnsupportedLanguage, match="no parser"):
        await pipeline(backend).start(req, "alice")
