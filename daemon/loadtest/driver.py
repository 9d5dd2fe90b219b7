"""The open-loop sender: requests start on schedule, whatever the earlier ones are doing.
A request's latency runs from its planned start, so a sender that fell behind is not hidden."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from daemon.loadtest.plan import Planned

# The schedule starts this long after the first request is ready, so the first sends are on time.
LEAD_S = 0.05


# Each request starts at its planned time whether or not the earlier ones have ended, and one that
# outlasts the timeout is counted as hung. ``exchange`` sends one request and reads its NDJSON
# stream to the end; ``run_open_loop`` keeps the schedule with any sender (the seam the unit tests
# use) and times what comes back. A request's latency runs from its planned start, so a sender that
# fell behind is not hidden.
@dataclass(frozen=True)
class Answer:
    """How one request ended: ``ok`` (a done event), ``429``, or ``error`` with a code."""

    result: str
    code: str | None = None
    cached: bool = False
    match: str | None = None  # the cache's match: exact or typed
    text: str = ""  # the done event's text
    retry_after: float | None = None
    cut: bool = False  # the answer was cut at its deadline (finish_reason "deadline")


@dataclass(frozen=True)
class Outcome:
    """A planned request's end, timed: latency from its planned start, how late it was sent,
    and when it ended (seconds after the run's start)."""

    kind: str
    result: str  # ok, 429, error or hung
    latency_ms: float
    lag_ms: float
    ended_s: float
    code: str | None = None
    cached: bool = False
    cut: bool = False


def _refusal(response: httpx.Response, raw: bytes) -> Answer:
    """An answer other than 200: a 429 with its Retry-After, or an error with its code."""
    try:
        code = json.loads(raw)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = None
    if response.status_code != 429:
        return Answer("error", f"http {response.status_code}" + (f" {code}" if code else ""))
    retry_after = response.headers.get("retry-after", "")
    if not retry_after.isdigit():
        return Answer("error", "429 without Retry-After")
    return Answer("429", code or "unknown", retry_after=float(retry_after))


def _ending(events: list[dict[str, Any]]) -> Answer:
    """A 200 stream's answer: its one terminal event, which must be its last."""
    terminal = [e for e in events if e.get("event") in ("done", "error")]
    if len(terminal) != 1 or events[-1] is not terminal[0]:
        return Answer("error", f"broken stream ({len(terminal)} terminal events)")
    last = terminal[0]
    if last["event"] == "error":
        return Answer("error", str(last.get("code", "unknown")))
    return Answer(
        "ok",
        cached=bool(last.get("cached")),
        match=last.get("cache_match"),
        text=last.get("text", ""),
        cut=last.get("finish_reason") == "deadline",
    )


async def exchange(
    http: httpx.AsyncClient, endpoint: str, body: dict[str, object], user: str
) -> Answer:
    """Send one request as ``user`` and read its answer to the end."""
    headers = {"X-Assist-User": user}
    try:
        async with http.stream("POST", endpoint, json=body, headers=headers) as response:
            if response.status_code != 200:
                return _refusal(response, await response.aread())
            events = [json.loads(line) async for line in response.aiter_lines() if line.strip()]
    except httpx.HTTPError as exc:
        return Answer("error", f"transport: {type(exc).__name__}")
    except ValueError:
        return Answer("error", "a line of the stream is not JSON")
    if not events:
        return Answer("error", "empty stream")
    return _ending(events)


Sender = Callable[[Planned], Awaitable[Answer]]


async def _timed(planned: Planned, send: Sender, planned_at: float, timeout: float) -> Outcome:
    loop = asyncio.get_running_loop()
    sent = loop.time()
    lag_ms = max(0.0, sent - planned_at) * 1000
    try:
        answer = await asyncio.wait_for(send(planned), timeout)
    except TimeoutError:
        answer = Answer("hung", f"no answer within {timeout:g} s")
    ended = loop.time()
    return Outcome(
        planned.kind,
        answer.result,
        latency_ms=(ended - planned_at) * 1000,
        lag_ms=lag_ms,
        ended_s=ended - (planned_at - planned.at),
        code=answer.code,
        cached=answer.cached,
        cut=answer.cut,
    )


async def run_open_loop(plan: list[Planned], send: Sender, timeout: float) -> list[Outcome]:
    """Start each planned request at its time (open loop), and wait for every one to end or to
    be counted hung; the outcomes come back in the plan's order."""
    loop = asyncio.get_running_loop()
    start = loop.time() + LEAD_S
    tasks = []
    for planned in plan:
        planned_at = start + planned.at
        delay = planned_at - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(_timed(planned, send, planned_at, timeout)))
    return list(await asyncio.gather(*tasks))
