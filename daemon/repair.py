"""The repair pipeline behind ``POST /v1/fix`` and ``assist fix``.

1. Diagnose: syntax errors from a real parser (and ruff's findings for Python when the
   workspace uses ruff and it is installed). Nothing wrong: done, unchanged.
2. ``skeleton``: the diagnosis, sent at once: the errors, their lines, the span that will change.
3. Candidates for the span: first the parser's own hints (a missing ``)``), then, when none of
   those verifies, up to N model proposals with varied sampling. A candidate is verified when
   the whole file then parses and no problem appeared that the original did not have; the
   smallest verified change wins. Far-apart errors are repaired one span at a time.
4. ``logic``: the repaired document. ``final``: formatted (when the workspace's formatter is
   installed and only touches the repaired lines), verified again, with a unified diff.
"""

from __future__ import annotations

import asyncio
import difflib
import re
import time
import uuid
from collections import Counter
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

from daemon.cache import CachedResult
from daemon.formatting import format_code
from daemon.language import language_info
from daemon.lint import lint_python
from daemon.prompt import build_prompt, render_header
from daemon.protocol import (
    DiagnosticInfo,
    DoneEvent,
    ErrorEvent,
    FixRequest,
    Span,
    StageEvent,
    StageName,
    StartEvent,
    Timings,
    TokenEvent,
)
from daemon.repair_hints import code_end, hint_candidates
from daemon.scheduler import Priority
from daemon.service import JobFailed, JobResult, Service, ServiceError, ms_between
from daemon.syntax import Diagnostic, check_syntax, supported_languages
from daemon.verify import can_verify, verify_document

# Temperatures of successive model candidates: the first is the model's best guess.
TEMPERATURES = (0.0, 0.4, 0.7, 0.9, 1.0)
# Spans are repaired one at a time; a file with more error clusters than this is left alone.
MAX_ROUNDS = 4
# Lines of unchanged context a formatter may also touch around the repaired span.
FORMAT_SLACK_LINES = 2
# A model's replacement must keep this share of the span's words: a fix repairs the user's code,
# it does not delete it until the rest parses.
KEEP_WORDS = 0.8
_WORD = re.compile(r"\w+")


@dataclass
class Problems:
    syntax: list[Diagnostic]
    lint: list[Diagnostic] | None  # None: not linted (no ruff, or not a ruff workspace)

    @property
    def all(self) -> list[Diagnostic]:
        return self.syntax + (self.lint or [])

    @property
    def targets(self) -> list[Diagnostic]:
        """What a round repairs: syntax errors first; lint findings only in a parsing file."""
        return self.syntax or (self.lint or [])


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
    tokens: int = 0
    last_job: JobResult | None = None

    def elapsed_ms(self) -> float:
        return ms_between(self.received, time.perf_counter()) or 0.0

    def usable(self, result: JobResult) -> bool:
        """Count a model job; whether it ended on its own with some text."""
        self.tokens += result.tokens
        self.last_job = result
        return result.reason in ("stop", "length") and bool(result.text.strip())

    def stage(self, name: StageName, text: str, **extra: Any) -> StageEvent:
        self.sent.append(name)
        return StageEvent(stage=name, text=text, elapsed_ms=self.elapsed_ms(), **extra)


def info(d: Diagnostic) -> DiagnosticInfo:
    return DiagnosticInfo(
        line=d.line,
        column=d.column,
        end_line=d.end_line,
        end_column=d.end_column,
        message=d.message,
        source=d.source,
        code=d.code,
    )


def diagnose(language: str, text: str, use_ruff: bool, line_length: int | None) -> Problems:
    syntax = check_syntax(language, text)
    lint = None
    if use_ruff and not syntax:
        lint = lint_python(text, line_length)
    return Problems(syntax, lint)


def choose_span(lines: list[str], problem: Diagnostic, max_lines: int) -> Span:
    """The lines a candidate replaces: the problem's lines and one line of context around."""
    start = max(0, problem.line - 1)
    end = min(len(lines), max(problem.end_line, problem.line) + 2)
    end = min(end, start + max_lines)
    return Span(start_line=start, end_line=max(end, start + 1))


def _trim_common(old: str, new: str) -> tuple[str, str]:
    """The parts of two texts between their common start and common end."""
    start = _common_length(old, new, lambda text, n: text[:n])
    rest_old, rest_new = old[start:], new[start:]
    end = _common_length(rest_old, rest_new, lambda text, n: text[len(text) - n :])
    return rest_old[: len(rest_old) - end], rest_new[: len(rest_new) - end]


def _common_length(a: str, b: str, part: Callable[[str, int], str]) -> int:
    """The longest n with part(a, n) == part(b, n), by bisection (slices compare in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if part(a, middle) == part(b, middle):
            low = middle
        else:
            high = middle - 1
    return low


def change_size(old: str, new: str) -> int:
    """Characters inserted plus deleted: the measure of a small fix.

    The texts are whole files that differ in a few lines: only the differing middle is
    compared (a character-level diff of two large files would take quadratic time)."""
    old, new = _trim_common(old, new)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def unified_diff(old: str, new: str, path: str | None) -> str:
    name = path or "document"
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
        )
    )


def keeps_code(old: str, new: str) -> bool:
    """Whether ``new`` still holds (nearly) every word of ``old``."""
    before = Counter(_WORD.findall(old))
    if not before:
        return True
    kept = sum((before & Counter(_WORD.findall(new))).values())
    return kept >= KEEP_WORDS * sum(before.values())


def _lint_counts(problems: list[Diagnostic] | None) -> Counter[str]:
    return Counter((p.code or p.message) for p in problems or [])


def accepts(before: Problems, after: Problems, span: Span, lines_delta: int) -> bool:
    """A round's candidate: fewer problems, none at or before the repaired span, none new."""
    if after.syntax:
        end = span.end_line + lines_delta
        if any(p.line <= end for p in after.syntax):
            return False
        # Python's compiler reports only the first error: past the span counts as progress.
        # tree-sitter reports them all: there must be fewer.
        single_error = all(p.source == "python" for p in after.syntax)
        if not single_error and len(after.syntax) >= len(before.syntax):
            return False
        if not before.syntax:
            return False
    if before.lint is not None and after.lint is not None:
        grew = _lint_counts(after.lint) - _lint_counts(before.lint)
        if grew:
            return False
        if not before.syntax and len(after.lint) >= len(before.lint):
            return False
    return True


async def prepare_fix(service: Service, req: FixRequest, user: str) -> AsyncGenerator[Any, None]:
    received = time.perf_counter()
    language = await service.language_of(req)
    if not can_verify(language):
        known = ", ".join(sorted(supported_languages()))
        what = f"language {language!r}" if language else "this file (its language is unknown)"
        raise ServiceError(
            422,
            "unsupported_language",
            f"no parser for {what}, so no fix could be verified; assist repairs: {known}",
        )
    assert language is not None
    tools = req.profile.tools if req.profile else []
    use_ruff = language == "python" and "ruff" in tools
    line_length = req.profile.style.line_length if req.profile else None
    found = await asyncio.to_thread(diagnose, language, req.text, use_ruff, line_length)
    header = render_header(req.profile, language, req.path)
    settings = service.settings
    params = {
        "candidates": req.candidates or settings.fix_candidates,
        "max_tokens": settings.fix_max_tokens,
        "span_lines": settings.fix_span_lines,
        "tools": sorted(tools),
        "line_length": line_length,
    }
    basis = await asyncio.to_thread(service.model.tokenize_text, header + req.text)
    key = service.key("fix", service.model.format.name, params, basis)
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
        hit = await service.cached(key)
        if hit is not None:
            return _from_cache(repair, hit.text, service.settings.fix_span_lines)
    document = (user, req.path) if req.path else None
    return await service.in_flight(
        key, lambda: _stream(service, repair), repair.request_id, document, Priority.REPAIR, user
    )


async def _from_cache(r: Repair, fixed: str, span_lines: int) -> AsyncGenerator[Any, None]:
    targets = r.found.targets
    yield StartEvent(
        request_id=r.request_id,
        language=r.language,
        prompt_format="cached",
        route="deep",
        route_reason="a repair: diagnose, propose, verify",
    )
    span = choose_span(r.original.split("\n"), targets[0], span_lines)
    yield r.stage(
        "skeleton", _diagnosis(targets, span), diagnostics=[info(d) for d in r.found.all], span=span
    )
    diff = unified_diff(r.original, fixed, r.req.path)
    yield r.stage("final", fixed, diff=diff)
    yield _done(r, fixed, changed=True, verified=True, diff=diff, cached=True)


async def _stream(service: Service, r: Repair) -> AsyncGenerator[Any, None]:
    yield StartEvent(
        request_id=r.request_id,
        language=r.language,
        prompt_format=service.model.format.name,
        route="deep",
        route_reason="a repair: diagnose, propose, verify",
    )
    targets = r.found.targets
    diagnostics = [info(d) for d in r.found.all]
    if not targets:
        yield r.stage(
            "skeleton",
            "nothing to fix: the file parses"
            + (" and ruff finds nothing" if r.found.lint is not None else ""),
        )
        yield _done(r, r.original, changed=False, verified=True, diff="")
        return
    lines = r.original.split("\n")
    span = choose_span(lines, targets[0], service.settings.fix_span_lines)
    yield r.stage(
        "skeleton",
        _diagnosis(targets, span),
        diagnostics=diagnostics,
        span=span,
    )
    try:
        document = r.original
        problems = r.found
        for _ in range(MAX_ROUNDS):
            targets = problems.targets
            if not targets:
                break
            span = choose_span(document.split("\n"), targets[0], service.settings.fix_span_lines)
            best: str | None = None
            async for item in _round(service, r, document, problems, span):
                if isinstance(item, str):
                    best = item
                else:
                    yield item
            if best is None:
                break
            document = best
            problems = await asyncio.to_thread(
                diagnose, r.language, document, r.use_ruff, _line_length(r)
            )
    except JobFailed as exc:
        yield ErrorEvent(code=exc.code, message=exc.message)
        return

    if problems.syntax or document == r.original:
        reason = "no candidate made the file parse" if problems.syntax else "no candidate helped"
        yield r.stage("logic", r.original, ok=False, reason=reason)
        yield r.stage("final", r.original, ok=False, reason=reason)
        yield _done(r, r.original, changed=False, verified=False, diff="")
        return
    yield r.stage("logic", document)
    final, formatter, note = await _format(r, document)
    diff = unified_diff(r.original, final, r.req.path)
    yield r.stage("final", final, diff=diff, formatter=formatter, reason=note)
    await service.store(
        r.key, CachedResult(text=final, finish_reason="stop", tokens=r.tokens, language=r.language)
    )
    yield _done(r, final, changed=True, verified=True, diff=diff)


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


async def _round(
    service: Service, r: Repair, document: str, problems: Problems, span: Span
) -> AsyncGenerator[Any, None]:
    """Yield progress events, then (as a plain string) the best verified document, if any."""
    targets = problems.targets
    lines_before = document.count("\n")

    async def verified(candidate: str) -> bool:
        after = await asyncio.to_thread(
            diagnose, r.language, candidate, r.use_ruff, _line_length(r)
        )
        return accepts(problems, after, span, candidate.count("\n") - lines_before)

    winners: list[str] = []
    if service.settings.fix_parser_hints:
        for candidate in hint_candidates(r.language, document, targets):
            if await verified(candidate):
                winners.append(candidate)
    deadline = r.received + (r.req.deadline_ms or service.settings.fix_deadline_ms) / 1000
    if not winners:
        async for item in _continuations(service, r, document, targets[0], deadline):
            if isinstance(item, TokenEvent):
                yield item
                continue
            for continued in item:
                if continued != document and await verified(continued):
                    winners.append(continued)
    if not winners:
        count = r.req.candidates or service.settings.fix_candidates
        for index in range(count):
            remaining = deadline - time.perf_counter()
            if remaining <= 0.1:
                break
            share = remaining / (count - index)
            proposal: str | None = None
            async for item in _model_candidate(
                service, r, document, problems, span, index, time.perf_counter() + share
            ):
                if isinstance(item, TokenEvent):
                    yield item
                else:
                    proposal = item
            if proposal is not None and proposal != document and await verified(proposal):
                winners.append(proposal)
    if winners:
        yield min(winners, key=lambda c: (change_size(document, c), winners.index(c)))


async def _continuations(
    service: Service, r: Repair, document: str, target: Diagnostic, deadline: float
) -> AsyncGenerator[Any, None]:
    """Let the model continue the code from where the parser stopped understanding it.

    At the error's position (and at the end of its line) the model's own next characters are
    often the missing piece: a ``:`` after a signature, ``))`` after an argument list. Yields
    token events, then per position a list of candidate documents: the line completed by the
    model, and (for a short continuation) the continuation inserted before the rest of the line.
    """
    lines = document.split("\n")
    if target.line >= len(lines):
        return
    line = lines[target.line]
    positions = sorted({min(target.column, len(line)), code_end(line)})
    settings = service.settings
    budget_tokens = min(settings.prompt_budget_tokens, service.model.facts.n_ctx - 48)
    for column in positions:
        if time.perf_counter() >= deadline - 0.1:
            return
        prompt = await asyncio.to_thread(
            build_prompt,
            service.model.format,
            service.model,
            document,
            target.line,
            column,
            budget_tokens,
            settings.suffix_budget_tokens,
            r.header,
        )
        relay = service.relay(
            prompt.tokens,
            service.budget(32, deadline, 0.0),
            "logic",
            ("\n",),
            candidate=0,
            priority=Priority.REPAIR,
            user=r.user,
        )
        async for event in relay:
            yield event
        result = relay.result
        if not r.usable(result):
            continue
        head = "\n".join([*lines[: target.line], line[:column]])
        tail = lines[target.line + 1 :]
        completed = head + result.text + ("\n" + "\n".join(tail) if tail else "")
        proposals = []
        if keeps_code(line, line[:column] + result.text):
            proposals.append(completed)
        continuation = result.text.strip()
        if 0 < len(continuation) <= 3:
            rest = "\n".join([line[column:], *tail])
            proposals.append(head + continuation + rest)
        yield proposals


def _notes(language: str, targets: list[Diagnostic]) -> str:
    """The errors as comment lines, so the model knows what to repair."""
    info_ = language_info(language)
    comment = info_.line_comment if info_ and info_.line_comment else "#"
    lines = [f"{comment} Syntax error on line {d.line + 1}: {d.message}" for d in targets[:5]]
    lines.append(f"{comment} The code below is the corrected version.")
    return "\n".join(lines) + "\n"


async def _model_candidate(
    service: Service,
    r: Repair,
    document: str,
    problems: Problems,
    span: Span,
    index: int,
    deadline: float,
) -> AsyncGenerator[Any, None]:
    """Yield token events while the model rewrites the span, then the candidate document."""
    lines = document.split("\n")
    before = lines[: span.start_line]
    after = lines[span.end_line :]
    anchor = next((line for line in after if line.strip()), None)
    original_span = lines[span.start_line : span.end_line]
    gap = "\n".join(before) + ("\n" if before else "")
    text = gap + "\n".join(after)
    settings = service.settings
    budget_tokens = min(
        settings.prompt_budget_tokens, service.model.facts.n_ctx - settings.fix_max_tokens - 8
    )
    prompt = await asyncio.to_thread(
        build_prompt,
        service.model.format,
        service.model,
        text,
        len(before),
        0,
        budget_tokens,
        settings.suffix_budget_tokens,
        r.header + _notes(r.language, problems.targets),
    )
    max_lines = len(original_span) + 2

    def until(generated: str) -> int | None:
        complete = generated.split("\n")[:-1]
        offset = 0
        for number, line in enumerate(complete):
            if anchor is not None and line.strip() == anchor.strip() and number > 0:
                return offset
            offset += len(line) + 1
            if number + 1 >= max_lines:
                return offset
        return None

    temperature = TEMPERATURES[min(index, len(TEMPERATURES) - 1)]
    budget = service.budget(settings.fix_max_tokens, deadline, temperature, seed=index + 1)
    relay = service.relay(prompt.tokens, budget, "logic", (), until, index, Priority.REPAIR, r.user)
    async for event in relay:
        yield event
    result = relay.result
    if not r.usable(result):
        return
    replacement = result.text[:-1] if result.text.endswith("\n") else result.text
    if keeps_code("\n".join(original_span), replacement):
        yield "\n".join([*before, replacement, *after])


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
) -> DoneEvent:
    now = time.perf_counter()
    job = r.last_job.job if r.last_job else None
    timings = Timings(
        total_ms=ms_between(r.received, now) or 0.0,
        first_token_ms=ms_between(r.received, job.first_token_at) if job else None,
    )
    return DoneEvent(
        request_id=r.request_id,
        text=text,
        cached=cached,
        finish_reason="stop",
        tokens=r.tokens,
        timings=timings,
        route="deep",
        route_reason="a repair: diagnose, propose, verify",
        stages=list(r.sent),
        changed=changed,
        verified=verified,
        diff=diff,
        diagnostics=[info(d) for d in r.found.all],
    )
