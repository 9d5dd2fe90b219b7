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


async def test_every_error_is_repaired_and_each_step_is_traced():
    broken = "def f(a):\n    if a = 1:\n        return add(a, 2\n    return a\n"
    backend = ScriptedBackend(in_turn("unused"), scorer=prefer("add(a, 2)"))
    events = await collect(
        await pipeline(backend).start(FixRequest(text=broken, profile=PYTHON), "alice")
    )
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.verified and done.changed
    assert done.text == "def f(a):\n    if a == 1:\n        return add(a, 2)\n    return a\n"
    assert [step.line for step in done.repairs] == [1, 2]
    assert done.repairs[0].rule == "== for = in a condition"
    assert all(step.candidates >= 1 and step.invented == 0 for step in done.repairs)
    assert backend.runs == []  # the rules were enough: the model only judged


async def test_a_partial_repair_says_how_far_it_got_and_changes_nothing():
    # The second error has no rule, and the model's text
    # drops the author's tokens, so it is refused.
    broken = "def f(a):\n    if a = 1:\n        return 2\n    x = lambda lambda\n    return a\n"
    backend = ScriptedBackend(lambda run: "pass")
    repairs = pipeline(backend, fix_candidates=1)
    events = await collect(await repairs.start(FixRequest(text=broken, profile=PYTHON), "alice"))
    done = events[-1]
    assert isinstance(done, DoneEvent) and not done.changed and not done.verified
    assert done.text == broken and backend.cache == {}
    assert len(done.repairs) == 1 and done.unrepaired is not None
    final = next(e for e in events if isinstance(e, StageEvent) and e.stage == "final")
    assert not final.ok and final.reason and final.reason.startswith("fixed 1 error")


async def test_the_compiler_refuses_a_return_dedented_out_of_its_method():
    broken = "class A:\n    def f(self):\n        x = 1\n      return x\n"
    backend = ScriptedBackend(in_turn("unused"))
    events = await collect(
        await pipeline(backend).start(FixRequest(text=broken, profile=PYTHON), "alice")
    )
    done = events[-1]
    assert (
        done.verified
        and done.text == "class A:\n    def f(self):\n        x = 1\n        return x\n"
    )


def prefer(wanted: str, by: float = 5.0) -> Any:
    """A scorer that finds windows holding ``wanted`` likelier (-1.0 a token, else -1.0 - by)."""

    def scorer(tokens: list[int], score_from: int) -> list[float]:
        window = "".join(chr(t - 1000) for t in tokens[score_from:] if t >= 1000)
        bonus = 0.0 if wanted in window else -by
        return [bonus / max(1, len(tokens) - score_from) - 1.0] * (len(tokens) - score_from)

    return scorer


UNCLOSED = "def total(a, b):\n    return add(sub(a, b)\n\n\nprint(total(1, 2))\n"


async def test_the_model_judges_candidates_the_rules_cannot_tell_apart():
    for wanted in ("add(sub(a, b))", "add(sub)(a, b)"):
        backend = ScriptedBackend(in_turn("unused"), scorer=prefer(wanted))
        events = await collect(
            await pipeline(backend).start(FixRequest(text=UNCLOSED, profile=PYTHON), "alice")
        )
        done = events[-1]
        assert isinstance(done, DoneEvent) and done.verified and wanted in done.text
        assert done.repairs[0].score is not None and not done.alternatives
        assert backend.scores and all(s.priority == Priority.REPAIR for s in backend.scores)
        # Every candidate was scored after the same context: the shared prefix.
        assert len({tuple(s.tokens[: s.score_from]) for s in backend.scores}) == 1


async def test_two_readings_as_likely_are_both_offered_and_not_cached():
    backend = ScriptedBackend(in_turn("unused"))  # every token as likely as any other
    events = await collect(
        await pipeline(backend).start(FixRequest(text=UNCLOSED, profile=PYTHON), "alice")
    )
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.changed and len(done.alternatives) == 1
    assert done.alternatives[0].text != done.text and done.alternatives[0].diff
    final = next(e for e in events if isinstance(e, StageEvent) and e.stage == "final")
    assert not final.ok and "choose" in (final.reason or "")
    assert backend.cache == {}


async def test_without_the_judge_the_rules_order_stands():
    backend = ScriptedBackend(in_turn("unused"))
    events = await collect(
        await pipeline(backend, fix_judge=False).start(
            FixRequest(text=UNCLOSED, profile=PYTHON), "alice"
        )
    )
    done = events[-1]
    assert done.verified and not done.alternatives and backend.scores == []
    assert "add(sub(a, b))" in done.text
