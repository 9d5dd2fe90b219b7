"""The completion pipeline: requests answered from the cache or by one flight in stages.
It prepares each once, and keeps the feedback that tunes the confidence gate and fast mode."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import replace
from typing import Any

from daemon.answers.deep_path import DeepPath
from daemon.answers.fast_path import FastPath
from daemon.answers.feedback import WINDOW as FEEDBACK_WINDOW
from daemon.answers.feedback import FeedbackBook, RecentAnswer
from daemon.answers.gate import CacheMatch, Gate, Offer
from daemon.answers.prepared import Completion, Preparer
from daemon.answers.typing_index import Typed, TypingIndex, Unfinished
from daemon.answers.warm import WindowWarmer
from daemon.checks.verify import Verdict, can_verify
from daemon.engine.scheduler import Admission, Priority
from daemon.errors import AssistError
from daemon.observe.metrics import FeedbackRecord
from daemon.pipeline.backend import Backend, JobResult
from daemon.pipeline.flights import FlightTable
from daemon.protocol import CompleteRequest, FeedbackRequest
from daemon.settings import Settings
from daemon.store.result_cache import CachedResult


class CompletionPipeline:
    """Completions: prepared once, answered from the cache or by one flight in stages.

    ``on_accepted`` is called with an answer the user accepted (the daemon prefetches the next
    completion from it); it is passed in, so this pipeline never calls the layer above it.
    """

    def __init__(
        self,
        backend: Backend,
        settings: Settings,
        *,
        flights: FlightTable | None = None,
        typing: TypingIndex | None = None,
        book: FeedbackBook | None = None,
        on_accepted: Callable[[RecentAnswer], None] | None = None,
    ) -> None:
        self.backend = backend
        self.settings = settings
        self.flights = flights if flights is not None else FlightTable()
        self.typing = typing if typing is not None else TypingIndex()
        self.book = book if book is not None else FeedbackBook()
        self.on_accepted = on_accepted
        self.warmer = WindowWarmer(backend)
        self.unfinished = Unfinished()
        self.preparer = Preparer(backend, settings, self.typing, self.fast_mode)
        self.gate = Gate(settings, self.book, self.fast_mode)
        self.fast = FastPath(backend, settings, self.gate, self._keep)
        self.deep = DeepPath(backend, settings, self.preparer, self._keep)

    async def start(
        self,
        req: CompleteRequest,
        user: str,
        priority: Priority = Priority.INTERACTIVE,
        *,
        first_line: bool = False,
    ) -> AsyncGenerator[Any, None]:
        """Everything up to the stream: limits, route, prompt, cache (exact, then typed),
        admission. Raises an ``AssistError`` to refuse; returns the stream of events. With
        ``first_line`` (a client whose time limit takes a first line), a request typed on
        from an answer still being written gets that answer's next line once it is written."""
        c = await self.preparer.prepare(req, user)
        return await self._answer(c, priority, first_line)

    async def warm(self, req: CompleteRequest, user: str) -> int:
        """Read the prompt a request at this place would have into the model, in the
        background (``WindowWarmer``), and return at once: a client's warm-up before it asks.
        Returns the prompt's tokens."""
        c = await self.preparer.prepare(req, user, fit_to_time=False)
        self.warmer.warm((user, req.path or c.key), c.prompt.tokens, user)
        return len(c.prompt.tokens)

    async def _answer(
        self, c: Completion, priority: Priority, first_line: bool = False
    ) -> AsyncGenerator[Any, None]:
        """The prepared request answered: from the cache (exact, then typed), else by a flight
        of its own or one in the air for the same key."""
        req, user = c.req, c.user
        if req.cache:
            # A daemon that read the whole window in time (another one sharing this cache, or
            # this one when it was less loaded) may have answered it: that answer is better
            # than the fitted window's, and ready.
            keys = [c.key] if c.whole_key is None else [c.whole_key, c.key]
            for candidate in keys:
                hit = await self.backend.lookup(candidate)
                if hit is not None:
                    return self._from_cache(replace(c, key=candidate), hit, "exact")
            typed = await self._typed(c, first_line)
            if typed is not None:
                result = CachedResult(
                    typed.answer,
                    typed.finish_reason,
                    typed.tokens,
                    c.language,
                    alternatives=typed.alternatives,
                )
                return self._from_cache(c, result, "typed")
        # Background work (a prefetch) never replaces what the user is waiting for.
        document = (user, req.path) if req.path and priority == Priority.INTERACTIVE else None
        return self.flights.join_or_start(
            c.key,
            lambda: self.backend.admit(priority, user),
            lambda admission: self._stream(c, admission),
            c.request_id,
            document,
        )

    async def _typed(self, c: Completion, first_line: bool = False) -> Typed | None:
        """The rest of an answer whose first characters were typed since; where that answer is
        still being written, once it is (within the request's deadline), or with
        ``first_line`` once its next line is written (that line, fitted to the first
        answer's gap as its skeleton was, and not kept: the whole answer is, at its end)."""
        typed = self.typing.match(c.typing_key, c.prefix)
        behind = self.unfinished.behind(c.typing_key, c.prefix) if typed is None else None
        if behind is None:
            return typed
        deadline = time.perf_counter() + c.route.deadline_ms / 1000
        while not behind.ended.is_set():
            seen = behind.text
            line = behind.next_line(c.prefix) if first_line else None
            if line:
                self.typing.count_hit()
                return Typed(len(c.prefix), "", line, "length", 0)
            left = deadline - time.perf_counter()
            if left <= 0:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(behind.changed(seen), left)
        return self.typing.match(c.typing_key, c.prefix)

    # -- feedback --------------------------------------------------------------------------
    async def fast_mode(self, user: str) -> bool:
        """Whether the user accepts most answers (their history is loaded on first use)."""
        if not self.book.known(user):
            history = await self.backend.feedback_history(user, FEEDBACK_WINDOW)
            if not self.book.known(user):
                self.book.seed(user, history)
        return self.book.fast_mode(user)

    async def feedback(self, item: FeedbackRequest, user: str) -> dict[str, Any]:
        """Record that an answer was accepted or rejected, and act on it: a rejected answer
        is demoted in the cache; an accepted one is handed to ``on_accepted``."""
        await self.fast_mode(user)  # loads the user's history before adding to it
        answer = self.book.answer(item.request_id)
        language = item.language or (answer.language if answer else None)
        await self.backend.record_feedback(item.request_id, user, item.accepted, language)
        self.book.record(user, item.accepted)
        self.backend.observe(
            FeedbackRecord(user, language, item.accepted, request_id=item.request_id)
        )
        outcome = "recorded"
        if answer is not None and not item.accepted:
            outcome = await self.backend.demote(answer.key, self.settings.evict_after_rejects)
            if answer.typing_key:
                self.typing.forget(answer.typing_key, answer.answer)
        elif answer is not None and item.accepted and self.on_accepted is not None:
            self.on_accepted(answer)
            outcome = "prefetching"
        rate, count = self.book.acceptance(user)
        return {
            "recorded": True,
            "outcome": outcome,
            "acceptance": rate,
            "events": count,
            "fast_mode": self.book.fast_mode(user),
        }

    def workload(self) -> dict[str, int]:
        return {
            "flights": len(self.flights),
            "joined_flights": self.flights.joined,
            "typed_hits": self.typing.hits,
            "windows_warming": len(self.warmer.tasks),
            "windows_warmed": self.warmer.finished,
        }

    def _remember(self, c: Completion, answer: str) -> None:
        self.book.remember(
            c.request_id, RecentAnswer(c.key, c.typing_key, c.user, c.language, answer, c.req)
        )

    async def _from_cache(
        self, c: Completion, hit: CachedResult, match: CacheMatch
    ) -> AsyncGenerator[Any, None]:
        self._remember(c, hit.text)
        yield c.start_event()
        answer = Offer(hit.text, hit.confidence, [], hit.alternatives, hit.faults)
        gated = self.gate.final(
            c,
            answer,
            # Only verified answers are kept; whether a checker judged it, its language says.
            Verdict(True, checked=can_verify(c.language)),
            None,
            cached=True,
            reason=hit.finish_reason,
            tokens=hit.tokens,
            cache_match=match,
        )
        async for event in gated:
            yield event

    async def _keep(
        self,
        c: Completion,
        text: str,
        result: JobResult,
        tokens: int,
        answer: Offer | None = None,
    ) -> None:
        """A complete, verified answer: into the cache, the typing index and the book."""
        kept = CachedResult(text, result.reason, tokens, c.language)
        others: tuple[str, ...] = ()
        if answer is not None:
            others = tuple(each.text for each in answer.listed())
            kept = replace(
                kept, confidence=answer.confidence, alternatives=others, faults=answer.faults
            )
        await self.backend.store(c.key, kept)
        self.typing.remember(c.typing_key, c.prefix, text, result.reason, tokens, others)
        self._remember(c, text)

    # -- answering -------------------------------------------------------------------------
    async def _stream(self, c: Completion, admission: Admission) -> AsyncGenerator[Any, None]:
        yield c.start_event()
        try:
            with self.unfinished.writing(c.typing_key, c.prefix) as writing:
                if c.route.kind == "fast":
                    async for event in self.fast.answer(c, admission, writing):
                        yield event
                else:
                    async for event in self.deep.answer(c, admission):
                        yield event
        except AssistError as exc:
            yield exc.event()
        finally:
            if c.whole_window is not None:
                self.warmer.warm((c.user, c.req.path or c.key), c.whole_window, c.user)
