"""A completion request prepared once: limits, language, cursor, route, prompt, stops, keys."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from daemon.answers.blocks import lead_in
from daemon.answers.patience import window_within
from daemon.answers.route import Route, decide_route
from daemon.answers.typing_index import TypingIndex
from daemon.checks.verify import Verdict
from daemon.cursor import Cursor, PositionError
from daemon.errors import InvalidPosition
from daemon.pipeline.backend import Backend, elapsed_ms
from daemon.pipeline.keys import COMPLETION_RULES_VERSION, CompletionKey
from daemon.pipeline.requests import check_limits, language_of
from daemon.prompt.build import BuiltPrompt, build_prompt
from daemon.prompt.context import PromptContext
from daemon.prompt.header import render_header
from daemon.prompt.relevance import snippets_for_line
from daemon.protocol import CompleteRequest, StageEvent, StageName, StartEvent
from daemon.settings import Settings
from models.loaded import prompt_room

# Documents larger than this are tokenized off the event loop.
_OFFLOAD_PROMPT_CHARS = 64 * 1024
# Two blank lines end any answer: the next top-level definition is not ours to write.
BLOCK_STOPS = ("\n\n\n",)


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


class Preparer:
    """Prepares completion requests, and builds their prompts (the deep path's errors pass
    builds one of its own). ``fast_mode`` says whether a user accepts most answers."""

    def __init__(
        self,
        backend: Backend,
        settings: Settings,
        typing: TypingIndex,
        fast_mode: Callable[[str], Awaitable[bool]],
    ) -> None:
        self.backend = backend
        self.settings = settings
        self.typing = typing
        self.fast_mode = fast_mode

    async def prepare(
        self, req: CompleteRequest, user: str, *, fit_to_time: bool = True
    ) -> Completion:
        """The request prepared once: limits, language, cursor, route, prompt (cut to what
        the model reads in time, with ``fit_to_time``), stops and keys."""
        received = time.perf_counter()
        check_limits(self.settings, req.max_tokens, req.deadline_ms)
        language = await language_of(req)
        try:
            cursor = Cursor.locate(req.text, req.line, req.column)
        except PositionError as exc:
            raise InvalidPosition(str(exc)) from exc
        route = await self._route(req, user, cursor, language)
        lead = lead_in(cursor.before, route.body_indent) if route.kind == "deep" else ""
        header = render_header(req.profile, language, req.path)
        # A fast-path line is shown only the snippets it names (prompt/relevance.py).
        snippets = (
            req.context if route.kind == "deep" else snippets_for_line(req.context, cursor.before)
        )
        context = PromptContext(
            snippets, self.settings.context_budget_tokens, language, req.path, req.repository
        )
        bare = route.kind == "deep" and not cursor.line_text.strip()
        writing_at = cursor.line_start() if bare else cursor.typed(lead)
        prompt = await self.build(writing_at, route, header, context)
        whole_window: list[int] | None = None
        fitted = self._window_for_time(req, route, prompt) if fit_to_time else None
        if fitted is not None:
            whole_window = prompt.tokens
            prompt = await self.build(writing_at, route, header, context, fitted)
            route = replace(
                route,
                reason=f"{route.reason} (from a {len(prompt.tokens)}-token window, to answer in "
                "time; the whole window is read once the answer is out)",
            )
        stops = stops_for(route)
        key = self.key_fields(req, route, stops, prompt)
        model = self.backend.model
        return Completion(
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
            key=key.digest(model, prompt.tokens),
            stops=stops,
            user=user,
            typing_key=self.typing.key(
                f"{model.facts.fingerprint}|{prompt.format_name}|{header}|{prompt.context.key}",
                cursor.suffix,
            ),
            whole_window=whole_window,
            whole_key=None if whole_window is None else key.digest(model, whole_window),
        )

    async def _route(
        self, req: CompleteRequest, user: str, cursor: Cursor, language: str | None
    ) -> Route:
        route = decide_route(
            self.settings, cursor, language, req.mode, req.max_tokens, req.deadline_ms
        )
        if route.kind == "deep" and await self.fast_mode(user):
            route = for_fast_mode(route)
        return route

    def key_fields(
        self, req: CompleteRequest, route: Route, stops: tuple[str, ...], prompt: BuiltPrompt
    ) -> CompletionKey:
        """Everything besides the prompt's tokens that the answer depends on."""
        settings = self.settings
        deep = route.kind == "deep"
        return CompletionKey(
            route=route.kind,
            max_tokens=route.max_tokens,
            client_budget=req.max_tokens is not None,
            skip_errors=route.skip_errors,
            temperature=settings.temperature,
            stops=stops,
            errors_share=settings.errors_share if deep else None,
            deep_comments=settings.deep_comments if deep else None,
            tools=tuple(sorted(req.profile.tools)) if req.profile else (),
            postprocess=settings.postprocess,
            rules=COMPLETION_RULES_VERSION if settings.postprocess else None,
            lead=prompt.healed,
            candidates=req.candidates,
            daemon_candidates=settings.candidates,
        )

    async def build(
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
        limit = min(settings.prompt_budget_tokens, prompt_room(model.facts.n_ctx, route.max_tokens))
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

    def patience_ms(self, req: CompleteRequest, route: Route) -> int:
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
            left_s=self.patience_ms(req, route) / 1000,
            budget=self.settings.prompt_budget_tokens,
        )


def stops_for(route: Route) -> tuple[str, ...]:
    """Where the engine stops: a line's end for a line, two blank lines for a block."""
    if route.kind == "fast" and route.shape.kind == "line":
        return ("\n",)
    return BLOCK_STOPS


def for_fast_mode(route: Route) -> Route:
    """A user who accepts most answers: no error-handling pass, shorter budgets."""
    return replace(
        route,
        skip_errors=True,
        max_tokens=max(8, route.max_tokens // 2),
        deadline_ms=max(500, route.deadline_ms // 2),
        reason=route.reason + " (fast mode: you accept most answers)",
    )
