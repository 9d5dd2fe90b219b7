"""The repair pipeline behind ``POST /v1/fix`` and ``assist fix``."""

from __future__ import annotations

import asyncio
import difflib
import time
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

from daemon.checks.formatting import format_code
from daemon.checks.syntax import Diagnostic, supported_languages
from daemon.checks.verify import can_verify, verify_document
from daemon.engine.scheduler import Admission, Priority
from daemon.errors import AssistError, UnsupportedLanguage
from daemon.pipeline.backend import Backend, elapsed_ms, ms_between
from daemon.pipeline.flights import FlightTable
from daemon.pipeline.keys import RepairKey
from daemon.pipeline.requests import check_limits, language_of
from daemon.pipeline.staged import Outcome, Staged
from daemon.prompt.header import render_header
from daemon.protocol import (
    Alternative,
    DiagnosticInfo,
    DoneEvent,
    FixRequest,
    RepairStep,
    Span,
    StageEvent,
    StageName,
    StartEvent,
    Timings,
)
from daemon.repair.candidates import ModelCandidates
from daemon.repair.diagnosis import (
    Problems,
    choose_span,
    diagnose,
    info,
    unified_diff,
)
from daemon.repair.intent import Candidate
from daemon.repair.judge import Judge
from daemon.repair.rounds import RoundContext, RoundResult, run_round
from daemon.settings import Settings
from daemon.store.result_cache import CachedResult

# Spans are repaired one at a time; a file with more error clusters than this is left alone.
MAX_ROUNDS = 4
# Lines of unchanged context a formatter may also touch around the repaired span.
FORMAT_SLACK_LINES = 2
ROUTE_REASON = "a repair: diagnose, propose, verify"


@dataclass
class Repair:
    req: FixRequest
    request_id: str
    received: float
    language: str
    header: str
    original: str
    found: Problems
    key: str
    use_ruff: bool
    user: str
    sent: list[StageName] = field(default_factory=list)
    model: ModelCandidates | None = None  # once the repair runs

    def elapsed_ms(self) -> float:
        return elapsed_ms(self.received)

    def stage(self, name: StageName, text: str, **extra: Any) -> StageEvent:
        self.sent.append(name)
        return StageEvent(stage=name, text=text, elapsed_ms=self.elapsed_ms(), **extra)


class RepairPipeline:
    """Repairs: diagnosed at once, answered from the cache or by one flight in stages."""

    def __init__(
        self, backend: Backend, settings: Settings, *, flights: FlightTable | None = None
    ) -> None:
        self.backend = backend
        self.settings = settings
        self.flights = flights if flights is not None else FlightTable()

    async def start(self, req: FixRequest, user: str) -> AsyncGenerator[Any, None]:
        """Everything up to the stream: limits, language, diagnosis, cache, admission. Raises
        an ``AssistError`` to refuse; returns the stream of events."""
        received = time.perf_counter()
        settings = self.settings
        model = self.backend.model
        check_limits(settings, None, req.deadline_ms)
        language = await language_of(req)
        if language is None or not can_verify(language):
            known = ", ".join(sorted(supported_languages()))
            what = f"language {language!r}" if language else "this file (its language is unknown)"
            raise UnsupportedLanguage(
                f"no parser for {what}, so no fix could be verified; assist repairs: {known}"
            )
        tools = req.profile.tools if req.profile else []
        use_ruff = language == "python" and "ruff" in tools
        line_length = req.profile.style.line_length if req.profile else None
        found = await asyncio.to_thread(diagnose, language, req.text, use_ruff, line_length)
        header = render_header(req.profile, language, req.path)
        key_fields = RepairKey(
            candidates=req.candidates or settings.fix_candidates,
            max_tokens=settings.fix_max_tokens,
            span_lines=settings.fix_span_lines,
            tools=tuple(sorted(tools)),
            line_length=line_length,
            hints=settings.fix_parser_hints,
            judge=settings.fix_judge,
        )
        basis = await asyncio.to_thread(model.tokenize_text, header + req.text)
        key = key_fields.digest(model, basis)
        repair = Repair(
            req=req,
            request_id=req.request_id or uuid.uuid4().hex[:16],
            received=received,
            language=language,
            header=header,
            original=req.text,
            found=found,
            key=key,
            use_ruff=use_ruff,
            user=user,
        )
        if req.cache and found.targets:
            hit = await self.backend.lookup(key)
            if hit is not None:
                return _from_cache(repair, hit.text, settings.fix_span_lines)
        document = (user, req.path) if req.path else None
        return self.flights.join_or_start(
            key,
            lambda: self.backend.admit(Priority.REPAIR, user),
            lambda admission: self._stream(repair, admission),
            repair.request_id,
            document,
        )

    async def _stream(self, r: Repair, admission: Admission) -> AsyncGenerator[Any, None]:
        r.model = ModelCandidates(self.backend, self.settings, admission, r.header, r.language)
        yield StartEvent(
            request_id=r.request_id,
            language=r.language,
            prompt_format=self.backend.model.format.name,
            route="deep",
            route_reason=ROUTE_REASON,
        )
        targets = r.found.targets
        diagnostics = [info(d) for d in r.found.all]
        if not targets:
            yield r.stage(
                "skeleton",
                "nothing to fix: the file parses"
                + (" and ruff finds nothing" if r.use_ruff and r.found.lint is not None else ""),
            )
            yield _done(r, r.original, changed=False, verified=True, diff="")
            return
        lines = r.original.split("\n")
        span = choose_span(lines, targets[0], self.settings.fix_span_lines)
        yield r.stage("skeleton", _diagnosis(targets, span), diagnostics=diagnostics, span=span)
        rounds: Staged[Rounds] = Staged(self._rounds(r, admission))
        try:
            async for event in rounds:
                yield event
        except AssistError as exc:
            yield exc.event()
            return
        done = rounds.result
        if done.rival is not None:
            ending = _offer_both(r, done.document, done.rival, done.steps)
        elif done.problems.syntax or done.document == r.original:
            ending = _declined_events(r, done.problems, done.steps)
        else:
            ending = self._repaired(r, done.document, done.steps)
        async for event in ending:
            yield event

    async def _rounds(self, r: Repair, admission: Admission) -> AsyncGenerator[Any, None]:
        """Repair rounds, one problem each, until the file is clean, a round finds nothing,
        two repairs are equally good (a question for the user) or time is up: the model's
        token events, then the ``Rounds``."""
        document = r.original
        problems = r.found
        # Misspelt names are repaired in a file that parses, not after its syntax repairs: a
        # name undefined there was most often defined elsewhere, and no one asked about it.
        names = not r.found.syntax
        steps: list[RepairStep] = []
        deadline = r.received + (r.req.deadline_ms or self.settings.fix_deadline_ms) / 1000
        context = RoundContext(
            language=r.language,
            use_ruff=r.use_ruff,
            line_length=_line_length(r),
            parser_hints=self.settings.fix_parser_hints,
            candidates=r.req.candidates or self.settings.fix_candidates,
            deadline=deadline,
            span_lines=self.settings.fix_span_lines,
        )
        judge = Judge(self.backend, admission, r.header) if self.settings.fix_judge else None
        assert r.model is not None
        for _ in range(MAX_ROUNDS):
            if not problems.targets or time.perf_counter() >= deadline:
                break
            round_: Staged[RoundResult] = Staged(
                run_round(context, r.model, document, problems, judge)
            )
            async for event in round_:
                yield event
            if not round_.ended:
                break
            outcome = round_.result
            problems = outcome.problems  # where the checker anchored the round
            if outcome.best is None:
                break
            best = outcome.best
            steps.append(_step(problems.targets[0], best, outcome.verified))
            if outcome.rival is not None:
                # A question for the user: no further guesses on top of it.
                yield Outcome(Rounds(document, problems, steps, outcome.rival))
                return
            document = best.text
            if best.after is not None and (best.after.complete or not names):
                problems = best.after  # the winner's own check: the next round's start
            else:
                problems = await asyncio.to_thread(
                    diagnose, r.language, document, r.use_ruff, _line_length(r), names
                )
        yield Outcome(Rounds(document, problems, steps, None))

    async def _repaired(
        self, r: Repair, document: str, steps: list[RepairStep]
    ) -> AsyncGenerator[Any, None]:
        """The repaired file: formatted as the workspace does, cached, with its diff."""
        yield r.stage("logic", document)
        final, formatter, note = await _format(r, document)
        diff = unified_diff(r.original, final, r.req.path)
        yield r.stage("final", final, diff=diff, formatter=formatter, reason=note)
        assert r.model is not None
        await self.backend.store(
            r.key,
            CachedResult(
                text=final, finish_reason="stop", tokens=r.model.tokens, language=r.language
            ),
        )
        yield _done(r, final, changed=True, verified=True, diff=diff, steps=steps)


@dataclass(frozen=True)
class Rounds:
    """Where the rounds left the file: its text and problems, the repairs made, and a rival
    to the last one when two were equally good."""

    document: str
    problems: Problems
    steps: list[RepairStep]
    rival: Candidate | None


async def _declined_events(
    r: Repair, problems: Problems, steps: list[RepairStep]
) -> AsyncGenerator[Any, None]:
    """The file as it was: no repair verified, or the syntax is still broken."""
    reason = _declined(steps, problems)
    unrepaired = info(problems.targets[0]) if steps and problems.targets else None
    yield r.stage("logic", r.original, ok=False, reason=reason)
    yield r.stage("final", r.original, ok=False, reason=reason)
    yield _done(
        r, r.original, changed=False, verified=False, diff="", steps=steps, unrepaired=unrepaired
    )


def _step(target: Diagnostic, best: Candidate, verified: int) -> RepairStep:
    return RepairStep(
        line=target.line,
        message=target.message,
        rule=best.origin,
        candidates=verified,
        score=best.score,
        invented=best.invented,
        layout=best.layout,
    )


def _declined(steps: list[RepairStep], problems: Problems) -> str:
    """Why nothing is offered: no candidate at all, or how far the repair got."""
    left = problems.targets[0] if problems.targets else None
    where = f" (line {left.line + 1}: {left.message})" if left else ""
    if not steps:
        return (
            "no candidate made the file parse" if problems.syntax else "no candidate helped"
        ) + where
    return (
        f"fixed {len(steps)} error{'s' if len(steps) > 1 else ''}, "
        f"but no verified repair for the next{where}; nothing was changed"
    )


async def _offer_both(
    r: Repair, document: str, rival: Candidate, steps: list[RepairStep]
) -> AsyncGenerator[Any, None]:
    """Two repairs too close to call: both are offered, neither is written or cached."""
    reason = (
        f"two repairs are about as likely and mean different things ({steps[-1].rule} and "
        f"{rival.origin}); choose one"
    )
    yield r.stage("logic", document)
    yield r.stage(
        "final",
        document,
        ok=False,
        reason=reason,
        diff=unified_diff(r.original, document, r.req.path),
    )
    alternative = Alternative(
        text=rival.text,
        diff=unified_diff(r.original, rival.text, r.req.path),
        rule=rival.origin,
        score=rival.score,
    )
    yield _done(
        r,
        document,
        changed=True,
        verified=True,
        diff=unified_diff(r.original, document, r.req.path),
        steps=steps,
        alternatives=[alternative],
    )


async def _from_cache(r: Repair, fixed: str, span_lines: int) -> AsyncGenerator[Any, None]:
    targets = r.found.targets
    yield StartEvent(
        request_id=r.request_id,
        language=r.language,
        prompt_format="cached",
        route="deep",
        route_reason=ROUTE_REASON,
    )
    span = choose_span(r.original.split("\n"), targets[0], span_lines)
    yield r.stage(
        "skeleton", _diagnosis(targets, span), diagnostics=[info(d) for d in r.found.all], span=span
    )
    diff = unified_diff(r.original, fixed, r.req.path)
    yield r.stage("final", fixed, diff=diff)
    yield _done(r, fixed, changed=True, verified=True, diff=diff, cached=True)


def _line_length(r: Repair) -> int | None:
    return r.req.profile.style.line_length if r.req.profile else None


def _diagnosis(targets: list[Diagnostic], span: Span) -> str:
    shown = [f"line {d.line + 1}, column {d.column + 1}: {d.message}" for d in targets[:10]]
    if len(targets) > 10:
        shown.append(f"and {len(targets) - 10} more")
    lines = (
        f"line {span.start_line + 1}"
        if span.end_line - span.start_line == 1
        else (f"lines {span.start_line + 1}-{span.end_line}")
    )
    return "\n".join([*shown, f"will change {lines}"])


async def _format(r: Repair, document: str) -> tuple[str, str | None, str | None]:
    """Format the repaired document when the formatter only touches the repaired lines."""
    profile = r.req.profile
    if profile is None or not profile.tools:
        return document, None, None
    formatted = await asyncio.to_thread(
        format_code, document, r.language, profile.tools, profile.style.line_length
    )
    if formatted is None:
        return document, None, None
    text, name = formatted
    if text == document:
        return document, name, None
    changed = _changed_lines(r.original, document)
    touched = _changed_lines(document, text)
    low = min(changed, default=0) - FORMAT_SLACK_LINES
    high = max(changed, default=0) + FORMAT_SLACK_LINES
    if any(line < low or line > high for line in touched):
        return document, None, f"{name} would reformat lines the repair did not touch; not applied"
    verdict, _ = verify_document(r.language, text)
    if not verdict.ok:
        return document, None, f"{name} output: {verdict.reason}; not applied"
    return text, name, None


def _changed_lines(old: str, new: str) -> set[int]:
    """Lines of ``old`` that differ in ``new`` (for an insertion: the line it lands on)."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    head = 0
    while head < min(len(old_lines), len(new_lines)) and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(old_lines), len(new_lines)) - head
        and old_lines[-1 - tail] == new_lines[-1 - tail]
    ):
        tail += 1
    matcher = difflib.SequenceMatcher(
        None,
        old_lines[head : len(old_lines) - tail],
        new_lines[head : len(new_lines) - tail],
        autojunk=False,
    )
    changed: set[int] = set()
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag != "equal":
            changed.update(range(head + i1, head + max(i2, i1 + 1)))
    return changed


def _done(
    r: Repair,
    text: str,
    changed: bool,
    verified: bool,
    diff: str,
    cached: bool = False,
    steps: list[RepairStep] | None = None,
    alternatives: list[Alternative] | None = None,
    unrepaired: DiagnosticInfo | None = None,
) -> DoneEvent:
    now = time.perf_counter()
    last = r.model.last_job if r.model else None
    job = last.times if last else None
    timings = Timings(
        total_ms=ms_between(r.received, now) or 0.0,
        first_token_ms=ms_between(r.received, job.first_token_at) if job else None,
    )
    return DoneEvent(
        request_id=r.request_id,
        text=text,
        cached=cached,
        finish_reason="stop",
        tokens=r.model.tokens if r.model else 0,
        timings=timings,
        route="deep",
        route_reason=ROUTE_REASON,
        stages=list(r.sent),
        changed=changed,
        verified=verified,
        diff=diff,
        diagnostics=[info(d) for d in r.found.all],
        repairs=steps or [],
        alternatives=alternatives or [],
        unrepaired=unrepaired,
    )
