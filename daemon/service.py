"""The service: what the daemon does with a validated request, independent of HTTP.

It owns the model, the engine and its scheduler, the result cache and the cache's thread, the
typing index, the single-flight table and the feedback book. It validates budgets, admits work
(or refuses it with 429 when the queue is full), bridges engine jobs to the event loop
(``run_job``), and hands each request to its pipeline: ``daemon.completion`` for completions,
``daemon.repair`` for fixes. The API layer turns a ``ServiceError`` into an HTTP status and the
pipelines' events into NDJSON lines.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from daemon.auth import LOCAL_USER
from daemon.cache import CachedResult, ResultCache, cache_key
from daemon.engine import (
    Budget,
    Engine,
    EngineBusy,
    EngineClosed,
    Finished,
    Job,
    PromptEvaluated,
    TokenText,
    Until,
)
from daemon.feedback import WINDOW as FEEDBACK_WINDOW
from daemon.feedback import FeedbackBook, RecentAnswer
from daemon.flights import FlightTable
from daemon.language import detect_language
from daemon.metrics import FeedbackRecord, MetricsRecorder
from daemon.protocol import (
    CompleteRequest,
    DocumentRequest,
    FeedbackRequest,
    FixRequest,
    TokenEvent,
)
from daemon.scheduler import Priority, QueueFull
from daemon.settings import Settings
from daemon.typing_index import TypingIndex
from models.families import PROMPT_FORMAT_VERSION
from models.loaded import LoadedModel

log = logging.getLogger(__name__)

# Grace beyond a job's deadline before the service stops waiting for the worker.
_WORKER_GRACE_S = 5.0


class ServiceError(Exception):
    """A request the service refuses; ``status`` is the HTTP status it maps to."""

    def __init__(self, status: int, code: str, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


class JobFailed(Exception):
    """An engine job could not run (busy, shutting down, engine error, worker timeout)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def ms_between(start: float, end: float | None) -> float | None:
    return None if end is None else round((end - start) * 1000, 2)


@dataclass
class JobResult:
    """The end of one engine job, with its timings."""

    text: str
    reason: str
    tokens: int
    prompt_tokens: int
    reused_tokens: int
    job: Job


class Relay:
    """Iterate to get an engine job's text as token events; then ``result`` holds its end."""

    def __init__(
        self, stream: AsyncGenerator[str | JobResult, None], stage: str, candidate: int | None
    ) -> None:
        self._stream = stream
        self._stage = stage
        self._candidate = candidate
        self._result: JobResult | None = None

    async def __aiter__(self) -> AsyncGenerator[TokenEvent, None]:
        async for item in self._stream:
            if isinstance(item, JobResult):
                self._result = item
                return
            yield TokenEvent(text=item, stage=self._stage, candidate=self._candidate)

    @property
    def result(self) -> JobResult:
        if self._result is None:
            raise JobFailed("engine_error", "the job ended without a result")
        return self._result


class Service:
    def __init__(
        self, settings: Settings, model: LoadedModel, engine: Engine, cache: ResultCache
    ) -> None:
        self.settings = settings
        self.model = model
        self.engine = engine
        self.cache = cache
        self.flights = FlightTable()
        self.typing = TypingIndex()
        self.feedback_book = FeedbackBook()
        self.prefetched = 0
        self.metrics: MetricsRecorder | None = None
        self._background: set[asyncio.Task[Any]] = set()
        # SQLite calls run on one thread of their own, so a busy lock never blocks the loop.
        self.db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assist-cache")

    def close(self) -> None:
        for task in self._background:
            task.cancel()
        self.db.shutdown(wait=True)

    async def run_db(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.db, fn, *args)

    # -- requests --------------------------------------------------------------------------
    async def language_of(self, req: DocumentRequest) -> str | None:
        language = req.profile.language if req.profile else None
        if language is None:
            # Content detection may load a model on first use: keep it off the event loop.
            language = await asyncio.to_thread(detect_language, req.path, req.text, req.language)
        return language

    def check_limits(self, max_tokens: int | None, deadline_ms: int | None) -> None:
        s = self.settings
        if max_tokens is not None and max_tokens > s.max_tokens_limit:
            raise ServiceError(
                422,
                "invalid_request",
                f"max_tokens {max_tokens} is over this daemon's limit of {s.max_tokens_limit}",
            )
        if deadline_ms is not None and deadline_ms > s.deadline_limit_ms:
            raise ServiceError(
                422,
                "invalid_request",
                f"deadline_ms {deadline_ms} is over this daemon's limit of {s.deadline_limit_ms}",
            )

    async def complete(
        self,
        req: CompleteRequest,
        user: str = LOCAL_USER,
        priority: Priority = Priority.INTERACTIVE,
    ) -> AsyncGenerator[Any, None]:
        """Validate (raising ServiceError) and return the completion's event stream."""
        from daemon.completion import prepare_completion

        self.check_limits(req.max_tokens, req.deadline_ms)
        return await prepare_completion(self, req, user, priority)

    async def fix(self, req: FixRequest, user: str = LOCAL_USER) -> AsyncGenerator[Any, None]:
        """Validate (raising ServiceError) and return the repair's event stream."""
        from daemon.repair import prepare_fix

        self.check_limits(None, req.deadline_ms)
        return await prepare_fix(self, req, user)

    # -- admission and single flight -------------------------------------------------------
    def admit(self, priority: Priority, user: str) -> None:
        """Refuse (429, with Retry-After) work the queue has no room for."""
        try:
            self.engine.scheduler.check(priority, user)
        except QueueFull as exc:
            raise ServiceError(429, "busy", str(exc), retry_after=exc.retry_after) from exc

    async def in_flight(
        self,
        key: str,
        start: Callable[[], AsyncGenerator[Any, None]],
        request_id: str,
        document: tuple[str, str] | None,
        priority: Priority,
        user: str,
    ) -> AsyncGenerator[Any, None]:
        """Follow the flight computing ``key``, starting it (if admitted) when there is none."""
        flight = self.flights.find(key)
        if flight is None:
            self.admit(priority, user)
            flight = self.flights.start(key, start())
        else:
            self.flights.joined += 1
        return self.flights.follow(flight, request_id, document)

    # -- feedback --------------------------------------------------------------------------
    async def fast_mode(self, user: str) -> bool:
        if not self.feedback_book.known(user):
            history = await self.run_db(self.cache.user_feedback, user, FEEDBACK_WINDOW)
            if not self.feedback_book.known(user):
                self.feedback_book.seed(user, history)
        return self.feedback_book.fast_mode(user)

    async def feedback(self, item: FeedbackRequest, user: str) -> dict[str, Any]:
        await self.fast_mode(user)  # loads the user's history before adding to it
        answer = self.feedback_book.answer(item.request_id)
        language = item.language or (answer.language if answer else None)
        await self.run_db(
            self.cache.record_feedback, item.request_id, user, item.accepted, language
        )
        self.feedback_book.record(user, item.accepted)
        if self.metrics is not None:
            self.metrics.record(FeedbackRecord(user, language, item.accepted))
        outcome = "recorded"
        if answer is not None and not item.accepted:
            outcome = await self.run_db(
                self.cache.demote, answer.key, self.settings.evict_after_rejects
            )
            if answer.typing_key:
                self.typing.forget(answer.typing_key, answer.answer)
        elif answer is not None and item.accepted and self.settings.prefetch:
            self.background(self._prefetch(answer))
            outcome = "prefetching"
        rate, count = self.feedback_book.acceptance(user)
        return {
            "recorded": True,
            "outcome": outcome,
            "acceptance": rate,
            "events": count,
            "fast_mode": self.feedback_book.fast_mode(user),
        }

    def background(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _prefetch(self, answer: RecentAnswer) -> None:
        """The next completion after an accepted one, computed while the model is idle."""
        from daemon.completion import next_request

        following = next_request(answer.request, answer.answer)
        if following is None:
            return
        try:
            events = await self.complete(following, answer.user, Priority.BACKGROUND)
        except ServiceError:
            return  # busy: prefetching is only for idle time
        async for _ in events:
            pass
        self.prefetched += 1

    # -- the cache -------------------------------------------------------------------------
    def key(
        self, kind: str, format_name: str, params: dict[str, Any], tokens: Sequence[int]
    ) -> str:
        return cache_key(
            self.model.facts.fingerprint,
            format_name,
            PROMPT_FORMAT_VERSION,
            {"kind": kind, **params},
            list(tokens),
        )

    async def cached(self, key: str) -> CachedResult | None:
        hit = self.cache.get_memory(key)
        if hit is not None:
            self.db.submit(self.cache.record_memory_hit, key)
            return hit
        found: CachedResult | None = await self.run_db(self.cache.get, key)
        return found

    async def store(self, key: str, result: CachedResult) -> None:
        """Store before the answer's ``done``: a client that asks another daemon next finds it."""
        await self.run_db(self.cache.put, key, result)

    # -- the engine ------------------------------------------------------------------------
    async def run_job(
        self,
        tokens: Sequence[int],
        budget: Budget,
        stops: Sequence[str] = (),
        until: Until | None = None,
        priority: Priority = Priority.INTERACTIVE,
        user: str = LOCAL_USER,
    ) -> AsyncGenerator[str | JobResult, None]:
        """Run one engine job: yields text as it arrives, then one JobResult.

        Closing the generator early (the client went away) cancels the job before its next
        token. Tokens that piled up while the consumer was busy arrive as one string.
        """
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[Any] = asyncio.Queue()

        def sink(event: Any) -> None:
            loop.call_soon_threadsafe(events.put_nowait, event)

        try:
            job = self.engine.submit(
                tokens,
                budget,
                stops,
                sink,
                until=until,
                priority=priority,
                user=user,
                admitted=True,
            )
        except EngineBusy as exc:
            raise JobFailed("busy", f"the model is busy ({exc}); try again shortly") from exc
        except EngineClosed as exc:
            raise JobFailed("shutting_down", str(exc)) from exc

        reused = 0
        finished = False
        held: list[Any] = []  # an event read ahead while merging text
        try:
            while True:
                if held:
                    event = held.pop()
                else:
                    timeout = max(0.0, budget.deadline - time.perf_counter()) + _WORKER_GRACE_S
                    try:
                        event = await asyncio.wait_for(events.get(), timeout)
                    except TimeoutError as exc:
                        raise JobFailed("timeout", "the model did not answer in time") from exc
                if isinstance(event, PromptEvaluated):
                    reused = event.reused_tokens
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
                        raise JobFailed("engine_error", event.error or "generation failed")
                    yield JobResult(
                        event.text, event.reason, event.tokens, len(tokens), reused, job
                    )
                    return
        finally:
            if not finished:
                self.engine.withdraw(job)

    def relay(
        self,
        tokens: Sequence[int],
        budget: Budget,
        stage: str,
        stops: Sequence[str] = (),
        until: Until | None = None,
        candidate: int | None = None,
        priority: Priority = Priority.INTERACTIVE,
        user: str = LOCAL_USER,
    ) -> Relay:
        """Run a job whose text is relayed as token events of ``stage``."""
        return Relay(self.run_job(tokens, budget, stops, until, priority, user), stage, candidate)

    def budget(self, max_tokens: int, deadline: float, temperature: float, seed: int = 0) -> Budget:
        return Budget(max_tokens=max_tokens, deadline=deadline, temperature=temperature, seed=seed)
