"""The completion pipeline against a scripted engine: routing, stages, verification failures,
single flight, cache hits, cancellation, admission and priorities."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from daemon.answers.completion import CompletionPipeline
from daemon.answers.patience import MIN_BODY_TOKENS
from daemon.engine.scheduler import Priority, Scheduler
from daemon.engine.speed import Speed
from daemon.errors import Busy, InvalidPosition, InvalidRequest
from daemon.pipeline.keys import COMPLETION_RULES_VERSION
from daemon.protocol import (
    CompleteRequest,
    DoneEvent,
    ErrorEvent,
    FeedbackRequest,
    StageEvent,
    StartEvent,
    Style,
    TokenEvent,
    WorkspaceProfile,
)
from daemon.settings import load_settings
from tests.unit.scripted_backend import ScriptedBackend, by_stage, in_turn

SETTINGS = load_settings().model_copy(update={"fast_deadline_ms": 60_000})
PYTHON = WorkspaceProfile(language="python")
STATEMENT = "def add(a, b):\n    total = a + b\n    return "
BODY = "def add(a, b):\n    "


def request(text: str = STATEMENT, **extra: Any) -> CompleteRequest:
    lines = text.split("\n")
    fields: dict[str, Any] = {
        "text": text,
        "line": len(lines) - 1,
        "column": len(lines[-1]),
        "profile": PYTHON,
        **extra,
    }
    return CompleteRequest(**fields)


def pipeline(backend: ScriptedBackend, **settings: Any) -> CompletionPipeline:
    return CompletionPipeline(backend, SETTINGS.model_copy(update=settings))


async def collect(events: Any) -> list[Any]:
    return [event async for event in events]


def stages(events: list[Any]) -> list[tuple[str, str, bool]]:
    return [(e.stage, e.text, e.ok) for e in events if isinstance(e, StageEvent)]


async def test_fast_path_streams_stages_and_stores_the_answer():
    backend = ScriptedBackend(in_turn("total"))
    events = await collect(await pipeline(backend).start(request(), "alice"))
    assert isinstance(events[0], StartEvent) and events[0].route == "fast"
    assert stages(events) == [
        ("skeleton", "total", True),
        ("logic", "total", True),
        ("final", "total", True),
    ]
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.text == "total" and not done.cached
    assert [run.stage for run in backend.runs] == ["logic"]
    assert backend.runs[0].stops == ("\n",) or backend.runs[0].stops == ("\n\n\n",)
    assert next(iter(backend.cache.values())).text == "total"


async def test_a_cached_answer_runs_no_job():
    backend = ScriptedBackend(in_turn("total"))
    completions = pipeline(backend)
    await collect(await completions.start(request(), "alice"))
    again = await collect(await completions.start(request(), "bob"))
    assert again[-1].cached and again[-1].cache_match == "exact" and again[-1].text == "total"
    assert len(backend.runs) == 1
    fresh = await collect(await completions.start(request(cache=False), "bob"))
    assert not fresh[-1].cached and len(backend.runs) == 2


async def test_typing_into_a_shown_answer_is_a_typed_hit():
    backend = ScriptedBackend(in_turn("total * 2"))
    completions = pipeline(backend)
    await collect(await completions.start(request(), "alice"))
    typed = await collect(await completions.start(request(STATEMENT + "tot"), "alice"))
    assert typed[-1].cache_match == "typed" and typed[-1].text == "al * 2"
    assert len(backend.runs) == 1


async def test_typing_on_from_an_answer_still_being_written_waits_for_it():
    # A client showed the answer's first characters and asks at the place after them while
    # the answer is still being written: it gets the rest of that answer, not a job of its own.
    gate = asyncio.Event()
    backend = ScriptedBackend(in_turn("total * 2"), gate=gate)
    completions = pipeline(backend)

    async def ask(text: str) -> list[Any]:
        return await collect(await completions.start(request(text), "alice"))

    first = asyncio.ensure_future(ask(STATEMENT))
    while not backend.runs:
        await asyncio.sleep(0)
    later = asyncio.ensure_future(ask(STATEMENT + "tot"))
    await asyncio.sleep(0.05)
    assert not later.done() and len(completions.unfinished) == 1
    gate.set()
    typed = await asyncio.wait_for(later, 5)
    assert typed[-1].cache_match == "typed" and typed[-1].text == "al * 2"
    assert (await first)[-1].text == "total * 2" and len(backend.runs) == 1
    assert len(completions.unfinished) == 0


async def test_a_client_that_takes_a_first_line_gets_the_next_line_of_an_unfinished_answer():
    # llama.vim showed the answer's first line (its time limit cut it) and asks at the end of
    # that line while the rest is written: it gets the next line as soon as the model wrote it.
    text = "def scale(a):\n    x = "
    hold = asyncio.Event()
    backend = ScriptedBackend(
        in_turn("a + 1\n    y = x * 2\n    return y\n"), held_after=2, hold=hold
    )
    completions = pipeline(backend)

    async def ask(text: str, first_line: bool) -> list[Any]:
        return await collect(await completions.start(request(text), "alice", first_line=first_line))

    first = asyncio.ensure_future(ask(text, False))
    while not backend.runs:
        await asyncio.sleep(0)
    waiting = asyncio.ensure_future(ask(text + "a + 1", False))
    early = await asyncio.wait_for(ask(text + "a + 1", True), 5)
    assert early[-1].cache_match == "typed" and early[-1].text == "\n    y = x * 2"
    assert not waiting.done()  # without a first line's limit: the whole answer, at its end
    hold.set()
    whole = await asyncio.wait_for(waiting, 5)
    assert whole[-1].text.startswith("\n    y = x * 2\n    return y")
    assert (await first)[-1].text.startswith("a + 1\n") and len(backend.runs) == 1


async def test_an_answer_that_breaks_the_file_keeps_its_verified_first_line():
    text = "def add(a, b):\n    \n\nx = 1\n"
    # (An unbalanced closing bracket would end the answer at the block's exit instead.)
    backend = ScriptedBackend(in_turn("total = a + b\n    return total +"))
    req = CompleteRequest(text=text, line=1, column=4, profile=PYTHON, mode="fast")
    events = await collect(await pipeline(backend).start(req, "alice"))
    final = next(e for e in events if isinstance(e, StageEvent) and e.stage == "final")
    assert final.text == "total = a + b" and final.ok
    assert "kept the first line" in (final.reason or "")
    assert not backend.cache or next(iter(backend.cache.values())).text == "total = a + b"


async def test_an_answer_that_fails_verification_is_not_cached():
    backend = ScriptedBackend(in_turn("total))"))
    req = CompleteRequest(text=STATEMENT + "\n\nx = 1\n", line=2, column=11, profile=PYTHON)
    events = await collect(await pipeline(backend).start(req, "alice"))
    assert events[-1].text == "" and events[-1].verified is False
    assert backend.cache == {}


async def test_deep_path_runs_logic_then_errors_at_the_requests_own_priority():
    """The errors pass runs in the request's place: a background prefetch stays background,
    and its token events carry no candidate number."""
    backend = ScriptedBackend(
        by_stage(
            logic="return a + b\n",
            errors="if a is None:\n        raise ValueError('a')\n    return a + b\n",
        )
    )
    completions = pipeline(backend)
    events = await collect(await completions.start(request(BODY), "alice", Priority.BACKGROUND))
    assert events[0].route == "deep"
    names = [s for s, _, _ in stages(events)]
    assert names == ["skeleton", "logic", "errors", "final"]
    assert [(run.stage, run.priority) for run in backend.runs] == [
        ("logic", Priority.BACKGROUND),
        ("errors", Priority.BACKGROUND),
    ]
    tokens = [e for e in events if isinstance(e, TokenEvent)]
    assert {e.stage for e in tokens} == {"logic", "errors"}
    assert all(e.candidate is None for e in tokens)
    # The checks are offered in their own stage; the final answer is the body as written.
    offered = next(e for e in events if isinstance(e, StageEvent) and e.stage == "errors")
    assert offered.ok and "raise ValueError" in offered.text
    assert events[-1].text == "return a + b\n"


async def test_the_errors_pass_stands_when_the_logic_body_did_not_verify():
    backend = ScriptedBackend(
        by_stage(
            logic="",
            errors="if a is None:\n        raise ValueError('a')\n    return a + b\n",
        )
    )
    events = await collect(await pipeline(backend).start(request(BODY), "alice"))
    logic = next(e for e in events if isinstance(e, StageEvent) and e.stage == "logic")
    assert not logic.ok
    assert events[-1].verified and "raise ValueError" in events[-1].text


async def test_a_body_written_from_the_start_of_a_blank_line_is_inserted_at_the_cursor():
    """On a blank line the model writes the indentation itself (the prompt ends on a line
    break); what is inserted does not repeat the whitespace already before the cursor."""
    backend = ScriptedBackend(by_stage(logic="    return a + b\n", errors=""))
    for column, expected in ((4, "return a + b"), (0, "    return a + b")):
        text = "def add(a, b):\n" + " " * column + "\n"
        req = CompleteRequest(text=text, line=1, column=column, profile=PYTHON, cache=False)
        events = await collect(await pipeline(backend).start(req, "alice"))
        assert events[-1].text == expected
    assert all(run.tokens[-1] == backend.model.tokenize_text("\n")[-1] for run in backend.runs)


async def test_deep_path_without_a_body_keeps_the_skeleton():
    backend = ScriptedBackend(by_stage(logic="", errors=""))
    events = await collect(await pipeline(backend).start(request(BODY), "alice"))
    final = next(e for e in events if isinstance(e, StageEvent) and e.stage == "final")
    assert not final.ok and "skeleton" in (final.reason or "")
    assert backend.cache == {}


async def test_identical_requests_share_one_generation():
    gate = asyncio.Event()
    backend = ScriptedBackend(in_turn("total"), gate=gate)
    completions = pipeline(backend)
    first = await completions.start(request(request_id="one"), "alice")
    second = await completions.start(request(request_id="two"), "bob")
    both = asyncio.gather(collect(first), collect(second))
    await asyncio.sleep(0.01)
    gate.set()
    one, two = await both
    assert len(backend.runs) == 1 and completions.flights.joined == 1
    assert (one[-1].request_id, two[-1].request_id) == ("one", "two")
    assert one[-1].text == two[-1].text == "total"
    assert backend.scheduler._places == 0


async def test_a_client_that_goes_away_cancels_the_job_and_frees_its_place():
    gate = asyncio.Event()
    backend = ScriptedBackend(in_turn("total"), gate=gate)
    events = await pipeline(backend).start(request(), "alice")
    assert isinstance(await anext(events), StartEvent)
    waiting = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0.01)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await events.aclose()
    for _ in range(10):
        await asyncio.sleep(0.01)
    assert backend.runs[0].withdrawn
    assert backend.scheduler._places == 0


async def test_sixty_four_requests_at_once_never_overrun_the_queue():
    gate = asyncio.Event()
    backend = ScriptedBackend(
        lambda run: "total", scheduler=Scheduler(queue_size=4, user_queue_size=64), gate=gate
    )
    completions = pipeline(backend)

    async def ask(index: int) -> list[Any] | Busy:
        try:
            events = await completions.start(request(f"x = {index}\n" + STATEMENT), "alice")
        except Busy as exc:
            return exc
        return await collect(events)

    pending = asyncio.gather(*(ask(i) for i in range(64)))
    await asyncio.sleep(0.05)
    assert backend.scheduler._places == 4
    gate.set()
    outcomes = await pending
    refused = [o for o in outcomes if isinstance(o, Busy)]
    answered = [o for o in outcomes if not isinstance(o, Busy)]
    assert len(refused) == 60 and len(answered) == 4
    assert all(isinstance(events[-1], DoneEvent) for events in answered)
    assert backend.scheduler._places == 0


async def test_bad_positions_and_budgets_are_refused_before_any_work():
    backend = ScriptedBackend(in_turn("x"))
    completions = pipeline(backend)
    with pytest.raises(InvalidPosition, match="past the end"):
        await completions.start(CompleteRequest(text="x", line=3, column=0), "alice")
    with pytest.raises(InvalidRequest, match="max_tokens"):
        await completions.start(request(max_tokens=SETTINGS.max_tokens_limit + 1), "alice")
    assert backend.runs == []


async def test_an_engine_failure_ends_the_stream_with_one_error_event():
    def fail(run: Any) -> str:
        from daemon.errors import EngineFailed

        raise EngineFailed("the model fell over")

    backend = ScriptedBackend(fail)
    events = await collect(await pipeline(backend).start(request(), "alice"))
    assert isinstance(events[-1], ErrorEvent) and events[-1].code == "engine_error"
    assert sum(isinstance(e, (DoneEvent, ErrorEvent)) for e in events) == 1
    assert backend.scheduler._places == 0


async def test_rejected_answers_are_demoted_and_accepted_ones_handed_on():
    backend = ScriptedBackend(in_turn("total"))
    accepted: list[str] = []
    completions = pipeline(backend)
    completions.on_accepted = lambda answer: accepted.append(answer.answer)
    first = await collect(await completions.start(request(request_id="r1"), "alice"))
    assert first[-1].text == "total"
    result = await completions.feedback(FeedbackRequest(request_id="r1", accepted=True), "alice")
    assert result["outcome"] == "prefetching" and accepted == ["total"]
    result = await completions.feedback(FeedbackRequest(request_id="r1", accepted=False), "alice")
    assert result["outcome"] == "demoted" and len(backend.demoted) == 1
    assert [record.accepted for record in backend.records] == [True, False]


# -- trimming answers to the gap -------------------------------------------------------------

LOOP = (
    "def total(xs):\n    result = 0\n    for x in xs:\n\n        result += x\n    return result\n"
)


def loop_request(**extra: Any) -> CompleteRequest:
    """The cursor at column 0 of the empty line inside the loop's body."""
    return CompleteRequest(text=LOOP, line=3, column=0, profile=PYTHON, **extra)


def final_of(events: list[Any]) -> StageEvent:
    return next(e for e in events if isinstance(e, StageEvent) and e.stage == "final")


async def test_a_model_that_writes_the_code_below_again_is_trimmed_to_the_new_line():
    backend = ScriptedBackend(
        in_turn("        if x < 0:\n            continue\n        result += x\n    return result\n")
    )
    events = await collect(await pipeline(backend).start(loop_request(), "alice"))
    final = final_of(events)
    assert final.text == "        if x < 0:\n            continue" and final.ok
    assert "drop_suffix_repeats" in (final.reason or "")
    assert events[-1].text == final.text
    assert next(iter(backend.cache.values())).text == final.text
    assert events[0].route_reason and "one statement" in events[0].route_reason


async def test_a_line_at_the_wrong_indentation_is_moved_into_the_block():
    text = "def f(rows):\n    for row in rows:\n        if row:\n\n            print(row)\n"
    backend = ScriptedBackend(in_turn("        row = row.strip()\n        print(row)\n"))
    req = CompleteRequest(text=text, line=3, column=0, profile=PYTHON)
    events = await collect(await pipeline(backend).start(req, "alice"))
    assert ("skeleton", "            row = row.strip()", True) in stages(events)
    final = final_of(events)
    assert final.text == "            row = row.strip()" and final.ok
    assert "fit_indentation" in (final.reason or "")


async def test_the_engine_stops_where_the_gap_ends():
    """The engine's until ends the answer after the one statement, before the repeats."""
    answer = "        x = abs(x)\n        result += x\n    return result\n"
    backend = ScriptedBackend(in_turn(answer))
    events = await collect(await pipeline(backend).start(loop_request(), "alice"))
    tokens = "".join(e.text for e in events if isinstance(e, TokenEvent))
    assert tokens == "        x = abs(x)"
    assert events[-1].text == "        x = abs(x)"


async def test_with_postprocess_off_answers_pass_as_written():
    answer = "        if x < 0:\n            continue\n        result += x\n    return result"
    backend = ScriptedBackend(in_turn(answer))
    events = await collect(
        await pipeline(backend, postprocess=False).start(loop_request(), "alice")
    )
    final = final_of(events)
    assert final.text == answer and final.ok and final.reason is None


async def test_postprocess_is_part_of_the_cache_key():
    backend = ScriptedBackend(in_turn("        x = abs(x)\n        result += x"))
    trimmed = await collect(await pipeline(backend).start(loop_request(), "alice"))
    assert trimmed[-1].text == "        x = abs(x)"
    untrimmed = await collect(
        await pipeline(backend, postprocess=False).start(loop_request(), "alice")
    )
    assert not untrimmed[-1].cached and len(backend.runs) == 2
    assert untrimmed[-1].text == "        x = abs(x)\n        result += x"
    again = await collect(await pipeline(backend).start(loop_request(), "bob"))
    assert again[-1].cached and again[-1].text == "        x = abs(x)"


async def test_a_line_inside_brackets_the_code_below_goes_on_with_is_one_line():
    """The rest of the call is below: the job stops at the line's end, and the answer does
    not close the bracket the line below closes."""
    text = 'msg = _("{a}").format(\n    a=name(\n)\nprint(msg, item)\n'
    backend = ScriptedBackend(in_turn("item))\nprint(msg, item)"))
    req = CompleteRequest(text=text, line=1, column=11, profile=PYTHON)
    events = await collect(await pipeline(backend).start(req, "alice"))
    assert backend.runs[0].stops == ("\n",)
    assert events[-1].text == "item)" and events[-1].verified


async def test_a_call_laid_out_one_argument_per_line_is_joined_within_the_line_length():
    """The workspace's line length decides whether the call goes onto the cursor's line."""
    text = "def f(ctx):\n    echo(\n"
    answer = "\n        ctx.get_help(),\n        color=ctx.color,\n    )"
    for line_length, shown in ((88, "ctx.get_help(), color=ctx.color)"), (40, answer)):
        profile = WorkspaceProfile(language="python", style=Style(line_length=line_length))
        req = CompleteRequest(text=text, line=1, column=9, profile=profile)
        events = await collect(await pipeline(ScriptedBackend(in_turn(answer))).start(req, "a"))
        assert events[-1].text == shown and events[-1].verified


async def test_the_rules_version_is_part_of_the_cache_key(monkeypatch):
    """Answers trimmed by older rules expire when the rules change."""
    backend = ScriptedBackend(in_turn("        x = abs(x)"))
    first = await collect(await pipeline(backend).start(loop_request(), "alice"))
    assert not first[-1].cached
    monkeypatch.setattr(
        "daemon.answers.prepared.COMPLETION_RULES_VERSION", COMPLETION_RULES_VERSION + 1
    )
    newer = await collect(await pipeline(backend).start(loop_request(), "alice"))
    assert not newer[-1].cached and len(backend.runs) == 2


async def test_a_deep_body_is_trimmed_to_the_block():
    text = "def add(a, b):\n    \n\ndef sub(a, b):\n    return a - b\n"
    backend = ScriptedBackend(
        by_stage(
            logic="return a + b\n    return a + b\n",
            errors="if a is None:\n        raise ValueError('a')\n    return a + b\n",
        )
    )
    req = CompleteRequest(text=text, line=1, column=4, profile=PYTHON)
    events = await collect(await pipeline(backend).start(req, "alice"))
    logic = next(e for e in events if isinstance(e, StageEvent) and e.stage == "logic")
    assert logic.text == "return a + b" and logic.ok


async def test_the_deep_path_sizes_its_budget_to_the_measured_speed():
    """On a slow machine the body gets the tokens that fit the target and the errors pass,
    which would not fit, does not run; a fast machine gets the whole ceiling and both passes."""
    answers = by_stage(logic="return a + b\n", errors="if a is None:\n        raise ValueError\n")
    slow = ScriptedBackend(answers, measured=Speed(prompt_tps=2000.0, decode_tps=3.0))
    events = await collect(await pipeline(slow, deep_target_ms=4000).start(request(BODY), "al"))
    assert [run.stage for run in slow.runs] == ["logic"]
    assert slow.runs[0].budget.max_tokens == MIN_BODY_TOKENS  # 4 s hold only 12 tokens
    errors = next(e for e in events if isinstance(e, StageEvent) and e.stage == "errors")
    assert not errors.ok and "no time was left for the errors stage" in (errors.reason or "")
    assert stages(events)[-1] == ("final", "return a + b\n", True)

    fast = ScriptedBackend(answers, measured=Speed(prompt_tps=20000.0, decode_tps=2000.0))
    await collect(await pipeline(fast, deep_target_ms=4000).start(request(BODY), "al"))
    assert [run.stage for run in fast.runs] == ["logic", "errors"]
    assert fast.runs[0].budget.max_tokens == SETTINGS.deep_max_tokens
    # The body may run to the logic deadline; the errors pass ends by the 4 s target.
    logic_s = SETTINGS.deep_deadline_ms * (1 - SETTINGS.errors_share) / 1000
    logic_deadline, errors_deadline = (run.budget.deadline for run in fast.runs)
    assert errors_deadline == pytest.approx(logic_deadline - logic_s + 4.0, abs=0.5)


async def test_the_deep_body_is_written_without_comments_unless_they_are_on():
    """The body's first pass forbids the tokens that open a comment (so does the job that
    finishes a body the budget cut, below); the errors pass, steered by a comment, does not;
    the fast path never does. With ``deep_comments`` on, nothing is forbidden."""
    backend = ScriptedBackend(by_stage(logic="return a + b\n", errors="return a + b\n"))
    await collect(await pipeline(backend).start(request(BODY), "al"))
    assert [(run.stage, run.budget.banned) for run in backend.runs] == [
        ("logic", (1000 + ord("#"),)),
        ("errors", ()),
    ]

    talkative = ScriptedBackend(by_stage(logic="return a + b\n", errors="return a + b\n"))
    await collect(await pipeline(talkative, deep_comments=True).start(request(BODY), "al"))
    assert all(run.budget.banned == () for run in talkative.runs)

    fast = ScriptedBackend(lambda run: "1\n")
    await collect(await pipeline(fast).start(request(), "al"))
    assert [run.stage for run in fast.runs] == ["logic"] and fast.runs[0].budget.banned == ()


async def test_a_deep_request_that_states_its_budget_keeps_it():
    backend = ScriptedBackend(by_stage(logic="return a + b\n", errors="return a + b\n"))
    backend.measured = Speed(prompt_tps=2000.0, decode_tps=1.0)
    await collect(await pipeline(backend).start(request(BODY, max_tokens=200), "al"))
    assert backend.runs[0].budget.max_tokens == 200


async def test_a_cold_document_too_long_to_read_in_time_is_answered_from_a_shorter_window():
    """On a slow machine the request answers from the window that fits its time, then the
    whole window is read in the background; the next request finds it read and uses it."""
    lines = [f"value_{n} = compute({n})" for n in range(200)]
    text = "\n".join(lines) + "\ntotal = "
    backend = ScriptedBackend(in_turn("1", "2"), measured=Speed(prompt_tps=200.0, decode_tps=30.0))
    completions = pipeline(backend, fast_deadline_ms=3000)
    events = await collect(await completions.start(request(text), "alice"))
    first = backend.runs[0]
    assert "window" in (events[0].route_reason or "")
    assert len(first.tokens) <= 300  # half of the 3 s deadline at 200 tokens/s
    await asyncio.wait_for(_warmed(completions), 5)
    warm = backend.runs[1]
    assert warm.budget.max_tokens == 0 and warm.priority == Priority.BACKGROUND
    assert len(warm.tokens) > 1000 and warm.tokens[-100:] == first.tokens[-100:]

    events = await collect(await completions.start(request(text), "alice"))
    assert backend.runs[2].tokens == warm.tokens  # the whole window, read already
    assert "window" not in (events[0].route_reason or "")


async def test_a_whole_windows_answer_in_the_shared_cache_is_used_by_a_slower_daemon():
    """Two daemons share one cache: one read the whole window in time and stored its answer;
    the other, loaded, would answer from a shorter window, and finds the whole one's answer."""
    lines = [f"value_{n} = compute({n})" for n in range(200)]
    text = "\n".join(lines) + "\ntotal = "
    idle = ScriptedBackend(in_turn("1"), measured=Speed(prompt_tps=5000.0, decode_tps=30.0))
    events = await collect(await pipeline(idle, fast_deadline_ms=3000).start(request(text), "al"))
    assert "window" not in (events[0].route_reason or "") and events[-1].text == "1"

    loaded = ScriptedBackend(in_turn("2"), measured=Speed(prompt_tps=200.0, decode_tps=30.0))
    loaded.cache = idle.cache  # one cache file
    completions = pipeline(loaded, fast_deadline_ms=3000)
    events = await collect(await completions.start(request(text, request_id="r2"), "bob"))
    assert events[-1].cached and events[-1].text == "1" and not loaded.runs
    # Rejecting it demotes the answer that was shown: the whole window's.
    await completions.feedback(FeedbackRequest(request_id="r2", accepted=False), "bob")
    assert loaded.demoted == list(idle.cache)


async def _warmed(completions: CompletionPipeline) -> None:
    while completions.warmer.finished == 0:
        await asyncio.sleep(0.01)


async def test_a_body_cut_short_by_the_patience_budget_is_finished_not_dropped():
    """On a slow machine the body's budget (the tokens that fit the target) can end it
    mid-body; a second job finishes it from where it stopped, judged as one block."""
    body = "total = 0\n    for item in items:\n        total += item\n    return total\n"
    backend = ScriptedBackend(
        in_turn(body, body[MIN_BODY_TOKENS:] + "\ndef other():\n    pass\n"),
        measured=Speed(prompt_tps=2000.0, decode_tps=3.0),
        token_budgets=True,
    )
    text = "def total(items):\n    \n"
    req = CompleteRequest(text=text, line=1, column=4, profile=PYTHON)
    events = await collect(await pipeline(backend, deep_target_ms=4000).start(req, "al"))
    first, second = backend.runs[0], backend.runs[1]
    assert first.budget.max_tokens == MIN_BODY_TOKENS
    assert first.budget.banned == second.budget.banned == (1000 + ord("#"),)  # no comments
    assert second.stage == "logic" and second.tokens[: len(first.tokens)] == first.tokens
    assert second.budget.max_tokens == SETTINGS.deep_max_tokens - MIN_BODY_TOKENS
    logic = next(e for e in events if isinstance(e, StageEvent) and e.stage == "logic")
    assert logic.ok and logic.text.endswith("return total"), logic
    assert "other" not in logic.text  # the block ended where the whole body did


PASS = 7  # the token that spells ``pass`` in ``pass_is_one_token``'s vocabulary


def pass_is_one_token(backend: ScriptedBackend) -> ScriptedBackend:
    """``backend`` with a vocabulary in which ``pass`` is one token, as in real code models'."""
    spell = backend.model.tokenize_text
    backend.model.tokenize_text = lambda text: (  # type: ignore[method-assign]
        [PASS] if text in ("pass", " pass") else spell(text)
    )
    return backend


async def test_a_placeholder_body_is_asked_again_with_pass_forbidden():
    placeholder = "# Your code here\n    pass\n"

    def script(run: Any) -> str:
        if run.stage == "errors":
            return ""
        return "return a + b\n" if PASS in run.budget.banned else placeholder

    backend = pass_is_one_token(ScriptedBackend(script))
    events = await collect(await pipeline(backend).start(request(BODY), "alice"))
    first, again = backend.runs[0], backend.runs[1]
    hash_sign = 1000 + ord("#")
    assert first.budget.banned == (hash_sign,) and again.budget.banned == (PASS, hash_sign)
    assert again.stage == "logic" and again.tokens == first.tokens
    logic = next(e for e in events if isinstance(e, StageEvent) and e.stage == "logic")
    assert logic.ok and logic.text == "return a + b\n"
    # The second answer replaces the placeholder: it is not streamed as more of it.
    streamed = "".join(e.text for e in events if isinstance(e, TokenEvent) and e.stage == "logic")
    assert streamed == placeholder
    assert events[-1].verified and events[-1].text == "return a + b\n"


async def test_a_placeholder_body_is_never_shown_as_verified_nor_cached():
    """Without a single token to forbid (or when the second answer is a placeholder too) the
    skeleton stands, and nothing is cached."""
    placeholder = "# Your code here\n    pass\n"
    for backend in (
        ScriptedBackend(by_stage(logic=placeholder, errors="")),
        pass_is_one_token(ScriptedBackend(by_stage(logic=placeholder, errors=""))),
    ):
        events = await collect(await pipeline(backend).start(request(BODY), "alice"))
        logic = next(e for e in events if isinstance(e, StageEvent) and e.stage == "logic")
        assert not logic.ok and "placeholder" in (logic.reason or "")
        assert not events[-1].verified
        assert backend.cache == {}
    assert len(backend.runs) == 3  # logic, logic again, errors


async def test_an_errors_pass_that_writes_a_placeholder_is_not_offered():
    backend = ScriptedBackend(
        by_stage(logic="return a + b\n", errors="raise NotImplementedError\n")
    )
    events = await collect(await pipeline(backend).start(request(BODY), "alice"))
    offered = next(e for e in events if isinstance(e, StageEvent) and e.stage == "errors")
    assert not offered.ok and "placeholder" in (offered.reason or "")
    assert events[-1].verified and events[-1].text == "return a + b\n"


async def test_a_clients_token_budget_is_part_of_the_key():
    # With a budget of its own the answer is not cut to the fast path's lines: a request that
    # sends the default budget is not the same request as one that sends none.
    backend = ScriptedBackend(in_turn("total", "total"))
    completions = pipeline(backend)
    route_tokens = SETTINGS.fast_max_tokens
    await collect(await completions.start(request(), "alice"))
    await collect(await completions.start(request(max_tokens=route_tokens), "alice"))
    assert len(backend.runs) == 2 and len(backend.cache) == 2


async def test_where_the_cursors_line_ends_the_skeleton_is_the_first_line_below():
    text = "import os\n\n\ndef sizes(root):\n    total = 0\n    for name in os.listdir(root):\n"
    backend = ScriptedBackend(in_turn("\n        total += 1\n        print(name)\n"))
    req = CompleteRequest(text=text, line=5, column=len(text.split("\n")[5]), profile=PYTHON)
    events = await collect(await pipeline(backend).start(req, "alice"))
    skeleton = next(e for e in events if isinstance(e, StageEvent) and e.stage == "skeleton")
    assert skeleton.text == "\n        total += 1"
    assert final_of(events).text.startswith(skeleton.text)
