"""The end of a completion: its final stage through the confidence gate, and the done event."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from daemon.answers.candidates import (
    Candidate,
    held_back,
    threshold_for,
    undefined_fault,
    withheld_for_fault,
    withheld_reason,
)
from daemon.answers.feedback import FeedbackBook
from daemon.answers.prepared import Completion
from daemon.checks.verify import Verdict
from daemon.pipeline.backend import JobResult, ms_between
from daemon.protocol import Alternative, DoneEvent, Timings
from daemon.settings import Settings

CacheMatch = Literal["exact", "typed"]


@dataclass
class Offer:
    """A fast-path answer as the gate sees it: its text, the model's confidence in it, and
    the other candidates (as ranked, or as texts read back from the cache)."""

    text: str
    confidence: float | None
    others: list[Candidate]
    cached_others: tuple[str, ...] = ()
    faults: tuple[str, ...] = ()  # the workspace checks the answer failed

    def listed(self) -> list[Alternative]:
        if not self.others:
            return [Alternative(text=text) for text in self.cached_others]
        return [
            Alternative(text=each.text, confidence=each.confidence, faults=list(each.faults))
            for each in self.others
        ]


class Gate:
    """Holds back an answer the user would likely reject: one below their confidence
    threshold, or one that names something undefined. ``known`` loads a user's feedback
    history into ``book`` on first use."""

    def __init__(
        self, settings: Settings, book: FeedbackBook, known: Callable[[str], Awaitable[Any]]
    ) -> None:
        self.settings = settings
        self.book = book
        self.known = known

    async def final(
        self,
        c: Completion,
        answer: Offer,
        verdict: Verdict,
        result: JobResult | None,
        *,
        cached: bool,
        reason: str | None = None,
        tokens: int | None = None,
        cache_match: CacheMatch | None = None,
    ) -> AsyncGenerator[Any, None]:
        """The final stage and the done event, through the gate (the user's own threshold)."""
        await self.known(c.user)
        rate, events = self.book.acceptance(c.user)
        threshold = threshold_for(self.settings.min_confidence, rate, events)
        withheld: str | None = None
        text = answer.text
        fault = undefined_fault(answer.faults) if threshold > 0 else None  # 0: the gate is off
        if text and verdict.ok and fault is not None:
            withheld, text = text, ""
            verdict = replace(verdict, reason=withheld_for_fault(fault))
        elif text and verdict.ok and held_back(answer.confidence, threshold):
            assert answer.confidence is not None
            withheld, text = text, ""
            verdict = replace(verdict, reason=withheld_reason(answer.confidence, threshold))
        yield c.stage("final", text, verdict)
        done = done_event(
            c,
            text,
            cached,
            reason or (result.reason if result else "stop"),
            tokens if tokens is not None else (result.tokens if result else 0),
            result,
            verdict,
            cache_match,
        )
        done.confidence = answer.confidence
        done.faults = list(answer.faults)
        done.withheld = withheld
        done.alternatives = [] if withheld else answer.listed()
        yield done


def done_event(
    c: Completion,
    text: str,
    cached: bool,
    reason: str,
    tokens: int,
    result: JobResult | None,
    verdict: Verdict,
    cache_match: CacheMatch | None = None,
) -> DoneEvent:
    """The stream's last event: the answer, how it ended, whether it verified (and whether a
    checker could tell) and where the time went."""
    now = time.perf_counter()
    if result is None:
        timings = Timings(
            total_ms=ms_between(c.received, now) or 0.0, first_token_ms=ms_between(c.received, now)
        )
    else:
        job = result.times
        timings = Timings(
            queue_ms=ms_between(job.submitted_at, job.started_at) or 0.0,
            prompt_ms=ms_between(job.started_at or c.received, job.prompt_done_at) or 0.0,
            first_token_ms=ms_between(c.received, job.first_token_at),
            total_ms=ms_between(c.received, now) or 0.0,
            engine_ms=ms_between(job.started_at or c.received, job.finished_at),
        )
    return DoneEvent(
        request_id=c.request_id,
        text=text,
        cached=cached,
        finish_reason=reason,
        tokens=tokens,
        prompt_tokens=len(c.prompt.tokens),
        reused_tokens=result.reused_tokens if result else 0,
        timings=timings,
        route=c.route.kind,
        route_reason=c.route.reason,
        stages=list(c.sent),
        verified=verdict.ok,
        checked=verdict.checked,
        cache_match=cache_match,
    )
