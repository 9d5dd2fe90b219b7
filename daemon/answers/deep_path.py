"""The deep path: a body in stages, one method each (skeleton, logic, errors, final).
The errors pass asks for validation and error handling; the final body is verified."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from daemon.answers.blocks import (
    block_end,
    body_placeholder,
    continuing,
    from_line_start,
    handling_markers,
    steering_comment,
)
from daemon.answers.comments import comment_tokens
from daemon.answers.fast_path import Keep
from daemon.answers.gap import trim_to_gap
from daemon.answers.gate import done_event
from daemon.answers.patience import body_tokens, errors_plan, fresh_tokens
from daemon.answers.placeholder import is_placeholder, placeholder_tokens
from daemon.answers.prepared import Completion, Preparer
from daemon.checks.formatting import format_code
from daemon.checks.verify import Verdict, verify_insertion
from daemon.engine.jobs import Budget, Until
from daemon.engine.scheduler import Admission
from daemon.engine.speed import Speed
from daemon.pipeline.backend import Backend, JobResult, Relay, budget
from daemon.pipeline.staged import Outcome, Staged
from daemon.settings import Settings

_PLACEHOLDER = "the model wrote a placeholder, not a body"


@dataclass(frozen=True)
class Plan:
    """The deep path's budgets, decided before the model writes."""

    logic_deadline: float  # the logic stage's share of the route's deadline
    total_deadline: float
    target: float  # when the answer should be on screen
    speed: Speed
    tokens: int  # the logic body's tokens: what fits the patience target
    until: Until  # where the body ends
    quiet: tuple[int, ...]  # the tokens that open a comment, when comments are off


@dataclass(frozen=True)
class Body:
    """A stage's body: as inserted at the cursor, its verdict, and the model's job."""

    text: str
    verdict: Verdict
    result: JobResult | None


class DeepPath:
    def __init__(
        self, backend: Backend, settings: Settings, preparer: Preparer, keep: Keep
    ) -> None:
        self.backend = backend
        self.settings = settings
        self.preparer = preparer
        self.keep = keep

    async def answer(self, c: Completion, admission: Admission) -> AsyncGenerator[Any, None]:
        """The answer's events: each stage's model tokens as they come, and the stages."""
        skeleton = c.lead + body_placeholder(c.language)
        yield c.stage("skeleton", skeleton)
        plan = await self._plan(c)
        logic: Staged[Body] = Staged(self._logic(c, admission, plan))
        async for event in logic:
            yield event
        body = logic.result
        best = body.text if body.verdict.ok else skeleton
        yield c.stage("logic", best, body.verdict)
        tokens = body.result.tokens if body.result else 0
        if not c.route.skip_errors:  # fast mode: this user's answers are accepted as they are
            errors: Staged[Body] = Staged(self._errors(c, admission, plan, body, best))
            async for event in errors:
                yield event
            hardened = errors.result
            yield c.stage(
                "errors", hardened.text if hardened.verdict.ok else best, hardened.verdict
            )
            if hardened.verdict.ok and not body.verdict.ok:
                best = hardened.text  # the only body that verified
            tokens += hardened.result.tokens if hardened.result else 0
        async for event in self._final(c, best, best == skeleton, body, tokens):
            yield event

    async def _plan(self, c: Completion) -> Plan:
        settings = self.settings
        speed = self.backend.speed()
        target = c.received + self.preparer.patience_ms(c.req, c.route) / 1000
        tokens = c.route.max_tokens
        if c.req.max_tokens is None:
            tokens = body_tokens(
                speed,
                prompt_tokens=len(c.prompt.tokens) - self.backend.cached(c.prompt.tokens),
                left_s=target - time.perf_counter(),
                ceiling=c.route.max_tokens,
            )
        quiet: tuple[int, ...] = ()
        if not settings.deep_comments:
            quiet = await asyncio.to_thread(comment_tokens, self.backend.model, c.language)
        return Plan(
            logic_deadline=c.received + c.route.deadline_ms * (1 - settings.errors_share) / 1000,
            total_deadline=c.received + c.route.deadline_ms / 1000,
            target=target,
            speed=speed,
            tokens=tokens,
            until=block_end(c.route.body_indent, language=c.language),
            quiet=quiet,
        )

    async def _logic(
        self, c: Completion, admission: Admission, plan: Plan
    ) -> AsyncGenerator[Any, None]:
        """The body as the model writes it, in the tokens that fit the patience target;
        ends in its ``Body``."""
        limits = budget(
            plan.tokens, plan.logic_deadline, self.settings.temperature, banned=plan.quiet
        )
        relay = self._run(c, admission, limits, plan.until)
        async for event in relay:
            yield event
        result = relay.result
        if (
            result.reason == "length"
            and c.req.max_tokens is None
            and plan.tokens < c.route.max_tokens
            and time.perf_counter() < plan.logic_deadline
        ):
            finished: Staged[JobResult] = Staged(self._finish(c, admission, plan, result))
            async for event in finished:
                yield event
            result = finished.result
        body = self._trim_body(c, self._inserted(c, result.text))
        verdict = await _body_verdict(c, body, result)
        if is_placeholder(c.language, body) and time.perf_counter() < plan.logic_deadline:
            again = await self._without_placeholder(c, admission, plan)
            if again is not None:
                if again.verdict.ok:
                    body, verdict = again.text, again.verdict
                assert again.result is not None
                result = replace(again.result, tokens=result.tokens + again.result.tokens)
        yield Outcome(Body(body, verdict, result))

    async def _finish(
        self, c: Completion, admission: Admission, plan: Plan, cut: JobResult
    ) -> AsyncGenerator[Any, None]:
        """A body the patience budget cut short, finished: a whole body shown late is worth
        more than none. A second job (within the route's budget and the logic deadline)
        reuses the KV of what was written; ends in the whole body's result."""
        written = cut.text
        rest = list(c.prompt.tokens) + self.backend.model.tokenize_text(written)
        limits = budget(
            c.route.max_tokens - plan.tokens,
            plan.logic_deadline,
            self.settings.temperature,
            banned=plan.quiet,
        )
        relay = self._run(c, admission, limits, continuing(plan.until, written), tokens=rest)
        async for event in relay:
            yield event
        more = relay.result
        yield Outcome(
            replace(
                cut, text=written + more.text, reason=more.reason, tokens=cut.tokens + more.tokens
            )
        )

    async def _without_placeholder(
        self, c: Completion, admission: Admission, plan: Plan
    ) -> Body | None:
        """The body asked for once more with the language's do-nothing statements and
        comments forbidden; None when no single token spells the statements. Its text
        replaces a placeholder, so it is not streamed as more of it."""
        banned = await asyncio.to_thread(placeholder_tokens, self.backend.model, c.language)
        if not banned:
            return None
        limits = budget(plan.tokens, plan.logic_deadline, self.settings.temperature, banned=banned)
        relay = self._run(c, admission, limits, plan.until)
        async for _ in relay:
            pass
        body = self._trim_body(c, self._inserted(c, relay.result.text))
        return Body(body, await _body_verdict(c, body, relay.result), relay.result)

    async def _errors(
        self, c: Completion, admission: Admission, plan: Plan, logic: Body, best: str
    ) -> AsyncGenerator[Any, None]:
        """A second pass asked for validation and error handling first, when it fits in the
        time left (it ends by the target: the final answer waits for it); ends in its
        ``Body``."""
        deadline = min(plan.target, plan.total_deadline)
        if c.from_line_start:
            steering = c.route.body_indent + steering_comment(c.language, "")
            writing_at = c.cursor.line_start().typed(steering)
        else:
            writing_at = c.cursor.typed(c.lead + steering_comment(c.language, c.route.body_indent))
        prompt = await self.preparer.build(writing_at, c.route, c.header, c.context)
        fits = errors_plan(
            plan.speed,
            fresh_prompt_tokens=fresh_tokens(c.prompt.tokens, prompt.tokens),
            body_tokens_used=logic.result.tokens if logic.result else 0,
            left_s=deadline - time.perf_counter(),
            ceiling=c.route.max_tokens,
        )
        if not fits.fits:
            yield Outcome(Body(best, Verdict(False, fits.reason), None))
            return
        limits = budget(fits.max_tokens, deadline, self.settings.temperature)
        relay = self._run(c, admission, limits, plan.until, tokens=prompt.tokens, stage="errors")
        async for event in relay:
            yield event
        result = relay.result
        hardened = self._trim_body(c, self._inserted(c, result.text))
        yield Outcome(Body(hardened, await self._errors_verdict(c, hardened, result, best), result))

    async def _errors_verdict(
        self, c: Completion, hardened: str, result: JobResult, best: str
    ) -> Verdict:
        """Whether the errors pass's body can be offered: verified, whole, not a placeholder,
        and with more validation or error handling than the logic body."""
        verdict = await _verify(c, hardened)
        if verdict.ok and is_placeholder(c.language, hardened):
            return Verdict(False, _PLACEHOLDER)
        if verdict.ok and not result.complete:
            return Verdict(False, f"the pass was cut off ({result.reason})")
        if verdict.ok and handling_markers(c.language, hardened) <= handling_markers(
            c.language, best
        ):
            return Verdict(False, "the pass added no validation or error handling")
        return verdict

    async def _final(
        self, c: Completion, best: str, skeleton: bool, logic: Body, tokens: int
    ) -> AsyncGenerator[Any, None]:
        """The logic body when it verified (checks the docstring did not ask for change what
        the body does: the errors stage offers them), formatted as the workspace does; kept
        when whole and verified. ``skeleton``: no stage verified, the placeholder stands."""
        final, formatter = await _format(c, best)
        verdict = (
            Verdict(False, "no stage passed verification; the skeleton stands")
            if skeleton
            else await _verify(c, final)
        )
        event = c.stage("final", final, verdict)
        event.formatter = formatter
        yield event
        result = logic.result
        assert result is not None
        if result.complete and verdict.ok:
            await self.keep(c, final, result, tokens, None)
        yield done_event(c, final, False, result.reason, tokens, result, verdict)

    def _run(
        self,
        c: Completion,
        admission: Admission,
        limits: Budget,
        until: Until,
        *,
        tokens: Sequence[int] | None = None,
        stage: str = "logic",
    ) -> Relay:
        """A job for this answer: on its prompt unless ``tokens`` says otherwise."""
        prompt = c.prompt.tokens if tokens is None else tokens
        return self.backend.run(
            prompt, limits, admission=admission, stage=stage, stops=c.stops, until=until
        )

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
