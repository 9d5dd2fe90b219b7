"""The drop-in protocols' translation: llama.cpp's /infill and OpenAI's completions to and
from the daemon's own requests and events."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import ValidationError

from daemon.errors import InvalidRequest
from daemon.http.dropin import (
    Answer,
    CompletionsRequest,
    InfillRequest,
    answered_in_time,
    choices,
    completions_body,
    completions_complete,
    cut_at_stops,
    finish_reason,
    infill_body,
    infill_complete,
    verified_pieces,
)
from daemon.protocol import (
    Alternative,
    DoneEvent,
    ErrorCode,
    ErrorEvent,
    StageEvent,
    StartEvent,
    Timings,
    TokenEvent,
)
from daemon.tasks import BackgroundTasks


def test_an_infill_request_is_a_document_with_the_cursor_after_the_typed_part():
    req = InfillRequest(
        input_prefix="import os\n\ndef f():\n",
        prompt="    return os.",
        input_suffix="\n\nprint(f())\n",
        input_extra=[
            {"filename": "util.py", "text": "def g():\n    pass\n"},
            {"filename": "empty.py", "text": "   \n"},
            {"text": "x = 1\n"},
        ],
        n_predict=-1,
        t_max_predict_ms=500,
    )
    complete = infill_complete(req)
    assert complete.text == "import os\n\ndef f():\n    return os.\n\nprint(f())\n"
    assert (complete.line, complete.column) == (3, len("    return os."))
    # t_max_predict_ms limits the generation, not the request (``answered_in_time``).
    assert complete.max_tokens is None and complete.deadline_ms is None
    assert [(s.path, s.kind) for s in complete.context] == [
        ("util.py", "recent"),
        ("chunk-1", "recent"),
    ]


def test_a_completions_request_is_the_prompt_then_the_suffix():
    complete = completions_complete(
        CompletionsRequest(prompt="def f():\n    return ", suffix="\n", max_tokens=8)
    )
    assert complete.text == "def f():\n    return \n"
    assert (complete.line, complete.column, complete.max_tokens) == (1, 11, 8)
    assert completions_complete(CompletionsRequest(prompt=["x = "])).text == "x = "


def test_what_the_completions_api_cannot_answer_is_refused():
    with pytest.raises(ValidationError, match="less than or equal to 8"):
        CompletionsRequest(prompt="x", n=9)
    with pytest.raises(ValidationError, match="less than or equal to 8"):
        InfillRequest(n_cmpl=9)
    with pytest.raises(InvalidRequest, match="one prompt"):
        CompletionsRequest(prompt=["a", "b"]).text()
    with pytest.raises(InvalidRequest, match="at most 4"):
        CompletionsRequest(prompt="x", stop=["a", "b", "c", "d", "e"]).stops()
    assert CompletionsRequest(prompt="x", stop="\n").stops() == ["\n"]


def test_stop_sequences_cut_at_the_first_found():
    assert cut_at_stops("a, b; c", [";", ","]) == ("a", True)
    assert cut_at_stops("abc", ["x"]) == ("abc", False)


def stage(name: str, text: str, ok: bool = True) -> StageEvent:
    return StageEvent(stage=name, text=text, elapsed_ms=1.0, ok=ok)  # type: ignore[arg-type]


def done(reason: str = "stop", tokens: int = 5) -> DoneEvent:
    timings = Timings(queue_ms=1.0, prompt_ms=20.0, total_ms=100.0)
    return DoneEvent(
        request_id="r",
        text="",
        cached=False,
        finish_reason=reason,  # type: ignore[arg-type]
        tokens=tokens,
        prompt_tokens=50,
        reused_tokens=30,
        timings=timings,
    )


async def pieces(events: list[Any], stops: list[str] | None = None) -> tuple[list[str], Answer]:
    async def source():
        for event in events:
            yield event

    answer = Answer(stops=stops or [])
    return [piece async for piece in verified_pieces(source(), answer)], answer


async def test_only_verified_text_that_adds_to_what_was_sent_is_streamed():
    sent, answer = await pieces(
        [
            stage("skeleton", "re"),
            stage("logic", "return x"),
            stage("final", "return x + 1"),
            done(),
        ]
    )
    assert sent == ["return x", " + 1"] and answer.final == "return x + 1"
    # A final text that does not extend what was shown is not streamed (it would take back
    # text), but it is the answer of a request that was not streamed.
    sent, answer = await pieces([stage("logic", "return x"), stage("final", "return y"), done()])
    assert sent == ["return x"] and answer.final == "return y"
    # A logic stage that failed verification is never sent.
    sent, _ = await pieces([stage("logic", "retur(", ok=False), stage("final", "", ok=False)])
    assert sent == []


async def test_a_stop_sequence_cuts_the_stream_and_makes_the_finish_a_stop():
    sent, answer = await pieces(
        [stage("logic", "1, 2, 3"), stage("final", "1, 2, 3"), done("length")], stops=[","]
    )
    assert sent == ["1"] and answer.final == "1"
    assert finish_reason(answer) == "stop"
    _, uncut = await pieces([stage("final", "1 2 3"), done("length")], stops=[","])
    assert finish_reason(uncut) == "length"


async def test_an_error_event_is_kept_for_the_response():
    _, answer = await pieces([ErrorEvent(code=ErrorCode.BUSY, message="full")])
    assert answer.error is not None and answer.error.code == ErrorCode.BUSY


async def test_the_answers_carry_the_fields_their_clients_read():
    _, answer = await pieces([stage("final", "x"), done(tokens=4)])
    infill = infill_body(answer, "x")
    assert infill["content"] == "x" and infill["stop"] is True
    assert infill["tokens_cached"] == 30 and infill["tokens_predicted"] == 4
    assert infill["timings"]["prompt_n"] == 20
    assert infill_body(answer, "x", final=False) == {"content": "x", "stop": False}
    body = completions_body(answer, "m", "cmpl-1", "x", "stop")
    assert body["choices"][0] == {
        "text": "x",
        "index": 0,
        "logprobs": None,
        "finish_reason": "stop",
    }
    assert body["usage"] == {"prompt_tokens": 50, "completion_tokens": 4, "total_tokens": 54}
    assert "usage" not in completions_body(answer, "m", "cmpl-1", "x", None)


def started(route: str) -> StartEvent:
    return StartEvent(request_id="r", language="python", prompt_format="plain", route=route)  # type: ignore[arg-type]


async def test_a_deep_answers_placeholder_skeleton_is_never_its_first_line():
    _, answer = await pieces([started("deep"), stage("skeleton", "..."), done()])
    assert answer.line is None


async def gated(events: list[Any], gate: asyncio.Event, at: int):
    """The events, holding back those from index ``at`` until ``gate`` opens."""
    for index, event in enumerate(events):
        if index == at:
            await gate.wait()
        yield event


async def test_a_client_time_limit_cuts_after_the_first_line_and_the_answer_goes_on():
    gate, background = asyncio.Event(), BackgroundTasks()
    answer = Answer()
    events = [
        StartEvent(
            request_id="r", language="python", prompt_format="plain", route="fast", prompt_tokens=50
        ),
        TokenEvent(text="return x", prompt_reused=40),
        TokenEvent(text="\n"),
        stage("skeleton", "return x"),
        stage("logic", "return x\nreturn y"),
        stage("final", "return x\nreturn y"),
        done(),
    ]
    stream = verified_pieces(gated(events, gate, 4), answer)
    await answered_in_time(stream, answer, 1, background)
    assert answer.cut_at is not None and answer.text == "return x"
    body = infill_body(answer, answer.text)
    assert body["stop_type"] == "limit" and body["timings"]["predicted_n"] == 2
    assert body["tokens_evaluated"] == 50 and body["tokens_cached"] == 40
    assert body["timings"]["prompt_n"] == 10
    assert answer.final is None and len(background) == 1  # still being read
    gate.set()
    await asyncio.wait_for(asyncio.gather(*background._tasks), 5)
    assert answer.final == "return x\nreturn y" and answer.done is not None


async def test_no_cut_before_the_first_line_is_complete_nor_without_a_limit():
    gate, background = asyncio.Event(), BackgroundTasks()
    answer = Answer()
    events = [
        started("fast"),
        TokenEvent(text="return"),
        stage("skeleton", "return x"),
        stage("final", "x"),
        done(),
    ]
    stream = verified_pieces(gated(events, gate, 2), answer)
    waiting = asyncio.ensure_future(answered_in_time(stream, answer, 1, background))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # a token, but no line yet
    gate.set()
    await asyncio.wait_for(waiting, 5)
    assert answer.line == "return x"
    _, whole = await pieces([stage("final", "y"), done("length")])
    assert infill_body(whole, "y")["stop_type"] == "limit"
    assert infill_body(whole, "y")["timings"]["prompt_n"] == 20


async def test_several_answers_are_the_answer_then_its_alternatives_that_passed_the_checks():
    assert completions_complete(CompletionsRequest(prompt="x = ", n=2)).candidates == 2
    assert completions_complete(CompletionsRequest(prompt="x = ")).candidates is None
    assert infill_complete(InfillRequest(prompt="x = ", n_cmpl=3)).candidates == 3
    finished = done()
    finished.alternatives = [
        Alternative(text="1  # one"),
        Alternative(text="y(", faults=["it does not parse"]),
        Alternative(text="2"),
    ]
    _, answer = await pieces([stage("final", "0"), finished])
    assert choices(answer, 3) == ["0", "1  # one", "2"]
    assert choices(answer, 1) == ["0"]
    body = completions_body(answer, "m", "cmpl-1", choices(answer, 2), "length")
    assert [(c["index"], c["text"], c["finish_reason"]) for c in body["choices"]] == [
        (0, "0", "length"),
        (1, "1  # one", "stop"),
    ]


async def test_response_fields_pick_fields_by_their_path_as_llama_cpp_does():
    _, answer = await pieces([stage("final", "x"), done(tokens=4)])
    req = InfillRequest(
        response_fields=["content", "timings/prompt_n", "timings/nothing", "tokens_cached"],
        stop=["\n\n", ""],
    )
    assert req.shaped(infill_body(answer, "x")) == {
        "content": "x",
        "timings/prompt_n": 20,
        "tokens_cached": 30,
    }
    assert InfillRequest().shaped({"a": {"b": 1}}) == {"a": {"b": 1}}
    assert req.stops() == ["\n\n"]
