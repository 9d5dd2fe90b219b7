"""The completion pipeline: route, prompt, cache, then the answer in stages."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal

from daemon.answers.blocks import (
    block_end,
    body_placeholder,
    continuing,
    from_line_start,
    handling_markers,
    lead_in,
    steering_comment,
)
from daemon.answers.candidates import (
    Candidate,
    candidate,
    held_back,
    ranked,
    threshold_for,
    undefined_fault,
    with_new_names,
    withheld_for_fault,
    withheld_reason,
)
from daemon.answers.comments import comment_tokens
from daemon.answers.feedback import WINDOW as FEEDBACK_WINDOW
from daemon.answers.feedback import FeedbackBook, RecentAnswer
from daemon.answers.gap import (
    GapUntil,
    Trimmed,
    as_written,
    gap_until,
    trim_to_gap,
)
from daemon.answers.gap.shape import Shape
from daemon.answers.patience import (
    ErrorsPlan,
    body_tokens,
    errors_plan,
    fresh_tokens,
    window_within,
)
from daemon.answers.placeholder import is_placeholder, placeholder_tokens
from daemon.answers.route import Route, decide_route
from daemon.answers.typing_index import (
    Typed,
    TypingIndex,
    Unfinished,
    Writing,
    first_written_line,
)
from daemon.answers.warm import WindowWarmer
from daemon.checks.formatting import format_code
from daemon.checks.verify import Verdict, verify_insertion
from daemon.cursor import Cursor, PositionError
from daemon.engine.jobs import Budget, Continuation, Until
from daemon.engine.scheduler import Admission, Priority
from daemon.engine.speed import Speed
from daemon.errors import AssistError, InvalidPosition
from daemon.observe.metrics import FeedbackRecord
from daemon.pipeline.backend import (
    Backend,
    JobResult,
    budget,
    elapsed_ms,
    ms_between,
)
from daemon.pipeline.flights import FlightTable
from daemon.pipeline.keys import COMPLETION_RULES_VERSION, CompletionKey
from daemon.pipeline.requests import check_limits, language_of
from daemon.prompt.build import BuiltPrompt, build_prompt
from daemon.prompt.context import PromptContext
from daemon.prompt.header import render_header
from daemon.prompt.relevance import snippets_for_line
from daemon.protocol import (
    Alternative,
    CompleteRequest,
    DoneEvent,
    FeedbackRequest,
    StageEvent,
    StageName,
    StartEvent,
    Timings,
)
from daemon.settings import Settings
from daemon.store.result_cache import CachedResult

# Documents larger than this are tokenized off the event loop.
_OFFLOAD_PROMPT_CHARS = 64 * 1024
# The fast path writes at most this many lines after the cursor's line.
FAST_MAX_LINES = 8
# Two blank lines end any answer: the next top-level definition is not ours to write.
BLOCK_STOPS = ("\n\n\n",)
_PLACEHOLDER = "the model wrote a placeholder, not a body"


@dataclass
class Completion:
    """Everything prepared for one completion request before the stream starts."""

    req: CompleteRequest
    request_id: str
    received: float
    language: str | None
    route: Route
    cursor: Cursor  # the document, split once at the cursor
    lead: str  # indentation the answer starts with (deep path on a column-0 cursor)
    # The model writes from the start of the cursor's line (deep path on a blank line): its
    # text goes through ``from_line_start`` before it is inserted.
    from_line_start: bool
    prompt: BuiltPrompt
    header: str
    context: PromptContext
    key: str
    stops: tuple[str, ...]
    user: str
    typing_key: str
    sent: list[StageName] = field(default_factory=list)
    # The whole window's prompt, when this request used a shorter one to answer in time: it
    # is read in the background once the answer is out.
    whole_window: list[int] | None = None
    whole_key: str | None = None  # the cache key of the whole window's prompt

    @property
    def prefix(self) -> str:
        return self.cursor.prefix

    @property
    def suffix(self) -> str:
        return self.cursor.suffix

    def elapsed_ms(self) -> float:
        return elapsed_ms(self.received)

    def start_event(self) -> StartEvent:
        return StartEvent(
            request_id=self.request_id,
            language=self.language,
            prompt_tokens=len(self.prompt.tokens),
            prompt_format=self.prompt.format_name,
            route=self.route.kind,
            route_reason=self.route.reason,
        )

    def stage(self, name: StageName, text: str, verdict: Verdict | None = None) -> StageEvent:
        self.sent.append(name)
        ok = verdict.ok if verdict else True
        reason = verdict.reason if verdict else None
        return StageEvent(stage=name, text=text, elapsed_ms=self.elapsed_ms(), ok=ok, reason=reason)


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
        c = await self._prepare(req, user)
        return await self._answer(c, priority, first_line)

    async def warm(self, req: CompleteRequest, user: str) -> int:
        """Read the prompt a request at this place would have into the model, in the
        background (``WindowWarmer``), and return at once: a client's warm-up before it asks.
        Returns the prompt's tokens."""
        c = await self._prepare(req, user, fit_to_time=False)
        self.warmer.warm((user, req.path or c.key), c.prompt.tokens, user)
        return len(c.prompt.tokens)

    async def _prepare(
        self, req: CompleteRequest, user: str, *, fit_to_time: bool = True
    ) -> Completion:
        """The request prepared once: limits, language, cursor, route, prompt (cut to what
        the model reads in time, with ``fit_to_time``), stops and keys."""
        received = time.perf_counter()
        settings = self.settings
        model = self.backend.model
        check_limits(settings, req.max_tokens, req.deadline_ms)
        language = await language_of(req)
        try:
            cursor = Cursor.locate(req.text, req.line, req.column)
        except PositionError as exc:
            raise InvalidPosition(str(exc)) from exc
        route = decide_route(settings, cursor, language, req.mode, req.max_tokens, req.deadline_ms)
        if route.kind == "deep" and await self.fast_mode(user):
            route = fast_mode(route)
        lead = lead_in(cursor.before, route.body_indent) if route.kind == "deep" else ""
        header = render_header(req.profile, language, req.path)
        # A fast-path line is shown only the snippets it names (prompt/relevance.py).
        snippets = (
            req.context if route.kind == "deep" else snippets_for_line(req.context, cursor.before)
        )
        context = PromptContext(
            snippets, settings.context_budget_tokens, language, req.path, req.repository
        )
        bare = route.kind == "deep" and not cursor.line_text.strip()
        writing_at = cursor.line_start() if bare else cursor.typed(lead)
        prompt = await self._build(writing_at, route, header, context)
        whole_window: list[int] | None = None
        fitted = self._window_for_time(req, route, prompt) if fit_to_time else None
        if fitted is not None:
            whole_window = prompt.tokens
            prompt = await self._build(writing_at, route, header, context, fitted)
            route = replace(
                route,
                reason=f"{route.reason} (from a {len(prompt.tokens)}-token window, to answer in "
                "time; the whole window is read once the answer is out)",
            )

        if route.kind == "deep":
            stops = BLOCK_STOPS
        elif route.shape.kind == "line":
            stops = ("\n",)
        else:
            stops = BLOCK_STOPS
        deep = route.kind == "deep"
        key_fields = CompletionKey(
            route=route.kind,
            max_tokens=route.max_tokens,
            client_budget=req.max_tokens is not None,
            skip_errors=route.skip_errors,
            temperature=settings.temperature,
            stops=tuple(stops),
            errors_share=settings.errors_share if deep else None,
            deep_comments=settings.deep_comments if deep else None,
            tools=tuple(sorted(req.profile.tools)) if req.profile else (),
            postprocess=settings.postprocess,
            rules=COMPLETION_RULES_VERSION if settings.postprocess else None,
            lead=prompt.healed,
            candidates=req.candidates,
            daemon_candidates=settings.candidates,
        )
        key = key_fields.digest(model, prompt.tokens)
        typing_key = self.typing.key(
            f"{model.facts.fingerprint}|{prompt.format_name}|{header}|{prompt.context.key}",
            cursor.suffix,
        )
        c = Completion(
            req=req,
            request_id=req.request_id or uuid.uuid4().hex[:16],
            received=received,
            language=language,
            route=route,
            cursor=cursor,
            lead=lead,
            from_line_start=bare,
            prompt=prompt,
            header=header,
            context=context,
            key=key,
            stops=stops,
            user=user,
            typing_key=typing_key,
            whole_window=whole_window,
            whole_key=(None if whole_window is None else key_fields.digest(model, whole_window)),
        )
        return c

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
                result = CachedResult(typed.answer, typed.finish_reason, typed.tokens, c.language)
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
        self.backend.observe(FeedbackRecord(user, language, item.accepted))
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

    # -- preparing -------------------------------------------------------------------------
    async def _build(
        self,
        cursor: Cursor,
        route: Route,
        header: str,
        context: PromptContext,
        budget: int | None = None,
    ) -> BuiltPrompt:
        """The prompt for the document at ``cursor``, cut to the budget left by the route (or
        to ``budget``), with the snippets of other files that ``context`` brings."""
        model = self.backend.model
        settings = self.settings
        limit = min(settings.prompt_budget_tokens, model.facts.n_ctx - route.max_tokens - 8)
        if budget is not None:
            limit = min(limit, budget)

        def build() -> BuiltPrompt:
            return build_prompt(
                model.format,
                model,
                cursor,
                budget=limit,
                suffix_budget=settings.suffix_budget_tokens,
                header=header,
                context=context,
                heal=route.kind == "fast" and settings.token_healing,
            )

        size = len(cursor.text) + sum(len(snippet.text) for snippet in context.snippets)
        if size > _OFFLOAD_PROMPT_CHARS:
            return await asyncio.to_thread(build)
        return build()

    def _patience_ms(self, req: CompleteRequest, route: Route) -> int:
        """When the answer should be on screen: on the fast path its deadline; on the deep
        path the request's own deadline when it states one, else the ``deep_target_ms``
        setting (within the route's)."""
        if route.kind == "fast" or req.deadline_ms is not None:
            return route.deadline_ms
        return min(self.settings.deep_target_ms, route.deadline_ms)

    def _window_for_time(
        self, req: CompleteRequest, route: Route, prompt: BuiltPrompt
    ) -> int | None:
        """A smaller prompt budget when the model would not read this prompt in time (a cold
        document on a slow machine), else None."""
        return window_within(
            self.backend.speed(),
            prompt_tokens=len(prompt.tokens),
            cached_tokens=lambda: self.backend.cached(prompt.tokens),
            left_s=self._patience_ms(req, route) / 1000,
            budget=self.settings.prompt_budget_tokens,
        )

    async def _without_placeholder(
        self, c: Completion, admission: Admission, max_tokens: int, deadline: float, until: Until
    ) -> tuple[str, Verdict, JobResult] | None:
        """The body asked for once more with the language's do-nothing statements and
        comments forbidden, and its verdict; None when no single token spells the statements.
        Its text replaces a placeholder, so it is not streamed as more of it."""
        banned = await asyncio.to_thread(placeholder_tokens, self.backend.model, c.language)
        if not banned:
            return None
        limits = budget(max_tokens, deadline, self.settings.temperature, banned=banned)
        relay = self.backend.run(
            c.prompt.tokens, limits, admission=admission, stage="logic", stops=c.stops, until=until
        )
        async for _ in relay:
            pass
        body = self._trim_body(c, self._inserted(c, relay.result.text))
        return body, await _body_verdict(c, body, relay.result), relay.result

    async def _errors_plan(
        self, c: Completion, logic: JobResult, speed: Speed, deadline: float
    ) -> tuple[ErrorsPlan, BuiltPrompt]:
        """The errors pass's prompt, and whether it fits in the time left before ``deadline``."""
        if c.from_line_start:
            steering = c.route.body_indent + steering_comment(c.language, "")
            writing_at = c.cursor.line_start().typed(steering)
        else:
            writing_at = c.cursor.typed(c.lead + steering_comment(c.language, c.route.body_indent))
        prompt = await self._build(writing_at, c.route, c.header, c.context)
        plan = errors_plan(
            speed,
            fresh_prompt_tokens=fresh_tokens(c.prompt.tokens, prompt.tokens),
            body_tokens_used=logic.tokens,
            left_s=deadline - time.perf_counter(),
            ceiling=c.route.max_tokens,
        )
        return plan, prompt

    def _remember(self, c: Completion, answer: str) -> None:
        self.book.remember(
            c.request_id, RecentAnswer(c.key, c.typing_key, c.user, c.language, answer, c.req)
        )

    async def _from_cache(
        self, c: Completion, hit: CachedResult, match: Literal["exact", "typed"]
    ) -> AsyncGenerator[Any, None]:
        self._remember(c, hit.text)
        yield c.start_event()
        answer = _Answer(hit.text, hit.confidence, [], hit.alternatives, hit.faults)
        gated = self._gated(
            c,
            answer,
            Verdict(True),
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
        answer: _Answer | None = None,
    ) -> None:
        """A complete, verified answer: into the cache, the typing index and the book."""
        kept = CachedResult(text, result.reason, tokens, c.language)
        if answer is not None:
            others = tuple(each.text for each in answer.listed())
            kept = replace(
                kept, confidence=answer.confidence, alternatives=others, faults=answer.faults
            )
        await self.backend.store(c.key, kept)
        self.typing.remember(c.typing_key, c.prefix, text, result.reason, tokens)
        self._remember(c, text)

    # -- answering -------------------------------------------------------------------------
    async def _stream(self, c: Completion, admission: Admission) -> AsyncGenerator[Any, None]:
        yield c.start_event()
        try:
            with self.unfinished.writing(c.typing_key, c.prefix) as writing:
                if c.route.kind == "fast":
                    async for event in self._fast(c, admission, writing):
                        yield event
                else:
                    async for event in self._deep(c, admission):
                        yield event
        except AssistError as exc:
            yield exc.event()
        finally:
            if c.whole_window is not None:
                self.warmer.warm((c.user, c.req.path or c.key), c.whole_window, c.user)

    async def _fast(
        self, c: Completion, admission: Admission, writing: Writing
    ) -> AsyncGenerator[Any, None]:
        deadline = c.received + c.route.deadline_ms / 1000
        wanted = c.req.candidates or 1
        limits = budget(
            c.route.max_tokens,
            deadline,
            self.settings.temperature,
            candidates=max(self.settings.candidates, wanted),
            lead=c.prompt.healed,
            fork_anyway=wanted > 1,
        )
        postprocess = self.settings.postprocess
        # A short block, unless the client set its own token budget.
        shape = replace(c.route.shape, max_lines=None if c.req.max_tokens else FAST_MAX_LINES + 1)
        until = self._fast_until(c, shape)
        text = ""
        skeleton: str | None = None
        writing.fit = lambda written: self._first_line(c, written, shape)
        relay = self.backend.run(
            c.prompt.tokens, limits, admission=admission, stage="logic", stops=c.stops, until=until
        )
        async for event in relay:
            text += event.text
            writing.add(event.text)
            yield event
            head = text.lstrip("\n") if postprocess and shape.on_empty_line else text
            if skeleton is None and (line := first_written_line(head)) is not None:
                skeleton = self._first_line(c, line, shape)
                yield c.stage("skeleton", skeleton)
        result = relay.result
        answer = result.text
        if skeleton is None:
            head = answer.lstrip("\n") if postprocess and shape.on_empty_line else answer
            skeleton = self._first_line(c, first_written_line(head + "\n") or "", shape)
            yield c.stage("skeleton", skeleton)
        fit: Callable[[str, Cursor, str | None, Shape], Trimmed] = _as_written
        if postprocess:
            # Calls to the workspace's functions are fitted to the signatures the prompt showed.
            profile = c.req.profile
            fit = partial(
                trim_to_gap,
                context=c.prompt.context.snippets,
                line_length=profile.style.line_length if profile else None,
            )
        own = result.own or Continuation(answer, result.reason, result.tokens)
        written = [own, *result.alternatives]
        fitted = []
        for member, each in enumerate(written):
            trim = await asyncio.to_thread(fit, each.text, c.cursor, c.language, shape)
            fitted.append(candidate(member, each, trim))
        if (
            isinstance(until, GapUntil)
            and until.cut_by
            and until.cut_by not in fitted[0].trimmed.fired
        ):
            first = fitted[0]
            fired = (until.cut_by, *first.trimmed.fired)
            fitted[0] = replace(first, trimmed=replace(first.trimmed, fired=fired))
        best = ranked(fitted)
        if postprocess and result.complete and not any(not each.faults for each in best):
            second = await self._second(c, admission, limits, shape, written)
            if second is not None:
                trim = await asyncio.to_thread(fit, second.text, c.cursor, c.language, shape)
                fitted.append(candidate(len(written), second, trim))
                best = ranked(fitted)
        if best and c.language == "python" and postprocess:
            # Every answer, not only several: the gate holds back one with a new undefined name.
            checked = await asyncio.to_thread(with_new_names, best, c.prefix, c.suffix)
            best = ranked(checked)
        chosen = best[0] if best else fitted[0]
        trimmed = chosen.trimmed
        whole = trimmed.whole or Verdict(True)
        shown = trimmed.text if postprocess else chosen.written
        yield c.stage("logic", shown if whole.ok else skeleton, whole)
        final_verdict = trimmed.verdict or Verdict(True)
        described = trimmed.describe() if postprocess else None
        if described and final_verdict.ok:
            reason = f"{described}; {final_verdict.reason}" if final_verdict.reason else described
            final_verdict = replace(final_verdict, reason=reason)
        if chosen.member and final_verdict.ok:
            why = "; ".join(fitted[0].faults) or "its text was empty after trimming"
            note = f"another candidate: the model's first choice was set aside ({why})"
            final_verdict = replace(
                final_verdict,
                reason=f"{note}; {final_verdict.reason}" if final_verdict.reason else note,
            )
        final = trimmed.text
        confidence = chosen.confidence if result.own is not None else None
        others = [each for each in best if each is not chosen]
        answer_out = _Answer(final, confidence, others, faults=chosen.faults)
        if result.complete and final_verdict.ok:
            await self._keep(c, final, result, result.tokens, answer_out)
        async for event in self._gated(c, answer_out, final_verdict, result, cached=False):
            yield event

    def _fast_until(self, c: Completion, shape: Shape) -> Until | None:
        """The judge that ends a fast-path answer where its gap (or its block) ends."""
        if self.settings.postprocess and shape.kind != "line":
            return gap_until(c.cursor, c.language, shape)
        if c.stops == BLOCK_STOPS:
            indent = c.prefix.rsplit("\n", 1)[-1]
            indent = indent[: len(indent) - len(indent.lstrip(" \t"))]
            return block_end(indent, max_lines=shape.max_lines)
        return None

    async def _second(
        self,
        c: Completion,
        admission: Admission,
        limits: Budget,
        shape: Shape,
        written: list[Continuation],
    ) -> Continuation | None:
        """When every answer came to nothing once trimmed (most often the line below, written
        again) or failed verification (prose where code goes): one more, greedy from the most
        likely first token none of them began with.
        Its prompt is still in the KV cache, so it costs a short decode; it is not streamed.
        None when the first tokens are unknown or no time is left."""
        barred = tuple(each.first_token for each in written if each.first_token is not None)
        if not barred or time.perf_counter() >= limits.deadline:
            return None
        again = replace(limits, candidates=1, logprobs=True, not_first=barred)
        relay = self.backend.run(
            c.prompt.tokens,
            again,
            admission=admission,
            stage="logic",
            stops=c.stops,
            until=self._fast_until(c, shape),
        )
        async for _ in relay:
            pass
        result = relay.result
        if not result.complete:
            return None
        return result.own or Continuation(result.text, result.reason, result.tokens)

    async def _gated(
        self,
        c: Completion,
        answer: _Answer,
        verdict: Verdict,
        result: JobResult | None,
        *,
        cached: bool,
        reason: str | None = None,
        tokens: int | None = None,
        cache_match: Literal["exact", "typed"] | None = None,
    ) -> AsyncGenerator[Any, None]:
        """The final stage and the done event, through the confidence gate (the user's own
        threshold: their feedback history is loaded on first use)."""
        await self.fast_mode(c.user)
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
        done = _done(
            c,
            text,
            cached,
            reason or (result.reason if result else "stop"),
            tokens if tokens is not None else (result.tokens if result else 0),
            result,
            verdict.ok,
            cache_match,
        )
        done.confidence = answer.confidence
        done.faults = list(answer.faults)
        done.withheld = withheld
        done.alternatives = [] if withheld else answer.listed()
        yield done

    def _first_line(self, c: Completion, line: str, shape: Shape) -> str:
        """The skeleton: the answer's first written line (trimmed to the gap, without
        verification)."""
        if not self.settings.postprocess:
            return line
        return trim_to_gap(line, c.cursor, c.language, shape, verify=False).text

    def _inserted(self, c: Completion, written: str) -> str:
        """What to insert at the cursor for the text the model wrote on the deep path."""
        if c.from_line_start:
            return from_line_start(written, c.cursor.before, c.route.body_indent)
        return c.lead + written

    def _trim_body(self, c: Completion, body: str) -> str:
        """A deep stage's body trimmed to the block (verification is the stage's own)."""
        if not self.settings.postprocess or not body.strip():
            return body
        return trim_to_gap(body, c.cursor, c.language, c.route.shape, verify=False).text

    async def _deep(self, c: Completion, admission: Admission) -> AsyncGenerator[Any, None]:
        settings = self.settings
        total_deadline = c.received + c.route.deadline_ms / 1000
        logic_deadline = c.received + c.route.deadline_ms * (1 - settings.errors_share) / 1000
        skeleton = c.lead + body_placeholder(c.language)
        yield c.stage("skeleton", skeleton)

        # logic: the body as the model writes it, in the tokens that fit the patience target.
        speed = self.backend.speed()
        target = c.received + self._patience_ms(c.req, c.route) / 1000
        tokens = c.route.max_tokens
        if c.req.max_tokens is None:
            tokens = body_tokens(
                speed,
                prompt_tokens=len(c.prompt.tokens) - self.backend.cached(c.prompt.tokens),
                left_s=target - time.perf_counter(),
                ceiling=c.route.max_tokens,
            )
        until = block_end(c.route.body_indent)
        quiet: tuple[int, ...] = ()  # the tokens that open a comment, when comments are off
        if not settings.deep_comments:
            quiet = await asyncio.to_thread(comment_tokens, self.backend.model, c.language)
        limits = budget(tokens, logic_deadline, settings.temperature, banned=quiet)
        relay = self.backend.run(
            c.prompt.tokens, limits, admission=admission, stage="logic", stops=c.stops, until=until
        )
        async for event in relay:
            yield event
        logic_result = relay.result
        if (
            logic_result.reason == "length"
            and c.req.max_tokens is None
            and tokens < c.route.max_tokens
            and time.perf_counter() < logic_deadline
        ):
            # The patience budget cut the body short: a whole body shown late is worth more
            # than none. It is finished in a second job (within the route's budget and the
            # logic deadline) that reuses the KV of what was written.
            written = logic_result.text
            rest = list(c.prompt.tokens) + self.backend.model.tokenize_text(written)
            limits = budget(
                c.route.max_tokens - tokens, logic_deadline, settings.temperature, banned=quiet
            )
            relay = self.backend.run(
                rest,
                limits,
                admission=admission,
                stage="logic",
                stops=c.stops,
                until=continuing(until, written),
            )
            async for event in relay:
                yield event
            more = relay.result
            logic_result = replace(
                logic_result,
                text=written + more.text,
                reason=more.reason,
                tokens=logic_result.tokens + more.tokens,
            )
        logic = self._trim_body(c, self._inserted(c, logic_result.text))
        logic_verdict = await _body_verdict(c, logic, logic_result)
        if is_placeholder(c.language, logic) and time.perf_counter() < logic_deadline:
            again = await self._without_placeholder(c, admission, tokens, logic_deadline, until)
            if again is not None:
                body, verdict, result = again
                if verdict.ok:
                    logic, logic_verdict = body, verdict
                logic_result = replace(result, tokens=logic_result.tokens + result.tokens)
        best = logic if logic_verdict.ok else skeleton
        yield c.stage("logic", best, logic_verdict)

        # errors: a second pass asked for validation and error handling first.
        errors_verdict = Verdict(False, "no time was left for the errors stage")
        errors_result: JobResult | None = None
        hardened = best
        if c.route.skip_errors:
            pass  # fast mode: this user's answers are accepted as they are
        else:
            # The pass ends by the target: the final answer waits for it.
            errors_deadline = min(target, total_deadline)
            plan, prompt = await self._errors_plan(c, logic_result, speed, errors_deadline)
            if not plan.fits:
                errors_verdict = Verdict(False, plan.reason)
            else:
                limits = budget(plan.max_tokens, errors_deadline, settings.temperature)
                relay = self.backend.run(
                    prompt.tokens,
                    limits,
                    admission=admission,
                    stage="errors",
                    stops=c.stops,
                    until=until,
                )
                async for event in relay:
                    yield event
                errors_result = relay.result
                hardened = self._trim_body(c, self._inserted(c, errors_result.text))
                errors_verdict = await _verify(c, hardened)
                if errors_verdict.ok and is_placeholder(c.language, hardened):
                    errors_verdict = Verdict(False, _PLACEHOLDER)
                if errors_verdict.ok and not errors_result.complete:
                    errors_verdict = Verdict(
                        False, f"the pass was cut off ({errors_result.reason})"
                    )
                elif errors_verdict.ok and handling_markers(
                    c.language, hardened
                ) <= handling_markers(c.language, best):
                    errors_verdict = Verdict(
                        False, "the pass added no validation or error handling"
                    )
                if errors_verdict.ok and not logic_verdict.ok:
                    best = hardened  # the only body that verified
        if not c.route.skip_errors:
            shown = hardened if errors_verdict.ok else best
            yield c.stage("errors", shown, errors_verdict)

        # final: the logic body when it verified (checks the docstring did not ask for change
        # what the body does: the errors stage offers them), formatted as the workspace does.
        final, formatter = await _format(c, best)
        final_verdict = (
            await _verify(c, final)
            if best != skeleton
            else Verdict(False, "no stage passed verification; the skeleton stands")
        )
        final_event = c.stage("final", final, final_verdict)
        final_event.formatter = formatter
        yield final_event
        tokens = logic_result.tokens + (errors_result.tokens if errors_result else 0)
        if logic_result.complete and final_verdict.ok:
            await self._keep(c, final, logic_result, tokens)
        yield _done(c, final, False, logic_result.reason, tokens, logic_result, final_verdict.ok)


@dataclass
class _Answer:
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


def _as_written(answer: str, cursor: Cursor, language: str | None, shape: Shape) -> Trimmed:
    """The answer as the model wrote it (``postprocess`` off): verified whole, with its first
    line as the fallback."""
    return as_written(answer, cursor, language)


def fast_mode(route: Route) -> Route:
    """A user who accepts most answers: no error-handling pass, shorter budgets."""
    return replace(
        route,
        skip_errors=True,
        max_tokens=max(8, route.max_tokens // 2),
        deadline_ms=max(500, route.deadline_ms // 2),
        reason=route.reason + " (fast mode: you accept most answers)",
    )


async def _body_verdict(c: Completion, body: str, result: JobResult) -> Verdict:
    """Whether a deep-path body the model wrote (``result``) can be shown as the body."""
    if not result.text.strip():
        return Verdict(False, "the model wrote no body")
    verdict = await _verify(c, body)
    if verdict.ok and result.reason in ("deadline", "cancelled"):
        return Verdict(False, f"the body was cut off ({result.reason})")
    if verdict.ok and is_placeholder(c.language, body):
        return Verdict(False, _PLACEHOLDER)
    return verdict


async def _verify(c: Completion, inserted: str) -> Verdict:
    return await asyncio.to_thread(verify_insertion, c.language, c.prefix, inserted, c.suffix)


async def _format(c: Completion, inserted: str) -> tuple[str, str | None]:
    """Format the document with the answer in it; keep the answer's part if nothing else moved."""
    profile = c.req.profile
    if profile is None or not profile.tools or c.language is None:
        return inserted, None
    document = c.prefix + inserted + c.suffix
    formatted = await asyncio.to_thread(
        format_code, document, c.language, profile.tools, profile.style.line_length
    )
    if formatted is None:
        return inserted, None
    text, name = formatted
    if not (text.startswith(c.prefix) and text.endswith(c.suffix)):
        return inserted, None  # the formatter would change the user's own lines too
    end = len(text) - len(c.suffix)
    if end < len(c.prefix):
        return inserted, None
    return text[len(c.prefix) : end], name


def _done(
    c: Completion,
    text: str,
    cached: bool,
    reason: str,
    tokens: int,
    result: JobResult | None,
    verified: bool,
    cache_match: Literal["exact", "typed"] | None = None,
) -> DoneEvent:
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
        verified=verified,
        cache_match=cache_match,
    )
