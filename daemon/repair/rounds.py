"""One round of a repair: candidates for the first error, verified, then ranked by intent.
Rules propose first, the model only when none verifies; a toolchain checker may have the last word.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from daemon.checks.toolchain import tool_check
from daemon.pipeline.staged import Outcome
from daemon.protocol import Span, TokenEvent
from daemon.repair.candidates import ModelCandidates
from daemon.repair.diagnosis import (
    Problems,
    accepts,
    anchored,
    change_size,
    choose_span,
    diagnose,
    with_tool,
)
from daemon.repair.hints import hint_candidates
from daemon.repair.intent import Candidate, close_call, describe, ranked
from daemon.repair.layout import closer_candidates
from daemon.repair.slips import late_slip_candidates, slip_candidates

# Judges verified candidates: sets each one's ``score`` (the model's log-likelihood).
Judge = Callable[[str, list[Candidate], float], Awaitable[None]]


@dataclass
class RoundResult:
    """The outcome of one round: the winner, and a rival too close to call, if any."""

    best: Candidate | None
    rival: Candidate | None
    verified: int
    problems: Problems  # the round's, its first error the one it repaired


@dataclass
class RoundContext:
    language: str
    use_ruff: bool
    line_length: int | None
    parser_hints: bool
    candidates: int  # model rewrites at most
    deadline: float
    span_lines: int = 6  # the lines a model rewrite replaces at most


def rule_candidates(language: str, document: str, problems: Problems) -> list[tuple[str, str]]:
    """(rule, document) proposals of the rules for the round's first error, without repeats."""
    first = problems.targets[0]
    # The rules that read the layout and the common slips first: where two candidates tie,
    # the earlier stands (the parser's own guess of a closer's place is often the file's end).
    proposals = list(slip_candidates(language, document, first))
    layout = closer_candidates(language, document)
    proposals += [("closer where the layout ends its block", c) for c in layout]
    proposals += [("parser hint", c) for c in hint_candidates(language, document, problems.targets)]
    proposals += late_slip_candidates(language, document, first)
    seen: set[str] = {document}
    unique = []
    for rule, text in proposals:
        if text not in seen:
            seen.add(text)
            unique.append((rule, text))
    return unique


def verified_candidate(
    language: str,
    document: str,
    problems: Problems,
    span: Span,
    rule: str,
    text: str,
    lint: tuple[bool, int | None] = (False, None),
) -> Candidate | None:
    """The candidate with its ranking facts when it verifies, else None."""
    # Misspelt names matter to a candidate only where the round compares lint findings; the
    # language's checker is asked only about the best candidates (``checked_best``).
    after = diagnose(language, text, *lint, names=problems.lint is not None, tool=False)
    if not accepts(problems, after):
        return None
    candidate = describe(language, document, text, rule, change_size(document, text))
    candidate.remaining = len(after.syntax)
    candidate.after = after
    return candidate


def verified_rules(
    language: str,
    document: str,
    problems: Problems,
    span: Span,
    lint: tuple[bool, int | None] = (False, None),
) -> list[Candidate]:
    """The rules' candidates for the first error that verify, unranked."""
    found = []
    for rule, text in rule_candidates(language, document, problems):
        candidate = verified_candidate(language, document, problems, span, rule, text, lint)
        if candidate is not None:
            found.append(candidate)
    return found


def rules_here(
    language: str,
    document: str,
    problems: Problems,
    span_lines: int,
    lint: tuple[bool, int | None] = (False, None),
) -> tuple[Problems, Span, list[Candidate]]:
    """The rules' verified candidates for the round's first error, with the round's problems
    and span. The round starts where the grammar puts the first error; the language's checker
    is asked where the slip is (``anchored``) only when no candidate there repairs the file
    to the checker's satisfaction, and the rules are asked again at its place when it differs
    (where the grammar is right, which is most often, that question is saved)."""
    span = choose_span(document.split("\n"), problems.targets[0], span_lines)
    found = verified_rules(language, document, problems, span, lint)
    best, _ = checked_best(language, ranked(found), problems.targets[0].line)
    if best is not None and not best.remaining:
        return problems, span, found
    moved = anchored(language, document, problems)
    if moved.targets[0] == problems.targets[0]:
        return problems, span, found
    span = choose_span(document.split("\n"), moved.targets[0], span_lines)
    return moved, span, verified_rules(language, document, moved, span, lint)


# Rules propose first (the parser's hints, the closer the layout asks for, the typing slips); only
# when none of them verifies does the model write, and then only text that keeps every token of
# the span it replaces. A candidate is verified when the whole document then passes the
# language's grammar and nothing new broke (``accepts``). The verified candidates are ranked
# (daemon.repair.intent), judged by the model when there is more than one and time is left, and
# the best are given to the language's toolchain checker when one is installed, in rank order,
# until one passes (``checked_best``).
async def run_round(
    ctx: RoundContext,
    model: ModelCandidates,
    document: str,
    problems: Problems,
    judge: Judge | None,
) -> AsyncGenerator[Any, None]:
    """Yield token events of model passes, then one ``RoundResult`` as the stream's
    ``Outcome``. ``problems``: the document's, as diagnosed (the language's checker anchors
    them where the round needs it)."""
    lint = (ctx.use_ruff, ctx.line_length)
    verified: list[Candidate] = []
    if ctx.parser_hints:
        problems, span, verified = await asyncio.to_thread(
            rules_here, ctx.language, document, problems, ctx.span_lines, lint
        )
    else:
        problems = await asyncio.to_thread(anchored, ctx.language, document, problems)
        span = choose_span(document.split("\n"), problems.targets[0], ctx.span_lines)

    async def verify(rule: str, text: str) -> None:
        candidate = await asyncio.to_thread(
            verified_candidate, ctx.language, document, problems, span, rule, text, lint
        )
        if candidate is not None:
            verified.append(candidate)

    if not verified:
        async for item in model.continuations(document, problems.targets[0], ctx.deadline):
            if isinstance(item, TokenEvent):
                yield item
                continue
            for text in item:
                await verify("model continuation", text)
    if not verified:
        for index in range(ctx.candidates):
            remaining = ctx.deadline - time.perf_counter()
            if remaining <= 0.1:
                break
            share = remaining / (ctx.candidates - index)
            async for item in model.rewrite(
                document, problems, span, index, time.perf_counter() + share
            ):
                if isinstance(item, TokenEvent):
                    yield item
                else:
                    await verify("model rewrite", item)
    order = ranked(verified)
    if judge is not None and len(order) > 1:
        await judge(document, order, ctx.deadline)
        order = ranked(order)
    target = problems.targets[0].line
    best, rival = await asyncio.to_thread(checked_best, ctx.language, order, target)
    yield Outcome(RoundResult(best, rival, len(verified), problems))


# The toolchain's checker is asked about this many of the best candidates at most (asking it
# about every candidate cost more than all the rest).
TOOL_CHECKED = 5


def checked_best(
    language: str, order: list[Candidate], target: int | None = None
) -> tuple[Candidate | None, Candidate | None]:
    """The best candidate the toolchain's checker accepts (when one is installed; for a
    candidate that leaves errors for later rounds, one whose first error the checker puts after
    the ``target`` line), and the next one it accepts when the two are a close call.

    Of the ``TOOL_CHECKED`` best, the checker is asked a group at a time: its objections change
    how many errors a candidate leaves, never the facts ranked before that (what the change
    invents, loses or misspells, and its layout), so each group of candidates that share those
    facts is ranked again with the objections, and the groups after the one that gives the best
    are not asked about (a run of ``rustfmt`` costs tens of milliseconds). A rival can only come
    from the best's own group (``close_call`` needs those facts equal)."""
    for _, members in itertools.groupby(order[:TOOL_CHECKED], key=_first_facts):
        # The checker's objections count among the candidates' errors left: ranked again.
        checked = sorted((_with_tool(language, c) for c in members), key=Candidate.key)
        accepted = (c for c in checked if _tool_accepts(language, c, target))
        best = next(accepted, None)
        if best is None:
            continue
        runner_up = next(accepted, None)
        rival = runner_up is not None and close_call(best, runner_up)
        return best, runner_up if rival else None
    return None, None


def _first_facts(candidate: Candidate) -> tuple[int, int]:
    """The ranking facts the checker's verdict cannot change (``Candidate.key``'s first two)."""
    changed, layout, *_ = candidate.key()
    return changed, layout


def _with_tool(language: str, candidate: Candidate) -> Candidate:
    """The candidate with the language checker's objection among its problems, where its
    verification left the checker for later: one it rejects has an error left."""
    if candidate.after is None or candidate.after.tool_checked:
        return candidate
    candidate.after = with_tool(language, candidate.text, candidate.after)
    candidate.remaining = len(candidate.after.syntax)
    return candidate


def _tool_accepts(language: str, candidate: Candidate, target: int | None) -> bool:
    """The checker accepts the candidate; or the candidate leaves errors the grammar sees for
    later rounds (a file broken twice is rejected until both are done), and the checker's
    first error is past the line the round repaired (it reports only the first).

    A candidate whose own diagnosis found nothing was already accepted by the checker there
    (``syntax_problems`` asks it whenever the grammar is satisfied): it is not asked again."""
    if candidate.after is not None and not candidate.after.syntax:
        return True
    verdict = tool_check(language, candidate.text)
    if verdict.ok:
        return True
    if candidate.remaining == 0 or target is None:
        return False
    return verdict.line is not None and verdict.line > target
