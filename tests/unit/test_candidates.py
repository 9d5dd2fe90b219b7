"""Fast-path candidates: the first line's log-probability, the ranking, the confidence gate,
and all of them through the completion pipeline (a scripted engine that writes several
continuations with their tokens' log-probabilities)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from daemon.answers.candidates import (
    CALL_DID_NOT_FIT,
    GATE_MIN_EVENTS,
    NO_HEADER,
    NO_INSTANCE,
    Candidate,
    first_line_logprob,
    held_back,
    ranked,
    threshold_for,
    undefined_names,
    with_new_names,
)
from daemon.answers.completion import CompletionPipeline
from daemon.answers.fast_path import SECOND_TRIES
from daemon.answers.gap import Trimmed
from daemon.checks.lint import ruff_path
from daemon.checks.verify import Verdict
from daemon.engine.jobs import Continuation
from daemon.protocol import CompleteRequest, DoneEvent, StageEvent, WorkspaceProfile
from daemon.settings import load_settings
from tests.unit.scripted_backend import Run, ScriptedBackend
from tests.unit.test_headers import HEADLESS

SETTINGS = load_settings().model_copy(update={"fast_deadline_ms": 60_000})
STATEMENT = "def add(a, b):\n    total = a + b\n    return "
METHOD = "class Box:\n    def __init__(self):\n        self.items = []\n\n    def close("

needs_ruff = pytest.mark.skipif(ruff_path() is None, reason="ruff is not installed")


def made(member: int, text: str, logprob: float = -1.0, *faults: str, ok: bool = True) -> Candidate:
    verdict = Verdict(ok, None if ok else "it does not parse")
    return Candidate(member, text, Trimmed(text, verdict=verdict), logprob, 1, faults)


# -- the first line's log-probability --------------------------------------------------------
def test_the_first_line_counts_the_token_that_ends_it():
    # tokens: "ab" "c\n" "de": the line is "abc", ended by the second token
    continuation = Continuation("abc\nde", "stop", 3, (-0.5, -0.25, -2.0), (2, 4, 6))
    assert first_line_logprob(continuation) == (-0.75, 2)


def test_a_one_line_answer_counts_every_token():
    continuation = Continuation("abc", "stop", 3, (-0.5, -0.25, -0.1), (2, 3, 3))
    total, count = first_line_logprob(continuation)
    assert count == 3 and total == pytest.approx(-0.85)


def test_an_answer_without_log_probabilities_is_certain():
    assert made(0, "x", 0.0).confidence == 1.0
    assert first_line_logprob(Continuation("x", "stop", 1)) == (0.0, 0)


# -- ranking ------------------------------------------------------------------------------
def test_the_models_own_choice_comes_first_when_every_check_passes():
    order = ranked([made(0, "own", -3.0), made(1, "more likely", -0.5), made(2, "less", -4.0)])
    assert [c.text for c in order] == ["own", "more likely", "less"]


def test_an_answer_that_does_not_verify_goes_last():
    order = ranked([made(0, "own(", -0.1, ok=False), made(1, "other", -2.0)])
    assert [c.text for c in order] == ["other", "own("]


def test_undefined_names_and_unfitted_calls_rank_below_clean_answers():
    order = ranked(
        [
            made(0, "own", -0.1, "undefined name `nope`"),
            made(1, "fitted", -0.2, CALL_DID_NOT_FIT),
            made(2, "clean", -5.0),
        ]
    )
    assert [c.text for c in order] == ["clean", "fitted", "own"]


def test_a_method_without_its_instance_ranks_below_one_with_it():
    order = ranked([made(0, ") -> None:", -0.1, NO_INSTANCE), made(1, "self) -> None:", -0.9)])
    assert [c.text for c in order] == ["self) -> None:", ") -> None:"]


def test_an_answer_that_leaves_the_code_below_headless_ranks_below_one_that_opens_it():
    order = ranked([made(0, "x = 1", -0.1, NO_HEADER), made(1, "with lock:", -0.9)])
    assert [each.text for each in order] == ["with lock:", "x = 1"]


def test_empty_and_repeated_texts_are_dropped():
    order = ranked([made(0, "", -0.1), made(1, "same", -0.2), made(2, "same\n", -0.3)])
    assert [c.text for c in order] == ["same"]


@needs_ruff
def test_a_new_undefined_name_is_a_fault_an_existing_one_is_not():
    prefix, suffix = "import os\n\n\ndef f(path):\n    return ", "\n\nprint(missing)\n"
    assert undefined_names(prefix + suffix) == {"missing"}
    checked = with_new_names([made(0, "os.path.basename(pth)"), made(1, "path")], prefix, suffix)
    assert checked[0].faults == ("undefined name `pth`",)
    assert checked[1].faults == ()
    # A candidate that leaves the document unparsed brings no names (ruff's syntax errors
    # are not names).
    (cut,) = with_new_names([made(0, "os.path.join(path,")], prefix, suffix)
    assert cut.faults == ()


# -- the gate -----------------------------------------------------------------------------
def test_the_threshold_moves_with_acceptance_once_there_are_enough_answers():
    assert threshold_for(0.2, None, 0) == 0.2
    assert threshold_for(0.2, 1.0, GATE_MIN_EVENTS - 1) == 0.2
    assert threshold_for(0.2, 1.0, GATE_MIN_EVENTS) == pytest.approx(0.1)
    assert threshold_for(0.2, 0.5, GATE_MIN_EVENTS) == pytest.approx(0.2)
    assert threshold_for(0.2, 0.0, GATE_MIN_EVENTS) == pytest.approx(0.3)
    assert threshold_for(0.0, 0.0, 50) == 0.0


def test_an_answer_of_unknown_confidence_is_never_held_back():
    assert not held_back(None, 0.9)
    assert held_back(0.1, 0.2) and not held_back(0.3, 0.2)


# -- through the pipeline -----------------------------------------------------------------
def request(
    text: str = STATEMENT, at: tuple[int, int] | None = None, **extra: Any
) -> CompleteRequest:
    """A request at ``at`` (line, column), at the end of ``text`` when it is None."""
    lines = text.split("\n")
    line, column = at or (len(lines) - 1, len(lines[-1]))
    return CompleteRequest(
        text=text,
        line=line,
        column=column,
        profile=WorkspaceProfile(language="python"),
        **extra,
    )


def scripted(*candidates: tuple[str, float]) -> ScriptedBackend:
    return ScriptedBackend(lambda run: "", candidates=lambda run: list(candidates))


async def answer(
    backend: ScriptedBackend,
    user: str = "alice",
    text: str = STATEMENT,
    at: tuple[int, int] | None = None,
    **settings: Any,
) -> tuple[DoneEvent, StageEvent]:
    """The done event and the final stage of one request (at the end of ``text`` unless
    ``at`` says where)."""
    pipeline = CompletionPipeline(backend, SETTINGS.model_copy(update=settings))
    events = [event async for event in await pipeline.start(request(text, at), user)]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    final = next(e for e in events if isinstance(e, StageEvent) and e.stage == "final")
    return done, final


async def test_a_request_for_several_answers_has_them_decoded_wherever_they_cost_more():
    backend = scripted(("total", -0.01), ("a", -0.3))
    pipeline = CompletionPipeline(backend, SETTINGS.model_copy(update={"candidates": 1}))
    events = [event async for event in await pipeline.start(request(candidates=2), "alice")]
    run: Run = backend.runs[0]
    assert run.budget.candidates == 2 and run.budget.fork_anyway
    assert [a.text for a in events[-1].alternatives] == ["a"]
    # Its answer is kept apart from one asked for with the daemon's own setting.
    await answer(backend, candidates=1, min_confidence=0.0)
    assert len(backend.runs) == 2 and not backend.runs[1].budget.fork_anyway


async def test_the_job_asks_for_the_candidates_setting():
    backend = scripted(("total", -0.01))
    await answer(backend, candidates=3, min_confidence=0.0)
    run: Run = backend.runs[0]
    assert run.budget.candidates == 3 and run.budget.scored


async def test_alternatives_come_in_the_done_event_best_first():
    # the third repeats the first once trimmed; the fourth is past the three asked for
    backend = scripted(("total", -0.01), ("a", -0.3), ("total  ", -0.2), ("b", -0.01))
    done, _ = await answer(backend, min_confidence=0.0)
    assert done.text == "total"
    assert [a.text for a in done.alternatives] == ["a"]
    backend = scripted(("total", -0.01), ("a", -0.3), ("a + b", -0.05))
    done, _ = await answer(backend, min_confidence=0.0)
    assert [a.text for a in done.alternatives] == ["a + b", "a"]
    assert done.confidence == pytest.approx(math.exp(-0.01 * 5))  # a character a token
    assert done.alternatives[0].confidence == pytest.approx(math.exp(-0.05 * 5))


async def test_an_empty_first_choice_gives_way_to_the_next_candidate():
    # a first line of only spaces is trimmed to nothing
    backend = scripted(("   ", -0.01), ("total", -0.1))
    done, final = await answer(backend, min_confidence=0.0)
    assert done.text == "total"
    assert "another candidate" in (final.reason or "")


async def test_when_every_answer_trims_to_nothing_a_second_starts_from_another_token():
    def written(run: Run) -> list[tuple[str, float]]:
        if run.budget.not_first:  # the second job: another first token
            return [("total", -0.5)]
        return [("   ", -0.01), ("  ", -0.2)]  # blanks only: nothing once trimmed

    backend = ScriptedBackend(lambda run: "", candidates=written)
    done, final = await answer(backend, min_confidence=0.0)
    assert done.text == "total" and "another candidate" in (final.reason or "")
    first, second = backend.runs
    assert second.tokens == first.tokens and second.budget.candidates == 1
    assert set(second.budget.not_first) == {ord(" ") + 1000}
    assert second.budget.lead == first.budget.lead


async def test_when_every_answer_fails_verification_a_second_starts_from_another_token():
    def written(run: Run) -> list[tuple[str, float]]:
        if run.budget.not_first:
            return [("total", -0.5)]
        return [("1. The total is the sum.", -0.01)]  # prose where the code goes

    backend = ScriptedBackend(lambda run: "", candidates=written)
    done, final = await answer(backend, min_confidence=0.0)
    assert done.text == "total" and "another candidate" in (final.reason or "")
    assert "verification" in (final.reason or "") and len(backend.runs) == 2


async def test_answers_that_come_to_nothing_too_leave_the_answer_empty_after_the_tries():
    backend = scripted(("   ", -0.01))
    done, _ = await answer(backend, min_confidence=0.0)
    assert not done.text.strip() and len(backend.runs) == 1 + SECOND_TRIES


async def test_each_further_answer_starts_from_a_token_none_before_it_took():
    def written(run: Run) -> list[tuple[str, float]]:
        tried = len(run.budget.not_first)
        # prose from "1", then from "2"; the third starts from another token and stands
        return [(["1. Sum them.", "2. Return it.", "total"][tried], -0.3)]

    backend = ScriptedBackend(lambda run: "", candidates=written)
    done, _ = await answer(backend, min_confidence=0.0)
    assert done.text == "total" and len(backend.runs) == 3
    barred = [set(run.budget.not_first) for run in backend.runs]
    assert barred == [set(), {ord("1") + 1000}, {ord("1") + 1000, ord("2") + 1000}]


async def test_an_unsure_answer_is_withheld_and_the_final_stage_says_why():
    backend = scripted(("total", -1.0), ("a + b", -1.5))
    done, final = await answer(backend, min_confidence=0.5)
    assert done.text == "" and done.withheld == "total" and done.alternatives == []
    assert final.text == "" and final.ok and "withheld" in (final.reason or "")
    assert "min_confidence" in (final.reason or "")


async def test_a_sure_answer_passes_the_gate():
    backend = scripted(("total", -0.001))
    done, _ = await answer(backend, min_confidence=0.5)
    assert done.text == "total" and done.withheld is None


async def test_the_cache_keeps_the_alternatives_and_the_confidence_and_gates_again():
    backend = scripted(("total", -0.1), ("a + b", -0.2))
    first, _ = await answer(backend, min_confidence=0.0)
    kept = next(iter(backend.cache.values()))
    assert kept.alternatives == ("a + b",) and kept.confidence == first.confidence
    again, _ = await answer(backend, min_confidence=0.0)
    assert again.cached and again.text == "total"
    assert [a.text for a in again.alternatives] == ["a + b"]
    gated, _ = await answer(backend, min_confidence=0.9)
    assert gated.cached and gated.text == "" and gated.withheld == "total"


@needs_ruff
async def test_a_sure_answer_with_a_new_undefined_name_is_withheld_and_says_why():
    backend = scripted(("totl", -0.001))  # ``total`` misspelt: a name the file does not have
    done, final = await answer(backend, min_confidence=0.05)
    assert done.text == "" and done.withheld == "totl"
    assert done.faults == ["undefined name `totl`"]
    assert "undefined name `totl`" in (final.reason or "") and final.ok
    # from the cache, the same
    again, _ = await answer(backend, min_confidence=0.05)
    assert again.cached and again.withheld == "totl" and again.faults == done.faults
    # with the gate off, shown, and the fault still listed
    shown, _ = await answer(backend, min_confidence=0.0)
    assert shown.text == "totl" and shown.withheld is None and shown.faults == done.faults


@needs_ruff
async def test_with_a_candidate_that_defines_nothing_new_it_is_shown_instead():
    backend = scripted(("totl", -0.001), ("total", -0.5))
    done, _final = await answer(backend, min_confidence=0.0)
    assert done.text == "total" and done.withheld is None and done.faults == []
    assert [a.text for a in done.alternatives] == ["totl"]
    assert done.alternatives[0].faults == ["undefined name `totl`"]


async def test_a_user_who_accepts_everything_gets_a_lower_threshold():
    # Their history is in the feedback log, not yet in this daemon's memory.
    backend = scripted(("total", -0.1))  # confidence 0.55
    for index in range(GATE_MIN_EVENTS):
        await backend.record_feedback(f"r{index}", "keen", True, "python")
    pipeline = CompletionPipeline(backend, SETTINGS.model_copy(update={"min_confidence": 0.7}))
    events = [e async for e in await pipeline.start(request(cache=False), "keen")]
    assert events[-1].text == "total"  # 0.55 passes 0.7 x 0.5
    events = [e async for e in await pipeline.start(request(cache=False), "new")]
    assert events[-1].text == "" and events[-1].withheld == "total"


async def test_a_first_line_no_later_line_mends_stops_the_job_and_a_second_starts_at_once():
    def written(run: Run) -> list[tuple[str, float]]:
        if run.budget.not_first:
            return [("total", -0.5)]
        return [("1. The total is the sum.\n2. Then it is returned.", -0.01)]

    backend = ScriptedBackend(lambda run: "", candidates=written)
    done, final = await answer(backend, min_confidence=0.0)
    assert done.text == "total" and len(backend.runs) == 2
    assert "first line does not parse" in (final.reason or "")


def first_then_second(first: str, second: str) -> ScriptedBackend:
    """A backend whose first answer is ``first`` and whose further answers are ``second``."""

    def written(run: Run) -> list[tuple[str, float]]:
        return [(second, -0.8)] if run.budget.not_first else [(first, -0.05)]

    return ScriptedBackend(lambda run: "", candidates=written)


@pytest.mark.parametrize(
    ("text", "at", "first", "second", "fault"),
    [
        # A method written without `self`.
        (METHOD, None, ") -> None:", "self) -> None:", NO_INSTANCE),
        # Deeper code below that lost its header, and a first answer that opens no block.
        (HEADLESS, (3, 8), "self._send_guard = Guard()", "with self._send_guard:", NO_HEADER),
    ],
)
async def test_a_first_answer_with_a_fault_gives_way_to_a_second_without(
    text, at, first, second, fault
):
    backend = first_then_second(first, second)
    done, final = await answer(backend, text=text, at=at, min_confidence=0.0)
    assert done.text == second and len(backend.runs) == 2
    assert fault in (final.reason or "") and "another candidate" in (final.reason or "")


async def test_without_its_fault_the_first_answer_stands():
    # Outside a class the method's answer is the model's and stands.
    backend = first_then_second(") -> None:", "self) -> None:")
    done, _ = await answer(backend, text="def close(", min_confidence=0.0)
    assert done.text == ") -> None:" and len(backend.runs) == 1


async def test_with_no_header_among_the_answers_the_model_s_first_choice_stands():
    backend = scripted(("self._send_guard = Guard()", -0.05))
    done, _ = await answer(backend, text=HEADLESS, at=(3, 8), min_confidence=0.0)
    assert done.text == "self._send_guard = Guard()"
    assert NO_HEADER in done.faults


async def test_with_no_second_answer_the_refusal_says_why():
    backend = scripted(("1. The total is the sum.\n2. Then it is returned.", -0.01))
    done, final = await answer(backend, min_confidence=0.0)
    assert done.text == "" and not final.ok
    assert "the answer failed verification (its first line does not parse" in (final.reason or "")
