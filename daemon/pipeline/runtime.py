"""The pipelines' backend seam over the real model, engine, result cache and metrics.
It bridges engine jobs to the event loop and keeps the cache's SQLite calls off the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from daemon.engine.interface import ServingEngine
from daemon.engine.jobs import Budget, Finished, Job, PromptEvaluated, TokenText, Until
from daemon.engine.scheduler import Admission, Priority
from daemon.engine.speed import Speed
from daemon.errors import EngineFailed, JobTimeout
from daemon.observe.metrics import FeedbackRecord, MetricsRecorder, RequestRecord
from daemon.pipeline.backend import JobResult, JobTimes, Relay, Scored
from daemon.store.result_cache import CachedResult, ResultCache
from models.loaded import LoadedModel

T = TypeVar("T")

# Grace beyond a job's deadline before the runtime stops waiting for the worker.
_WORKER_GRACE_S = 5.0


class Runtime:
    """The daemon's model, engine, cache and metrics, as the pipelines' ``Backend``. It bridges
    engine jobs (generating or scoring, run on the engine's worker thread) to the event loop."""

    def __init__(
        self,
        model: LoadedModel,
        engine: ServingEngine,
        cache: ResultCache,
        metrics: MetricsRecorder | None = None,
    ) -> None:
        self._model = model
        self.engine = engine
        self.cache = cache
        self.metrics = metrics
        # Every SQLite call of the result cache runs on this one thread, so a busy lock never
        # blocks the loop.
        self.db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assist-cache")

    @property
    def model(self) -> LoadedModel:
        return self._model

    def close(self) -> None:
        self.db.shutdown(wait=True)

    async def run_db(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.db, fn, *args)

    # -- admission and jobs ----------------------------------------------------------------
    def admit(self, priority: Priority, user: str) -> Admission:
        return self.engine.scheduler.admit(priority, user)

    def run(
        self,
        tokens: Sequence[int],
        budget: Budget,
        *,
        admission: Admission,
        stage: str,
        stops: Sequence[str] = (),
        until: Until | None = None,
        candidate: int | None = None,
    ) -> Relay:
        return Relay(self._chunks(tokens, budget, admission, stops, until), stage, candidate)

    async def _chunks(
        self,
        tokens: Sequence[int],
        budget: Budget,
        admission: Admission,
        stops: Sequence[str],
        until: Until | None,
    ) -> AsyncIterator[str | PromptEvaluated | JobResult]:
        """How much of the prompt the model found read already, then text as it arrives (tokens
        that piled up while the consumer was busy come as one string), then one JobResult.
        Closing early withdraws the job before its next token."""
        events, sink = _event_queue()
        job = self.engine.submit(
            tokens, budget, sink=sink, stop_strings=stops, until=until, admission=admission
        )
        reused = 0
        finished = False
        held: list[Any] = []  # an event read ahead while merging text
        try:
            while True:
                event = held.pop() if held else await _next_event(events, budget.deadline)
                if isinstance(event, PromptEvaluated):
                    reused = event.reused_tokens
                    yield event
                elif isinstance(event, TokenText):
                    text = event.text
                    while not events.empty():
                        following = events.get_nowait()
                        if not isinstance(following, TokenText):
                            held.append(following)
                            break
                        text += following.text
                    yield text
                elif isinstance(event, Finished):
                    finished = True
                    if event.reason == "error":
                        raise EngineFailed(event.error or "generation failed")
                    yield JobResult(
                        event.text,
                        event.reason,
                        event.tokens,
                        len(tokens),
                        reused,
                        _times(job),
                        own=event.own,
                        alternatives=event.alternatives,
                    )
                    return
        finally:
            if not finished:
                self.engine.withdraw(job)

    async def score(
        self, tokens: Sequence[int], score_from: int, *, admission: Admission, deadline: float
    ) -> Scored | None:
        events, sink = _event_queue()
        job = self.engine.score(
            tokens, score_from, sink=sink, deadline=deadline, admission=admission
        )
        reused = 0
        finished = False
        try:
            while True:
                event = await _next_event(events, deadline)
                if isinstance(event, PromptEvaluated):
                    reused = event.reused_tokens
                elif isinstance(event, Finished):
                    finished = True
                    return _scored(event, len(tokens), reused, job)
        finally:
            if not finished:
                self.engine.withdraw(job)

    def speed(self) -> Speed:
        return self.engine.speed.current()

    def cached(self, tokens: Sequence[int]) -> int:
        return self.engine.cached_prefix(tokens)

    # -- the result cache and the feedback log ---------------------------------------------
    async def lookup(self, key: str) -> CachedResult | None:
        hit = self.cache.get_memory(key)
        if hit is not None:
            self.db.submit(self.cache.record_memory_hit, key)
            return hit
        return await self.run_db(self.cache.get, key)

    async def store(self, key: str, result: CachedResult) -> None:
        await self.run_db(self.cache.put, key, result)

    async def feedback_history(self, user: str, limit: int) -> list[bool]:
        return await self.run_db(self.cache.user_feedback, user, limit)

    async def record_feedback(
        self, request_id: str, user: str, accepted: bool, language: str | None
    ) -> None:
        await self.run_db(self.cache.record_feedback, request_id, user, accepted, language)

    async def demote(self, key: str, evict_after: int) -> str:
        return await self.run_db(self.cache.demote, key, evict_after)

    def observe(self, record: FeedbackRecord | RequestRecord) -> None:
        if self.metrics is not None:
            self.metrics.record(record)


def _event_queue() -> tuple[asyncio.Queue[Any], Callable[[Any], None]]:
    """A queue on the running loop, and a sink that feeds it from the engine's thread."""
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[Any] = asyncio.Queue()

    def sink(event: Any) -> None:
        # At shutdown the engine ends the jobs still running after the loop has closed: no
        # one waits for their events any more.
        if not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # closed between the check and the call
                loop.call_soon_threadsafe(events.put_nowait, event)

    return events, sink


async def _next_event(events: asyncio.Queue[Any], deadline: float) -> Any:
    """The job's next event; a worker silent well past the deadline is a ``JobTimeout``."""
    timeout = max(0.0, deadline - time.perf_counter()) + _WORKER_GRACE_S
    try:
        return await asyncio.wait_for(events.get(), timeout)
    except TimeoutError as exc:
        raise JobTimeout("the model did not answer in time") from exc


def _scored(event: Finished, prompt_tokens: int, reused: int, job: Job) -> Scored | None:
    """A scoring job's end: its scores, None when it was cancelled or ran out of time."""
    if event.reason == "error":
        raise EngineFailed(event.error or "scoring failed")
    if event.reason != "scored" or event.logprobs is None:
        return None
    return Scored(list(event.logprobs), prompt_tokens, reused, _times(job))


def _times(job: Job) -> JobTimes:
    return JobTimes(
        submitted_at=job.submitted_at,
        started_at=job.started_at,
        prompt_done_at=job.prompt_done_at,
        first_token_at=job.first_token_at,
        finished_at=job.finished_at,
    )
