"""The load test's sender: requests start on schedule whether or not earlier ones ended (open
loop), one that outlasts the timeout is hung, and each HTTP answer is read for what it was.

The sender is a seam here: a coroutine standing in for the daemon, and httpx's in-process
transport for the reading of answers."""

from __future__ import annotations

import asyncio
import json

import httpx

from daemon.loadtest.driver import Answer, exchange, run_open_loop
from daemon.loadtest.plan import Mix, schedule


async def test_requests_start_while_earlier_ones_are_still_waiting():
    # Each request waits until every request of the plan has started: a sender that waited for
    # one answer before the next request would never finish.
    plan = schedule(500.0, 0.04, Mix.only("misses"), users=4)
    started = 0
    all_started = asyncio.Event()
    most_waiting = 0

    async def send(planned):
        nonlocal started, most_waiting
        started += 1
        most_waiting = max(most_waiting, started)
        if started == len(plan):
            all_started.set()
        await all_started.wait()
        return Answer("ok")

    outcomes = await run_open_loop(plan, send, timeout=30.0)
    assert len(plan) == 20 and most_waiting == 20
    assert [o.result for o in outcomes] == ["ok"] * 20
    assert all(o.latency_ms >= 0 and o.lag_ms >= 0 for o in outcomes)


async def test_a_request_past_the_timeout_is_hung_and_the_others_are_not_held_up():
    plan = schedule(100.0, 0.05, Mix.parse("hits=4,misses=1"), users=1)

    async def send(planned):
        if planned.kind == "misses":
            await asyncio.Event().wait()  # never answers
        return Answer("ok", cached=True)

    outcomes = await run_open_loop(plan, send, timeout=0.2)
    assert [(o.kind, o.result) for o in outcomes] == [
        ("hits", "ok"),
        ("hits", "ok"),
        ("misses", "hung"),
        ("hits", "ok"),
        ("hits", "ok"),
    ]
    hung = outcomes[2]
    assert hung.code == "no answer within 0.2 s" and hung.latency_ms >= 200
    assert all(o.cached for o in outcomes if o.result == "ok")


def ndjson(*events: dict) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in events).encode()


START = {"event": "start", "request_id": "r1", "language": "python", "prompt_format": "plain"}
DONE = {"event": "done", "request_id": "r1", "text": "x)", "cached": True, "cache_match": "typed"}


async def answer_of(status: int, content: bytes, headers: dict | None = None) -> Answer:
    seen = {}

    def handle(request: httpx.Request) -> httpx.Response:
        seen["user"] = request.headers.get("x-assist-user")
        seen["body"] = json.loads(request.content)
        return httpx.Response(status, content=content, headers=headers or {})

    transport = httpx.MockTransport(handle)
    async with httpx.AsyncClient(base_url="http://daemon", transport=transport) as http:
        answer = await exchange(http, "/v1/complete", {"text": "a"}, "loadtest-3")
    assert seen == {"user": "loadtest-3", "body": {"text": "a"}}
    return answer


async def test_a_stream_that_ends_in_done_is_an_answer_with_its_cache_match():
    answer = await answer_of(200, ndjson(START, {"event": "token", "text": "x"}, DONE))
    assert answer == Answer("ok", cached=True, match="typed", text="x)")


async def test_an_answer_cut_at_its_deadline_is_an_answer_marked_cut():
    late = {**DONE, "cached": False, "cache_match": None, "text": "", "finish_reason": "deadline"}
    assert await answer_of(200, ndjson(START, late)) == Answer("ok", cut=True)


async def test_an_error_event_or_a_broken_stream_is_an_error():
    replaced = {"event": "error", "code": "replaced", "message": "a newer request"}
    assert await answer_of(200, ndjson(START, replaced)) == Answer("error", "replaced")
    twice = await answer_of(200, ndjson(START, DONE, DONE))
    assert twice == Answer("error", "broken stream (2 terminal events)")
    after = await answer_of(200, ndjson(START, DONE, {"event": "token", "text": "y"}))
    assert after.result == "error"
    assert (await answer_of(200, ndjson(START))).result == "error"
    assert await answer_of(200, b"") == Answer("error", "empty stream")
    assert await answer_of(200, b"not json\n") == Answer(
        "error", "a line of the stream is not JSON"
    )


async def test_a_429_counts_only_with_retry_after_and_other_statuses_are_errors():
    busy = json.dumps({"error": {"code": "busy", "message": "the queue is full"}}).encode()
    answer = await answer_of(429, busy, {"Retry-After": "2"})
    assert answer == Answer("429", "busy", retry_after=2.0)
    assert await answer_of(429, busy) == Answer("error", "429 without Retry-After")
    assert await answer_of(500, b"oops") == Answer("error", "http 500")
    unauthorized = json.dumps({"error": {"code": "unauthorized", "message": "token"}}).encode()
    assert await answer_of(401, unauthorized) == Answer("error", "http 401 unauthorized")


async def test_a_daemon_that_does_not_answer_is_a_transport_error():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    transport = httpx.MockTransport(refuse)
    async with httpx.AsyncClient(base_url="http://daemon", transport=transport) as http:
        answer = await exchange(http, "/v1/fix", {"text": "a"}, "loadtest-1")
    assert answer == Answer("error", "transport: ConnectError")
