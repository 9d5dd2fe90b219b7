"""The completion pipeline: route, prompt, cache, then the answer in stages.

Fast path (one pass): ``skeleton`` is the first line as soon as it is written, ``logic`` the
whole answer, ``final`` the verified answer. Deep path (an empty body after a signature):
``skeleton`` is a placeholder body sent before any model token, ``logic`` the body the model
writes, ``errors`` a second pass steered towards validation and error handling, ``final`` the
best verified stage, formatted when the workspace's formatter is installed. A stage that fails
verification is sent with ``ok: false`` and the previous valid text.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from daemon.blocks import (
    block_end,
    body_placeholder,
    handling_markers,
    lead_in,
    steering_comment,
)
from daemon.cache import CachedResult
from daemon.feedback import RecentAnswer
from daemon.formatting import format_code
from daemon.prompt import BuiltPrompt, PositionError, build_prompt, render_header, split_at_cursor
from daemon.protocol import (
    CompleteRequest,
    DoneEvent,
    ErrorEvent,
    StageEvent,
    StageName,
    StartEvent,
    Timings,
)
from daemon.route import Route, decide_route
from daemon.scheduler import Priority
from daemon.service import JobFailed, JobResult, Service, ServiceError, ms_between
from daemon.verify import Verdict, verify_insertion

# Documents larger than this are tokenized off the event loop.
_OFFLOAD_PROMPT_CHARS = 64 * 1024
# The fast path writes at most this many lines after the cursor's line.
FAST_MAX_LINES = 8
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
    prefix: str  # document text before the cursor
    suffix: str  # document text after the cursor
    lead: str  # indentation the answer starts with (deep path on a column-0 cursor)
    prompt: BuiltPrompt
    header: str
    key: str
    stops: tuple[str, ...]
    user: str
    typing_key: str
    priority: Priority = Priority.INTERACTIVE
    sent: list[StageName] = field(default_factory=list)

    def elapsed_ms(self) -> float:
        return ms_between(self.received, time.perf_counter()) or 0.0

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


async def prepare_completion(
    service: Service, req: CompleteRequest, user: str, priority: Priority = Priority.INTERACTIVE
) -> AsyncGenerator[Any, None]:
    """Everything up to the stream: route, prompt, cache (exact, then typed), admission."""
    received = time.perf_counter()
    settings = service.settings
    language = await service.language_of(req)
    try:
        prefix, suffix = split_at_cursor(req.text, req.line, req.column)
    except PositionError as exc:
        raise ServiceError(422, "invalid_position", str(exc)) from exc
    route = decide_route(
        settings,
        req.text,
        req.line,
        req.column,
        language,
        req.mode,
        req.max_tokens,
        req.deadline_ms,
    )
    if route.kind == "deep" and await service.fast_mode(user):
        route = fast_mode(route)
    line_text = req.text.split("\n", req.line + 1)[req.line]
    before_cursor = line_text[: req.column]
    lead = lead_in(before_cursor, route.body_indent) if route.kind == "deep" else ""
    header = render_header(req.profile, language, req.path)
    prompt = await _build(service, req.text, req.line, req.column, lead, route, header)

    if route.kind == "deep":
        stops = BLOCK_STOPS
    elif line_text[req.column :].strip():
        stops = ("\n",)
    else:
        stops = BLOCK_STOPS
    params = {
        "route": route.kind,
        "max_tokens": route.max_tokens,
        "temperature": settings.temperature,
        "stops": list(stops),
        "errors_share": settings.errors_share if route.kind == "deep" else None,
        "tools": sorted(req.profile.tools) if req.profile else [],
    }
    key = service.key("complete", prompt.format_name, params, prompt.tokens)
    typing_key = service.typing.key(
        f"{service.model.facts.fingerprint}|{prompt.format_name}|{header}", suffix
    )
    completion = Completion(
        req=req,
        request_id=req.request_id or uuid.uuid4().hex[:16],
        received=received,
        language=language,
        route=route,
        prefix=prefix,
        suffix=suffix,
        lead=lead,
        prompt=prompt,
        header=header,
        key=key,
        stops=stops,
        user=user,
        typing_key=typing_key,
        priority=priority,
    )
    if req.cache:
        hit = await service.cached(key)
        if hit is not None:
            return _from_cache(service, completion, hit, "exact")
        typed = service.typing.match(typing_key, prefix)
        if typed is not None:
            result = CachedResult(typed.answer, typed.finish_reason, typed.tokens, language)
            return _from_cache(service, completion, result, "typed")
    # Background work (a prefetch) never replaces what the user is waiting for.
    document = (user, req.path) if req.path and priority == Priority.INTERACTIVE else None
    return await service.in_flight(
        key, lambda: _stream(service, completion), completion.request_id, document, priority, user
    )


def fast_mode(route: Route) -> Route:
    """A user who accepts most answers: no error-handling pass, shorter budgets."""
    return replace(
        route,
        skip_errors=True,
        max_tokens=max(8, route.max_tokens // 2),
        deadline_ms=max(500, route.deadline_ms // 2),
        reason=route.reason + " (fast mode: you accept most answers)",
    )


def next_request(req: CompleteRequest, answer: str) -> CompleteRequest | None:
    """The request an editor sends after ``answer`` was accepted: the text with it, the
    cursor after it."""
    try:
        prefix, suffix = split_at_cursor(req.text, req.line, req.column)
    except PositionError:
        return None
    text = prefix + answer + suffix
    before = prefix + answer
    line = before.count("\n")
    column = len(before) - (before.rfind("\n") + 1)
    return req.model_copy(
        update={"text": text, "line": line, "column": column, "request_id": None, "mode": "auto"}
    )


def _remember(service: Service, c: Completion, key: str, answer: str) -> None:
    service.feedback_book.remember(
        c.request_id,
        RecentAnswer(key, c.typing_key, c.user, c.language, answer, c.req),
    )


async def _from_cache(
    service: Service, c: Completion, hit: CachedResult, match: Literal["exact", "typed"]
) -> AsyncGenerator[Any, None]:
    _remember(service, c, c.key, hit.text)
    yield c.start_event()
    yield c.stage("final", hit.text)
    yield _done(c, hit.text, True, hit.finish_reason, hit.tokens, None, True, match)


async def _build(
    service: Service,
    text: str,
    line: int,
    column: int,
    lead: str,
    route: Route,
    header: str,
    steer: str = "",
) -> BuiltPrompt:
    """The prompt for text at the cursor, with ``lead`` and ``steer`` typed there first."""
    typed = lead + steer
    if typed:
        before, after = split_at_cursor(text, line, column)
        text = before + typed + after
        line += typed.count("\n")
        column = len(typed.rsplit("\n", 1)[-1]) + (column if "\n" not in typed else 0)
    settings = service.settings
    budget = min(settings.prompt_budget_tokens, service.model.facts.n_ctx - route.max_tokens - 8)

    def build() -> BuiltPrompt:
        return build_prompt(
            service.model.format,
            service.model,
            text,
            line,
            column,
            budget=budget,
            suffix_budget=settings.suffix_budget_tokens,
            header=header,
        )

    if len(text) > _OFFLOAD_PROMPT_CHARS:
        return await asyncio.to_thread(build)
    return build()


async def _stream(service: Service, c: Completion) -> AsyncGenerator[Any, None]:
    yield c.start_event()
    try:
        if c.route.kind == "fast":
            async for event in _fast(service, c):
                yield event
        else:
            async for event in _deep(service, c):
                yield event
    except JobFailed as exc:
        yield ErrorEvent(code=exc.code, message=exc.message)


async def _fast(service: Service, c: Completion) -> AsyncGenerator[Any, None]:
    deadline = c.received + c.route.deadline_ms / 1000
    budget = service.budget(c.route.max_tokens, deadline, service.settings.temperature)
    until = None
    if c.stops == BLOCK_STOPS:
        indent = c.prefix.rsplit("\n", 1)[-1]
        indent = indent[: len(indent) - len(indent.lstrip(" \t"))]
        # A short block, unless the client set its own token budget.
        lines = None if c.req.max_tokens else FAST_MAX_LINES + 1
        until = block_end(indent, max_lines=lines)
    text = ""
    skeleton: str | None = None
    relay = service.relay(
        c.prompt.tokens, budget, "logic", c.stops, until, priority=c.priority, user=c.user
    )
    async for event in relay:
        text += event.text
        yield event
        if skeleton is None and "\n" in text:
            skeleton = text.split("\n", 1)[0]
            yield c.stage("skeleton", skeleton)
    result = relay.result
    answer = result.text
    if skeleton is None:
        skeleton = answer
        yield c.stage("skeleton", skeleton)
    verdict = await _verify(c, answer)
    yield c.stage("logic", answer if verdict.ok else skeleton, verdict)
    final, final_verdict = answer, verdict
    if not verdict.ok:
        # The whole answer does not parse; its first line may, on its own.
        first = await _verify(c, skeleton) if skeleton != answer else verdict
        if first.ok and skeleton.strip():
            final = skeleton
            final_verdict = Verdict(
                True, f"kept the first line: the rest failed verification ({verdict.reason})"
            )
        else:
            final = ""
            final_verdict = Verdict(False, f"the answer failed verification ({verdict.reason})")
    yield c.stage("final", final, final_verdict)
    if result.reason in ("stop", "length") and final_verdict.ok:
        await _keep(service, c, final, result, result.tokens)
    yield _done(c, final, False, result.reason, result.tokens, result, verified=final_verdict.ok)


async def _deep(service: Service, c: Completion) -> AsyncGenerator[Any, None]:
    settings = service.settings
    total_deadline = c.received + c.route.deadline_ms / 1000
    logic_deadline = c.received + c.route.deadline_ms * (1 - settings.errors_share) / 1000
    skeleton = c.lead + body_placeholder(c.language)
    yield c.stage("skeleton", skeleton)

    # logic: the body as the model writes it.
    until = block_end(c.route.body_indent)
    budget = service.budget(c.route.max_tokens, logic_deadline, settings.temperature)
    relay = service.relay(
        c.prompt.tokens, budget, "logic", c.stops, until, priority=c.priority, user=c.user
    )
    async for event in relay:
        yield event
    logic_result = relay.result
    logic = c.lead + logic_result.text
    logic_verdict = await _verify(c, logic)
    if logic_result.reason in ("deadline", "cancelled") and logic_verdict.ok:
        logic_verdict = Verdict(False, f"the body was cut off ({logic_result.reason})")
    if not logic_result.text.strip():
        logic_verdict = Verdict(False, "the model wrote no body")
    best = logic if logic_verdict.ok else skeleton
    yield c.stage("logic", best, logic_verdict)

    # errors: a second pass asked for validation and error handling first.
    errors_verdict = Verdict(False, "no time was left for the errors stage")
    errors_result: JobResult | None = None
    if c.route.skip_errors:
        pass  # fast mode: this user's answers are accepted as they are
    elif time.perf_counter() < total_deadline - 0.2:
        steer = steering_comment(c.language, c.route.body_indent)
        prompt = await _build(
            service, c.req.text, c.req.line, c.req.column, c.lead, c.route, c.header, steer
        )
        budget = service.budget(c.route.max_tokens, total_deadline, settings.temperature)
        relay = service.relay(
            prompt.tokens, budget, "errors", c.stops, until, c.priority, user=c.user
        )
        async for event in relay:
            yield event
        errors_result = relay.result
        hardened = c.lead + errors_result.text
        errors_verdict = await _verify(c, hardened)
        if errors_verdict.ok and errors_result.reason not in ("stop", "length"):
            errors_verdict = Verdict(False, f"the pass was cut off ({errors_result.reason})")
        elif errors_verdict.ok and handling_markers(c.language, hardened) <= handling_markers(
            c.language, best
        ):
            errors_verdict = Verdict(False, "the pass added no validation or error handling")
        if errors_verdict.ok:
            best = hardened
    if not c.route.skip_errors:
        yield c.stage("errors", best, errors_verdict)

    # final: the best verified stage, formatted as the workspace formats.
    final, formatter = await _format(c, best)
    final_verdict = (
        await _verify(c, final)
        if best != skeleton
        else Verdict(False, "no stage passed verification; the skeleton stands")
    )
    final_event = c.stage("final", final, final_verdict)
    final_event.formatter = formatter
    yield final_event
    reason = logic_result.reason
    tokens = logic_result.tokens + (errors_result.tokens if errors_result else 0)
    if reason in ("stop", "length") and final_verdict.ok:
        await _keep(service, c, final, logic_result, tokens)
    yield _done(c, final, False, reason, tokens, logic_result, verified=final_verdict.ok)


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


async def _keep(service: Service, c: Completion, text: str, result: JobResult, tokens: int) -> None:
    """A complete, verified answer: into the cache, the typing index and the feedback book."""
    await service.store(c.key, _cached(c, text, result, tokens))
    service.typing.remember(c.typing_key, c.prefix, text, result.reason, tokens)
    _remember(service, c, c.key, text)


def _cached(c: Completion, text: str, result: JobResult, tokens: int | None = None) -> CachedResult:
    return CachedResult(
        text=text,
        finish_reason=result.reason,
        tokens=result.tokens if tokens is None else tokens,
        language=c.language,
    )


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
        job = result.job
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
