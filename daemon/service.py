"""The completion service: from a validated request to a stream of protocol events.

It ties the parts together in the order a request flows: language and profile header, prompt
cut to its budget, result-cache lookup, engine generation, cache store. It knows nothing about
HTTP; the API layer turns its ``ServiceError`` into status codes and its events into NDJSON.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncGenerator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from daemon.cache import CachedResult, ResultCache, cache_key
from daemon.engine import Budget, Engine, EngineBusy, EngineClosed, Finished, PromptEvaluated
from daemon.engine import TokenText as EngineToken
from daemon.language import detect_language
from daemon.prompt import PositionError, build_prompt, render_header
from daemon.protocol import (
    CompleteRequest,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    Timings,
    TokenEvent,
)
from daemon.settings import Settings
from models.families import PROMPT_FORMAT_VERSION
from models.loaded import LoadedModel

log = logging.getLogger(__name__)

Event = StartEvent | TokenEvent | DoneEvent | ErrorEvent

# Documents larger than this are tokenized off the event loop.
_OFFLOAD_PROMPT_CHARS = 64 * 1024
# Grace beyond a request's deadline before the service gives up on the worker.
_WORKER_GRACE_S = 5.0


class ServiceError(Exception):
    """A request the service refuses; ``status`` is the HTTP status it maps to."""

    def __init__(self, status: int, code: str, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


def _ms(start: float, end: float | None) -> float | None:
    return None if end is None else round((end - start) * 1000, 2)


def completion_stops(text_after_cursor_on_line: str) -> tuple[str, ...]:
    """Where a completion ends: the rest of the line when the cursor is mid-line, else a block."""
    if text_after_cursor_on_line.strip():
        return ("\n",)
    return ("\n\n\n",)


class CompletionService:
    def __init__(
        self, settings: Settings, model: LoadedModel, engine: Engine, cache: ResultCache
    ) -> None:
        self.settings = settings
        self.model = model
        self.engine = engine
        self.cache = cache
        # SQLite calls run on one thread of their own, so a busy lock never blocks the loop.
        self.db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assist-cache")

    def close(self) -> None:
        self.db.shutdown(wait=True)

    async def run_db(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.db, fn, *args)

    # -- validation ------------------------------------------------------------------------
    def _budgets(self, req: CompleteRequest) -> tuple[int, int]:
        s = self.settings
        max_tokens = req.max_tokens or s.max_tokens
        if max_tokens > s.max_tokens_limit:
            raise ServiceError(
                422,
                "invalid_request",
                f"max_tokens {max_tokens} is over this daemon's limit of {s.max_tokens_limit}",
            )
        deadline_ms = req.deadline_ms or s.deadline_ms
        if deadline_ms > s.deadline_limit_ms:
            raise ServiceError(
                422,
                "invalid_request",
                f"deadline_ms {deadline_ms} is over this daemon's limit of {s.deadline_limit_ms}",
            )
        return max_tokens, deadline_ms

    # -- the request -----------------------------------------------------------------------
    async def complete(self, req: CompleteRequest) -> AsyncGenerator[Event, None]:
        """Validate and prepare the request (raising ServiceError), then stream its events."""
        received = time.perf_counter()
        max_tokens, deadline_ms = self._budgets(req)
        language = req.profile.language if req.profile else None
        if language is None:
            # Content detection may load a model on first use: keep it off the event loop.
            language = await asyncio.to_thread(detect_language, req.path, req.text, req.language)
        header = render_header(req.profile, language, req.path)
        budget_tokens = min(
            self.settings.prompt_budget_tokens, self.model.facts.n_ctx - max_tokens - 8
        )

        def build() -> Any:
            return build_prompt(
                self.model.format,
                self.model,
                req.text,
                req.line,
                req.column,
                budget=budget_tokens,
                suffix_budget=self.settings.suffix_budget_tokens,
                header=header,
            )

        try:
            if len(req.text) > _OFFLOAD_PROMPT_CHARS:
                built = await asyncio.to_thread(build)
            else:
                built = build()
        except PositionError as exc:
            raise ServiceError(422, "invalid_position", str(exc)) from exc

        line_text = req.text.split("\n", req.line + 1)[req.line]
        stops = completion_stops(line_text[req.column :])
        sampling = {
            "temperature": self.settings.temperature,
            "max_tokens": max_tokens,
            "stop": list(stops),
        }
        key = cache_key(
            self.model.facts.fingerprint,
            built.format_name,
            PROMPT_FORMAT_VERSION,
            sampling,
            built.tokens,
        )
        request_id = req.request_id or uuid.uuid4().hex[:16]
        return self._stream(
            req,
            request_id,
            language,
            built.tokens,
            built.format_name,
            key,
            stops,
            max_tokens,
            deadline_ms,
            received,
        )

    async def _stream(
        self,
        req: CompleteRequest,
        request_id: str,
        language: str | None,
        tokens: list[int],
        format_name: str,
        key: str,
        stops: tuple[str, ...],
        max_tokens: int,
        deadline_ms: int,
        received: float,
    ) -> AsyncGenerator[Event, None]:
        yield StartEvent(
            request_id=request_id,
            language=language,
            prompt_tokens=len(tokens),
            prompt_format=format_name,
        )
        if req.cache:
            hit = self.cache.get_memory(key)
            if hit is not None:
                self.db.submit(self.cache.record_memory_hit, key)
            else:
                hit = await self.run_db(self.cache.get, key)
            if hit is not None:
                now = time.perf_counter()
                if hit.text:
                    yield TokenEvent(text=hit.text)
                yield DoneEvent(
                    request_id=request_id,
                    text=hit.text,
                    cached=True,
                    finish_reason=hit.finish_reason,
                    tokens=hit.tokens,
                    prompt_tokens=len(tokens),
                    timings=Timings(
                        total_ms=_ms(received, now) or 0.0, first_token_ms=_ms(received, now)
                    ),
                )
                return

        loop = asyncio.get_running_loop()
        events: asyncio.Queue[Any] = asyncio.Queue()

        def sink(event: Any) -> None:
            loop.call_soon_threadsafe(events.put_nowait, event)

        budget = Budget(
            max_tokens=max_tokens,
            deadline=received + deadline_ms / 1000,
            temperature=self.settings.temperature,
        )
        try:
            job = self.engine.submit(tokens, budget, stops, sink)
        except EngineBusy as exc:
            yield ErrorEvent(code="busy", message=f"the model is busy ({exc}); try again shortly")
            return
        except EngineClosed as exc:
            yield ErrorEvent(code="shutting_down", message=str(exc))
            return

        reused = 0
        finished = False
        held: list[Any] = []  # an event read ahead while merging tokens
        try:
            while True:
                timeout = max(0.0, budget.deadline - time.perf_counter()) + _WORKER_GRACE_S
                try:
                    event = held.pop() if held else await asyncio.wait_for(events.get(), timeout)
                except TimeoutError:
                    job.cancel()
                    yield ErrorEvent(code="timeout", message="the model did not answer in time")
                    return
                if isinstance(event, PromptEvaluated):
                    reused = event.reused_tokens
                elif isinstance(event, EngineToken):
                    # When the client reads slower than the model writes, send what has piled
                    # up as one event instead of one line per token.
                    text = event.text
                    while not events.empty():
                        following = events.get_nowait()
                        if not isinstance(following, EngineToken):
                            held.append(following)
                            break
                        text += following.text
                    yield TokenEvent(text=text)
                elif isinstance(event, Finished):
                    finished = True
                    if event.reason == "error":
                        yield ErrorEvent(code="engine_error", message=event.error or "failed")
                        return
                    if event.reason in ("stop", "length"):
                        result = CachedResult(
                            text=event.text,
                            finish_reason=event.reason,
                            tokens=event.tokens,
                            language=language,
                            model=self.model.facts.name,
                        )
                        self.db.submit(self.cache.put, key, result)
                    yield DoneEvent(
                        request_id=request_id,
                        text=event.text,
                        cached=False,
                        finish_reason=event.reason,
                        tokens=event.tokens,
                        prompt_tokens=len(tokens),
                        reused_tokens=reused,
                        timings=Timings(
                            queue_ms=_ms(job.submitted_at, job.started_at) or 0.0,
                            prompt_ms=_ms(job.started_at or received, job.prompt_done_at) or 0.0,
                            first_token_ms=_ms(received, job.first_token_at),
                            total_ms=_ms(received, job.finished_at) or 0.0,
                        ),
                    )
                    return
        finally:
            if not finished:
                # The client went away (or the stream was closed early): stop generating.
                job.cancel()
